//! The clearing stage (`"stages": ["clear", ...]`): old tool results replaced by a placeholder
//! while their calls stay. Over random long tool loops in every format: every request within
//! the budget; the newest `keep_tool_results` results and every excluded tool's results sent
//! whole; every cleared result's call still sent; each clearing saving at least
//! `clear_at_least`; bodies that pass the providers' structural rules; every item the view
//! counts as sent (its count is a re-count of its text, which is in the body); and the view
//! the same whether `prepare` ran before every request or once at the end. Under every
//! strategy `clear` runs before, `tiered` included (whose cut outputs are not placeholders:
//! a cleared result is never cut further).
//!
//! Superseded reads (`supersede`), over the long agent runs of tests/support/agent_run.rs
//! pushed by every route: a result is sent as a note pointing to the later call exactly when
//! a later call of its tool read the same thing (found here from the calls' arguments), its
//! call still sent; the request info counts the notes; the history shrinks by what they save;
//! and the view is the same whether `prepare` ran after every step or once.
//!
//! `CTXWIN_CLEARING_SESSIONS=n` runs n sessions per format (default 40);
//! `CTXWIN_CLEARING_RUNS=n` n agent runs per route and budget (default 2).

#[path = "support/agent_run.rs"]
mod agent_run;
#[path = "support/provider_rules.rs"]
mod provider_rules;

use agent_run::{Rng, Route, Run, Shape};
use ctxwin::config::clearing::superseded_text;
use ctxwin::json::{self, Format};
use ctxwin::view::ItemType;
use ctxwin::{Kind, Window};
use provider_rules::{Rules, check};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

const TOOLS: [&str; 4] = ["read_file", "grep", "run", "memory"];
const FORMATS: [(Format, &str, Rules); 4] = [
    (Format::OpenAiChat, "openai_chat", Rules::Chat),
    (Format::OpenAiResponses, "openai_responses", Rules::Responses),
    (Format::Anthropic, "anthropic", Rules::Anthropic),
    (Format::Gemini, "gemini", Rules::Gemini),
];

/// A tool output of `lines` lines.
fn output(rng: &mut Rng, lines: usize) -> String {
    (0..lines).map(|l| format!("{l:>4} | let v{} = f(&x[{l}]);\n", rng.below(1000))).collect()
}

/// What one session pushes: turns of a task and then steps of parallel calls.
struct Session {
    window: Window,
    keep: usize,
    at_least: u64,
    budget: u64,
    strategy: &'static str,
}

impl Session {
    fn new(format: &str, rng: &mut Rng, budget: u64) -> Session {
        let keep = rng.below(6);
        let at_least = [0, 200, 2_000][rng.below(3)];
        let strategy = ["sliding", "summary", "drop_oldest", "monologue", "tiered"][rng.below(5)];
        let mut window = Window::new("gpt-4o");
        let config = format!(
            r#"{{"format":"{format}","stages":["clear","{strategy}"],"history_budget":{budget},"keep_tool_results":{keep},
                "clear_at_least":{at_least},"exclude_tools":["memory"],"clear_tool_inputs":{}}}"#,
            rng.chance(2)
        );
        window.configure(&config).unwrap();
        Session { window, keep, at_least, budget, strategy }
    }
}

/// True when `item` is a cleared result's placeholder (not `tiered`'s cut of an output).
fn is_placeholder(item: &ctxwin::view::ViewItem<'_>) -> bool {
    item.item_type == ItemType::Truncated
        && item.text.is_some_and(|text| text.starts_with("[Old tool result cleared to save context:"))
}

/// The results sent cleared and the results sent otherwise (whole, or cut by `tiered`), by
/// ledger index, and the calls sent.
fn sent(window: &Window) -> (HashSet<usize>, HashSet<usize>, HashSet<usize>) {
    let (mut cleared, mut whole, mut calls) = (HashSet::new(), HashSet::new(), HashSet::new());
    for item in (0..window.view_len()).filter_map(|i| window.view_item(i)) {
        match (item.kind, item.item_type) {
            (Kind::ToolResult, _) if is_placeholder(&item) => cleared.insert(item.index),
            (Kind::ToolResult, ItemType::Message | ItemType::Truncated) => whole.insert(item.index),
            (Kind::ToolCall, _) => calls.insert(item.index),
            _ => false,
        };
    }
    (cleared, whole, calls)
}

#[test]
fn clearing_holds_its_promises_over_long_tool_loops() {
    let sessions: u64 = std::env::var("CTXWIN_CLEARING_SESSIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(40);
    let mut clearings = 0;
    for (format, key, rules) in FORMATS {
        for seed in 0..sessions {
            let config_seed = seed * 7 + format as u64;
            let mut rng = Rng::new(config_seed + 1_000);
            let budget = 1_500 + rng.below(6_000) as u64;
            let mut session = Session::new(key, &mut Rng::new(config_seed), budget);
            let mut replay = Session::new(key, &mut Rng::new(config_seed), budget);
            let mut results: Vec<(usize, &str)> = Vec::new();
            let mut calls_of: HashMap<usize, usize> = HashMap::new();
            let mut call = 0;
            // The tokens each result and call was last sent as, not cleared (whole, or cut).
            let mut last_sent: HashMap<usize, u32> = HashMap::new();
            let model = ctxwin::Model::resolve("gpt-4o");
            for turn in 0..rng.between(1, 4) {
                session.window.push(Kind::User, &format!("Task {turn}: fix the failing test.")).unwrap();
                // What was cleared when the turn began: the walk's remembered state.
                let (at_turn_start, whole_at_turn_start, _) = sent(&session.window);
                // The results the previous request sent, and whether a request of this turn
                // stopped sending one.
                let mut sent_before: HashSet<usize> = at_turn_start.union(&whole_at_turn_start).copied().collect();
                let mut removed = false;
                let start_at_turn_start = session.window.start();
                for _ in 0..rng.between(3, 40) {
                    session.window.prepare().unwrap();
                    let (cleared, whole, calls) = sent(&session.window);
                    let context = format!("{key} seed {seed} turn {turn} ({})", session.strategy);
                    let newest_alone = session.window.first_live_turn() + 1 == session.window.turn_count();
                    assert!(
                        session.window.view_history().tokens() <= session.budget || newest_alone,
                        "{context}: over the budget with older turns still sent"
                    );
                    for &(index, _) in results.iter().rev().take(session.keep) {
                        assert!(
                            !cleared.contains(&index),
                            "{context}: result {index}, one of the newest {}, was cleared",
                            session.keep
                        );
                    }
                    for &(index, tool) in &results {
                        assert!(
                            !(tool == "memory" && cleared.contains(&index)),
                            "{context}: an excluded tool's result {index} was cleared"
                        );
                        if cleared.contains(&index) {
                            assert!(calls.contains(&calls_of[&index]), "{context}: result {index} cleared without its call");
                        }
                    }
                    let new: Vec<usize> = cleared.difference(&at_turn_start).copied().collect();
                    // (A clearing whose steps the strategy then dropped, or stripped, saved more
                    // than is sent.)
                    removed |= sent_before.iter().any(|index| !cleared.contains(index) && !whole.contains(index));
                    sent_before = cleared.union(&whole).copied().collect();
                    if !new.is_empty() && session.window.start() == start_at_turn_start && !removed {
                        clearings += 1;
                        // The results' tokens saved, and with clear_tool_inputs their calls'.
                        let calls_of_new: HashSet<usize> = new.iter().map(|index| calls_of[index]).collect();
                        let saved: u64 = (0..session.window.view_len())
                            .filter_map(|v| session.window.view_item(v))
                            .filter(|item| item.item_type == ItemType::Truncated)
                            .filter(|item| new.contains(&item.index) || calls_of_new.contains(&item.index))
                            .map(|item| {
                                let before = last_sent.get(&item.index).copied();
                                let before = before.unwrap_or(session.window.message(item.index).unwrap().count().tokens);
                                i64::from(before) - i64::from(item.tokens.tokens)
                            })
                            .sum::<i64>()
                            .max(0) as u64;
                        assert!(
                            saved >= session.at_least,
                            "{context}: a clearing saved {saved} < clear_at_least {}",
                            session.at_least
                        );
                    }
                    let body = json::render_request(&session.window, r#"{"model":"m","max_tokens":256}"#).unwrap();
                    let value: Value = serde_json::from_str(&body).unwrap();
                    if let Err(broken) = check(rules, &value) {
                        panic!("{context}: {broken}\n{}", serde_json::to_string_pretty(&value).unwrap());
                    }
                    // What the view counts is what it sends: each text it wrote (a placeholder,
                    // a cut, empty arguments) is in the body and counted afresh, and each
                    // message sent as pushed counts as pushed.
                    for item in (0..session.window.view_len()).filter_map(|v| session.window.view_item(v)) {
                        let text = item.text.unwrap_or_default();
                        if item.item_type == ItemType::Truncated {
                            // (A call's count covers its tool's name too.)
                            let name = (item.kind == Kind::ToolCall).then(|| session.window.message(item.index).unwrap().name());
                            let counted = ctxwin::message::counted_text(name.flatten(), text);
                            assert_eq!(item.tokens, model.count(&counted), "{context}: item {} miscounted", item.index);
                            let quoted = serde_json::to_string(text).unwrap();
                            let fragment = quoted[1..quoted.len() - 1].lines().next().unwrap_or_default();
                            assert!(body.contains(fragment), "{context}: item {} is not in the body: {text}", item.index);
                        } else if item.item_type == ItemType::Message {
                            assert_eq!(item.tokens, session.window.message(item.index).unwrap().count(), "{context}");
                        }
                        if !is_placeholder(&item) && item.text != Some("{}") {
                            last_sent.insert(item.index, item.tokens.tokens);
                        }
                    }
                    // One step: parallel calls, then their results.
                    let ids: Vec<(String, &str)> = (0..rng.between(1, 4))
                        .map(|_| {
                            call += 1;
                            (format!("call_{call}"), rng.pick(&TOOLS))
                        })
                        .collect();
                    for (id, tool) in &ids {
                        session.window.push_tool_call(id, tool, &format!(r#"{{"path":"src/m{}.rs"}}"#, rng.below(50))).unwrap();
                    }
                    let first_call = session.window.message_count() - ids.len();
                    for (n, (id, tool)) in ids.iter().enumerate() {
                        let lines = if rng.chance(5) { rng.between(40, 200) } else { rng.between(1, 10) };
                        let text = output(&mut rng, lines);
                        session.window.push_tool(Kind::ToolResult, id, &text).unwrap();
                        let index = session.window.message_count() - 1;
                        results.push((index, tool));
                        calls_of.insert(index, first_call + n);
                    }
                }
                session.window.push(Kind::Assistant, "Fixed.").unwrap();
                session.window.end_turn();
            }
            // The same pushes, prepared once at the end: the same view.
            for index in 0..session.window.message_count() {
                let message = session.window.message(index).unwrap();
                let (id, text) = (message.call_id().unwrap_or_default(), message.text().unwrap());
                match message.kind() {
                    Kind::ToolCall => replay.window.push_tool_call(id, message.name().unwrap(), text),
                    Kind::ToolResult => replay.window.push_tool(Kind::ToolResult, id, text),
                    kind => replay.window.push(kind, text),
                }
                .unwrap();
                if message.kind() == Kind::Assistant {
                    replay.window.end_turn();
                }
            }
            replay.window.prepare().unwrap();
            session.window.prepare().unwrap();
            let view = |w: &Window| {
                (0..w.view_len()).filter_map(|i| w.view_item(i)).map(|i| (i.index, i.item_type, i.tokens)).collect::<Vec<_>>()
            };
            assert_eq!(view(&session.window), view(&replay.window), "{key} seed {seed}: the view depends on when prepare ran");
        }
    }
    assert!(clearings > sessions, "the sessions cleared too rarely to test anything ({clearings} clearings)");
}

/// The supersede rules the agent-run test configures: what a `read_file` and a `glob` read.
const SUPERSEDE: [(&str, &str); 2] = [("read_file", "file_path"), ("glob", "path")];

/// A window for an agent run by `route`, rendered in `format`, with the clearing stage, the
/// supersede rules unless `supersede` is false, and a history budget of `budget`.
fn agent_window(format: Format, supersede: bool, budget: u64) -> Window {
    let rules = if supersede { r#","supersede":{"read_file":"file_path","glob":"path"}"# } else { "" };
    let mut window = Window::new(Run::model(Some(format)));
    window
        .configure(&format!(
            r#"{{"format":"{}","stages":["clear","sliding"],"history_budget":{budget},"context_limit":2000000000{rules}}}"#,
            format.key()
        ))
        .unwrap();
    window
}

/// What the reference expects of each tool result of the ledger: by result index, the call
/// of the next result of the same tool reading the same thing (by the supersede rules), read
/// from the calls' arguments with nothing of the library but its ledger.
fn superseding_calls(window: &Window) -> HashMap<usize, usize> {
    let mut calls: HashMap<String, usize> = HashMap::new();
    let mut newest: HashMap<(String, String), usize> = HashMap::new();
    let mut superseded = HashMap::new();
    for index in 0..window.message_count() {
        let message = window.message(index).unwrap();
        let Some(id) = message.call_id() else { continue };
        match message.kind() {
            Kind::ToolCall => {
                calls.insert(id.to_owned(), index);
            }
            Kind::ToolResult => {
                let call = calls[id];
                let call_message = window.message(call).unwrap();
                let name = call_message.name().unwrap();
                let Some(&(_, argument)) = SUPERSEDE.iter().find(|(tool, _)| *tool == name) else { continue };
                let arguments: Value = serde_json::from_str(call_message.text().unwrap()).unwrap();
                let value = arguments[argument].as_str().unwrap().to_owned();
                if let Some(previous) = newest.insert((name.to_owned(), value), index) {
                    superseded.insert(previous, call);
                }
            }
            _ => {}
        }
    }
    superseded
}

/// The view's items as (ledger index, type, tokens), to compare views.
fn view_of(window: &Window) -> Vec<(usize, ItemType, u32)> {
    (0..window.view_len()).filter_map(|i| window.view_item(i)).map(|i| (i.index, i.item_type, i.tokens.tokens)).collect()
}

#[test]
fn superseded_reads_are_sent_as_notes_pointing_to_the_later_call() {
    let runs: u64 = std::env::var("CTXWIN_CLEARING_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(2);
    let shape = Shape { steps: 20..=200, ..Shape::default() };
    let (mut notes, mut saved_in_all) = (0, 0);
    for route in Route::ALL {
        let format = route.format().unwrap_or(match route {
            Route::Typed => Format::OpenAiResponses,
            _ => Format::Anthropic,
        });
        let model = ctxwin::tokens::Model::resolve(Run::model(Some(format)));
        for seed in 0..runs {
            let run = Run::generate(seed * 31 + 7, &shape);
            for budget in [1_000_000_000, 12_000] {
                let context = format!("{route:?} seed {seed} budget {budget}");
                let mut window = agent_window(format, true, budget);
                run.push_task(&mut window, route).unwrap();
                for i in 0..run.steps.len() {
                    run.push_step(&mut window, route, i).unwrap();
                    let info = window.prepare().unwrap();
                    let superseded = superseding_calls(&window);
                    let sent: HashMap<usize, (ItemType, Option<&str>, u32)> = (0..window.view_len())
                        .filter_map(|v| window.view_item(v))
                        .filter(|item| item.kind == Kind::ToolResult || item.kind == Kind::ToolCall)
                        .map(|item| (item.index, (item.item_type, item.text, item.tokens.tokens)))
                        .collect();
                    let (mut counted, mut counted_tokens) = (0, 0);
                    for (&index, &(item_type, text, tokens)) in &sent {
                        let message = window.message(index).unwrap();
                        if message.kind() != Kind::ToolResult {
                            continue;
                        }
                        let note = text.is_some_and(|text| text.starts_with("[Superseded"));
                        let placeholder = text.is_some_and(|text| text.starts_with("[Old tool result cleared"));
                        if note || placeholder {
                            counted += 1;
                            counted_tokens += u64::from(message.count().tokens - tokens);
                        }
                        match superseded.get(&index) {
                            None => assert!(!note, "{context} step {i}: result {index} sent as a note, superseded by nothing"),
                            Some(&later) => {
                                let later_message = window.message(later).unwrap();
                                let tool = later_message.name().unwrap();
                                let argument = SUPERSEDE.iter().find(|(t, _)| *t == tool).unwrap().1;
                                let expected = superseded_text(tool, argument, later_message.call_id(), later_message.host_id());
                                // Sent whole only where the note would not be shorter.
                                let note_tokens = model.count(&expected).tokens;
                                assert!(
                                    placeholder
                                        || text == Some(expected.as_str())
                                        || (item_type == ItemType::Message && note_tokens >= message.count().tokens),
                                    "{context} step {i}: result {index}, superseded by call {later}, sent as {item_type:?} {text:?}"
                                );
                                if note {
                                    notes += 1;
                                    // The call stays; the later call is sent (the note points to it).
                                    let call = (0..index).rev().find(|&c| {
                                        window.message(c).unwrap().kind() == Kind::ToolCall
                                            && window.message(c).unwrap().call_id() == message.call_id()
                                    });
                                    assert!(sent.contains_key(&call.unwrap()), "{context} step {i}: {index}'s call is not sent");
                                    assert!(sent.contains_key(&later), "{context} step {i}: the later call {later} is not sent");
                                }
                            }
                        }
                    }
                    assert_eq!((info.cleared_results, info.cleared_tokens), (counted, counted_tokens), "{context} step {i}");
                    if i % 10 == 0 || i + 1 == run.steps.len() {
                        let body = json::render_request(&window, r#"{"model":"m","max_tokens":256}"#).unwrap();
                        let value: Value = serde_json::from_str(&body).unwrap();
                        if let Err(broken) = check(Rules::of(format), &value) {
                            panic!("{context} step {i}: {broken}");
                        }
                    }
                }
                // The same run pushed whole and prepared once: the same view.
                let mut once = agent_window(format, true, budget);
                run.push_all(&mut once, route).unwrap();
                once.prepare().unwrap();
                assert_eq!(view_of(&window), view_of(&once), "{context}: the view depends on when prepare ran");
                // With room for everything, the notes are all that changed: the history is
                // smaller by what they save.
                if budget == 1_000_000_000 {
                    let mut plain = agent_window(format, false, budget);
                    run.push_all(&mut plain, route).unwrap();
                    plain.prepare().unwrap();
                    let saved = plain.view_history().tokens() - window.view_history().tokens();
                    let info = window.prepare().unwrap();
                    assert_eq!(saved, info.cleared_tokens, "{context}: the history shrank by other than the notes' saving");
                    assert_eq!(plain.prepare().unwrap().cleared_results, 0, "{context}: cleared with room for everything");
                    saved_in_all += saved;
                }
            }
        }
    }
    assert!(notes > 20 && saved_in_all > 0, "too few superseded reads to test anything: {notes} notes, {saved_in_all} saved");
}

/// What a body holds of thinking `text` and its `signature`: the text whole, in a thinking
/// part (the same text may also be a file's content a call writes: the runs draw both from
/// the same real files), and the signature.
fn holds(body: &Value, text: &str, signature: &str) -> (bool, bool) {
    (thinking_texts(body).contains(&text), body.to_string().contains(signature))
}

/// The texts of every thinking part of a request body: Anthropic's `thinking` blocks, the
/// Responses API's reasoning summaries and texts, Gemini's `thought` parts.
fn thinking_texts(value: &Value) -> Vec<&str> {
    let mut texts = Vec::new();
    match value {
        Value::Object(object) => {
            let kind = object.get("type").and_then(Value::as_str);
            let thought = object.get("thought").and_then(Value::as_bool) == Some(true);
            if kind == Some("thinking") {
                texts.extend(object.get("thinking").and_then(Value::as_str));
            } else if matches!(kind, Some("summary_text" | "reasoning_text")) || thought {
                texts.extend(object.get("text").and_then(Value::as_str));
            }
            texts.extend(object.values().flat_map(thinking_texts));
        }
        Value::Array(items) => texts.extend(items.iter().flat_map(thinking_texts)),
        _ => {}
    }
    texts
}

#[test]
fn old_thinking_is_left_out_whole_where_the_provider_allows_it() {
    let runs: u64 = std::env::var("CTXWIN_CLEARING_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(2);
    let shape = Shape { steps: 20..=120, skill: 5, ..Shape::default() };
    let mut left_out_in_all = 0;
    for (format, _, rules) in FORMATS {
        let route = if format == Format::OpenAiChat { Route::Typed } else { Route::Json(format) };
        for seed in 0..runs {
            let run = Run::generate(seed * 17 + 3, &shape);
            for keep in [0u32, 3] {
                let context = format!("{format:?} seed {seed} keep_thinking {keep}");
                let config = |keep: Option<u32>| {
                    let keep = keep.map(|k| format!(r#","keep_thinking":{k}"#)).unwrap_or_default();
                    format!(r#"{{"format":"{}","history_budget":1000000000,"context_limit":2000000000{keep}}}"#, format.key())
                };
                let mut window = Window::new(Run::model(Some(format)));
                window.configure(&config(Some(keep))).unwrap();
                run.push_task(&mut window, route).unwrap();
                // The steps whose thinking the rules let go, by the run's own record.
                let mut expected_left_out = 0;
                for i in 0..run.steps.len() {
                    run.push_step(&mut window, route, i).unwrap();
                    window.prepare().unwrap();
                    if run.steps[i].skill.is_some() || (i % 7 != 0 && i + 1 != run.steps.len()) {
                        continue;
                    }
                    let body = json::render_request(&window, r#"{"model":"m","max_tokens":256}"#).unwrap();
                    let value: Value = serde_json::from_str(&body).unwrap();
                    if let Err(broken) = check(rules, &value) {
                        panic!("{context} step {i}: {broken}");
                    }
                    expected_left_out = 0;
                    for (j, step) in run.steps[..=i].iter().enumerate() {
                        let Some(thinking) = &step.thinking else { continue };
                        let newest = j + keep.max(1) as usize > i;
                        let current_turn = run.steps[j..i].iter().all(|s| s.skill.is_none());
                        let (text, signature) = holds(&value, &thinking.text, &thinking.signature);
                        let kept = match format {
                            Format::Anthropic => newest,
                            Format::OpenAiResponses => newest || !step.calls.is_empty(),
                            Format::Gemini => newest || current_turn,
                            Format::OpenAiChat => newest,
                        };
                        expected_left_out += usize::from(!kept);
                        let what = format!("{context} step {i}: thinking of step {j}");
                        match format {
                            // Sent whole with its signature, or not at all.
                            Format::Anthropic | Format::OpenAiResponses => {
                                assert_eq!((text, signature), (kept, kept), "{what} (kept: {kept})")
                            }
                            // The signature rides on a call or the answer and always goes back.
                            Format::Gemini => assert_eq!((text, signature), (kept, true), "{what} (kept: {kept})"),
                            // Chat carries no thinking.
                            Format::OpenAiChat => assert!(!text && !signature, "{what}"),
                        }
                    }
                }
                // Prepared once at the end: the same view; against keeping all, smaller by
                // the thinking left out.
                let mut once = Window::new(Run::model(Some(format)));
                once.configure(&config(Some(keep))).unwrap();
                run.push_all(&mut once, route).unwrap();
                once.prepare().unwrap();
                assert_eq!(view_of(&window), view_of(&once), "{context}: the view depends on when prepare ran");
                let mut all = Window::new(Run::model(Some(format)));
                all.configure(&config(None)).unwrap();
                run.push_all(&mut all, route).unwrap();
                all.prepare().unwrap();
                let thinking_items = |w: &Window| {
                    (0..w.view_len()).filter_map(|i| w.view_item(i)).filter(|item| item.kind == Kind::Thinking).count()
                };
                if run.steps.last().unwrap().skill.is_none() {
                    assert_eq!(
                        thinking_items(&all) - thinking_items(&window),
                        expected_left_out,
                        "{context}: thinking items left out"
                    );
                }
                if expected_left_out > 0 {
                    assert!(
                        window.view_history().tokens() < all.view_history().tokens(),
                        "{context}: leaving thinking out saved nothing"
                    );
                }
                left_out_in_all += expected_left_out;
            }
        }
    }
    assert!(left_out_in_all > 50, "too little thinking left out to test anything ({left_out_in_all})");
}

/// A compaction record says what the clearing stage had done before the summary was needed:
/// the results the view sent cleared and the tokens that saved, as the last `prepare` before
/// the summary reported them; without the clear stage, nothing.
#[test]
fn compaction_records_say_what_clearing_did_before_the_summary() {
    let mut cleared_in_records = 0;
    for (clear, seed) in [(true, 1u64), (true, 2), (true, 3), (false, 1)] {
        let mut rng = Rng::new(seed);
        let stages = if clear { r#"["clear","summary"]"# } else { r#"["summary"]"# };
        let mut window = Window::new("gpt-4o");
        window
            .configure(&format!(
                r#"{{"stages":{stages},"history_budget":2500,"keep_tool_results":2,"clear_at_least":300,"pin_task":false}}"#
            ))
            .unwrap();
        let mut call = 0;
        for turn in 0..30 {
            window.push(Kind::User, &format!("Task {turn}: fix the failing test.")).unwrap();
            for _ in 0..4 {
                call += 1;
                let id = format!("call_{call}");
                window.push_tool_call(&id, "read_file", &format!(r#"{{"path":"src/m{call}.rs"}}"#)).unwrap();
                window.push_tool(Kind::ToolResult, &id, &output(&mut rng, 40)).unwrap();
            }
            window.push(Kind::Assistant, "Fixed.").unwrap();
            window.end_turn();
            let info = window.prepare().unwrap();
            if window.needs_summary() {
                window.summary_request().unwrap();
                let records = window.compactions().len();
                window.set_summary(window.generation(), &format!("Fixed tasks up to {turn}."), 1_700_000_000).unwrap();
                let record = &window.compactions()[records];
                let context = format!("clear {clear} seed {seed} turn {turn}");
                assert_eq!(
                    (record.cleared_results, record.cleared_tokens),
                    (info.cleared_results, info.cleared_tokens),
                    "{context}"
                );
                let value = record.to_value();
                assert_eq!(value["cleared_results"], info.cleared_results, "{context}");
                assert_eq!(value["cleared_tokens"], info.cleared_tokens, "{context}");
                if !clear {
                    assert_eq!(record.cleared_results, 0, "{context}: cleared without the clear stage");
                }
                cleared_in_records += record.cleared_results;
            }
        }
        assert!(!window.compactions().is_empty(), "seed {seed}: no summary was needed");
    }
    assert!(cleared_in_records > 0, "no record saw a clearing");
}

/// A USER message that completes a turn leaving a call unanswered rebuilds the view at once
/// (its cancelled result in place): the rebuilt view still sends the cleared results as
/// placeholders and leaves out the old thinking, as the plan says, so its history does not
/// jump over the budget until the next `prepare`.
#[test]
fn a_turn_completed_with_an_open_call_keeps_its_cleared_results() {
    let mut rng = Rng::new(11);
    let mut window = Window::new("gpt-4o");
    window
        .configure(
            r#"{"stages":["clear","sliding"],"history_budget":6000,"keep_tool_results":0,"clear_at_least":0,"keep_thinking":1}"#,
        )
        .unwrap();
    window.push(Kind::User, "Task: fix the failing test.").unwrap();
    for step in 0..12 {
        window.push(Kind::Thinking, &format!("Step {step}: read the next file.")).unwrap();
        let id = format!("call_{step}");
        window.push_tool_call(&id, "read_file", r#"{"path":"src/lib.rs"}"#).unwrap();
        window.push_tool(Kind::ToolResult, &id, &output(&mut rng, 40)).unwrap();
    }
    // The newest step: two calls, one answered with a long output, one left open.
    window.push_tool_call("call_last", "read_file", r#"{"path":"src/big.rs"}"#).unwrap();
    window.push_tool_call("call_open", "read_file", r#"{"path":"src/main.rs"}"#).unwrap();
    window.push_tool(Kind::ToolResult, "call_last", &output(&mut rng, 400)).unwrap();
    window.prepare().unwrap();
    let cleared = sent(&window).0;
    assert!(!cleared.is_empty(), "nothing was cleared");
    let thinking = |window: &Window| {
        (0..window.view_len()).filter_map(|i| window.view_item(i)).filter(|item| item.kind == Kind::Thinking).count()
    };
    let thinking_before = thinking(&window);
    window.push(Kind::User, "Go on.").unwrap();
    assert_eq!(sent(&window).0, cleared, "the rebuilt view sends the cleared results whole");
    assert_eq!(thinking(&window), thinking_before, "the rebuilt view sends the old thinking");
    assert!(window.view_history().tokens() <= 6000, "{}", window.view_history().tokens());
}

/// When the newest step alone is over the room the context limit leaves, the view keeps the
/// newest step and cuts its long outputs (the emergency fit): the results the clear stage
/// cleared in that step are still sent as their placeholders, not whole and then cut, and
/// old thinking is still left out.
#[test]
fn the_emergency_fit_keeps_the_cleared_results_placeholders() {
    let mut rng = Rng::new(5);
    for strategy in ["sliding", "summary"] {
        let mut window = Window::new("gpt-4o");
        window
            .configure(&format!(
                r#"{{"stages":["clear","{strategy}"],"context_limit":6000,"output_reserve":0,"keep_tool_results":1,
                    "clear_at_least":0,"keep_thinking":1}}"#
            ))
            .unwrap();
        window.push(Kind::User, "Task: fix the failing test.").unwrap();
        window.push(Kind::Thinking, "Read the logs first.").unwrap();
        window.push_tool_call("old", "read_file", r#"{"path":"src/old.rs"}"#).unwrap();
        window.push_tool(Kind::ToolResult, "old", &output(&mut rng, 60)).unwrap();
        // The newest step: two long results; the newest alone is over the context limit.
        window.push(Kind::Thinking, "Now the two big files.").unwrap();
        window.push_tool_call("a", "read_file", r#"{"path":"src/a.rs"}"#).unwrap();
        window.push_tool_call("b", "read_file", r#"{"path":"src/b.rs"}"#).unwrap();
        window.push_tool(Kind::ToolResult, "a", &output(&mut rng, 400)).unwrap();
        let first = window.message_count() - 1;
        window.push_tool(Kind::ToolResult, "b", &output(&mut rng, 1_000)).unwrap();
        let info = window.prepare().unwrap();
        assert!(info.tokens <= 6000, "{strategy}: {} tokens", info.tokens);
        let item = (0..window.view_len()).filter_map(|i| window.view_item(i)).find(|item| item.index == first).unwrap();
        let text = item.text.unwrap_or_default();
        assert!(text.starts_with("[Old tool result cleared"), "{strategy}: the cleared result was sent as {text:.80}");
        assert!(info.cleared_results >= 1, "{strategy}: {info:?}");
    }
}

/// `clear_low_water` sets how far a clearing goes once the view is over, apart from the
/// policy's `low_water` (which then only bounds what the strategy drops): clearing down to a
/// lower mark clears more results at each clearing and so clears less often, the view stays
/// within the budget, and the newest `keep_tool_results` are still sent whole.
#[test]
fn clear_low_water_sets_how_far_a_clearing_goes() {
    let mut rng = Rng::new(3);
    let config = |clear_low_water: &str| {
        format!(
            r#"{{"stages":["clear","sliding"],"history_budget":8000,"keep_tool_results":2,"clear_at_least":0,
                "clear_low_water":{clear_low_water}}}"#
        )
    };
    let (mut policy, mut deep) = (Window::new("gpt-4o"), Window::new("gpt-4o"));
    policy.configure(&config("null")).unwrap();
    deep.configure(&config("0.1")).unwrap();
    // The times the set of cleared results changed, and the most cleared at once.
    let (mut changes, mut cleared) = ([0; 2], [HashSet::new(), HashSet::new()]);
    for window in [&mut policy, &mut deep] {
        window.push(Kind::User, "Task: fix the failing test.").unwrap();
    }
    for step in 0..60 {
        let id = format!("call_{step}");
        let lines = rng.between(20, 120);
        let text = output(&mut rng, lines);
        for (n, window) in [&mut policy, &mut deep].into_iter().enumerate() {
            window.push_tool_call(&id, "read_file", r#"{"path":"src/lib.rs"}"#).unwrap();
            window.push_tool(Kind::ToolResult, &id, &text).unwrap();
            window.prepare().unwrap();
            assert!(window.view_history().tokens() <= 8000, "step {step}: {}", window.view_history().tokens());
            let now = sent(window).0;
            let newest = [window.message_count() - 1, window.message_count() - 3];
            assert!(newest.iter().all(|index| !now.contains(index)), "step {step}: a newest result was cleared");
            changes[n] += usize::from(now != cleared[n]);
            cleared[n] = now;
        }
    }
    assert!(changes[1] > 0 && changes[1] < changes[0], "clearings: low water of the policy {}, 0.1 {}", changes[0], changes[1]);
    assert!(deep.view_history().tokens() < policy.view_history().tokens() || cleared[1].len() > cleared[0].len());
}

/// Images in old user messages are cleared as old tool results are: once the clear stage has
/// cleared results past a USER message holding an image, the message is sent as its text and
/// a placeholder naming the tokens cleared, in every format (the image is not in the body,
/// which passes the provider's rules); the request info counts it with the cleared results;
/// the newest user message's image and the pinned task's stay.
const URL: &str = "https://example.com/screenshot.png";
const SAYS: &str = "Here is the screenshot of the failing page.";

/// A USER message of `format` saying [`SAYS`] with the image at [`URL`].
fn image_message(format: Format) -> Value {
    match format {
        Format::OpenAiChat => {
            serde_json::json!({"role": "user", "content": [{"type": "text", "text": SAYS}, {"type": "image_url", "image_url": {"url": URL}}]})
        }
        Format::OpenAiResponses => {
            serde_json::json!({"role": "user", "content": [{"type": "input_text", "text": SAYS}, {"type": "input_image", "image_url": URL}]})
        }
        Format::Anthropic => serde_json::json!({"role": "user", "content": [{"type": "text", "text": SAYS},
            {"type": "image", "source": {"type": "url", "url": URL}}]}),
        Format::Gemini => {
            serde_json::json!({"role": "user", "parts": [{"text": SAYS}, {"fileData": {"mimeType": "image/png", "fileUri": URL}}]})
        }
    }
}

#[test]
fn images_in_old_user_messages_are_cleared() {
    let mut rng = Rng::new(9);
    for (format, key, rules) in FORMATS {
        let mut window = Window::new("gpt-4o");
        window
            .configure(&format!(
                r#"{{"format":"{key}","stages":["clear","sliding"],"history_budget":8000,"keep_tool_results":1,"clear_at_least":0}}"#
            ))
            .unwrap();
        let mut call = 0;
        // The task's image, an old message's, the newest message's.
        let mut images = Vec::new();
        for turn in 0..3 {
            if turn > 0 {
                window.push(Kind::Assistant, "Looked at it.").unwrap();
                window.end_turn();
            }
            json::push_json(&mut window, &image_message(format).to_string()).unwrap();
            images.push(window.message_count() - 1);
            for _ in 0..8 {
                call += 1;
                let id = format!("call_{call}");
                window.push_tool_call(&id, "read_file", r#"{"path":"src/page.rs"}"#).unwrap();
                window.push_tool(Kind::ToolResult, &id, &output(&mut rng, 60)).unwrap();
            }
        }
        let (task, images) = (images[0], &images[1..]);
        let media = window.message(images[0]).unwrap().media().expect("the image is counted");
        let info = window.prepare().unwrap();
        let item = |index: usize| (0..window.view_len()).filter_map(|i| window.view_item(i)).find(|item| item.index == index);
        let old = item(images[0]).unwrap_or_else(|| panic!("{key}: the old user message is not sent"));
        let text = old.text.unwrap_or_default().to_owned();
        assert_eq!(old.item_type, ItemType::Truncated, "{key}: the old image was sent");
        assert!(text.starts_with(SAYS) && text.contains(&format!("{} tokens", media.tokens)), "{key}: {text}");
        assert_eq!(item(images[1]).map(|item| item.item_type), Some(ItemType::Message), "{key}: the newest image");
        assert_eq!(item(task).map(|item| item.item_type), Some(ItemType::Message), "{key}: the task");
        let results = sent(&window).0.len();
        assert_eq!(info.cleared_results, results + 1, "{key}: {info:?}");
        let body = json::render_request(&window, r#"{"model":"m","max_tokens":256}"#).unwrap();
        assert_eq!(body.matches(URL).count(), 2, "{key}: the task's and the newest message's images only\n{body}");
        assert!(body.contains("[Image cleared to save context"), "{key}");
        let value: Value = serde_json::from_str(&body).unwrap();
        if let Err(broken) = check(rules, &value) {
            panic!("{key}: {broken}\n{}", serde_json::to_string_pretty(&value).unwrap());
        }
    }
}

/// Old images are clearable items of their own: a conversation without a tool result (a
/// screenshot and a question, an answer, turn after turn), over its budget, clears the old
/// images oldest first (each message sent as its text and a placeholder) and keeps the
/// newest turn's, in every format; every request within the budget, the body without the
/// cleared images and passing the provider's rules, the request info counting them. (Before,
/// only tool results moved the clear point, so such a conversation kept every old image.)
#[test]
fn old_images_are_cleared_without_tool_results() {
    for (format, key, rules) in FORMATS {
        let mut window = Window::new("gpt-4o");
        window.configure(&format!(r#"{{"format":"{key}","stages":["clear","sliding"],"clear_at_least":0}}"#)).unwrap();
        let mut images = Vec::new();
        let mut cleared_seen = 0;
        for turn in 0..24 {
            if turn > 0 {
                window.push(Kind::Assistant, &format!("Answer {turn}: the button is misaligned by two pixels.")).unwrap();
                window.end_turn();
            }
            json::push_json(&mut window, &image_message(format).to_string()).unwrap();
            images.push(window.message_count() - 1);
            if turn == 0 {
                // A budget of about eight turns.
                let tokens = window.message(images[0]).unwrap().count().tokens;
                window.set_budget(8 * (tokens as i32 + 20)).unwrap();
            }
            let info = window.prepare().unwrap();
            let budget = u64::from(window.settings().history_budget);
            assert!(window.view_history().tokens() <= budget, "{key} turn {turn}: over the budget");
            let sent: Vec<(usize, ItemType, String)> = (0..window.view_len())
                .filter_map(|i| window.view_item(i))
                .filter(|item| item.kind == Kind::User && images.contains(&item.index))
                .map(|item| (item.index, item.item_type, item.text.unwrap_or_default().to_owned()))
                .collect();
            let cleared: Vec<usize> = sent.iter().filter(|item| item.1 == ItemType::Truncated).map(|item| item.0).collect();
            for (index, item_type, text) in &sent {
                match item_type {
                    ItemType::Truncated => assert!(text.starts_with(SAYS) && text.contains("[Image cleared to save context")),
                    _ => assert!(
                        *index == images[0] || cleared.iter().all(|&c| c < *index),
                        "{key} turn {turn}: image {index} sent whole while a newer one is cleared"
                    ),
                }
            }
            let newest = sent.last().expect("the newest turn is sent");
            assert_eq!((newest.0, newest.1), (images[turn], ItemType::Message), "{key} turn {turn}: the newest image");
            assert_eq!(info.cleared_results, cleared.len(), "{key} turn {turn}");
            let body = json::render_request(&window, r#"{"model":"m","max_tokens":256}"#).unwrap();
            assert_eq!(body.matches(URL).count(), sent.len() - cleared.len(), "{key} turn {turn}: cleared images in the body");
            let value: Value = serde_json::from_str(&body).unwrap();
            if let Err(broken) = check(rules, &value) {
                panic!("{key} turn {turn}: {broken}\n{}", serde_json::to_string_pretty(&value).unwrap());
            }
            cleared_seen = cleared_seen.max(cleared.len());
        }
        assert!(cleared_seen >= 3, "{key}: the old images were not cleared ({cleared_seen} at most)");
    }
}

/// A summary that archives the oldest steps of a turn stands after that turn's USER message,
/// also when the message is sent with its images cleared (a later turn started): before, the
/// summary was placed only after a USER message sent whole, so it came before the question
/// it continues, and the view sent the question after the summary of its own steps.
#[test]
fn the_summary_follows_a_question_sent_with_its_images_cleared() {
    for (format, key, rules) in FORMATS {
        let mut window = Window::new("gpt-4o");
        window
            .configure(&format!(
                r#"{{"format":"{key}","stages":["clear","sliding"],"clear_at_least":0,
                    "summary_budget":300,"history_budget":1500,"low_water":1,"keep_tool_results":1}}"#
            ))
            .unwrap();
        window.push(Kind::User, "Task: make the page render on small screens.").unwrap();
        window.push(Kind::Assistant, "Which page?").unwrap();
        window.end_turn();
        json::push_json(&mut window, &image_message(format).to_string()).unwrap();
        let question = window.message_count() - 1;
        let mut rng = Rng::new(7);
        for call in 0..30 {
            window.prepare().unwrap();
            let id = format!("call_{call}");
            window.push_tool_call(&id, "read_file", &format!(r#"{{"path":"src/page{call}.css"}}"#)).unwrap();
            window.push_tool(Kind::ToolResult, &id, &output(&mut rng, 12)).unwrap();
        }
        window.push(Kind::Assistant, "The media query was missing; added it.").unwrap();
        window.end_turn();
        window.prepare().unwrap();
        window.push(Kind::User, "Thanks. Does it work on tablets too?").unwrap();
        window.prepare().unwrap();
        assert!(window.needs_summary(), "{key}: the steps sliding pruned ask for no summary");
        window.summary_request().unwrap();
        window.set_summary(window.generation(), "Summary: read the page's styles.", 1_700_000_000).unwrap();
        window.prepare().unwrap();
        let record = window.summary().expect("a summary");
        assert!(record.last_archived > question, "{key}: the summary archives none of the turn's steps");
        let view: Vec<_> = (0..window.view_len()).filter_map(|i| window.view_item(i)).collect();
        let at = |index: usize| view.iter().position(|item| item.item_type != ItemType::Synthetic && item.index == index);
        let summary = view.iter().position(|item| item.text == Some("Summary: read the page's styles."));
        let sent_question = at(question).unwrap_or_else(|| panic!("{key}: the question is not sent"));
        assert_eq!(view[sent_question].item_type, ItemType::Truncated, "{key}: the question's image is not cleared");
        assert_eq!(summary, Some(sent_question + 1), "{key}: the summary does not follow the question: {view:?}");
        let body = json::render_request(&window, r#"{"model":"m","max_tokens":256}"#).unwrap();
        let (asked, summarized) = (body.find(SAYS).unwrap(), body.find("Summary: read the page").unwrap());
        assert!(asked < summarized, "{key}: the body sends the summary before the question");
        if let Err(broken) = check(rules, &serde_json::from_str(&body).unwrap()) {
            panic!("{key}: {broken}");
        }
    }
}

/// With `clear_tool_inputs`, a Gemini `functionCall` that carries a `thoughtSignature` keeps
/// its arguments and its signature, also when it is the only part of its content: Gemini
/// refuses a current turn (a one-task tool loop is one turn) whose calls lost the signatures
/// it gave them. Before, a content of one call was rebuilt with `{}` as its arguments and
/// without the signature; only calls among other parts (a thought, parallel calls) kept it.
#[test]
fn a_lone_gemini_call_keeps_its_thought_signature_when_its_result_is_cleared() {
    let mut window = Window::new("gemini-2.5-pro");
    window
        .configure(
            r#"{"format":"gemini","stages":["clear","sliding"],"history_budget":4000,"keep_tool_results":1,
                "clear_at_least":0,"clear_tool_inputs":true}"#,
        )
        .unwrap();
    json::push_json(&mut window, r#"{"role":"user","parts":[{"text":"Task: fix the failing test."}]}"#).unwrap();
    let mut rng = Rng::new(3);
    for step in 0..20 {
        window.prepare().unwrap();
        let call = format!(
            r#"{{"role":"model","parts":[{{"functionCall":{{"id":"call_{step}","name":"read_file","args":{{"path":"src/f{step}.rs"}}}},"thoughtSignature":"sig{step}"}}]}}"#
        );
        json::push_json(&mut window, &call).unwrap();
        let answer = serde_json::json!({"role": "user", "parts": [{"functionResponse":
            {"id": format!("call_{step}"), "name": "read_file", "response": {"output": output(&mut rng, 30)}}}]});
        json::push_json(&mut window, &answer.to_string()).unwrap();
    }
    let info = window.prepare().unwrap();
    assert!(info.cleared_results >= 3, "nothing was cleared: {info:?}");
    let body: Value = serde_json::from_str(&json::render_request(&window, "{}").unwrap()).unwrap();
    for content in body["contents"].as_array().unwrap() {
        for part in content["parts"].as_array().unwrap() {
            if let Some(call) = part.get("functionCall") {
                let id = call["id"].as_str().unwrap();
                let step = id.trim_start_matches("call_");
                assert_eq!(part["thoughtSignature"], format!("sig{step}"), "{id} lost its signature: {part}");
                assert_eq!(call["args"]["path"], format!("src/f{step}.rs"), "{id} lost its arguments: {part}");
            }
        }
    }
    if let Err(broken) = check(Rules::Gemini, &body) {
        panic!("{broken}");
    }
}
