//! What the documentation says, checked against what the library does: one test per claim a
//! new user found the library breaking (issue 15). The C side of the same claims is in
//! `c_tests/` and in the README snippets `make snippet` runs.

use ctxwin::json::push_json;
use ctxwin::{Kind, Window};

/// `compaction_info`: `messages_archived`, `first_archived`, `last_archived` describe the
/// record's own messages; `archived_turns` is cumulative (turns `0..archived_turns`).
#[test]
fn archived_turns_is_cumulative_and_messages_archived_is_per_record() {
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"strategy":"summary","context_limit":400,"threshold":0.5,"summary_budget":60}"#).unwrap();
    let mut records = 0;
    for turn in 0..40 {
        window.push(Kind::User, &format!("Step {turn}: edit src/file_{turn}.c and run the tests again")).unwrap();
        window.push(Kind::Assistant, "Edited the file; all tests pass now.").unwrap();
        window.end_turn();
        if window.needs_summary() {
            window.summary_request().unwrap();
            window.set_summary(window.generation(), &format!("summary {records}"), 1).unwrap();
            records += 1;
        }
    }
    let compactions = window.compactions();
    assert!(compactions.len() >= 2, "the session compacts more than once");
    for pair in compactions.windows(2) {
        let (earlier, later) = (&pair[0], &pair[1]);
        assert_eq!(later.first_archived, earlier.last_archived + 1, "each record archives its own messages");
        assert_eq!(later.messages_archived(), later.last_archived - later.first_archived + 1);
        let first_turn = window.turn_of(later.first_archived).unwrap();
        assert_eq!(first_turn, earlier.archived_turns, "archived_turns counts every record's turns");
        assert!(later.archived_turns > earlier.archived_turns);
    }
    let first = &compactions[0];
    assert_eq!(window.turn_of(first.last_archived).unwrap() + 1, first.archived_turns);
}

/// `configure`: a key given twice is refused (it used to be last-wins), and so are settings
/// under which the summary strategy can never accept a summary.
#[test]
fn configure_refuses_duplicate_keys_and_an_unusable_summary_slot() {
    let mut window = Window::new("gpt-4o");
    let before = window.settings().clone();
    for (json, needle) in [
        (r#"{"history_budget":500,"history_budget":900}"#, "the key \"history_budget\" is given twice"),
        (r#"{"strategy":"summary","summary_budget":0}"#, "summary_budget"),
        (r#"{"strategy":"summary","context_limit":1000,"summary_budget":1000}"#, "smaller than the context"),
        // No context_limit given: the model table's (gpt-4o: 128000) is the one that counts.
        (r#"{"strategy":"summary","summary_budget":128000}"#, "128000, the model's"),
    ] {
        let err = window.configure(json).unwrap_err();
        assert!(err.message().contains(needle), "{json}: {err}");
        assert_eq!(window.settings(), &before, "{json}: a refused configuration changes nothing");
    }
}

/// `push_json`: a message the provider would refuse for a missing field is refused at push,
/// as a text block without `text` always was; nothing is appended.
#[test]
fn push_json_refuses_a_message_without_content() {
    let mut window = Window::new("gpt-4o");
    for json in [
        r#"{"role":"user"}"#,
        r#"{"role":"user","content":null}"#,
        r#"{"role":"assistant"}"#,
        r#"[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1"}]"#,
    ] {
        let err = push_json(&mut window, json).unwrap_err();
        assert!(err.message().contains("field 'content': is missing"), "{json}: {err}");
        assert_eq!(window.message_count(), 0, "{json}");
    }
    let calls = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]}"#;
    assert_eq!(push_json(&mut window, calls).unwrap(), 1, "content may be null next to tool calls");
}

/// No "a OpenAI", no "a Anthropic", no "an Gemini" in `message`.
fn assert_articles(message: &str) {
    for wrong in ["a OpenAI", "a Anthropic", "an Gemini"] {
        assert!(!message.contains(wrong), "{message}");
    }
}

/// Messages about provider formats read as English: no "a OpenAI", no "a Anthropic", in
/// the JSON format mismatch and in the refusal of a call's arguments in every format that
/// needs an object.
#[test]
fn format_mismatch_messages_use_the_right_article() {
    let mut window = Window::new("gpt-4o");
    push_json(&mut window, r#"{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}"#).unwrap();
    let err = push_json(&mut window, r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}"#)
        .unwrap_err();
    let message = err.message();
    assert!(message.contains("has the shape of Anthropic Messages"), "{message}");
    assert!(message.contains("this window holds OpenAI Chat Completions messages"), "{message}");
    assert_articles(message);
    for (format, name) in [("anthropic", "Anthropic Messages"), ("gemini", "Gemini")] {
        let mut window = Window::new("gpt-4o");
        window.configure(&format!(r#"{{"format":"{format}"}}"#)).unwrap();
        window.push(Kind::User, "Read it.").unwrap();
        let err = window.push_tool_call("a", "read", "[1]").unwrap_err();
        let message = err.message();
        assert!(message.contains("must be a JSON object") && message.contains(name), "{message}");
        assert_articles(message);
    }
}

/// No sentence of the README or of a page of `docs/` is said twice in a row (a sentence, then
/// the same words again at the start of the next one).
#[test]
fn the_docs_say_no_sentence_twice_in_a_row() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        files.push(entry.unwrap().path());
    }
    for file in files.iter().filter(|path| path.extension().is_some_and(|ext| ext == "md")) {
        let text = std::fs::read_to_string(file).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        let sentences: Vec<&str> = text.split_inclusive(". ").map(str::trim).collect();
        for pair in sentences.windows(2) {
            let first = pair[0].trim_end_matches('.');
            assert!(first.len() < 30 || !pair[1].starts_with(first), "{}: said twice: {first:?}", file.display());
        }
    }
}

/// docs/api-conventions.md: no error message is longer than 4,096 bytes, the ellipsis and
/// the length of a message cut there included (they used to come on top: up to 4,112
/// bytes), at any length and wherever a character straddles the cut.
#[test]
fn no_error_message_is_longer_than_4096_bytes() {
    use ctxwin::error::{Error, ErrorKind, MAX_MESSAGE_BYTES};
    assert_eq!(MAX_MESSAGE_BYTES, 4096);
    for (text, len) in [("z", 4097), ("z", 10_000), ("z", 123_456_789), ("é", 3000), ("€", 2000), ("😀", 5000)] {
        let message = text.repeat(len);
        let error = Error::new(ErrorKind::InvalidArg, message.clone());
        let shown = error.message();
        assert!(shown.len() <= MAX_MESSAGE_BYTES, "{text} x {len}: {} bytes", shown.len());
        assert!(shown.len() > MAX_MESSAGE_BYTES - text.len(), "{text} x {len}: cut short at {} bytes", shown.len());
        assert!(shown.ends_with(&format!("… ({} bytes)", message.len())));
    }
}
