//! render_json over the view, for every provider format: a session whose first two turns
//! are archived by a summary, whose tool output is cut by tiered compaction, and one of
//! whose tool calls was never answered. The rendered array must be valid JSON in the
//! window's format (its own parser reads it back as that format), every tool result must
//! follow its call with the same id, every call of a completed turn must be answered, the
//! truncated text, the cancelled result and the summary must be sent, and nothing archived.

use ctxwin::json::{self, Format};
use ctxwin::view::{ItemType, text::CANCELLED_RESULT};
use ctxwin::{Kind, Window};
use serde_json::{Value, json};

const SUMMARY: &str = "Summary: the user set a task; two turns of it are done.";

/// A 60-line tool output (tiered's L1 cuts it to head and tail).
fn long_output() -> String {
    (0..60).map(|i| format!("src/file_{i}.rs\n")).collect()
}

/// The session's messages in `format`: a system prompt (where the format has one in its
/// messages), two turns marked ARCHIVED, a turn with two parallel calls of which only the
/// first is answered (with the long output), and a last short turn.
fn transcript(format: Format) -> Vec<Value> {
    let output = long_output();
    let user = |text: &str| match format {
        Format::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
        _ => json!({"role": "user", "content": text}),
    };
    let assistant = |text: &str| match format {
        Format::Gemini => json!({"role": "model", "parts": [{"text": text}]}),
        Format::OpenAiResponses => {
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
        }
        _ => json!({"role": "assistant", "content": text}),
    };
    let mut messages = Vec::new();
    match format {
        Format::OpenAiChat | Format::OpenAiResponses => {
            messages.push(json!({"role": "system", "content": "You are a coding agent."}))
        }
        Format::Anthropic | Format::Gemini => {}
    }
    for turn in 0..2 {
        messages.push(user(&format!("ARCHIVED-{turn} please start the task")));
        messages.push(assistant(&format!("ARCHIVED-{turn} started")));
    }
    messages.push(user("LIVE-2 list the files in src/"));
    match format {
        Format::OpenAiChat => {
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "ls", "arguments": "{\"dir\":\"src\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "du", "arguments": "{\"dir\":\"src\"}"}}]}));
            messages.push(json!({"role": "tool", "tool_call_id": "call_a", "content": output}));
        }
        Format::OpenAiResponses => {
            messages.push(json!({"type": "function_call", "call_id": "call_a", "name": "ls", "arguments": "{\"dir\":\"src\"}"}));
            messages.push(json!({"type": "function_call", "call_id": "call_b", "name": "du", "arguments": "{\"dir\":\"src\"}"}));
            messages.push(json!({"type": "function_call_output", "call_id": "call_a", "output": output}));
        }
        Format::Anthropic => {
            messages.push(json!({"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "call_a", "name": "ls", "input": {"dir": "src"}},
                {"type": "tool_use", "id": "call_b", "name": "du", "input": {"dir": "src"}}]}));
            messages
                .push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_a", "content": output}]}));
        }
        Format::Gemini => {
            messages.push(json!({"role": "model", "parts": [
                {"functionCall": {"id": "call_a", "name": "ls", "args": {"dir": "src"}}},
                {"functionCall": {"id": "call_b", "name": "du", "args": {"dir": "src"}}}]}));
            messages.push(json!({"role": "user", "parts": [
                {"functionResponse": {"id": "call_a", "name": "ls", "response": {"output": output}}}]}));
        }
    }
    messages.push(assistant("LIVE-2 sixty files"));
    messages.push(user("LIVE-3 thanks"));
    messages.push(assistant("LIVE-3 done"));
    messages
}

/// The session: pushed, the archived turns summarized, then compacted by hand.
fn session(format: Format) -> Window {
    let mut window = Window::new("gpt-4o");
    // The messages are pushed one by one and the first ones fit several formats: the window
    // is told its format, as an agent speaking Responses or Anthropic to gpt-4o would. The
    // first turn is archived whole, its question too: the task is not pinned.
    let settings = format!(
        r#"{{"strategy":"tiered","tool_output_max_lines":6,"history_budget":100000,"pin_task":false,"format":"{}"}}"#,
        format.key()
    );
    window.configure(&settings).unwrap();
    for message in transcript(format) {
        json::push_json(&mut window, &message.to_string()).unwrap_or_else(|e| panic!("{format:?}: {e}\n{message}"));
    }
    window.end_turn();
    window.drop_oldest_turn().unwrap();
    window.drop_oldest_turn().unwrap();
    assert!(window.needs_summary(), "{format:?}");
    window.summary_request().unwrap();
    window.set_summary(window.generation(), SUMMARY, 1).unwrap();
    assert_eq!(window.archived_turns(), 2);
    window.compact();
    window
}

/// One rendered message, reduced to what the checks need.
#[derive(Debug, Default)]
struct Event {
    role: String,
    calls: Vec<String>,
    results: Vec<String>,
}

/// The rendered array as events, with consecutive messages of one role merged (every
/// provider takes them as one turn).
fn events(format: Format, rendered: &[Value]) -> Vec<Event> {
    let mut events: Vec<Event> = Vec::new();
    for message in rendered {
        let str_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let mut event = Event::default();
        match format {
            Format::OpenAiChat => {
                event.role = str_of(message, "role");
                for call in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    event.calls.push(str_of(call, "id"));
                }
                if event.role == "tool" {
                    event.results.push(str_of(message, "tool_call_id"));
                }
            }
            Format::OpenAiResponses => match str_of(message, "type").as_str() {
                "function_call" => {
                    event.role = "assistant".into();
                    event.calls.push(str_of(message, "call_id"));
                }
                "function_call_output" => {
                    event.role = "tool".into();
                    event.results.push(str_of(message, "call_id"));
                }
                _ => event.role = str_of(message, "role"),
            },
            Format::Anthropic => {
                event.role = str_of(message, "role");
                for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
                    match str_of(block, "type").as_str() {
                        "tool_use" => event.calls.push(str_of(block, "id")),
                        "tool_result" => event.results.push(str_of(block, "tool_use_id")),
                        _ => {}
                    }
                }
            }
            Format::Gemini => {
                event.role = str_of(message, "role");
                for part in message.get("parts").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(call) = part.get("functionCall") {
                        event.calls.push(format!("{}/{}", str_of(call, "id"), str_of(call, "name")));
                    }
                    if let Some(response) = part.get("functionResponse") {
                        event.results.push(format!("{}/{}", str_of(response, "id"), str_of(response, "name")));
                    }
                }
            }
        }
        assert!(!event.role.is_empty(), "{format:?}: a message without a role: {message}");
        match events.last_mut() {
            Some(last) if last.role == event.role => {
                last.calls.extend(event.calls);
                last.results.extend(event.results);
            }
            _ => events.push(event),
        }
    }
    events
}

/// Every string in `value`, recursively.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fn check(format: Format) {
    let window = session(format);
    let view: Vec<_> = (0..window.view_len()).map(|i| window.view_item(i).unwrap()).collect();
    let truncated: Vec<&str> = view
        .iter()
        .filter(|item| item.item_type == ItemType::Truncated && item.kind == Kind::ToolResult)
        .filter_map(|item| item.text)
        .collect();
    assert_eq!(truncated.len(), 1, "{format:?}: tiered cut the tool output: {view:#?}");
    // A Gemini functionResponse is kept as compact JSON; tiered's L1 cuts inside its values,
    // so the cut text is still the object, its string cut to head and tail lines.
    assert!(truncated[0].contains("lines truncated"), "{format:?}: {}", truncated[0]);
    let cut_output = match format {
        Format::Gemini => {
            let object: Value =
                serde_json::from_str(truncated[0]).unwrap_or_else(|e| panic!("not the object ({e}): {}", truncated[0]));
            object["output"].as_str().unwrap_or_else(|| panic!("no output string: {object}")).to_owned()
        }
        _ => truncated[0].to_owned(),
    };
    assert!(
        view.iter().any(|item| item.item_type == ItemType::Synthetic && item.text == Some(CANCELLED_RESULT)),
        "{format:?}: the unanswered call has a cancelled result"
    );
    assert!(view.iter().any(|item| item.text == Some(SUMMARY)), "{format:?}: the summary is sent");

    let rendered = json::render_json(&window).unwrap();
    let value: Value = serde_json::from_str(&rendered).unwrap_or_else(|e| panic!("{format:?}: not JSON ({e}): {rendered}"));
    let messages = value.as_array().unwrap_or_else(|| panic!("{format:?}: not an array: {rendered}"));
    // Valid in the format: the library's own parser reads it back as that format.
    let mut reread = Window::new("gpt-4o");
    json::push_json(&mut reread, &rendered).unwrap_or_else(|e| panic!("{format:?}: render does not parse back: {e}\n{rendered}"));
    assert!(reread.wire_formats().contains(format), "{format:?}: rendered in another format: {rendered}");
    // Nothing archived; the summary, the cut output and the cancelled result are sent.
    assert!(!rendered.contains("ARCHIVED"), "{format:?}: archived text sent: {rendered}");
    let mut texts = Vec::new();
    strings(&value, &mut texts);
    for needle in [SUMMARY, CANCELLED_RESULT, "LIVE-2 list the files in src/", "LIVE-3 done", cut_output.as_str()] {
        assert!(texts.iter().any(|t| t.contains(needle)), "{format:?}: {needle:?} is not sent: {rendered}");
    }
    // Tool results follow their calls: the turn right after a turn with calls answers each
    // of them, and answers nothing else.
    let events = events(format, messages);
    for (i, event) in events.iter().enumerate() {
        if !event.calls.is_empty() {
            let next = events.get(i + 1).unwrap_or_else(|| panic!("{format:?}: calls at the end: {rendered}"));
            let mut calls = event.calls.clone();
            let mut results = next.results.clone();
            calls.sort();
            results.sort();
            assert_eq!(calls, results, "{format:?}: results do not answer the calls: {rendered}");
        }
        if !event.results.is_empty() {
            let previous = i.checked_sub(1).map(|p| &events[p]);
            assert!(
                previous.is_some_and(|p| event.results.iter().all(|r| p.calls.contains(r))),
                "{format:?}: a result without its call right before: {rendered}"
            );
        }
    }
    assert!(events.iter().any(|e| !e.calls.is_empty()), "{format:?}: the live turn's calls are sent");
}

#[test]
fn openai_chat_renders_the_view() {
    check(Format::OpenAiChat);
}

#[test]
fn openai_responses_renders_the_view() {
    check(Format::OpenAiResponses);
}

#[test]
fn anthropic_renders_the_view() {
    check(Format::Anthropic);
}

#[test]
fn gemini_renders_the_view() {
    check(Format::Gemini);
}

/// An assistant message reusing a call id, within its step (`pwd` as `c1` beside `ls`)
/// and in a later step of the turn (`cat` as `c1`), and the results the agent got for
/// them, in `format`.
fn duplicate_ids(format: Format) -> Vec<Value> {
    let call = |id: &str, name: &str| match format {
        Format::OpenAiChat => json!({"id": id, "type": "function", "function": {"name": name, "arguments": "{}"}}),
        Format::OpenAiResponses => json!({"type": "function_call", "call_id": id, "name": name, "arguments": "{}"}),
        Format::Anthropic => json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        Format::Gemini => json!({"functionCall": {"id": id, "name": name, "args": {}}}),
    };
    let calls = |calls: Vec<Value>| match format {
        Format::OpenAiChat => vec![json!({"role": "assistant", "content": null, "tool_calls": calls})],
        Format::OpenAiResponses => calls,
        Format::Anthropic => vec![json!({"role": "assistant", "content": calls})],
        Format::Gemini => vec![json!({"role": "model", "parts": calls})],
    };
    let result = |id: &str, name: &str, output: &str| match format {
        Format::OpenAiChat => json!({"role": "tool", "tool_call_id": id, "content": output}),
        Format::OpenAiResponses => json!({"type": "function_call_output", "call_id": id, "output": output}),
        Format::Anthropic => json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": output}]}),
        Format::Gemini => {
            json!({"role": "user", "parts": [{"functionResponse": {"id": id, "name": name, "response": {"output": output}}}]})
        }
    };
    let mut messages = calls(vec![call("c1", "ls"), call("c1", "pwd")]);
    messages.push(result("c1", "ls", "src tests"));
    messages.extend(calls(vec![call("c1", "cat")]));
    messages.push(result("c1", "cat", "fn main() {}"));
    messages
}

/// A call id reused in a turn (which the providers refuse: Anthropic wants `tool_use` ids
/// unique, OpenAI a `tool` message per call) is sent once, answered once, whether the
/// request is rendered before `prepare` planned the new messages or after, in every format.
#[test]
fn a_reused_call_id_is_sent_once_without_prepare_too() {
    for format in [Format::OpenAiChat, Format::OpenAiResponses, Format::Anthropic, Format::Gemini] {
        let mut window = Window::new("gpt-4o");
        window.configure(&format!(r#"{{"format":"{}"}}"#, format.key())).unwrap();
        window.push(Kind::User, "Look at the project").unwrap();
        for message in duplicate_ids(format) {
            json::push_json(&mut window, &message.to_string()).unwrap_or_else(|e| panic!("{format:?}: {e}\n{message}"));
        }
        let mut renderings = vec![json::render_json(&window).unwrap()];
        window.prepare().unwrap();
        renderings.push(json::render_json(&window).unwrap());
        for rendered in renderings {
            let value: Value = serde_json::from_str(&rendered).unwrap();
            let events = events(format, value.as_array().unwrap());
            let calls: Vec<&str> = events.iter().flat_map(|e| &e.calls).map(String::as_str).collect();
            let results: Vec<&str> = events.iter().flat_map(|e| &e.results).map(String::as_str).collect();
            let c1 = if format == Format::Gemini { "c1/ls" } else { "c1" };
            assert_eq!((calls, results), (vec![c1], vec![c1]), "{format:?}: {rendered}");
            assert!(
                rendered.contains("src tests") && !rendered.contains("pwd") && !rendered.contains("cat"),
                "{format:?}: {rendered}"
            );
        }
    }
}
