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
    push(&mut w, json!([
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "bug"}},
        {"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["bug"]},
        {"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "container_id": "c", "code": "1", "outputs": []},
        {"type": "function_call", "call_id": "f1", "name": "read", "arguments": "{}"},
        {"type": "custom_tool_call", "call_id": "k1", "name": "patch", "input": "diff"},
        {"type": "apply_patch_call", "call_id": "p1", "status": "completed", "operation": {"type": "delete_file", "path": "a"}},
        {"type": "computer_call", "id": "cu_1", "call_id": "cc1", "status": "completed", "action": {"type": "screenshot"}, "pending_safety_checks": []}
    ]));
    // Interrupted: the user speaks before any result.
    w.push(Kind::User, "stop").unwrap();
    let sent = body(&w);
    assert_eq!(check(Rules::Responses, &sent), Ok(()), "{sent}");
    let input = &sent["input"];
    assert_eq!(
        types(input),
        [
            "message", "web_search_call", "file_search_call", "code_interpreter_call", "function_call", "custom_tool_call",
            "apply_patch_call", "function_call_output", "custom_tool_call_output", "apply_patch_call_output", "message"
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
    push(&mut w, json!({"type": "computer_call", "id": "cu_1", "call_id": "cc1", "status": "completed", "action": {"type": "screenshot"}, "pending_safety_checks": []}));
    push(&mut w, json!({"type": "computer_call_output", "call_id": "cc1", "output": {"type": "computer_screenshot", "image_url": "https://x/s.png"}}));
    push(&mut w, json!({"type": "custom_tool_call", "call_id": "k1", "name": "patch", "input": "diff"}));
    w.push_tool(Kind::ToolResult, "k1", "applied").unwrap();
    w.push(Kind::User, "thanks").unwrap();
    let sent = body(&w);
    assert_eq!(check(Rules::Responses, &sent), Ok(()), "{sent}");
    assert_eq!(types(&sent["input"]), ["message", "computer_call", "computer_call_output", "custom_tool_call", "custom_tool_call_output", "message"]);
    assert_eq!(sent["input"][4]["output"], "applied", "a result pushed as text answers in the call's own form");
}

#[test]
fn gemini_consecutive_user_contents_merge_into_one() {
    let mut w = window("gemini-2.5-pro", Format::Gemini);
    w.push(Kind::User, "list the files").unwrap();
    push(&mut w, json!({"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}, {"functionCall": {"name": "cat", "args": {}}}]}));
    push(&mut w, json!({"role": "user", "parts": [{"functionResponse": {"name": "cat", "response": {"r": "x"}}}]}));
    w.push_tool(Kind::ToolResult, "ls", "a b").unwrap();
    w.push(Kind::User, "now the biggest").unwrap();
    w.push(Kind::User, "and quickly").unwrap();
    let sent = body(&w);
    assert_eq!(check(Rules::Gemini, &sent), Ok(()), "{sent}");
    let contents = sent["contents"].as_array().unwrap();
    let roles: Vec<&str> = contents.iter().map(|c| c["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "model", "user"], "{sent}");
    let last: Vec<String> = contents[2]["parts"].as_array().unwrap().iter().map(|p| p.as_object().unwrap().keys().next().unwrap().clone()).collect();
    assert_eq!(last, ["functionResponse", "functionResponse", "text", "text"], "the answers first, then what the user said");
    // A view that starts with the model opens with a user content.
    let mut cut = window("gemini-2.5-pro", Format::Gemini);
    cut.push(Kind::Assistant, "Hello, how can I help?").unwrap();
    cut.push(Kind::User, "hi").unwrap();
    let sent = body(&cut);
    assert_eq!(check(Rules::Gemini, &sent), Ok(()), "{sent}");
}
