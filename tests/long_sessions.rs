//! Long sessions: every strategy, random settings, sessions of 2,000 turns of tool-using
//! work (questions, thinking, parallel tool calls with outputs from one line to a few hundred,
//! some with very long lines, answers). The `summary` strategy's requests are answered with a
//! generated text whenever `needs_summary` says one is due, as an agent would.
//!
//! Once the history has outgrown the strategy's token limit (the first prune), at every
//! `end_turn`:
//! - the view's history is at most the limit, unless the newest turn alone is larger;
//! - it is at least `low_water` x the limit, less one step. A strategy that has to act goes
//!   down to the low-water mark one step at a time and stops at the first step that reaches
//!   it, so it lands at most one step under the mark, then grows back towards the limit.
//!   The slack is that of the rule: a strategy that stopped at the last step above the mark
//!   instead would have to act again as soon as the view grew by what that step gave up, and
//!   when a step is larger than `(1 - low_water)` x the limit no step boundary lies between
//!   the mark and the limit at all. For `sliding`, `drop_oldest` and `summary` a step is one
//!   whole turn, so the claim checked is exact: the view is at least the mark, or the view
//!   plus the turn just before its first live turn is over the mark (the turn the last
//!   step gave up). For `tiered` and `monologue` a step cuts, summarises, strips or drops at
//!   most one turn's worth: the view is at least the mark less the largest turn;
//! - at most one compaction marker; at most one summary item: `tiered`'s `[Summary]` block of
//!   at most `BLOCK_LINES` lines and an eighth of the limit, or the `summary` strategy's
//!   summary in place, of at most `summary_budget` tokens.
//!
//! The same sessions restored from an export give the same view (the decisions are a
//! function of the ledger and the accepted summaries, not of when `end_turn` ran).

use ctxwin::Kind;
use ctxwin::Window;
use ctxwin::strategy::tiered::BLOCK_LINES;
use ctxwin::view::ItemType;

#[path = "support/long_session.rs"]
mod long_session;
use long_session::{Rng, answer_summaries, turn};

const TURNS: usize = 2_000;
const SESSIONS: u64 = 3;
const MODEL: &str = "test-model-estimated";

fn settings(rng: &mut Rng, strategy: &str) -> String {
    let budget = rng.between(8_000, 40_000);
    let low_water = rng.between(50, 100) as f64 / 100.0;
    let mut json = format!(r#"{{"strategy":"{strategy}","history_budget":{budget},"low_water":{low_water}"#);
    if strategy != "sliding" && strategy != "summary" && rng.chance(50) {
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
        "summary" => json.push_str(&format!(
            r#","summary_budget":{},"threshold":{}"#,
            rng.between(200, 2_000),
            rng.between(50, 95) as f64 / 100.0
        )),
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

/// True for the strategies whose every step gives up one whole turn.
fn whole_turns(strategy: &str) -> bool {
    matches!(strategy, "sliding" | "drop_oldest" | "summary")
}

fn check(window: &Window, strategy: &str, limit: u64, largest_turn: u64, context: &str) {
    let history = window.view_history().tokens();
    let newest = window.turn_info(window.turn_count() - 1).unwrap().tokens.tokens;
    assert!(history <= limit || u64::from(newest) > limit, "{context}: history {history} over the limit {limit}");
    let low = window.settings().low_water.floor_of(limit);
    if whole_turns(strategy) {
        // The step given up last: the one before the boundary, with its turn's USER message
        // (sent while a later step of the turn is) and the marker (sent while the boundary is
        // inside a turn).
        let steps = window.step_starts();
        let at = steps.partition_point(|&s| s < window.start());
        let given_up = match (window.start(), at.checked_sub(1)) {
            (0, _) | (_, None) => 0,
            (start, Some(previous)) => {
                let step: u64 = (steps[previous]..start)
                    .filter(|&i| !window.is_pinned_at(i))
                    .map(|i| u64::from(window.message(i).unwrap().count().tokens))
                    .sum();
                let user = window.turn_of(steps[previous]).map_or(0, |turn| {
                    let first = window.turn_info(turn).unwrap().first_message;
                    u64::from(window.message(first).unwrap().count().tokens)
                });
                step + user + 64
            }
        };
        // A summary archives whole turns: the turn before the first live one.
        let turn = window.first_live_turn().checked_sub(1).map_or(0, |t| u64::from(window.turn_info(t).unwrap().tokens.tokens));
        let given_up = given_up.max(turn);
        assert!(
            history >= low || history + given_up > low,
            "{context}: history {history} is under low water {low} by more than the step the last move gave up ({given_up})"
        );
    } else {
        assert!(
            history + largest_turn >= low,
            "{context}: history {history} fell off a cliff (low water {low}, largest turn {largest_turn})"
        );
    }
    let (mut markers, mut summaries) = (0, 0);
    let in_place = window.summary().map(|record| &*record.summary);
    for i in 0..window.view_len() {
        let item = window.view_item(i).unwrap();
        let text = item.text.unwrap_or("");
        if item.item_type != ItemType::Synthetic {
            continue;
        }
        if text.starts_with("[Context compacted:") {
            markers += 1;
        }
        if text.starts_with("[Summary]") {
            summaries += 1;
            let lines = text.lines().count() as u64;
            assert!(lines <= BLOCK_LINES, "{context}: a summary block of {lines} lines");
            let tokens = u64::from(item.tokens.tokens);
            assert!(tokens <= limit / 8, "{context}: a summary block of {tokens} tokens, over an eighth of {limit}");
        }
        if Some(text) == in_place {
            summaries += 1;
            let budget = window.settings().summary_budget;
            assert!(
                item.tokens.tokens <= budget,
                "{context}: a summary of {} tokens over summary_budget {budget}",
                item.tokens.tokens
            );
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
        let (mut id, mut pruned, mut largest, mut whole, mut summaries) = (0, false, 0u64, 0u64, 0);
        let limit = limit(&window);
        for t in 0..TURNS {
            turn(&mut window, &mut rng, &mut id);
            window.end_turn();
            if strategy == "summary" {
                summaries += answer_summaries(&mut window, &mut rng, t);
            }
            let tokens = u64::from(window.turn_info(t).unwrap().tokens.tokens);
            (largest, whole) = (largest.max(tokens), whole + tokens);
            pruned |= whole > limit;
            if pruned {
                check(&window, strategy, limit, largest, &format!("{strategy} {config} turn {t}"));
            }
        }
        assert!(pruned, "{strategy}: the session never filled the budget");
        if strategy == "summary" {
            assert!(summaries > 1, "{config}: {summaries} summaries in {TURNS} turns");
            assert!(window.archived_turns() > 0);
        }
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

#[test]
fn summary_holds_up() {
    run("summary");
}
