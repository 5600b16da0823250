//! Provider JSON through the safe API: every format's fixture renders back byte for byte,
//! and generated conversations in every format parse into the kinds, texts and counts a
//! straightforward re-computation expects.

use ctxwin::json::{self, Format};
use ctxwin::{ErrorKind, Kind, Model, Window};
use proptest::prelude::*;
use serde_json::value::RawValue;
use serde_json::{Value, json};

const FIXTURES: [(&str, &str); 4] = [
    ("openai_chat", include_str!("fixtures/openai_chat.json")),
    ("anthropic", include_str!("fixtures/anthropic.json")),
    ("openai_responses", include_str!("fixtures/openai_responses.json")),
    ("gemini", include_str!("fixtures/gemini.json")),
];

/// The array `json` re-joined from its elements' verbatim text, as render_json must give it.
fn verbatim(json: &str) -> String {
    let elements: Vec<&RawValue> = serde_json::from_str(json).unwrap();
    let raws: Vec<&str> = elements.iter().map(|raw| raw.get()).collect();
    format!("[{}]", raws.join(","))
}

fn kinds(window: &Window) -> Vec<Kind> {
    (0..window.message_count()).map(|i| window.message(i).unwrap().kind()).collect()
}

#[test]
fn fixtures_render_byte_for_byte() {
    use Kind::*;
    let expected_kinds: [&[Kind]; 4] = [
        &[System, User, ToolCall, ToolCall, ToolResult, ToolResult, Assistant, User, Assistant],
        &[User, Thinking, Assistant, ToolCall, ToolResult, User, ToolCall, ToolResult, Thinking, Assistant, User, Assistant],
        &[System, User, Thinking, ToolCall, ToolResult, Assistant, User, Assistant],
        &[User, Thinking, ToolCall, ToolResult, Assistant, User, Assistant],
    ];
    for ((name, fixture), expected) in FIXTURES.iter().zip(expected_kinds) {
        let mut window = Window::new("gpt-4o");
        json::push_json(&mut window, fixture).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(kinds(&window), expected, "{name}");
        assert_eq!(json::render_json(&window).unwrap(), verbatim(fixture), "{name}");
    }
}

#[test]
fn images_are_counted_by_the_provider_rule() {
    // Every fixture holds one 800x600 PNG.
    let image = [
        json::ImageRule::OpenAi { low_detail: false }.tokens(Some((800, 600))),
        json::ImageRule::Anthropic.tokens(Some((800, 600))),
        json::ImageRule::OpenAi { low_detail: true }.tokens(Some((800, 600))),
        json::ImageRule::Gemini.tokens(Some((800, 600))),
    ];
    assert_eq!(image[0].tokens, 85 + 170 * 4);
    assert_eq!(image[1].tokens, 640);
    for ((name, fixture), image) in FIXTURES.iter().zip(image) {
        let mut window = Window::new("gpt-4o");
        json::push_json(&mut window, fixture).unwrap();
        let with_image = (0..window.message_count())
            .map(|i| window.message(i).unwrap())
            .find(|m| m.kind() == Kind::User && m.media().is_some())
            .unwrap_or_else(|| panic!("{name}: no image"));
        let text = Model::resolve("gpt-4o").count(with_image.text().unwrap());
        assert_eq!(with_image.count(), text.plus(image), "{name}");
    }
}

#[test]
fn a_wire_message_split_by_the_boundary_sends_only_its_live_blocks() {
    let mut window = Window::new("gpt-4o");
    // The first turn's question is not pinned as the task here, so the boundary splits it.
    window.configure(r#"{"pin_task":false}"#).unwrap();
    json::push_json(&mut window, FIXTURES[1].1).unwrap();
    // Keep the first nine ledger messages: two turns, the second starting with the text of
    // the user message whose tool_result closes the first; the last wire message is cut
    // after its redacted thinking. A zero budget leaves only the second turn live.
    window.truncate(9).unwrap();
    window.set_budget(0).unwrap();
    assert_eq!((window.turn_count(), window.first_live_turn()), (2, 1));
    let start = window.start();
    assert_eq!(window.message(start).unwrap().kind(), Kind::User);
    let rendered: Value = serde_json::from_str(&json::render_json(&window).unwrap()).unwrap();
    let first = &rendered[0];
    assert_eq!(first, &json!({"role": "user", "content": [{"type": "text", "text": "Also, which one holds the ledger?"}]}));
    let rendered = rendered.as_array().unwrap();
    assert_eq!(rendered.len(), 4);
    assert_eq!(rendered[3], json!({"role": "assistant", "content": [{"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}]}));
}

#[test]
fn formats_do_not_mix_and_a_bad_element_pushes_nothing() {
    let mut window = Window::new("gpt-4o");
    json::push_json(&mut window, FIXTURES[0].1).unwrap();
    let before = window.message_count();
    let err = json::push_json(&mut window, r#"{"role":"model","parts":[{"text":"hi"}]}"#).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Mismatch);
    assert!(err.message().contains("Gemini"), "{}", err.message());
    let err = json::push_json(&mut window, "[{\"role\":\"user\",\"content\":\"ok\"},\n {\"role\":\"robot\",\"content\":\"x\"}]")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArg);
    assert!(err.message().contains("element 1 (line 2), field 'role'"), "{}", err.message());
    let err = json::push_json(&mut window, "[{\"role\":\"user\",\n \"content\":}]").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Parse);
    assert!(err.message().contains("line 2"), "{}", err.message());
    assert_eq!(window.message_count(), before);
    // The format is fixed for the window's life: a reset does not free it.
    window.reset();
    let gemini = r#"{"role":"model","parts":[{"text":"hi"}]}"#;
    assert_eq!(json::push_json(&mut window, gemini).unwrap_err().kind(), ErrorKind::Mismatch);
    let mut fresh = Window::new("gpt-4o");
    json::push_json(&mut fresh, gemini).unwrap();
    assert_eq!((fresh.wire_formats().single(), fresh.format()), (Some(Format::Gemini), Format::Gemini));
}

/// format "auto": a message every format reads fixes none (the model's family renders it
/// meanwhile); the first one only one format reads fixes that one. A Claude model behind an
/// OpenAI-compatible gateway was fixed to Anthropic by its first user message and refused
/// its first `tool_calls`.
#[test]
fn an_ambiguous_message_fixes_no_format() {
    let mut window = Window::new("claude-sonnet-4-5");
    json::push_json(&mut window, r#"{"role":"user","content":"List the files."}"#).unwrap();
    assert_eq!((window.wire_formats().single(), window.format()), (None, Format::Anthropic));
    let call = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]}"#;
    json::push_json(&mut window, call).unwrap();
    assert_eq!((window.wire_formats().single(), window.format()), (Some(Format::OpenAiChat), Format::OpenAiChat));
    json::push_json(&mut window, r#"{"role":"tool","tool_call_id":"c1","content":"a.c"}"#).unwrap();
    let sent: Value = serde_json::from_str(&json::render_json(&window).unwrap()).unwrap();
    assert_eq!(sent[1]["tool_calls"][0]["id"], "c1", "{sent}");
    let anthropic = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1"}]}"#;
    assert_eq!(json::push_json(&mut window, anthropic).unwrap_err().kind(), ErrorKind::Mismatch);
}

/// A step of a generated conversation, independent of any format.
#[derive(Clone, Debug)]
enum Step {
    User(String),
    Assistant(String),
    /// Tool calls (name, argument) and their results, in order.
    Tools(Vec<(String, String, String)>),
}

fn step() -> impl Strategy<Value = Step> {
    let text = "[a-zA-Z0-9 .,:'\"\\\\\n\u{e9}\u{4e2d}\u{1f600}]{0,40}";
    prop_oneof![
        text.prop_map(Step::User),
        text.prop_map(Step::Assistant),
        prop::collection::vec(("[a-z_]{1,8}", text, text), 1..4).prop_map(Step::Tools),
    ]
}

/// What the ledger must hold for one message: kind, text, call id and tool name.
type Expected = (Kind, String, Option<String>, Option<String>);

/// True when no two consecutive wire messages of `wire` are merged by render_json (the
/// messages of one assistant step become one, and Anthropic's and Gemini's alternate
/// starting with the user) and, in Anthropic's format, no message holds a blank text block
/// (left out of renders: Anthropic refuses them).
fn renders_verbatim(format: Format, wire: &[Value]) -> bool {
    let blank = |text: &Value| text.as_str().is_some_and(|text| text.trim().is_empty());
    let blank_text = |message: &Value| match &message["content"] {
        Value::Array(blocks) => blocks.iter().any(|block| block["type"] == "text" && blank(&block["text"])),
        content => blank(content),
    };
    if format == Format::Anthropic && wire.iter().any(blank_text) {
        return false;
    }
    let role = |message: &Value| message["role"].as_str().unwrap_or_default().to_owned();
    let first_is_user = wire.first().is_none_or(|first| role(first) == "user");
    wire.windows(2).all(|pair| {
        let (a, b) = (role(&pair[0]), role(&pair[1]));
        match format {
            Format::OpenAiChat => !(a == "assistant" && b == "assistant"),
            Format::Anthropic | Format::Gemini => a != b,
            Format::OpenAiResponses => true,
        }
    }) && (!matches!(format, Format::Anthropic | Format::Gemini) || first_is_user)
}

/// The wire messages of `steps` in `format`, and what the ledger must hold.
fn emit(format: Format, steps: &[Step]) -> (Vec<Value>, Vec<Expected>) {
    let mut wire = Vec::new();
    let mut ledger = Vec::new();
    for (s, step) in steps.iter().enumerate() {
        match step {
            Step::User(text) | Step::Assistant(text) => {
                let user = matches!(step, Step::User(_));
                let role = match (format, user) {
                    (_, true) => "user",
                    (Format::Gemini, false) => "model",
                    (_, false) => "assistant",
                };
                wire.push(match format {
                    Format::Gemini => json!({"role": role, "parts": [{"text": text}]}),
                    _ => json!({"role": role, "content": text}),
                });
                ledger.push((if user { Kind::User } else { Kind::Assistant }, text.clone(), None, None));
            }
            Step::Tools(calls) => {
                let id = |c: usize| format!("call_{s}_{c}");
                let args = |arg: &str| json!({"a": arg});
                let mut call_blocks = Vec::new();
                let mut result_blocks = Vec::new();
                for (c, (name, arg, result)) in calls.iter().enumerate() {
                    let arguments = args(arg).to_string();
                    match format {
                        Format::OpenAiChat => {
                            call_blocks.push(
                                json!({"id": id(c), "type": "function", "function": {"name": name, "arguments": arguments}}),
                            );
                            result_blocks.push(json!({"role": "tool", "tool_call_id": id(c), "content": result}));
                        }
                        Format::Anthropic => {
                            call_blocks.push(json!({"type": "tool_use", "id": id(c), "name": name, "input": args(arg)}));
                            result_blocks.push(json!({"type": "tool_result", "tool_use_id": id(c), "content": result}));
                        }
                        Format::OpenAiResponses => {
                            wire.push(json!({"type": "function_call", "call_id": id(c), "name": name, "arguments": arguments}));
                            result_blocks.push(json!({"type": "function_call_output", "call_id": id(c), "output": result}));
                        }
                        Format::Gemini => {
                            call_blocks.push(json!({"functionCall": {"id": id(c), "name": name, "args": args(arg)}}));
                            result_blocks
                                .push(json!({"functionResponse": {"id": id(c), "name": name, "response": {"r": result}}}));
                        }
                    }
                    ledger.push((Kind::ToolCall, arguments, Some(id(c)), Some(name.clone())));
                }
                for (c, (name, _, result)) in calls.iter().enumerate() {
                    let (text, name) = match format {
                        Format::Gemini => (json!({"r": result}).to_string(), Some(name.clone())),
                        _ => (result.clone(), None),
                    };
                    ledger.push((Kind::ToolResult, text, Some(id(c)), name));
                }
                match format {
                    Format::OpenAiChat => {
                        wire.push(json!({"role": "assistant", "content": null, "tool_calls": call_blocks}));
                        wire.extend(result_blocks);
                    }
                    Format::Anthropic => {
                        wire.push(json!({"role": "assistant", "content": call_blocks}));
                        wire.push(json!({"role": "user", "content": result_blocks}));
                    }
                    Format::OpenAiResponses => wire.extend(result_blocks),
                    Format::Gemini => {
                        wire.push(json!({"role": "model", "parts": call_blocks}));
                        wire.push(json!({"role": "user", "parts": result_blocks}));
                    }
                }
            }
        }
    }
    (wire, ledger)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn generated_conversations_parse_count_and_render_back(
        steps in prop::collection::vec(step(), 1..12),
        format_index in 0usize..4,
        model in prop::sample::select(vec!["gpt-4o", "gpt-4", "claude-sonnet-4-5"]),
        pretty in any::<bool>(),
        budget in 0i32..400,
    ) {
        let format = Format::ALL[format_index];
        let (wire, ledger) = emit(format, &steps);
        let text = if pretty { serde_json::to_string_pretty(&wire).unwrap() } else { serde_json::to_string(&wire).unwrap() };
        let mut window = Window::new(model);
        let added = json::push_json(&mut window, &text).unwrap();
        prop_assert_eq!(added, ledger.len());
        let reference = Model::resolve(model);
        for (i, (kind, text, call_id, name)) in ledger.iter().enumerate() {
            let message = window.message(i).unwrap();
            prop_assert_eq!(message.kind(), *kind);
            prop_assert_eq!(message.text(), Some(text.as_str()));
            prop_assert_eq!(message.name(), name.as_deref());
            let counted = name.as_ref().map_or(text.clone(), |name| format!("{name}\n{text}"));
            prop_assert_eq!(message.count(), reference.count(&counted));
            prop_assert_eq!(message.call_id(), call_id.as_deref());
        }
        // Messages that fit several formats (plain texts) are read in the window's own.
        if renders_verbatim(window.format(), &wire) {
            prop_assert_eq!(json::render_json(&window).unwrap(), verbatim(&text));
        }

        // Under any budget, what is rendered is valid JSON of the live wire messages: every
        // rendered element is one of the pushed ones, or a part of one, in order.
        window.set_budget(budget).unwrap();
        let rendered: Vec<Value> = serde_json::from_str(&json::render_json(&window).unwrap()).unwrap();
        let live = window.message_count() - window.start();
        // (Anthropic's and Gemini's conversation may start with a user message of the library's.)
        let start_message = usize::from(matches!(window.format(), Format::Anthropic | Format::Gemini));
        prop_assert!(rendered.len() <= live.max(1) + window.start() + start_message);
        for element in &rendered {
            let start = element["content"] == ctxwin::view::text::CONVERSATION_START
                || element["parts"][0]["text"] == ctxwin::view::text::CONVERSATION_START;
            prop_assert!(start || wire.iter().any(|w| w == element || w["role"] == element["role"]), "{}", element);
        }
    }
}

/// A Gemini functionResponse is stored as one line of JSON; tiered L1 used to cut outputs
/// by lines only, so it was never shortened; then its middle was cut and sent as a string
/// under a new key, `{"result": "..."}`. Now it is cut inside its fields (its long array
/// keeps its first and last rows) and sent as the same response object.
#[test]
fn tiered_cuts_a_one_line_gemini_function_response() {
    let rows: Vec<String> = (0..400).map(|i| format!("{{\"id\":{i},\"name\":\"row {i}\"}}")).collect();
    let turn = |n: usize| {
        json!([
            {"role": "user", "parts": [{"text": format!("List the rows, take {n}.")}]},
            {"role": "model", "parts": [{"functionCall": {"name": "list_rows", "args": {"take": n}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "list_rows",
                "response": {"rows": serde_json::from_str::<Value>(&format!("[{}]", rows.join(","))).unwrap()}}}]},
            {"role": "model", "parts": [{"text": format!("There are {n} rows.")}]}
        ])
    };
    let mut window = Window::new("gemini-2.5-pro");
    window.configure(r#"{"strategy":"tiered","token_threshold":9000,"tool_output_max_lines":6}"#).unwrap();
    for n in 0..3 {
        json::push_json(&mut window, &turn(n).to_string()).unwrap();
        window.end_turn();
    }
    let result = (0..window.view_len()).map(|i| window.view_item(i).unwrap()).find(|item| item.kind == Kind::ToolResult).unwrap();
    assert_eq!(result.item_type, ctxwin::view::ItemType::Truncated);
    let text = result.text.unwrap();
    let cut: Value = serde_json::from_str(text).unwrap();
    let kept: Vec<String> = cut["rows"].as_array().unwrap().iter().map(Value::to_string).collect();
    assert_eq!(kept[..3], rows[..3]);
    assert_eq!(kept[3], "\"[... 394 items truncated ...]\"");
    assert_eq!(kept[4..], rows[397..]);
    let rendered: Value = serde_json::from_str(&json::render_json(&window).unwrap()).unwrap();
    let response = rendered.as_array().unwrap().iter().find_map(|content| content["parts"][0].get("functionResponse")).unwrap();
    assert_eq!(response["name"], "list_rows");
    // The name is kept apart from the stored text, which is the response alone: sent as it.
    assert_eq!(response["response"], cut);
}

/// push_json reads what `ctxwin inspect` reads: a whole request body (its system prompt a
/// pinned SYSTEM message, its tools the tools overhead) and JSON Lines, all or nothing.
#[test]
fn push_json_takes_request_bodies_and_json_lines() {
    let body = r#"{"model":"claude-sonnet-4-5","max_tokens":512,"system":[{"type":"text","text":"Be brief."}],
        "tools":[{"name":"ls","description":"List","input_schema":{"type":"object"}}],
        "messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"Hello."}]}]}"#;
    let mut window = Window::new("claude-sonnet-4-5");
    assert_eq!(json::push_json(&mut window, body).unwrap(), 3);
    assert_eq!(kinds(&window), [Kind::System, Kind::User, Kind::Assistant]);
    assert_eq!(window.message(0).unwrap().text(), Some("Be brief."));
    let tools =
        json::count_tools(window.model(), r#"[{"name":"ls","description":"List","input_schema":{"type":"object"}}]"#).unwrap();
    assert_eq!(window.overhead().tools, tools.tokens);
    // The system prompt goes back where Anthropic wants it.
    let request: Value = serde_json::from_str(&json::render_request(&window, r#"{"model":"m"}"#).unwrap()).unwrap();
    assert_eq!(request["system"], json!([{"type": "text", "text": "Be brief."}]));
    assert_eq!(request["messages"][0], json!({"role": "user", "content": "hi"}));

    // A body in another format than the window's changes nothing (its messages fit Chat and
    // Anthropic alike, so far: not Gemini).
    let gemini_body = r#"{"contents":[{"role":"model","parts":[{"text":"x"}]}],"tools":[]}"#;
    let before = ctxwin::persist::export(&window);
    assert_eq!(json::push_json(&mut window, gemini_body).unwrap_err().kind(), ErrorKind::Mismatch);
    assert_eq!(ctxwin::persist::export(&window), before);

    // JSON Lines; a bad line pushes nothing and is named.
    let mut window = Window::new("gpt-4o");
    let lines = "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"assistant\",\"content\":\"b\"}\n";
    assert_eq!(json::push_json(&mut window, lines).unwrap(), 2);
    let bad = "{\"role\":\"user\",\"content\":\"c\"}\n{\"role\":\"robot\",\"content\":\"d\"}\n";
    let err = json::push_json(&mut window, bad).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArg);
    assert!(err.message().starts_with("line 2:") && err.message().contains("'role'"), "{}", err.message());
    assert_eq!(window.message_count(), 2);
}

/// Anthropic refuses text blocks that are empty or whitespace only ("text content blocks must
/// contain non-whitespace text"): pushed as text, such a message is left out of an Anthropic
/// render like an empty one (the user messages around it merge), a blank tool result goes
/// without content and a blank system prompt without a block. OpenAI and Gemini take
/// whitespace: their renders keep it.
#[test]
fn anthropic_leaves_out_whitespace_only_text() {
    let window = |model: &str| {
        let mut window = Window::new(model);
        window.push(Kind::System, " \n").unwrap();
        window.push(Kind::User, "hi").unwrap();
        window.push(Kind::Assistant, "  ").unwrap();
        window.push(Kind::User, "next").unwrap();
        window.push_tool_call("a", "read", "{}").unwrap();
        window.push_tool(Kind::ToolResult, "a", "\t").unwrap();
        window.push(Kind::Assistant, "\n\n").unwrap();
        window
    };
    let request = json::render_request(&window("claude-sonnet-4-5"), r#"{"model":"m"}"#).unwrap();
    let request: Value = serde_json::from_str(&request).unwrap();
    assert_eq!(request.get("system"), None, "{request}");
    assert_eq!(
        request["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "next"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
        ]),
        "{request}"
    );
    for model in ["gpt-4o", "gemini-2.5-pro"] {
        let sent = json::render_json(&window(model)).unwrap();
        assert!(sent.contains(r#""  ""#) && sent.contains(r#""\t""#), "{model} keeps whitespace: {sent}");
    }
}

/// Anthropic answers with blank text blocks (a lone "\n\n" before a tool call, an answer of
/// whitespace alone) but refuses them sent back: an agent that pushes the answers as they
/// came got a 400 on every later request. An Anthropic render leaves out the blank blocks of
/// JSON-pushed messages, and a message left with nothing (the user messages around it
/// merge); the rest of each message is sent as pushed. Also a blank block after a failed
/// compaction (`content: null`), whose opaque block it used to join. The window keeps every
/// message as pushed.
#[test]
fn anthropic_leaves_out_the_blank_text_of_pushed_answers() {
    let mut window = Window::new("claude-sonnet-4-5");
    let pushed = [
        r#"{"role":"user","content":"List the files."}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"\n\n"},{"type":"tool_use","id":"a","name":"ls","input":{}}]}"#,
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"main.c"}]}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":" "}]}"#,
        r#"{"role":"user","content":[{"type":"text","text":"And now?"},{"type":"text","text":""}]}"#,
        r#"{"role":"assistant","content":[{"type":"compaction","content":null},{"type":"text","text":"\t"},{"type":"text","text":"Done. "},{"type":"text","text":" "}]}"#,
    ];
    for message in pushed {
        json::push_json(&mut window, message).unwrap();
    }
    let request = json::render_request(&window, r#"{"model":"m","max_tokens":100}"#).unwrap();
    let request: Value = serde_json::from_str(&request).unwrap();
    assert_eq!(
        request["messages"],
        json!([
            {"role": "user", "content": "List the files."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "ls", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "main.c"},
                {"type": "text", "text": "And now?"},
            ]},
            {"role": "assistant", "content": [
                {"type": "compaction", "content": null},
                {"type": "text", "text": "Done. "},
            ]},
        ]),
        "{request}"
    );
    // Every message pushed is still in the window, its text as pushed.
    let texts: Vec<&str> = (0..window.message_count()).filter_map(|i| window.message(i).unwrap().text()).collect();
    assert!(texts.contains(&"\n\n") && texts.contains(&" ") && texts.contains(&"\t"), "{texts:?}");
}
