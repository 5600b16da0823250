//! `ctxwin replay` on logs generated here in the shapes real agents write (Claude Code
//! stream-json and session JSONL, Codex rollouts, provider messages), its numbers checked
//! against a plain re-computation with the library.

#[path = "support/rng.rs"]
mod rng;

use ctxwin::Window;
use ctxwin::json::push_json;
use rng::Rng;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Output};

fn ctxwin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ctxwin"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the ctxwin program runs")
}

/// A file in a directory of this test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ctxwin-replay-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the generator wrote besides the log: the conversation as the provider saw it and the
/// usage of each call.
struct Generated {
    lines: Vec<Value>,
    /// The Anthropic messages in order, one per wire message.
    messages: Vec<Value>,
    /// For each model call, the number of messages before it and its usage.
    calls: Vec<(usize, u64, u64, u64)>,
}

/// A Claude Code run: a task, then `steps` model calls with 1 to 3 parallel tool uses (each
/// written as its own `assistant` line with the message's id, as Claude Code does), thinking
/// with a signature, a skill's text inserted as a user message, and a final answer. `split`
/// writes the tool results between the lines of one answer (as session files do).
fn claude_run(steps: usize, seed: u64, split: bool) -> Generated {
    let mut rng = Rng::new(seed);
    let mut g = Generated { lines: Vec::new(), messages: Vec::new(), calls: Vec::new() };
    g.lines.push(
        json!({"type": "system", "subtype": "init", "session_id": "s", "model": "claude-sonnet-4-5", "tools": ["Read", "Bash"]}),
    );
    let task = "Fix the failing test in src/parser.rs and explain the cause.";
    g.lines.push(json!({"type": "user", "message": {"role": "user", "content": task}, "session_id": "s"}));
    g.messages.push(json!({"role": "user", "content": [{"type": "text", "text": task}]}));
    let mut prompt = 4000u64;
    for step in 0..=steps {
        let id = format!("msg_{step:04}");
        let usage = json!({"input_tokens": 3, "cache_creation_input_tokens": 200 + step as u64, "cache_read_input_tokens": prompt - 203 - step as u64, "output_tokens": 50});
        g.calls.push((g.messages.len(), prompt, prompt - 203 - step as u64, 200 + step as u64));
        let assistant = |content: Value| json!({"type": "assistant", "message": {"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content, "usage": usage}, "session_id": "s", "parent_tool_use_id": null});
        if step == steps {
            let answer = json!([{"type": "text", "text": "The parser skipped the last token; fixed and tested."}]);
            g.lines.push(assistant(answer.clone()));
            g.messages.push(json!({"role": "assistant", "content": answer}));
            break;
        }
        let mut blocks = vec![
            json!({"type": "thinking", "thinking": format!("Step {step}: look at the next file."), "signature": format!("sig{step}")}),
        ];
        let calls = 1 + rng.below(3);
        for c in 0..calls {
            blocks.push(json!({"type": "tool_use", "id": format!("toolu_{step}_{c}"), "name": "Read", "input": {"file_path": format!("src/f{step}_{c}.rs")}}));
        }
        let results: Vec<Value> = (0..calls)
            .map(|c| {
                let lines = 5 + rng.below(120);
                let text: String = (0..lines).map(|i| format!("{i:4}  let value_{i} = compute({i}, \"{step}\");\n")).collect();
                json!({"type": "tool_result", "tool_use_id": format!("toolu_{step}_{c}"), "content": text})
            })
            .collect();
        let user = |content: Value| json!({"type": "user", "message": {"role": "user", "content": content}, "session_id": "s"});
        if split {
            // Session files: a line per block, a result right after its call.
            g.lines.push(assistant(json!([blocks[0]])));
            for (c, result) in results.iter().enumerate() {
                g.lines.push(assistant(json!([blocks[c + 1]])));
                g.lines.push(user(json!([result])));
            }
        } else {
            for block in &blocks {
                g.lines.push(assistant(json!([block])));
            }
            for result in &results {
                g.lines.push(user(json!([result])));
            }
        }
        g.messages.push(json!({"role": "assistant", "content": blocks}));
        let mut content = results;
        if step == steps / 2 {
            let skill = "Skill: when fixing a parser, write the failing input as a test first.";
            g.lines.push(json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": [{"type": "text", "text": skill}]}, "session_id": "s"}));
            content.push(json!({"type": "text", "text": skill}));
        }
        g.messages.push(json!({"role": "user", "content": content}));
        prompt += 1000 + rng.below(3000) as u64;
    }
    g.lines.push(json!({"type": "result", "subtype": "success", "session_id": "s", "usage": {"input_tokens": 1}}));
    g
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn replay_json(args: &[&str]) -> Value {
    let out = ctxwin(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// ctxwin's count of each message of `messages`, pushed one by one into a fresh window.
fn counts(messages: &[Value]) -> Vec<u64> {
    let mut window = Window::new("claude-sonnet-4-5");
    messages
        .iter()
        .map(|m| {
            let before = window.message_count();
            push_json(&mut window, &m.to_string()).unwrap();
            (before..window.message_count()).map(|i| u64::from(window.message(i).unwrap().count().tokens)).sum()
        })
        .collect()
}

#[test]
fn a_claude_code_log_replays_with_the_numbers_a_plain_recount_gives() {
    let scratch = Scratch::new("claude");
    for split in [false, true] {
        let run = claude_run(40, 7 + u64::from(split), split);
        let log = scratch.write("run.jsonl", &jsonl(&run.lines));
        let report =
            replay_json(&["replay", "--budget", "10000000", "--config", r#"{"context_limit":20000000}"#, "--json", &log]);
        assert_eq!(report["log"]["format"], "claude");
        assert_eq!(report["log"]["model"], "claude-sonnet-4-5");
        assert_eq!(report["log"]["requests"], run.calls.len());

        // The overhead: what the first call's usage holds beyond its messages.
        let counts = counts(&run.messages);
        let before = |n: usize| counts[..n].iter().sum::<u64>();
        let overhead = run.calls[0].1 - before(run.calls[0].0);
        assert_eq!(report["log"]["overhead"], overhead);

        // The provider's numbers: billed at 1 for input and cache writes, 0.1 for reads.
        let logged = &report["logged"];
        assert_eq!(logged["tokens_sent"], run.calls.iter().map(|c| c.1).sum::<u64>());
        let billed: f64 = run.calls.iter().map(|&(_, prompt, read, _)| (prompt - read) as f64 + read as f64 * 0.1).sum();
        assert!((logged["billed_input"].as_f64().unwrap() - billed).abs() < 1e-6, "{logged} vs {billed}");

        // Nothing to drop: every request sends overhead + every message before its call,
        // and the whole previous request is its cached prefix.
        let policy = &report["policies"][0];
        let rows = policy["requests"].as_array().unwrap();
        assert_eq!(rows.len(), run.calls.len());
        let mut previous = 0;
        for (row, &(messages, prompt, _, _)) in rows.iter().zip(&run.calls) {
            assert_eq!(row["tokens"], overhead + before(messages), "{row}");
            assert_eq!(row["logged_prompt"], prompt);
            assert_eq!(row["over_budget"], false);
            assert_eq!(row["task_sent"], true);
            assert_eq!(row["messages_sent"], row["messages_pushed"]);
            assert_eq!(row["cached_tokens"], previous, "{row}");
            previous = row["tokens"].as_u64().unwrap();
        }
        let totals = &policy["totals"];
        let sent: u64 = rows.iter().map(|r| r["tokens"].as_u64().unwrap()).sum();
        assert_eq!(totals["tokens_sent"], sent);
        assert_eq!(totals["largest_request"], rows.last().unwrap()["tokens"]);
        let billed: f64 = rows
            .iter()
            .map(|r| {
                let (tokens, cached) = (r["tokens"].as_f64().unwrap(), r["cached_tokens"].as_f64().unwrap());
                tokens - cached + cached * 0.1
            })
            .sum();
        assert!((totals["billed_input"].as_f64().unwrap() - billed).abs() < 1e-3);
        assert_eq!(totals["task_kept"], json!({"requests": rows.len(), "of": rows.len()}));

        // The estimate compares the growth of the provider's prompt with the recount.
        let last = run.calls.len() - 1;
        assert_eq!(report["estimate"]["logged_growth"], run.calls[last].1 - run.calls[0].1);
        assert_eq!(report["estimate"]["counted_growth"], before(run.calls[last].0) - before(run.calls[0].0));
    }
}

#[test]
fn a_tight_budget_shows_what_each_policy_keeps_and_bills() {
    let scratch = Scratch::new("tight");
    let run = claude_run(60, 11, false);
    let log = scratch.write("run.jsonl", &jsonl(&run.lines));
    let svg = scratch.0.join("chart.svg");
    let report = replay_json(&[
        "replay",
        "--strategy",
        "sliding,tiered",
        "--budget",
        "30%,8000",
        "--svg",
        svg.to_str().unwrap(),
        "--json",
        &log,
    ]);
    let policies = report["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 4, "two strategies times two budgets");
    let largest = report["log"]["largest_history"].as_f64().unwrap();
    assert_eq!(policies[0]["history_budget"].as_f64().unwrap(), (largest * 0.3).round());
    assert_eq!(policies[1]["history_budget"], 8000);
    let overhead = report["log"]["overhead"].as_u64().unwrap();
    // The task is pinned: counted like the system prompt, outside the budget. The first
    // request sends it alone.
    let task = policies[0]["requests"][0]["tokens"].as_u64().unwrap() - overhead;
    for policy in policies {
        let budget = policy["history_budget"].as_u64().unwrap();
        let rows = policy["requests"].as_array().unwrap();
        let mut over = 0;
        for (i, row) in rows.iter().enumerate() {
            let tokens = row["tokens"].as_u64().unwrap();
            if row["over_budget"] == true {
                over += 1;
            } else if row["refused"].is_null() {
                assert!(tokens <= overhead + task + budget, "{policy:?} request {i}: {tokens} within budget {budget}");
            }
            let cached = row["cached_tokens"].as_u64().unwrap();
            let previous = if i == 0 { 0 } else { rows[i - 1]["tokens"].as_u64().unwrap() };
            assert!(cached <= previous.min(tokens), "a cached prefix is part of both requests");
        }
        assert_eq!(policy["totals"]["over_budget"], over);
    }
    // Tiered cuts the running turn's long outputs: fewer tokens than the log sent in all.
    let sent = |p: &Value| p["totals"]["tokens_sent"].as_u64().unwrap();
    assert!(sent(&policies[3]) < report["logged"]["tokens_sent"].as_u64().unwrap());
    let svg = std::fs::read_to_string(svg).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 5, "the log's own prompt and one line per policy");

    let text = ctxwin(&["replay", "--strategy", "sliding,tiered", "--budget", "8000", &log]);
    let text = String::from_utf8(text.stdout).unwrap();
    for needle in ["claude log, 61 model calls", "as logged (the agent)", "sliding 8000", "tiered 8000", "estimate:"] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    assert_eq!(text.lines().filter(|l| l.trim_start().starts_with("req ")).count(), 2, "a table of requests per policy");
    let summary = ctxwin(&["replay", "--summary-only", &log]);
    assert!(!String::from_utf8(summary.stdout).unwrap().contains("sent/pushed"));
}

#[test]
fn codex_rollouts_and_provider_messages_replay() {
    let scratch = Scratch::new("codex");
    let item = |payload: Value| json!({"timestamp": "2025-10-29T00:59:38.317Z", "type": "response_item", "payload": payload});
    let count = |input: u64, cached: u64| json!({"type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": {"input_tokens": input * 7}, "last_token_usage": {"input_tokens": input, "cached_input_tokens": cached}}}});
    let lines = vec![
        json!({"type": "session_meta", "payload": {"id": "x", "cwd": "/w", "cli_version": "0.46.0"}}),
        item(
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}),
        ),
        item(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add a test for parse()"}]})),
        json!({"type": "event_msg", "payload": {"type": "user_message", "message": "add a test for parse()"}}),
        json!({"type": "turn_context", "payload": {"model": "gpt-5-codex", "cwd": "/w"}}),
        item(json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Reading the parser"}]})),
        item(
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"cat\",\"src/parse.rs\"]}", "call_id": "call_1"}),
        ),
        count(2000, 0),
        count(2000, 0),
        item(
            json!({"type": "function_call_output", "call_id": "call_1", "output": "{\"output\":\"fn parse() {}\\n\",\"metadata\":{\"exit_code\":0}}"}),
        ),
        item(
            json!({"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"}),
        ),
        count(2100, 1900),
        item(json!({"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done"})),
        item(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Added the test."}]})),
        count(2200, 2000),
    ];
    let log = scratch.write("rollout.jsonl", &jsonl(&lines));
    let report = replay_json(&["replay", "--json", &log]);
    assert_eq!((report["log"]["format"].as_str(), report["log"]["model"].as_str()), (Some("codex"), Some("gpt-5-codex")));
    let rows = report["policies"][0]["requests"].as_array().unwrap();
    let logged: Vec<u64> = rows.iter().map(|r| r["logged_prompt"].as_u64().unwrap()).collect();
    assert_eq!(logged, [2000, 2100, 2200], "one call per run of output items, its token_count once");
    assert_eq!(report["logged"]["cached_tokens"], 3900);
    assert!(rows.iter().all(|r| r["task_sent"] == true));
    assert_eq!(rows[0]["tokens"], 2000, "the first request's usage sets the overhead");

    // Provider messages (what inspect reads): a call before each assistant message.
    let messages = json!([
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
        {"role": "assistant", "content": "The answer is 42."}
    ]);
    let log = scratch.write("chat.json", &messages.to_string());
    let report = replay_json(&["replay", "--model", "gpt-4o", "--json", &log]);
    assert_eq!(report["log"]["format"], "messages");
    let rows = report["policies"][0]["requests"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["messages_pushed"], 1);
    assert_eq!(rows[1]["messages_pushed"], 3);
    assert!(report["logged"].is_null() && report["estimate"].is_null());
}

/// Codex sends its environment as a user message before the typed task: replay pins the task
/// as such a host would (`pin_task` pins the first user message only), so the task stays in
/// every request after later turns push the first one out.
#[test]
fn a_codex_task_after_its_environment_is_kept_in_every_request() {
    let scratch = Scratch::new("codex-task");
    let item = |payload: Value| json!({"type": "response_item", "payload": payload});
    let user = |text: &str| item(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}));
    let mut lines = vec![
        json!({"type": "session_meta", "payload": {"id": "x", "cwd": "/w", "cli_version": "0.60.1"}}),
        user("<environment_context>cwd</environment_context>"),
        user("port the parser to the new grammar"),
        json!({"type": "event_msg", "payload": {"type": "user_message", "message": "port the parser to the new grammar"}}),
        json!({"type": "turn_context", "payload": {"model": "gpt-5-codex", "cwd": "/w"}}),
    ];
    let long = "fn rule() { expand(tokens, grammar); }\n".repeat(60);
    for turn in 0..4 {
        if turn > 0 {
            lines.push(user(&format!("now do part {turn}")));
        }
        for step in 0..4 {
            let id = format!("call_{turn}_{step}");
            lines.push(item(
                json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"cat\",\"a.rs\"]}", "call_id": id}),
            ));
            lines.push(item(json!({"type": "function_call_output", "call_id": id, "output": long})));
        }
        lines.push(item(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]})));
    }
    let log = scratch.write("rollout.jsonl", &jsonl(&lines));
    let report = replay_json(&["replay", "--json", "--model", "gpt-4o", "--budget", "3000", &log]);
    let rows = report["policies"][0]["requests"].as_array().unwrap();
    assert!(rows.len() >= 16, "{} requests", rows.len());
    assert!(rows.iter().any(|r| r["messages_sent"].as_u64() < r["messages_pushed"].as_u64()), "nothing was dropped");
    assert!(rows.iter().all(|r| r["task_sent"] == true), "the task was dropped: {rows:?}");
}

#[test]
fn bad_logs_are_refused_naming_the_line_and_field() {
    let scratch = Scratch::new("bad");
    let good = jsonl(&claude_run(3, 5, false).lines);
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(4, "{\"type\":\"assistant\",\"message\":{\"id\":\"x\",\"content\":\"hi\",\"usage\":{\"input_tokens\":\"many\"}},\"session_id\":\"s\"}");
    let bad_usage = scratch.write("usage.jsonl", &lines.join("\n"));
    let truncated = scratch.write("truncated.jsonl", &good[..good.len() - 40]);
    let bad_call = scratch.write("call.jsonl", &good.replacen("\"name\":\"Read\"", "\"name\":7", 1));
    let good = scratch.write("good.jsonl", &good);
    let svg = scratch.0.join("never.svg");
    for (args, needles) in [
        (vec!["replay", bad_usage.as_str()], vec!["line 5:", "message.usage.input_tokens"]),
        (vec!["replay", truncated.as_str()], vec!["line ", "not JSON"]),
        (vec!["replay", "--format", "codex", bad_usage.as_str()], vec!["line 1:", "\"payload\" is missing"]),
        (vec!["replay", bad_call.as_str()], vec!["line 3:", "name"]),
        (vec!["replay", "--strategy", "slidng", bad_usage.as_str()], vec!["line 5:"]),
        (vec!["replay", "--strategy", "sliding,slidng", good.as_str()], vec!["--strategy", "slidng"]),
        (vec!["replay", "--budget", "4000", "--config", "{\"budgett\":1}", good.as_str()], vec!["--config", "budgett"]),
        (vec!["replay", "no/such/log.jsonl"], vec!["no/such/log.jsonl"]),
    ] {
        let mut args = args;
        let svg_arg = svg.to_str().unwrap();
        args.splice(1..1, ["--svg", svg_arg]);
        let out = ctxwin(&args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing printed");
        assert!(!svg.exists(), "{args:?}: nothing written");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        for needle in needles {
            assert!(err.contains(needle), "{args:?}: {needle} in {err}");
        }
    }
}

#[test]
fn a_ctxwin_save_replays_what_was_pushed() {
    let scratch = Scratch::new("save");
    let run = claude_run(12, 3, false);
    let mut window = Window::new("claude-sonnet-4-5");
    window.set_overhead(900, 100).unwrap();
    for message in &run.messages {
        push_json(&mut window, &message.to_string()).unwrap();
    }
    let save = scratch.write("session.ctxwin.json", &ctxwin::persist::export(&window));
    let report = replay_json(&["replay", "--json", &save]);
    assert_eq!(report["log"]["format"], "save");
    assert_eq!(report["log"]["overhead"], 1000, "the save's overhead");
    let rows = report["policies"][0]["requests"].as_array().unwrap();
    assert_eq!(rows.len(), run.calls.len(), "a call before each assistant message");
    let counts = counts(&run.messages);
    for (row, &(messages, ..)) in rows.iter().zip(&run.calls) {
        assert_eq!(row["tokens"], 1000 + counts[..messages].iter().sum::<u64>(), "{row}");
    }
}

/// A Claude Code session file written for this test (a summary line, a sub-agent's line and a
/// synthetic message left out, a skill inserted as a user message, a second prompt), replayed
/// with exact counts (gpt-4o): the report must match the golden file byte for byte.
/// `CTXWIN_BLESS=1 cargo test --test replay` rewrites the golden file after a deliberate change.
#[test]
fn a_session_file_replays_to_the_golden_report() {
    let fixture = "tests/fixtures/replay/claude_session.jsonl";
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay/claude_session.txt");
    let out = ctxwin(&["replay", "--model", "gpt-4o", "--strategy", "sliding,tiered", "--budget", "300", fixture]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = String::from_utf8(out.stdout).unwrap();
    if std::env::var_os("CTXWIN_BLESS").is_some() {
        std::fs::write(&golden, &report).unwrap();
    }
    let expected = std::fs::read_to_string(&golden).unwrap();
    assert_eq!(report, expected, "the report changed; if on purpose, rerun with CTXWIN_BLESS=1 and commit the file");
    assert!(report.contains("claude log, 6 model calls"), "the sub-agent's and the synthetic answer are not calls");
}

#[test]
fn cleared_results_are_reported_per_request_and_policy() {
    let scratch = Scratch::new("clear");
    let run = claude_run(80, 13, false);
    let log = scratch.write("run.jsonl", &jsonl(&run.lines));
    let config = r#"{"stages":["clear","sliding"],"keep_tool_results":2,"clear_at_least":0}"#;
    let report = replay_json(&["replay", "--config", config, "--budget", "25%", "--json", &log]);
    let policy = &report["policies"][0];
    assert_eq!(policy["config"], config);
    let rows = policy["requests"].as_array().unwrap();
    let cleared: Vec<u64> = rows.iter().map(|r| r["results_cleared"].as_u64().unwrap()).collect();
    assert!(cleared.iter().any(|&n| n > 0), "a quarter of the largest history clears results: {cleared:?}");
    for row in rows {
        assert_eq!(row["results_cleared"].as_u64().unwrap() > 0, row["cleared_tokens"].as_u64().unwrap() > 0, "{row}");
    }
    let totals = &policy["totals"];
    assert_eq!(totals["results_cleared"], *cleared.last().unwrap());
    let saved: u64 = rows.iter().map(|r| r["cleared_tokens"].as_u64().unwrap()).sum();
    assert_eq!(totals["tokens_saved_by_clearing"], saved);
    // Without the clearing stage nothing is cleared.
    let plain = replay_json(&["replay", "--budget", "25%", "--json", &log]);
    assert_eq!(plain["policies"][0]["totals"]["tokens_saved_by_clearing"], 0);
}
