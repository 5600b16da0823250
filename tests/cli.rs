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
            assert_eq!(text.contains("context window starts here"), start > 0, "{fixture}: {text}");
        }
    }
}

#[test]
fn errors_name_the_line_and_field() {
    let dir = std::env::temp_dir().join(format!("ctxwin-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "[\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": \"user\", \"content\": [{\"type\": \"text\"}]}\n]\n").unwrap();
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
