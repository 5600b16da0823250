//! Long sessions: every strategy, random settings, sessions of 2,000 turns of tool-using
//! work (questions, thinking, parallel tool calls with outputs from one line to a few hundred,
//! some with very long lines, answers).
//!
//! Once the history has outgrown the strategy's token limit (the first prune), at every
//! `end_turn`:
//! - the view's history is at most the limit, unless the newest turn alone is larger;
//! - it is at least `LOW_WATER` x the limit whenever no turn of the session costs more than
//!   the band `(1 - LOW_WATER)` x the limit (a single step never removes more than one turn's
//!   worth), and never below `LOW_WATER` x the limit minus the largest turn otherwise: no
//!   cliff;
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
/// The fraction of its limit a strategy brings the view down to once it acts (the library's
/// default until the `low_water` setting exists).
const LOW_WATER: f64 = 0.8;

fn settings(rng: &mut Rng, strategy: &str) -> String {
    let budget = rng.between(2_000, 30_000);
    let mut json = format!(r#"{{"strategy":"{strategy}","history_budget":{budget}"#);
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
    let low = LOW_WATER * limit as f64;
    if largest_turn as f64 <= (1.0 - LOW_WATER) * limit as f64 {
        assert!(history as f64 >= low, "{context}: history {history} below {LOW_WATER} x {limit}");
    } else {
        assert!(history as f64 >= low - largest_turn as f64, "{context}: history {history} fell off a cliff (limit {limit}, largest turn {largest_turn})");
    }
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
