//! Persistence round trips over every strategy: random sessions (plain, tool and provider
//! JSON pushes, host messages of several parts, counts set after the fact, turns, compactions,
//! recoveries, forced drops, rewinds, configuration changes, usage reports (with a range and
//! for the request last rendered) and summaries) are exported and imported part way through.
//! The restored window must be the saved one: the same view (every item's type, kind, index, text and
//! tokens), start, live tokens, generation, render_json output and export; and when both go
//! on with the same steps, every step must succeed or fail alike and leave them identical.

use ctxwin::classify::{ErrorCategory, ErrorInfo};
use ctxwin::view::ItemType;
use ctxwin::{Count, Kind, Window, json, persist};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Sessions per run: enough to reach every strategy with every kind of step many times,
/// within a few seconds of `cargo test --release`.
const SESSIONS: u32 = 1500;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// The wire format a session's JSON pushes use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    Plain,
    OpenAi,
    Anthropic,
}

/// One step of a session.
#[derive(Clone, Debug)]
enum Step {
    Push(Kind, String),
    Counted(Kind, u32),
    Tool(Kind, String, String),
    Json(String),
    EndTurn,
    Compact,
    Recover(i64),
    DropOldestTurn,
    /// Rewind to this many thousandths of the messages.
    Truncate(usize),
    Configure(String),
    SetOverhead(i32, i32),
    /// Report a prompt total of this many thousandths of the live tokens.
    Observe(u64),
    /// Ask for a summary and answer with this many words of the request.
    Summarize(usize),
    /// One host message of several parts (kind, text, call id) under a host id.
    Message(Vec<(Kind, String, Option<String>)>, i64),
    /// Replace the count of the message this many thousandths into the ledger.
    SetCount(usize, Count),
    /// Record the total of the turn this many thousandths into the turns.
    SetTurnCount(usize, Count),
    /// Report a prompt total of this many thousandths of the live tokens for the request
    /// last rendered.
    ObserveLast(u64),
}

fn words(rng: &mut Rng, most: usize) -> String {
    let n = 1 + rng.below(most);
    let mut text = String::new();
    for i in 0..n {
        text.push_str(rng.pick(&["read", "src/lib.rs", "fix", "the", "test", "42", "ok", "é"]));
        text.push(if i % 8 == 7 { '\n' } else { ' ' });
    }
    text
}

fn tool_output(rng: &mut Rng) -> String {
    if rng.chance(30) { (0..10 + rng.below(80)).map(|i| format!("line {i} of the output\n")).collect() } else { words(rng, 30) }
}

/// A JSON string literal.
fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// One turn of provider JSON in `wire`: a user message, then tool calls (some parallel, some
/// left unanswered) with their results, thinking and an answer.
fn json_turn(rng: &mut Rng, wire: Wire, id: &mut u32, steps: &mut Vec<Step>) {
    steps.push(Step::Json(format!(r#"{{"role":"user","content":{}}}"#, quoted(&words(rng, 20)))));
    for _ in 0..rng.below(3) {
        let calls: Vec<String> = (0..1 + rng.below(2))
            .map(|_| {
                *id += 1;
                format!("call_{id}")
            })
            .collect();
        let answered: Vec<&String> = calls.iter().filter(|_| !rng.chance(10)).collect();
        match wire {
            Wire::OpenAi | Wire::Plain => {
                let tool_calls: Vec<String> = calls
                    .iter()
                    .map(|c| {
                        format!(
                            r#"{{"id":"{c}","type":"function","function":{{"name":"ls","arguments":"{{\"path\":\"src\"}}"}}}}"#
                        )
                    })
                    .collect();
                steps.push(Step::Json(format!(
                    r#"{{"role":"assistant","content":null,"tool_calls":[{}]}}"#,
                    tool_calls.join(",")
                )));
                for call in answered {
                    steps.push(Step::Json(format!(
                        r#"{{"role":"tool","tool_call_id":"{call}","content":{}}}"#,
                        quoted(&tool_output(rng))
                    )));
                }
            }
            Wire::Anthropic => {
                let mut blocks = Vec::new();
                if rng.chance(40) {
                    blocks.push(format!(r#"{{"type":"thinking","thinking":{},"signature":"sig"}}"#, quoted(&words(rng, 10))));
                }
                if rng.chance(50) {
                    blocks.push(format!(r#"{{"type":"text","text":{}}}"#, quoted(&words(rng, 10))));
                }
                blocks.extend(
                    calls.iter().map(|c| format!(r#"{{"type":"tool_use","id":"{c}","name":"ls","input":{{"path":"src"}}}}"#)),
                );
                steps.push(Step::Json(format!(r#"{{"role":"assistant","content":[{}]}}"#, blocks.join(","))));
                if !answered.is_empty() {
                    let results: Vec<String> = answered
                        .iter()
                        .map(|c| {
                            format!(r#"{{"type":"tool_result","tool_use_id":"{c}","content":{}}}"#, quoted(&tool_output(rng)))
                        })
                        .collect();
                    steps.push(Step::Json(format!(r#"{{"role":"user","content":[{}]}}"#, results.join(","))));
                }
            }
        }
    }
    if rng.chance(70) {
        steps.push(Step::Json(format!(r#"{{"role":"assistant","content":{}}}"#, quoted(&words(rng, 20)))));
    }
}

/// One turn of plain pushes: a user message, tool calls with ids (some unanswered), counted
/// messages (with `counted`), thinking and an answer.
fn plain_turn(rng: &mut Rng, counted: bool, id: &mut u32, steps: &mut Vec<Step>) {
    steps.push(Step::Push(Kind::User, words(rng, 20)));
    for _ in 0..rng.below(4) {
        match rng.below(5) {
            0 => steps.push(Step::Push(Kind::Assistant, words(rng, 20))),
            1 => steps.push(Step::Push(Kind::Thinking, words(rng, 20))),
            2 if counted => {
                steps.push(Step::Counted(rng.pick(&[Kind::Assistant, Kind::ToolResult, Kind::System]), rng.below(200) as u32))
            }
            _ => {
                let calls: Vec<String> = (0..1 + rng.below(3))
                    .map(|_| {
                        *id += 1;
                        format!("call_{id}")
                    })
                    .collect();
                for call in &calls {
                    steps.push(Step::Tool(Kind::ToolCall, call.clone(), words(rng, 10)));
                }
                for call in &calls {
                    if !rng.chance(10) {
                        steps.push(Step::Tool(Kind::ToolResult, call.clone(), tool_output(rng)));
                    }
                }
            }
        }
    }
}

/// One turn of host messages (`push_message`): the user's message, then assistant messages
/// mixing thinking, text and tool calls, and messages of tool results, each under a new host
/// id (now and then one already used, which is refused); counts arrive after the fact.
fn host_turn(rng: &mut Rng, id: &mut u32, host: &mut i64, steps: &mut Vec<Step>) {
    let mut next_host = |rng: &mut Rng| {
        *host += 1;
        if rng.chance(3) { *host / 2 } else { *host }
    };
    steps.push(Step::Message(vec![(Kind::User, words(rng, 20), None)], next_host(rng)));
    for _ in 0..rng.below(3) {
        let mut parts = Vec::new();
        if rng.chance(40) {
            parts.push((Kind::Thinking, words(rng, 10), None));
        }
        if rng.chance(60) {
            parts.push((Kind::Assistant, words(rng, 10), None));
        }
        let calls: Vec<String> = (0..rng.below(3))
            .map(|_| {
                *id += 1;
                format!("call_{id}")
            })
            .collect();
        parts.extend(calls.iter().map(|c| (Kind::ToolCall, words(rng, 6), Some(c.clone()))));
        if parts.is_empty() || rng.chance(3) {
            // An empty message, or a result whose call never came: both refused.
            parts.push((Kind::ToolResult, words(rng, 3), Some("call_none".to_owned())));
        }
        steps.push(Step::Message(parts, next_host(rng)));
        let mut results = Vec::new();
        for call in &calls {
            if !rng.chance(10) {
                results.push((Kind::ToolResult, tool_output(rng), Some(call.clone())));
            }
        }
        if !results.is_empty() {
            steps.push(Step::Message(results, next_host(rng)));
        }
        if rng.chance(50) {
            steps.push(Step::SetCount(900 + rng.below(101), Count { tokens: rng.below(400) as u32, exact: rng.chance(80) }));
        }
    }
}

const STRATEGIES: [&str; 5] = ["sliding", "drop_oldest", "tiered", "monologue", "summary"];

/// A configuration object for `strategy`, with small budgets and thresholds.
fn configuration(rng: &mut Rng, strategy: &str) -> String {
    let mut json = format!(r#"{{"strategy":"{strategy}","history_budget":{}"#, 50 + rng.below(700));
    let mut key = |rng: &mut Rng, name: &str, low: usize, span: usize| {
        if rng.chance(40) {
            json.push_str(&format!(r#","{name}":{}"#, low + rng.below(span)));
        }
    };
    key(rng, "summary_budget", 5, 300);
    key(rng, "token_threshold", 20, 600);
    key(rng, "message_threshold", 1, 30);
    key(rng, "turn_threshold", 1, 6);
    key(rng, "keep_first", 0, 6);
    key(rng, "keep_recent", 0, 12);
    key(rng, "keep_recent_turns", 0, 4);
    key(rng, "tool_output_max_lines", 1, 20);
    key(rng, "context_limit", 300, 3000);
    if rng.chance(20) {
        json.push_str(r#","budget_includes_overhead":true"#);
    }
    if rng.chance(30) {
        json.push_str(&format!(r#","threshold":0.{}"#, 1 + rng.below(9)));
    }
    json.push('}');
    json
}

/// A random session: the model, its first configuration, and its steps.
fn session(rng: &mut Rng) -> (&'static str, String, Vec<Step>) {
    let model = rng.pick(&["claude-sonnet-4-5", "gpt-4o", "test-model-estimated"]);
    let strategy = rng.pick(&STRATEGIES);
    let config = configuration(rng, strategy);
    let wire = rng.pick(&[Wire::Plain, Wire::OpenAi, Wire::Anthropic]);
    let mut steps = Vec::new();
    if rng.chance(50) {
        steps.push(Step::Push(Kind::System, words(rng, 30)));
    }
    // Counted messages have no text, so render_json refuses them: only some sessions have.
    let counted = rng.chance(25);
    let mut id = 0;
    let mut host = 0;
    for _ in 0..1 + rng.below(10) {
        match wire {
            Wire::Plain if rng.chance(40) => host_turn(rng, &mut id, &mut host, &mut steps),
            Wire::Plain => plain_turn(rng, counted, &mut id, &mut steps),
            _ if rng.chance(20) => plain_turn(rng, counted, &mut id, &mut steps),
            _ => json_turn(rng, wire, &mut id, &mut steps),
        }
        if rng.chance(85) {
            steps.push(Step::EndTurn);
        }
        for _ in 0..rng.below(3) {
            steps.push(match rng.below(13) {
                10 => Step::SetCount(rng.below(1001), Count { tokens: rng.below(300) as u32, exact: rng.chance(70) }),
                11 => Step::SetTurnCount(rng.below(1001), Count { tokens: rng.below(600) as u32, exact: rng.chance(70) }),
                12 => Step::ObserveLast(500 + rng.below(1500) as u64),
                0 => Step::Compact,
                1 => Step::Recover(1 + rng.below(400) as i64),
                2 => Step::DropOldestTurn,
                3 => Step::Truncate(500 + rng.below(501)),
                4 => {
                    let strategy = rng.pick(&STRATEGIES);
                    Step::Configure(configuration(rng, strategy))
                }
                5 => Step::SetOverhead(rng.below(300) as i32, rng.below(300) as i32),
                6 | 7 => Step::Observe(500 + rng.below(1500) as u64),
                _ => Step::Summarize(1 + rng.below(8)),
            });
        }
    }
    steps.push(Step::EndTurn);
    (model, config, steps)
}

/// What a step returned, for comparing two windows: Ok with a value, or the error's kind
/// and message.
type Outcome = Result<String, String>;

fn outcome<T: std::fmt::Debug>(result: ctxwin::Result<T>) -> Outcome {
    result.map(|value| format!("{value:?}")).map_err(|e| format!("{:?}: {}", e.kind(), e.message()))
}

fn apply(window: &mut Window, step: &Step) -> Outcome {
    match step {
        Step::Push(kind, text) => outcome(window.push(*kind, text)),
        Step::Counted(kind, tokens) => {
            window.push_counted(*kind, Count::exact(*tokens));
            Ok(String::new())
        }
        Step::Tool(kind, id, text) => outcome(window.push_tool(*kind, id, text)),
        Step::Json(json) => outcome(json::push_json(window, json)),
        Step::EndTurn => Ok(window.end_turn().to_string()),
        Step::Compact => Ok(window.compact().to_string()),
        Step::Recover(excess) => outcome(window.recover(&ErrorInfo {
            category: ErrorCategory::ContextOverflow,
            limit: None,
            actual: None,
            excess: Some(*excess),
        })),
        Step::DropOldestTurn => outcome(window.drop_oldest_turn()),
        Step::Truncate(thousandths) => outcome(window.truncate(window.message_count() * thousandths / 1000)),
        Step::Configure(json) => outcome(window.configure(json)),
        Step::SetOverhead(system, tools) => outcome(window.set_overhead(*system, *tools)),
        Step::Observe(thousandths) => {
            let reported = i64::from(window.live_tokens().tokens) * *thousandths as i64 / 1000;
            outcome(window.observe_usage(window.start(), window.message_count(), reported))
        }
        Step::Message(parts, host_id) => {
            let parts: Vec<ctxwin::window::Part<'_>> = parts
                .iter()
                .map(|(kind, text, call_id)| ctxwin::window::Part {
                    kind: *kind,
                    text,
                    replaced: false,
                    call_id: call_id.as_deref(),
                    name: None,
                })
                .collect();
            outcome(window.push_message(&parts, *host_id))
        }
        Step::SetCount(thousandths, count) => {
            outcome(window.set_count(window.message_count().saturating_sub(1) * thousandths / 1000, *count))
        }
        Step::SetTurnCount(thousandths, count) => {
            outcome(window.set_turn_count(window.turn_count().saturating_sub(1) * thousandths / 1000, *count))
        }
        Step::ObserveLast(thousandths) => {
            let reported = i64::from(window.live_tokens().tokens) * *thousandths as i64 / 1000;
            outcome(window.observe_last_usage(reported))
        }
        Step::Summarize(words) => {
            let request = match window.summary_request() {
                Ok(request) => request,
                Err(e) => return Err(format!("request {:?}: {}", e.kind(), e.message())),
            };
            let mut answer: Vec<&str> = request.split_whitespace().rev().take(*words).collect();
            answer.reverse();
            outcome(window.set_summary(window.generation(), &answer.join(" "), 1_700_000_000))
        }
    }
}

/// Everything a caller can see of a window, for comparisons.
#[derive(Debug, PartialEq)]
struct Observed {
    view: Vec<(ItemType, Kind, usize, Option<String>, Count)>,
    start: usize,
    first_live_turn: usize,
    live_tokens: Count,
    generation: u32,
    needs_summary: bool,
    render: Outcome,
    export: String,
}

fn observe(window: &Window) -> Observed {
    Observed {
        view: (0..window.view_len())
            .map(|i| {
                let item = window.view_item(i).expect("item within view_len");
                (item.item_type, item.kind, item.index, item.text.map(str::to_owned), item.tokens)
            })
            .collect(),
        start: window.start(),
        first_live_turn: window.first_live_turn(),
        live_tokens: window.live_tokens(),
        generation: window.generation(),
        needs_summary: window.needs_summary(),
        render: outcome(json::render_json(window)),
        export: persist::export(window),
    }
}

/// Asserts that `restored` shows exactly what `original` shows, naming the first difference.
fn assert_same(original: &Window, restored: &Window, when: &str) {
    let (a, b) = (observe(original), observe(restored));
    if a == b {
        return;
    }
    if let Some(i) = (0..a.view.len().max(b.view.len())).find(|&i| a.view.get(i) != b.view.get(i)) {
        panic!("{when}: view item {i} differs:\n saved:    {:?}\n restored: {:?}", a.view.get(i), b.view.get(i));
    }
    let differ = |name: &str, x: &str, y: &str| {
        if x != y {
            let at = x.bytes().zip(y.bytes()).take_while(|(p, q)| p == q).count();
            let around = |s: &str| s.get(at.saturating_sub(200)..(at + 200).min(s.len())).unwrap_or(s).to_owned();
            panic!("{when}: {name} differs at byte {at}:\n saved:    …{}…\n restored: …{}…", around(x), around(y));
        }
    };
    differ("render_json", &format!("{:?}", a.render), &format!("{:?}", b.render));
    differ("export", &a.export, &b.export);
    panic!(
        "{when}: start {}/{}, first live turn {}/{}, live tokens {:?}/{:?}, generation {}/{}, needs_summary {}/{}",
        a.start,
        b.start,
        a.first_live_turn,
        b.first_live_turn,
        a.live_tokens,
        b.live_tokens,
        a.generation,
        b.generation,
        a.needs_summary,
        b.needs_summary
    );
}

fn run_session(seed: u64) {
    let mut rng = Rng::new(seed);
    let (model, config, steps) = session(&mut rng);
    let mut window = Window::new(model);
    // A configuration may be refused (keep_first + keep_recent over message_threshold): the
    // session then runs with the defaults.
    let _ = window.configure(&config);
    let split = rng.below(steps.len() + 1);
    for step in &steps[..split] {
        let _ = apply(&mut window, step);
    }
    let saved = persist::export(&window);
    let mut restored = persist::import(&saved).unwrap_or_else(|e| panic!("import after {split} steps: {e}\n{saved}"));
    assert_same(&window, &restored, &format!("after {split} steps of {config}"));
    for (n, step) in steps[split..].iter().enumerate() {
        let (a, b) = (apply(&mut window, step), apply(&mut restored, step));
        let when = format!("step {} ({step:?}) after the restore at {split}", split + n);
        assert_eq!(a, b, "{when}: the step went differently");
        assert_same(&window, &restored, &when);
    }
}

#[test]
fn every_strategy_survives_export_and_import_mid_session() {
    let cases = std::env::var("CTXWIN_PERSIST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(SESSIONS);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&any::<u64>(), |seed| {
            run_session(seed);
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
}

/// A step of the way from a document's root to one of its values.
#[derive(Clone, Debug)]
enum Place {
    Member(String),
    Element(usize),
}

/// Every value in `value` (containers included), by the way to it.
fn places(value: &serde_json::Value, way: &mut Vec<Place>, out: &mut Vec<Vec<Place>>) {
    out.push(way.clone());
    match value {
        serde_json::Value::Object(members) => {
            for (name, member) in members {
                way.push(Place::Member(name.clone()));
                places(member, way, out);
                way.pop();
            }
        }
        serde_json::Value::Array(elements) => {
            for (i, element) in elements.iter().enumerate() {
                way.push(Place::Element(i));
                places(element, way, out);
                way.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(value: &'a mut serde_json::Value, way: &[Place]) -> &'a mut serde_json::Value {
    way.iter().fold(value, |value, place| match place {
        Place::Member(name) => &mut value[name.as_str()],
        Place::Element(i) => &mut value[*i],
    })
}

/// One random edit of `document`: a number made another small number, a flag flipped, a
/// member removed, an element removed or repeated.
fn edit(rng: &mut Rng, document: &mut serde_json::Value) {
    let mut all = Vec::new();
    places(document, &mut Vec::new(), &mut all);
    let way = &all[rng.below(all.len())];
    let target = at(document, way);
    match target {
        serde_json::Value::Number(n) if rng.chance(70) => {
            let n = n.as_u64().unwrap_or(3) as usize;
            *target = serde_json::json!(rng.below(n.saturating_mul(2).clamp(4, 1 << 20)));
        }
        serde_json::Value::Bool(b) => *b = !*b,
        serde_json::Value::Array(elements) if !elements.is_empty() && rng.chance(60) => {
            let i = rng.below(elements.len());
            if rng.chance(50) {
                elements.remove(i);
            } else {
                let copy = elements[i].clone();
                elements.insert(i, copy);
            }
        }
        _ => {
            if let Some((Place::Member(name), parent)) = way.split_last() {
                if let Some(members) = at(document, parent).as_object_mut() {
                    members.shift_remove(name);
                }
            }
        }
    }
}

/// Item 8 of issue 26: a document import accepts but its own save refuses. Documents of
/// random sessions are edited as a person or a damaged disk might (numbers changed, members
/// and elements removed or repeated, the checksum removed as an edit must): whatever imports
/// saves and loads back identically, the same export and the same observed window, and a
/// save to a file loads back to the same export.
#[test]
fn whatever_imports_from_an_edited_document_saves_and_loads_back_identically() {
    let cases: u64 = std::env::var("CTXWIN_PERSIST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(u64::from(SESSIONS));
    let path = std::env::temp_dir().join(format!("ctxwin-edited-{}.json", std::process::id()));
    let mut imported = 0;
    for seed in 0..cases {
        let mut rng = Rng::new(seed ^ 0x5eed);
        let (model, config, steps) = session(&mut rng);
        let mut window = Window::new(model);
        let _ = window.configure(&config);
        for step in &steps[..rng.below(steps.len() + 1)] {
            let _ = apply(&mut window, step);
        }
        let mut document: serde_json::Value = serde_json::from_str(&persist::export(&window)).unwrap();
        document.as_object_mut().unwrap().shift_remove("checksum");
        for _ in 0..1 + rng.below(3) {
            edit(&mut rng, &mut document);
        }
        let Ok(restored) = persist::import(&document.to_string()) else { continue };
        imported += 1;
        let saved = persist::export(&restored);
        let again = persist::import(&saved)
            .unwrap_or_else(|e| panic!("seed {seed}: an imported document's export is refused: {e}\n{document}"));
        assert_eq!(persist::export(&again), saved, "seed {seed}");
        assert_same(&restored, &again, &format!("seed {seed}"));
        if seed % 16 == 0 {
            persist::save(&restored, &path).unwrap();
            assert_eq!(persist::export(&persist::load(&path).unwrap()), saved, "seed {seed}");
        }
    }
    let _ = std::fs::remove_file(&path);
    assert!(imported * 10 > cases, "only {imported} of {cases} edited documents imported: the edits test little");
}
