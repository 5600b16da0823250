//! Writes the seed corpora of the push_json, import, classify_error, view_ops and transcript
//! targets into fuzz/seeds/ from real documents: the provider fixtures, the error samples,
//! and exports of windows driven through a session. Run from fuzz/:
//! `cargo run --example make_seeds`. The output is committed; rerun it when the formats change.

use ctxwin::{Kind, Window, json, persist};
use serde_json::Value;
use std::fs;
use std::path::Path;

const FIXTURES: [&str; 4] = ["openai_chat", "anthropic", "openai_responses", "gemini"];

/// A whole response object of each provider.
const RESPONSES: [(&str, &str); 4] = [
    (
        "response_chat",
        r#"{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}],"refusal":null},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":5}}"#,
    ),
    (
        "response_responses",
        r#"{"id":"resp_1","object":"response","status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA"},{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Listing.","annotations":[]}]},{"type":"function_call","call_id":"c1","name":"ls","arguments":"{}"}],"usage":{"input_tokens":9}}"#,
    ),
    (
        "response_anthropic",
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"ls","signature":"sig"},{"type":"tool_use","id":"c1","name":"ls","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":9}}"#,
    ),
    (
        "response_gemini",
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}},"thoughtSignature":"U0lH"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9}}"#,
    ),
];

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new("seeds").join(target);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(name), bytes).unwrap();
}

/// A session of `turns` turns, each a question, a tool call and its result, and an answer.
fn session(window: &mut Window, turns: usize) {
    for turn in 0..turns {
        window.push(Kind::User, &format!("Question {turn}: what is in src/?")).unwrap();
        let id = format!("call_{turn}");
        window.push_tool(Kind::ToolCall, &id, r#"{"dir":"src"}"#).unwrap();
        window.push_tool(Kind::ToolResult, &id, "lib.rs\nwindow.rs\nview.rs\nconfig.rs\nerror.rs").unwrap();
        window.push(Kind::Assistant, "Five files; window.rs holds the ledger.").unwrap();
        window.end_turn();
    }
}

fn main() {
    let fixture = |name: &str| fs::read_to_string(Path::new("../tests/fixtures").join(format!("{name}.json"))).unwrap();

    // push_json: model 0, settings 0, no first message, then the document.
    for name in FIXTURES {
        let mut seed = vec![0u8, 0, 0];
        seed.extend_from_slice(fixture(name).as_bytes());
        write("push_json", name, &seed);
    }
    write("push_json", "chat_one", b"\x05\x02\x01{\"role\":\"assistant\",\"content\":\"ok\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]}");
    // Whole response objects, which push the message(s) they hold.
    for (name, response) in RESPONSES {
        write("push_json", name, &[b"\x00\x00\x00".as_slice(), response.as_bytes()].concat());
    }

    // transcript: the fixtures, one as JSON Lines, one as a request body.
    for name in FIXTURES {
        write("transcript", name, fixture(name).as_bytes());
    }
    let chat: Vec<Value> = serde_json::from_str(&fixture("openai_chat")).unwrap();
    let lines: Vec<String> = chat.iter().map(Value::to_string).collect();
    write("transcript", "chat_lines", (lines.join("\n\n") + "\n").as_bytes());
    let anthropic: Value = serde_json::from_str(&fixture("anthropic")).unwrap();
    let body = serde_json::json!({"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": "Be brief."}],
        "tools": [{"name": "ls", "input_schema": {"type": "object"}}], "messages": anthropic});
    write("transcript", "anthropic_body", serde_json::to_string_pretty(&body).unwrap().as_bytes());

    // classify_error: every sample's text.
    let samples: Vec<Value> = serde_json::from_str(&fs::read_to_string("../tests/error_samples.json").unwrap()).unwrap();
    for sample in &samples {
        write("classify_error", sample["id"].as_str().unwrap(), sample["text"].as_str().unwrap().as_bytes());
    }

    // import: exports of windows in several states, after a seeded_window prefix (model 0,
    // no messages).
    let mut exports = Vec::new();
    let mut plain = Window::new("gpt-4o");
    plain.push(Kind::System, "You are a coding agent.").unwrap();
    session(&mut plain, 3);
    exports.push(("sliding", plain.clone()));
    let mut pruned = plain.clone();
    pruned.set_budget(60).unwrap();
    session(&mut pruned, 2);
    exports.push(("pruned", pruned));
    let mut summary = Window::new("claude-sonnet-4-5");
    summary.configure(r#"{"strategy":"summary","context_limit":4000,"threshold":0.1}"#).unwrap();
    session(&mut summary, 4);
    let (_, pending) = summary.build_summary_request().unwrap();
    summary.await_summary(pending);
    summary.set_summary(summary.generation(), "Original task: list src/. [done] listed it.", 1_700_000_000).unwrap();
    session(&mut summary, 1);
    exports.push(("summary", summary));
    let mut tiered = Window::new("gpt-4");
    tiered.configure(r#"{"strategy":"tiered","tool_output_max_lines":2,"history_budget":150,"retain_text":true}"#).unwrap();
    tiered.set_overhead(120, 300).unwrap();
    session(&mut tiered, 4);
    tiered.compact();
    exports.push(("tiered", tiered));
    let mut counted = Window::new("no-such-model");
    counted.configure(r#"{"retain_text":false,"strategy":"monologue","keep_recent_turns":1}"#).unwrap();
    session(&mut counted, 3);
    counted.set_external_id(0, 42).unwrap();
    exports.push(("counts_only", counted));
    let mut wire = Window::new("gpt-4o");
    json::push_json(&mut wire, &fixture("anthropic")).unwrap();
    wire.end_turn();
    exports.push(("anthropic_json", wire));
    for (name, window) in exports {
        let mut seed = vec![0u8, 0];
        seed.extend_from_slice(persist::export(&window).as_bytes());
        write("import", name, &seed);
    }

    // view_ops: hand-written operation streams (see the target's match): a turn with two
    // parallel calls answered out of order, one left unanswered, then each strategy.
    let user = |text: &str| [&[0u8, 0, text.len() as u8][..], text.as_bytes()].concat();
    let tool = |result: bool, id: u8, text: &str| [&[2u8, u8::from(result), id, text.len() as u8][..], text.as_bytes()].concat();
    let mut ops = vec![0u8];
    for strategy in 0..5u8 {
        ops.extend(user("list src"));
        ops.extend(tool(false, 0, "{}"));
        ops.extend(tool(false, 1, "{}"));
        ops.extend(tool(true, 1, "a\nb\nc\nd"));
        ops.extend(tool(true, 0, "lib.rs"));
        ops.extend(tool(false, 2, "{}"));
        ops.extend([5, 9, strategy, 1, 0, 40, 0, 1]); // end_turn; configure strategy, history_budget 40
        ops.extend(user("and then?"));
        ops.extend([5, 7, 10, 11, 1, 1, 8, 0x10, 0, 3, 0, 2, 13, 200, 0]); // end_turn, compact, summary request and answer, recover, set_budget
    }
    write("view_ops", "tools_and_strategies", &ops);
}
