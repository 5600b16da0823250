//! Providers' newer items and rules, rendered as each provider wants them: Responses calls
//! OpenAI runs itself take no output while the agent's own calls interrupted get a cancelled
//! output of their own type; Gemini contents alternate; provider compaction archives what
//! came before it; cancelled results the render adds are counted.

#[path = "support/provider_rules.rs"]
mod provider_rules;

use ctxwin::json::{self, Format};
use ctxwin::{Kind, Window};
use provider_rules::{Rules, check};
use serde_json::{Value, json};

fn window(model: &str, format: Format) -> Window {
    let mut window = Window::new(model);
    window.configure(&json!({"format": format.key()}).to_string()).unwrap();
    window
}

fn push(window: &mut Window, value: Value) {
    json::push_json(window, &value.to_string()).unwrap_or_else(|e| panic!("{e}: {value}"));
}

fn body(window: &Window) -> Value {
    serde_json::from_str(&json::render_request(window, "").unwrap()).unwrap()
}

fn types(items: &Value) -> Vec<String> {
    items.as_array().unwrap().iter().map(|item| item["type"].as_str().unwrap_or("message").to_owned()).collect()
}

#[test]
fn responses_built_in_calls_take_no_output_and_interrupted_calls_their_own() {
    let mut w = window("gpt-4o", Format::OpenAiResponses);
    w.push(Kind::User, "find the bug").unwrap();
    push(
        &mut w,
        json!([
            {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "bug"}},
            {"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["bug"]},
            {"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "container_id": "c", "code": "1", "outputs": []},
            {"type": "function_call", "call_id": "f1", "name": "read", "arguments": "{}"},
            {"type": "custom_tool_call", "call_id": "k1", "name": "patch", "input": "diff"},
            {"type": "apply_patch_call", "call_id": "p1", "status": "completed", "operation": {"type": "delete_file", "path": "a"}},
            {"type": "computer_call", "id": "cu_1", "call_id": "cc1", "status": "completed", "action": {"type": "screenshot"}, "pending_safety_checks": []}
        ]),
    );
    // Interrupted: the user speaks before any result.
    w.push(Kind::User, "stop").unwrap();
    let sent = body(&w);
    assert_eq!(check(Rules::Responses, &sent), Ok(()), "{sent}");
    let input = &sent["input"];
    assert_eq!(
        types(input),
        [
            "message",
            "web_search_call",
            "file_search_call",
            "code_interpreter_call",
            "function_call",
            "custom_tool_call",
            "apply_patch_call",
            "function_call_output",
            "custom_tool_call_output",
            "apply_patch_call_output",
            "message"
        ],
        "built-in calls are answered by nobody, the computer call (which wants a screenshot) is left out: {input}"
    );
    let cancelled = ctxwin::view::text::CANCELLED_RESULT;
    assert_eq!(input[7], json!({"type": "function_call_output", "call_id": "f1", "output": cancelled}));
    assert_eq!(input[8], json!({"type": "custom_tool_call_output", "call_id": "k1", "output": cancelled}));
    assert_eq!(input[9], json!({"type": "apply_patch_call_output", "call_id": "p1", "status": "failed", "output": cancelled}));
}

#[test]
fn responses_answered_client_calls_are_sent_with_their_outputs() {
    let mut w = window("gpt-4o", Format::OpenAiResponses);
    w.push(Kind::User, "look").unwrap();
    push(
        &mut w,
        json!({"type": "computer_call", "id": "cu_1", "call_id": "cc1", "status": "completed", "action": {"type": "screenshot"}, "pending_safety_checks": []}),
    );
    push(
        &mut w,
        json!({"type": "computer_call_output", "call_id": "cc1", "output": {"type": "computer_screenshot", "image_url": "https://x/s.png"}}),
    );
    push(&mut w, json!({"type": "custom_tool_call", "call_id": "k1", "name": "patch", "input": "diff"}));
    w.push_tool(Kind::ToolResult, "k1", "applied").unwrap();
    w.push(Kind::User, "thanks").unwrap();
    let sent = body(&w);
    assert_eq!(check(Rules::Responses, &sent), Ok(()), "{sent}");
    assert_eq!(
        types(&sent["input"]),
        ["message", "computer_call", "computer_call_output", "custom_tool_call", "custom_tool_call_output", "message"]
    );
    assert_eq!(sent["input"][4]["output"], "applied", "a result pushed as text answers in the call's own form");
}

#[test]
fn gemini_consecutive_user_contents_merge_into_one() {
    let mut w = window("gemini-2.5-pro", Format::Gemini);
    w.push(Kind::User, "list the files").unwrap();
    push(
        &mut w,
        json!({"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}, {"functionCall": {"name": "cat", "args": {}}}]}),
    );
    push(&mut w, json!({"role": "user", "parts": [{"functionResponse": {"name": "cat", "response": {"r": "x"}}}]}));
    // Gemini's calls have no ids: a result pushed without one answers the call left open.
    w.push(Kind::ToolResult, "a b").unwrap();
    w.push(Kind::User, "now the biggest").unwrap();
    w.push(Kind::User, "and quickly").unwrap();
    let sent = body(&w);
    assert_eq!(check(Rules::Gemini, &sent), Ok(()), "{sent}");
    let contents = sent["contents"].as_array().unwrap();
    let roles: Vec<&str> = contents.iter().map(|c| c["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "model", "user"], "{sent}");
    let last: Vec<String> =
        contents[2]["parts"].as_array().unwrap().iter().map(|p| p.as_object().unwrap().keys().next().unwrap().clone()).collect();
    assert_eq!(last, ["functionResponse", "functionResponse", "text", "text"], "the answers first, then what the user said");
    // A view that starts with the model opens with a user content.
    let mut cut = window("gemini-2.5-pro", Format::Gemini);
    cut.push(Kind::Assistant, "Hello, how can I help?").unwrap();
    cut.push(Kind::User, "hi").unwrap();
    let sent = body(&cut);
    assert_eq!(check(Rules::Gemini, &sent), Ok(()), "{sent}");
}

/// Three Anthropic turns, each a question, a tool call and its answer.
fn anthropic_session() -> Window {
    let mut w = window("claude-sonnet-4-5", Format::Anthropic);
    w.push(Kind::System, "You are terse.").unwrap();
    for turn in 0..3 {
        w.push(Kind::User, &format!("question {turn}: read the file and explain it in detail")).unwrap();
        w.push_tool_call(&format!("t{turn}"), "read", r#"{"path":"src/main.c"}"#).unwrap();
        w.push_tool(Kind::ToolResult, &format!("t{turn}"), &"int main(void) { return 0; }\n".repeat(20)).unwrap();
        w.push(Kind::Assistant, "It returns 0.").unwrap();
        w.end_turn();
    }
    w
}

#[test]
fn an_anthropic_compaction_block_archives_what_came_before_it() {
    let mut w = anthropic_session();
    let before_tokens = w.live_tokens().tokens;
    let before = ctxwin::persist::export(&w);
    w.push(Kind::User, "question 3: and now?").unwrap();
    let compacted = json!({"role": "assistant", "content": [
        {"type": "compaction", "content": "Summary: three questions about src/main.c, which returns 0.",
         "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Still returns 0."}
    ]});
    push(&mut w, compacted.clone());
    let index = w.message_count() - 2;
    let message = w.message(index).unwrap();
    assert!(message.is_compaction() && message.kind() == Kind::User, "the block is a USER message of its own");
    assert_eq!(w.turn_of(index), Some(4), "it starts a turn");
    let record = w.summary().unwrap().clone();
    assert!(record.provider);
    assert_eq!(
        (record.archived_turns, record.first_archived, record.last_archived),
        (4, 1, index - 1),
        "everything before it, the user's question included"
    );
    assert_eq!(&*record.summary, "Summary: three questions about src/main.c, which returns 0.");
    assert_eq!(w.archived_turns(), 4);
    assert!(w.live_tokens().tokens < before_tokens, "{} >= {before_tokens}", w.live_tokens().tokens);
    assert!(w.sent_summary().is_none(), "the block is the summary in place, not a synthetic item");
    // The view: the pinned system prompt, then the block's message.
    let view: Vec<usize> = (0..w.view_len()).map(|i| w.view_item(i).unwrap().index).collect();
    assert_eq!(view, [0, index, index + 1]);
    let tokens: u64 = (0..w.view_len()).map(|i| u64::from(w.view_item(i).unwrap().tokens.tokens)).sum();
    assert_eq!(u64::from(w.live_tokens().tokens), tokens, "the block counts where it stands");
    // Rendered back in Anthropic's format: the assistant message as pushed (cache_control
    // kept), opened by a user message Anthropic requires and drops with the rest.
    let sent = body(&w);
    assert_eq!(check(Rules::Anthropic, &sent), Ok(()), "{sent}");
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{sent}");
    assert_eq!(messages[0], json!({"role": "user", "content": ctxwin::view::text::CONVERSATION_START}));
    assert_eq!(messages[1], compacted, "byte for byte, cache_control included");
    assert_eq!(sent["system"], json!([{"type": "text", "text": "You are terse."}]));
    // Later turns follow it; the strategy and summaries go on from there.
    w.push(Kind::User, "thanks").unwrap();
    w.end_turn();
    assert_eq!(check(Rules::Anthropic, &body(&w)), Ok(()));
    // Saved and restored: the same record and the same request.
    let restored = ctxwin::persist::import(&ctxwin::persist::export(&w)).unwrap();
    assert_eq!(restored.compactions(), w.compactions());
    assert_eq!(json::render_request(&restored, "").unwrap(), json::render_request(&w, "").unwrap());
    // A rewind to before the block undoes the compaction.
    w.truncate(index - 1).unwrap();
    w.end_turn();
    assert!(w.compactions().is_empty());
    let state = |saved: &str| {
        let mut value: Value = serde_json::from_str(saved).unwrap();
        for moved in ["generation", "cache", "checksum"] {
            value.as_object_mut().unwrap().remove(moved);
        }
        value
    };
    assert_eq!(state(&ctxwin::persist::export(&w)), state(&before), "back to the window before the block (but its generation)");
}

#[test]
fn a_responses_compaction_item_archives_what_came_before_it() {
    let mut w = window("gpt-4o", Format::OpenAiResponses);
    w.push(Kind::System, "Be brief.").unwrap();
    for turn in 0..3 {
        w.push(Kind::User, &format!("step {turn}")).unwrap();
        push(&mut w, json!({"type": "function_call", "call_id": format!("c{turn}"), "name": "run", "arguments": "{}"}));
        push(&mut w, json!({"type": "function_call_output", "call_id": format!("c{turn}"), "output": "ok ".repeat(50)}));
        w.end_turn();
    }
    let item = json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAB".repeat(40)});
    let answer = json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]});
    push(&mut w, json!([item, answer]));
    let record = w.summary().unwrap();
    assert!(record.provider && record.summary.is_empty(), "the item is encrypted: no readable summary");
    assert_eq!(record.archived_turns, 3);
    let compaction = w.message(record.last_archived + 1).unwrap();
    assert!(compaction.is_compaction() && !compaction.count().exact, "counted as opaque data, an estimate");
    let sent = body(&w);
    assert_eq!(check(Rules::Responses, &sent), Ok(()), "{sent}");
    assert_eq!(
        sent["input"],
        json!([{"role": "system", "content": "Be brief."}, item, answer]),
        "the item as pushed, nothing before it"
    );
    // Its count is the compaction's in the record; a summary of the window later rolls from
    // the turns after it.
    assert_eq!(record.summary_tokens, compaction.count());
}

#[test]
fn a_failed_compaction_archives_nothing_and_bad_ones_are_refused() {
    let mut w = anthropic_session();
    let failed =
        json!({"role": "assistant", "content": [{"type": "compaction", "content": null}, {"type": "text", "text": "ok"}]});
    push(&mut w, failed);
    assert!(w.compactions().is_empty(), "a null content is a failed compaction, which Anthropic ignores");
    assert_eq!(check(Rules::Anthropic, &body(&w)), Ok(()));
    let before = ctxwin::persist::export(&w);
    for (bad, field) in [
        (json!({"role": "assistant", "content": [{"type": "compaction", "content": ""}]}), "content[0].content"),
        (json!({"role": "assistant", "content": [{"type": "compaction", "content": 7}]}), "content[0].content"),
    ] {
        let err = json::push_json(&mut w, &bad.to_string()).unwrap_err();
        assert!(err.message().contains(field), "{}", err.message());
        assert_eq!(ctxwin::persist::export(&w), before, "nothing changed");
    }
    let mut r = window("gpt-4o", Format::OpenAiResponses);
    r.push(Kind::User, "hi").unwrap();
    let before = ctxwin::persist::export(&r);
    for bad in [
        json!({"type": "compaction"}),
        json!({"type": "compaction", "encrypted_content": ""}),
        json!({"type": "compaction", "encrypted_content": 5}),
    ] {
        let err = json::push_json(&mut r, &bad.to_string()).unwrap_err();
        assert!(err.message().contains("encrypted_content"), "{}", err.message());
        assert_eq!(ctxwin::persist::export(&r), before, "nothing changed");
    }
}

#[test]
fn cancelled_results_the_render_adds_are_counted() {
    for format in [Format::OpenAiChat, Format::Anthropic, Format::OpenAiResponses, Format::Gemini] {
        let model = match format {
            Format::Anthropic => "claude-sonnet-4-5",
            Format::Gemini => "gemini-2.5-pro",
            _ => "gpt-4o",
        };
        let mut w = window(model, format);
        w.push(Kind::User, "run both").unwrap();
        let base = w.live_tokens().tokens;
        let a = w.push_tool_call("a", "run", "{}").unwrap().tokens;
        let b = w.push_tool_call("b", "run", "{}").unwrap().tokens;
        let one = w.model().count(ctxwin::view::text::CANCELLED_RESULT).tokens;
        assert_eq!(w.running_cancelled(), 2);
        assert_eq!(w.live_tokens().tokens, base + a + b + 2 * one, "{format:?}: two open calls, two cancelled results sent");
        let sent = json::render_request(&w, "").unwrap();
        assert_eq!(sent.matches(ctxwin::view::text::CANCELLED_RESULT).count(), 2, "{sent}");
        let r = w.push_tool(Kind::ToolResult, "a", "done").unwrap().tokens;
        assert_eq!(w.live_tokens().tokens, base + a + b + r + one, "{format:?}");
        let info = w.prepare().unwrap();
        assert_eq!(info.tokens, u64::from(w.live_tokens().tokens), "the request info counts it too");
        w.push_tool(Kind::ToolResult, "b", "done").unwrap();
        assert_eq!(w.running_cancelled(), 0);
        // A rewind to the open call counts it again.
        w.truncate(w.message_count() - 1).unwrap();
        assert_eq!(w.running_cancelled(), 1);
    }
}
