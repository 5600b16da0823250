//! Long sessions: every strategy, random settings, sessions of 2,000 turns of tool-using
//! work (questions, thinking, parallel tool calls with outputs from one line to a few hundred,
//! some with very long lines, answers).
//!
//! Once the history has outgrown the strategy's token limit (the first prune), at every
//! `end_turn`:
//! - the view's history is at most the limit, unless the newest turn alone is larger;
//! - it is at least `low_water` x the limit less the largest turn of the session: a strategy
//!   that acts goes down to the low-water mark one step at a time, and a step gives up at
//!   most one turn's worth, so the view never falls off a cliff;
//! - at most one compaction marker, at most one `[Summary]` item, of at most
//!   `BLOCK_LINES` lines.
//!
//! The same sessions restored from an export give the same view (the decisions are a
//! function of the ledger, not of when `end_turn` ran).

use ctxwin::Kind;
use ctxwin::Window;
use ctxwin::strategy::tiered::BLOCK_LINES;
use ctxwin::view::ItemType;

#[path = "support/long_session.rs"]
mod long_session;
use long_session::{Rng, turn};

const TURNS: usize = 2_000;
const SESSIONS: u64 = 3;
const MODEL: &str = "test-model-estimated";

fn settings(rng: &mut Rng, strategy: &str) -> String {
    let budget = rng.between(8_000, 40_000);
    let low_water = rng.between(50, 100) as f64 / 100.0;
    let mut json = format!(r#"{{"strategy":"{strategy}","history_budget":{budget},"low_water":{low_water}"#);
    if strategy != "sliding" && rng.chance(50) {
        json.push_str(&format!(r#","token_threshold":{}"#, rng.between(budget / 2, budget)));
    }
    match strategy {
        "tiered" => json.push_str(&format!(
            r#","keep_first":{},"keep_recent":{},"tool_output_max_lines":{}"#,
            rng.below(8),
            rng.below(30),
            rng.between(4, 60)
        )),
        "monologue" => json.push_str(&format!(r#","keep_recent_turns":{}"#, rng.below(5))),
        _ => {}
    }
    json.push('}');
    json
}

/// The history token limit the strategy enforces.
fn limit(window: &Window) -> u64 {
    let settings = window.settings();
    let budget = u64::from(settings.history_budget);
    settings.token_threshold.map_or(budget, |t| u64::from(t).min(budget))
}

fn check(window: &Window, limit: u64, largest_turn: u64, context: &str) {
    let history = window.view_history().tokens();
    let newest = window.turn_info(window.turn_count() - 1).unwrap().tokens.tokens;
    assert!(history <= limit || u64::from(newest) > limit, "{context}: history {history} over the limit {limit}");
    let low = window.settings().low_water.floor_of(limit);
    assert!(history + largest_turn >= low, "{context}: history {history} fell off a cliff (low water {low}, largest turn {largest_turn})");
    let (mut markers, mut summaries) = (0, 0);
    for i in 0..window.view_len() {
        let item = window.view_item(i).unwrap();
        let text = item.text.unwrap_or("");
        if item.item_type == ItemType::Synthetic && text.starts_with("[Context compacted:") {
            markers += 1;
        }
        if item.item_type == ItemType::Synthetic && text.starts_with("[Summary]") {
            summaries += 1;
            let lines = text.lines().count() as u64;
            assert!(lines <= BLOCK_LINES, "{context}: a summary block of {lines} lines");
        }
    }
    assert!(markers <= 1, "{context}: {markers} markers");
    assert!(summaries <= 1, "{context}: {summaries} summary items");
}

fn run(strategy: &str) {
    for seed in 0..SESSIONS {
        let mut rng = Rng::new(seed * 7919 + strategy.len() as u64);
        let config = settings(&mut rng, strategy);
        let mut window = Window::new(MODEL);
        window.configure(&config).unwrap();
        window.push(Kind::System, "You are a careful coding agent.").unwrap();
        let (mut id, mut pruned, mut largest, mut whole) = (0, false, 0u64, 0u64);
        let limit = limit(&window);
        for t in 0..TURNS {
            turn(&mut window, &mut rng, &mut id);
            window.end_turn();
            let tokens = u64::from(window.turn_info(t).unwrap().tokens.tokens);
            (largest, whole) = (largest.max(tokens), whole + tokens);
            pruned |= whole > limit;
            if pruned {
                check(&window, limit, largest, &format!("{strategy} {config} turn {t}"));
            }
        }
        assert!(pruned, "{strategy}: the session never filled the budget");
        let restored = ctxwin::persist::import(&ctxwin::persist::export(&window)).unwrap();
        let view = |w: &Window| (0..w.view_len()).map(|i| format!("{:?}", w.view_item(i).unwrap())).collect::<Vec<_>>();
        assert_eq!(view(&restored), view(&window), "{strategy}: a restored session sends another view");
    }
}

#[test]
fn sliding_holds_up() {
    run("sliding");
}

#[test]
fn drop_oldest_holds_up() {
    run("drop_oldest");
}

#[test]
fn tiered_holds_up() {
    run("tiered");
}

#[test]
fn monologue_holds_up() {
    run("monologue");
}
