//! The clearing stage (`"stages": ["clear", ...]`): old tool results replaced by a placeholder
//! while their calls stay. Over random long tool loops in every format: every request within
//! the budget; the newest `keep_tool_results` results and every excluded tool's results sent
//! whole; every cleared result's call still sent; each clearing saving at least
//! `clear_at_least`; bodies that pass the providers' structural rules; and the view the same
//! whether `prepare` ran before every request or once at the end.
//!
//! `CTXWIN_CLEARING_SESSIONS=n` runs n sessions per format (default 40).

#[path = "support/provider_rules.rs"]
mod provider_rules;
#[path = "support/rng.rs"]
mod rng;

use ctxwin::json::{self, Format};
use ctxwin::view::ItemType;
use ctxwin::{Kind, Window};
use provider_rules::{Rules, check};
use rng::Rng;
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
}

impl Session {
    fn new(format: &str, rng: &mut Rng, budget: u64) -> Session {
        let keep = rng.below(6);
        let at_least = [0, 200, 2_000][rng.below(3) as usize];
        let strategy = ["sliding", "summary"][rng.below(2) as usize];
        let mut window = Window::new("gpt-4o");
        let config = format!(
            r#"{{"format":"{format}","stages":["clear","{strategy}"],"history_budget":{budget},"keep_tool_results":{keep},
                "clear_at_least":{at_least},"exclude_tools":["memory"],"clear_tool_inputs":{}}}"#,
            rng.chance(2)
        );
        window.configure(&config).unwrap();
        Session { window, keep, at_least, budget }
    }
}

/// The results sent cleared and the results sent whole, by ledger index, and the calls sent.
fn sent(window: &Window) -> (HashSet<usize>, HashSet<usize>, HashSet<usize>) {
    let (mut cleared, mut whole, mut calls) = (HashSet::new(), HashSet::new(), HashSet::new());
    for item in (0..window.view_len()).filter_map(|i| window.view_item(i)) {
        match (item.kind, item.item_type) {
            (Kind::ToolResult, ItemType::Truncated) => cleared.insert(item.index),
            (Kind::ToolResult, ItemType::Message) => whole.insert(item.index),
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
            for turn in 0..rng.between(1, 4) {
                session.window.push(Kind::User, &format!("Task {turn}: fix the failing test.")).unwrap();
                // What was cleared when the turn began: the walk's remembered state.
                let at_turn_start = sent(&session.window).0;
                let start_at_turn_start = session.window.start();
                for _ in 0..rng.between(3, 40) {
                    session.window.prepare().unwrap();
                    let (cleared, _, calls) = sent(&session.window);
                    let context = format!("{key} seed {seed} turn {turn}");
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
                    // (A clearing whose turns the strategy then dropped saved more than is sent.)
                    if !new.is_empty() && session.window.start() == start_at_turn_start {
                        clearings += 1;
                        // The results' tokens saved, and with clear_tool_inputs their calls'.
                        let calls_of_new: HashSet<usize> = new.iter().map(|index| calls_of[index]).collect();
                        let saved: u64 = (0..session.window.view_len())
                            .filter_map(|v| session.window.view_item(v))
                            .filter(|item| item.item_type == ItemType::Truncated)
                            .filter(|item| new.contains(&item.index) || calls_of_new.contains(&item.index))
                            .map(|item| {
                                u64::from(session.window.message(item.index).unwrap().count().tokens - item.tokens.tokens)
                            })
                            .sum();
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
