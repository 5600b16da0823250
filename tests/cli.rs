//! The `ctxwin` program run on the committed fixtures (one transcript per provider format).

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};

const FIXTURES: [&str; 4] = [
    "tests/fixtures/openai_chat.json",
    "tests/fixtures/anthropic.json",
    "tests/fixtures/openai_responses.json",
    "tests/fixtures/gemini.json",
];

fn ctxwin(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxwin"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ctxwin program runs");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn inspect_reads_every_format() {
    for fixture in FIXTURES {
        for budget in ["100000", "50"] {
            let out = ctxwin(&["inspect", "--model", "gpt-4o", "--budget", budget, "--json", fixture], "");
            assert!(out.status.success(), "{fixture}: {}", String::from_utf8_lossy(&out.stderr));
            let report: Value = serde_json::from_slice(&out.stdout).unwrap();
            let turns = report["turns"].as_array().unwrap();
            let in_turns: u64 = turns.iter().map(|t| t["message_count"].as_u64().unwrap()).sum();
            let first = turns[0]["first_message"].as_u64().unwrap();
            assert_eq!(first + in_turns, report["messages"].as_u64().unwrap(), "{fixture}");
            let live: u64 = turns.iter().filter(|t| t["live"] == true).map(|t| t["tokens"].as_u64().unwrap()).sum();
            assert_eq!(report["usage"]["history"].as_u64().unwrap(), live, "{fixture}");
            let start = report["start"].as_u64().unwrap();
            assert!(report["send"].as_array().unwrap().iter().any(|i| i.as_u64() == Some(start)), "{fixture}");
            if budget == "50" {
                assert!(start > 0, "{fixture}: a 50-token budget prunes");
            }
            let text = ctxwin(&["inspect", "--model", "gpt-4o", "--budget", budget, fixture], "");
            let text = String::from_utf8(text.stdout).unwrap();
            assert!(text.contains("context ["), "{fixture}: {text}");
            let items = report["items"].as_array().unwrap();
            let cut = report["send"].as_array().unwrap().len() as u64 != report["messages"].as_u64().unwrap()
                || items.iter().any(|i| i["type"] != "message");
            assert_eq!(text.contains("context window starts here"), cut, "{fixture}: {text}");
        }
    }
}

#[test]
fn errors_name_the_line_and_field() {
    let dir = std::env::temp_dir().join(format!("ctxwin-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "[\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": \"user\", \"content\": [{\"type\": \"text\"}]}\n]\n",
    )
    .unwrap();
    let out = ctxwin(&["inspect", "--model", "gpt-4o", bad.to_str().unwrap()], "");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("element 1 (line 3)") && err.contains("content[0].text"), "{err}");
    let out = ctxwin(&["inspect", "--model", "gpt-4o", "no/such/file.json"], "");
    assert!(String::from_utf8(out.stderr).unwrap().contains("no/such/file.json"));
    let out = ctxwin(&["inspect", "--model", "gpt-4o"], "");
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn count_reads_a_file_or_standard_input() {
    let out = ctxwin(&["count", "--model", "gpt-4o", "--json"], "hello world");
    let count: Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected = ctxwin::Model::resolve("gpt-4o").count("hello world");
    assert_eq!(count["tokens"].as_u64(), Some(u64::from(expected.tokens)));
    assert_eq!(count["exact"], true);
    let out = ctxwin(&["count", "--model", "claude-sonnet-4-5", "README.md"], "");
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let expected = ctxwin::Model::resolve("claude-sonnet-4-5").count(&readme);
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), format!("~{}", expected.tokens));
}

/// The library's own C functions on one window, as an agent in C calls them.
mod c_side {
    use ctxwin::ffi::error::ctxwin_status;
    use ctxwin::ffi::handle::ctxwin_window;
    use ctxwin::ffi::{json, persist, summary, view, window};
    use libc::c_char;

    pub struct CWindow(*mut ctxwin_window);

    /// Text a `(buf, cap, needed)` function writes.
    fn text_of(f: impl Fn(*mut c_char, usize, *mut usize) -> ctxwin_status) -> String {
        let mut needed = 0;
        assert_eq!(f(std::ptr::null_mut(), 0, &mut needed), ctxwin_status::Ok);
        let mut buf = vec![0u8; needed + 1];
        assert_eq!(f(buf.as_mut_ptr().cast(), buf.len(), &mut needed), ctxwin_status::Ok);
        buf.truncate(needed);
        String::from_utf8(buf).unwrap()
    }

    /// One view item: type, kind, index, tokens, exact, text.
    pub type Item = (i32, i32, usize, i32, bool, String);

    impl CWindow {
        pub fn new(model: &str) -> CWindow {
            let mut w = std::ptr::null_mut();
            // SAFETY: a valid string and out-pointer.
            assert_eq!(unsafe { window::ctxwin_window_new(model.as_ptr().cast(), model.len(), &mut w) }, ctxwin_status::Ok);
            CWindow(w)
        }

        pub fn import(doc: &str) -> CWindow {
            let mut w = std::ptr::null_mut();
            // SAFETY: a valid string and out-pointer.
            assert_eq!(unsafe { persist::ctxwin_window_import(doc.as_ptr().cast(), doc.len(), &mut w) }, ctxwin_status::Ok);
            CWindow(w)
        }

        pub fn configure(&self, json: &str) {
            // SAFETY: a live handle and a valid string.
            assert_eq!(unsafe { window::ctxwin_window_configure(self.0, json.as_ptr().cast(), json.len()) }, ctxwin_status::Ok);
        }

        pub fn push_json(&self, json: &str) {
            // SAFETY: a live handle and a valid string.
            assert_eq!(unsafe { json::ctxwin_window_push_json(self.0, json.as_ptr().cast(), json.len()) }, ctxwin_status::Ok);
        }

        pub fn end_turn(&self) {
            // SAFETY: a live handle; `pruned` may be NULL.
            assert_eq!(unsafe { window::ctxwin_window_end_turn(self.0, std::ptr::null_mut()) }, ctxwin_status::Ok);
        }

        pub fn items(&self) -> Vec<Item> {
            // SAFETY: a live handle.
            let len = unsafe { view::ctxwin_window_view_len(self.0) };
            (0..len)
                .map(|i| {
                    let mut item = std::mem::MaybeUninit::<view::ctxwin_item>::zeroed();
                    // SAFETY: a live handle and a writable item.
                    assert_eq!(unsafe { view::ctxwin_window_view_get(self.0, i, item.as_mut_ptr()) }, ctxwin_status::Ok);
                    // SAFETY: written on success.
                    let item = unsafe { item.assume_init() };
                    // SAFETY: the item's text is valid for text_len bytes until the next mutating call.
                    let text = unsafe { std::slice::from_raw_parts(item.text.cast::<u8>(), item.text_len) };
                    let text = String::from_utf8(text.to_vec()).unwrap();
                    (item.r#type, item.kind, item.index, item.tokens.tokens, item.tokens.exact, text)
                })
                .collect()
        }

        pub fn render_json(&self) -> String {
            // SAFETY: a live handle and the buffers text_of passes.
            text_of(|buf, cap, needed| unsafe { json::ctxwin_window_render_json(self.0, buf, cap, needed) })
        }

        pub fn render_request(&self, base: &str) -> String {
            // SAFETY: as for render_json, and `base` is a valid string.
            text_of(|buf, cap, needed| unsafe {
                json::ctxwin_window_render_request(self.0, base.as_ptr().cast(), base.len(), buf, cap, needed)
            })
        }

        pub fn validate(&self) -> String {
            // SAFETY: as for render_json.
            text_of(|buf, cap, needed| unsafe { view::ctxwin_window_validate(self.0, buf, cap, needed) })
        }

        pub fn summary_request(&self) -> String {
            // SAFETY: as for render_json.
            text_of(|buf, cap, needed| unsafe { summary::ctxwin_window_summary_request(self.0, buf, cap, needed) })
        }

        pub fn export(&self) -> String {
            // SAFETY: as for render_json.
            text_of(|buf, cap, needed| unsafe { persist::ctxwin_window_export(self.0, buf, cap, needed) })
        }
    }

    impl Drop for CWindow {
        fn drop(&mut self) {
            // SAFETY: the handle is live and freed once.
            unsafe { window::ctxwin_window_free(self.0) }
        }
    }
}

use c_side::CWindow;

/// A 72-message Chat Completions session of 18 tool-using turns with long tool outputs; the
/// call of turn 5 is never answered. One JSON message per element.
fn long_session() -> Vec<String> {
    let mut messages = Vec::new();
    for turn in 0..18 {
        messages.push(serde_json::json!({"role": "user", "content": format!("Step {turn}: run the tests of module {turn} and fix what fails.")}));
        let id = format!("call_{turn}");
        messages.push(serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "run", "arguments": format!("{{\"cmd\":\"make -C module_{turn} test\"}}")}}]}));
        let output: String = (0..60).map(|line| format!("module_{turn}/test_{line:02} ... ok ({} ms)\n", 3 + line * 7)).collect();
        if turn == 5 {
            messages.push(serde_json::json!({"role": "assistant", "content": "The run was interrupted; moving on."}));
        } else {
            messages.push(serde_json::json!({"role": "tool", "tool_call_id": id, "content": output}));
        }
        messages.push(serde_json::json!({"role": "assistant", "content": format!("Module {turn}: all 60 tests pass.")}));
    }
    messages.into_iter().map(|m| m.to_string()).collect()
}

/// Writes `text` to the file `name` in Cargo's scratch directory for tests; returns its path.
fn write_temp(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The same session pushed through the C API as an agent does: message by message, with
/// `end_turn` after every completed turn.
fn c_window(model: &str, config: &str, messages: &[String]) -> CWindow {
    let w = CWindow::new(model);
    w.configure(config);
    for (i, message) in messages.iter().enumerate() {
        if i > 0 && message.contains(r#""role":"user""#) {
            w.end_turn();
        }
        w.push_json(message);
    }
    w.end_turn();
    w
}

fn json_of(out: &Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The CLI's items against the C view: type, kind, index, tokens, and the text they start with.
fn assert_same_view(report: &Value, c_items: &[c_side::Item], what: &str) {
    const TYPES: [&str; 3] = ["message", "truncated", "synthetic"];
    const KINDS: [&str; 6] = ["system", "user", "assistant", "tool call", "tool result", "thinking"];
    let items = report["items"].as_array().unwrap();
    assert_eq!(items.len(), c_items.len(), "{what}: view length");
    for (i, (item, c)) in items.iter().zip(c_items).enumerate() {
        assert_eq!(item["type"], TYPES[c.0 as usize], "{what}: item {i}");
        assert_eq!(item["kind"], KINDS[c.1 as usize], "{what}: item {i}");
        assert_eq!(item["index"].as_u64(), Some(c.2 as u64), "{what}: item {i}");
        assert_eq!(item["tokens"].as_i64(), Some(i64::from(c.3)), "{what}: item {i}");
        assert_eq!(item["exact"], c.4, "{what}: item {i}");
        let shown = item["text"].as_str().unwrap().trim_end_matches('…');
        let words = c.5.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.starts_with(shown), "{what}: item {i}: {shown:?} is not the start of {words:?}");
    }
}

#[test]
fn inspect_shows_the_view_of_every_strategy_as_the_c_api_gives_it() {
    let messages = long_session();
    let transcript = write_temp("long_session.json", &format!("[{}]", messages.join(",\n")));
    let path = transcript.to_str().unwrap();
    for strategy in ["sliding", "drop_oldest", "tiered", "monologue", "summary"] {
        let config = format!(r#"{{"strategy":"{strategy}","history_budget":3000,"context_limit":6000}}"#);
        let args = ["inspect", "--model", "gpt-4o", "--config", &config, "--json", path];
        let report = json_of(&ctxwin(&args, ""));
        let c = c_window("gpt-4o", &config, &messages);
        assert_same_view(&report, &c.items(), strategy);
        assert_eq!(report["messages"], 72);
        let types: Vec<&str> = report["items"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap()).collect();
        if strategy == "tiered" {
            assert!(types.contains(&"truncated") && types.contains(&"synthetic"), "tiered writes items: {types:?}");
        }
        let start = report["start"].as_u64().unwrap();
        // The divider is drawn as soon as the view is not the transcript as pushed.
        let sent_as_pushed = report["send"].as_array().unwrap().len() as u64 == report["messages"].as_u64().unwrap();
        let cut = !sent_as_pushed || types.iter().any(|t| *t != "message");
        assert_eq!(report["divider_before_item"].is_u64(), cut, "{strategy}");
        if strategy == "tiered" {
            assert!(cut, "tiered rewrote items, so the divider is drawn even at start {start}");
        }
        if ["sliding", "drop_oldest", "summary"].contains(&strategy) {
            assert!(start > 0, "{strategy}: 72 messages do not fit 3000 tokens");
        }
        let text = ctxwin(&["inspect", "--model", "gpt-4o", "--config", &config, path], "");
        let text = String::from_utf8(text.stdout).unwrap();
        assert_eq!(text.contains(&format!("context window starts here (message {start})")), cut, "{strategy}: {text}");
        assert!(text.contains(&format!("the view: {} items", types.len())), "{strategy}: {text}");
        assert!(text.contains("call_17"), "{strategy}: call ids are listed: {text}");
        assert!(text.contains("message 21 (turn 5, call call_5): unanswered call"), "{strategy}: {text}");
    }
}

#[test]
fn problems_lists_what_validate_finds() {
    let messages = long_session();
    let transcript = write_temp("problems.json", &format!("[{}]", messages.join(",")));
    let path = transcript.to_str().unwrap();
    let out = ctxwin(&["inspect", "--model", "gpt-4o", "--problems", path], "");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("problems: 1\n") && text.contains("unanswered call"), "{text}");
    assert!(!text.contains("the view:"), "--problems prints only the problems: {text}");
    let report = json_of(&ctxwin(&["inspect", "--model", "gpt-4o", "--problems", "--json", path], ""));
    let c = c_window("gpt-4o", "{}", &messages);
    assert_eq!(report, serde_json::from_str::<Value>(&c.validate()).unwrap());
    let clean = json_of(&ctxwin(&["inspect", "--model", "gpt-4o", "--problems", "--json", FIXTURES[0]], ""));
    assert_eq!(clean["valid"], true);
}

#[test]
fn render_prints_the_request_body_that_would_be_sent() {
    let messages = long_session();
    let transcript = write_temp("render.json", &format!("[{}]", messages.join(",")));
    let path = transcript.to_str().unwrap();
    let config = r#"{"strategy":"tiered","history_budget":3000}"#;
    let c = c_window("gpt-4o", config, &messages);
    let body = json_of(&ctxwin(&["inspect", "--model", "gpt-4o", "--config", config, "--render", path], ""));
    assert_eq!(body, serde_json::from_str::<Value>(&c.render_request("")).unwrap());
    assert_eq!(body["messages"], serde_json::from_str::<Value>(&c.render_json()).unwrap());
    // --base gives the rest of the body; a conversation it holds is replaced by the window's.
    let base = r#"{"model":"gpt-4o","messages":["replaced"],"max_tokens":512}"#;
    let base_file = write_temp("base.json", base);
    let args = ["inspect", "--model", "gpt-4o", "--config", config, "--render", "--base", base_file.to_str().unwrap(), path];
    let body = json_of(&ctxwin(&args, ""));
    let expected = c.render_request(r#"{"model":"gpt-4o","max_tokens":512}"#);
    assert_eq!(body, serde_json::from_str::<Value>(&expected).unwrap());
    assert_eq!((body["model"].as_str(), body["max_tokens"].as_u64()), (Some("gpt-4o"), Some(512)));
    // A request body is its own base: its system prompt and tools stay, its conversation is the view.
    for fixture in FIXTURES {
        let body = json_of(&ctxwin(&["inspect", "--model", "gpt-4o", "--budget", "50", "--render", fixture], ""));
        let original: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
        if let Some(original) = original.as_object() {
            for (key, value) in original {
                if !["messages", "input", "contents"].contains(&key.as_str()) {
                    assert_eq!(&body[key], value, "{fixture}: {key}");
                }
            }
        }
    }
}

#[test]
fn summary_request_prints_the_prompt_the_library_writes() {
    let messages = long_session();
    let transcript = write_temp("summary.json", &format!("[{}]", messages.join(",")));
    let path = transcript.to_str().unwrap();
    let config = r#"{"strategy":"summary","context_limit":9000,"summary_budget":500}"#;
    let c = c_window("gpt-4o", config, &messages);
    let expected = c.summary_request();
    let out = ctxwin(&["inspect", "--model", "gpt-4o", "--config", config, "--summary-request", path], "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{expected}\n"));
    let json = json_of(&ctxwin(&["inspect", "--model", "gpt-4o", "--config", config, "--summary-request", "--json", path], ""));
    assert_eq!(json["summary_request"], expected);
}

#[test]
fn inspect_opens_a_ctxwin_save_file() {
    let messages = long_session();
    let config = r#"{"strategy":"monologue","history_budget":2500,"format":"openai_chat"}"#;
    let c = c_window("claude-sonnet-4-5", config, &messages);
    let saved = write_temp("window.json", &c.export());
    let path = saved.to_str().unwrap();
    let report = json_of(&ctxwin(&["inspect", "--json", path], ""));
    assert_eq!(report["format"], "ctxwin save file");
    assert_eq!(report["model"], "claude-sonnet-4-5");
    assert_eq!(report["strategy"], "monologue");
    assert_same_view(&report, &c.items(), "save file");
    // Settings on the command line apply on top of the saved ones, as configure would.
    let report = json_of(&ctxwin(&["inspect", "--budget", "100000", "--json", path], ""));
    let reopened = CWindow::import(&c.export());
    reopened.configure(r#"{"history_budget":100000}"#);
    assert_same_view(&report, &reopened.items(), "save file with --budget");
    let text = String::from_utf8(ctxwin(&["inspect", path], "").stdout).unwrap();
    assert!(text.contains("(ctxwin save file), model claude-sonnet-4-5, strategy monologue"), "{text}");
    let body = json_of(&ctxwin(&["inspect", "--render", path], ""));
    assert_eq!(body["messages"], serde_json::from_str::<Value>(&c.render_json()).unwrap());
}

#[test]
fn version_errors_as_json_and_unknown_models() {
    let out = ctxwin(&["--version"], "");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("ctxwin {}\n", env!("CARGO_PKG_VERSION")));
    // --json errors are JSON, on stderr, with the usual exit codes.
    let out = ctxwin(&["inspect", "--model", "gpt-4o", "--json", "no/such/file.json"], "");
    assert_eq!(out.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(error["error"].as_str().unwrap().contains("no/such/file.json"), "{error}");
    let out = ctxwin(&["inspect", "--json", "--frobnicate", "x"], "");
    assert_eq!(out.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(error["error"].as_str().unwrap().contains("--frobnicate"), "{error}");
    let out = ctxwin(&["inspect", "--json", FIXTURES[0]], "");
    let error: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(error["error"].as_str().unwrap().contains("needs --model"), "{error}");
    // An unknown model is named on stderr; a known one is not.
    let out = ctxwin(&["count", "--model", "gpt4o"], "hello world");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success() && err.contains("model 'gpt4o' is unknown"), "{err}");
    assert!(String::from_utf8(out.stdout).unwrap().starts_with('~'));
    let out = ctxwin(&["count", "--model", "gpt-4o"], "hello world");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = ctxwin(&["inspect", "--model", "gpt4o", "--json", FIXTURES[1]], "");
    let warning: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(warning["warning"].as_str().unwrap().contains("'gpt4o'"), "{warning}");
    assert_eq!(json_of(&out)["model_known"], false);
}
