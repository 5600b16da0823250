//! Monologue compaction (ProbeAgent's compactor), for sessions of any length, over steps:
//! once the view is over its limit, older steps are stripped to their user message and
//! final answer (thinking, tool calls and tool results go), oldest first, never the last
//! `keep_recent_turns` turns, but in a running turn of more than `keep_recent_steps` steps
//! every step but its newest `keep_recent_steps`; then the oldest steps are dropped (never
//! the newest `keep_recent_steps` of the running turn). It goes on until the view is within
//! `low_water` of its limit (see [`super::band`]). Both only move a boundary forward, so the
//! decision is two numbers, made step by step ([`super::replay`]) in O(1) amortized per
//! step. A chat turn is one step: for chat sessions this is the classic rule over turns.
//!
//! With the clearing stage first (`"stages": ["clear", "monologue"]`), once the view is over
//! the old tool results of the steps still sent whole are cleared first (oldest first, down
//! to the clearing's low water, see [`super::clearing`]), and only if the view is still over
//! are steps stripped and dropped. The clear pointer is one more number of the decision.

use super::band::shrink;
use super::clearing::ClearSettings;
use super::plan::{Cost, Costs, Limits, Plan, Rules};
use super::replay::Stepper;
use crate::ledger::Ledger;
use crate::view::clearing::Clearables;
use crate::view::render::Treatment;

/// The monologue planner's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Monologue {
    /// The limits it enforces, and the low water it brings the view down to once it acts.
    pub limits: Limits,
    /// Turns at the end never stripped.
    pub keep_recent_turns: usize,
    /// Newest steps of the running turn never stripped nor dropped.
    pub keep_recent_steps: usize,
    /// The clearing stage before it, if the policy has one.
    pub clear: Option<ClearSettings>,
}

impl Monologue {
    /// The first step never stripped when `newest` is the newest step of `ledger`: the first
    /// step of the last `keep_recent_turns` turns, or when the running turn has more than
    /// `keep_recent_steps` steps, its newest `keep_recent_steps`. Never past `newest`.
    fn strip_end(&self, ledger: &Ledger<'_>, newest: usize) -> usize {
        let turn = ledger.turn_of_unit(newest);
        let running = ledger.first_unit_of(turn);
        let keep = self.keep_recent_steps.max(1);
        let end = match newest + 1 - running > keep {
            true => newest + 1 - keep,
            false => match self.keep_recent_turns {
                0 => newest + 1,
                turns => ledger.first_unit_of((turn + 1).saturating_sub(turns)),
            },
        };
        end.min(newest)
    }
}

/// Monologue's decision after a step: steps `..dropped` are dropped, `dropped..stripped`
/// stripped, later steps whole, with their clearable tool results before ledger index
/// `cleared` cleared.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Zones {
    dropped: usize,
    stripped: usize,
    cleared: usize,
    /// What the steps sent cost, their results counted whole.
    cost: Cost,
}

impl Zones {
    /// Every clearable tool result before this ledger index is sent cleared.
    pub fn cleared_before(&self) -> usize {
        self.cleared
    }

    /// What the view of these zones costs at the step ending at ledger index `end`: the
    /// steps sent, less what clearing saves in the steps sent whole (stripped and dropped
    /// steps send no results).
    fn sent(&self, ledger: &Ledger<'_>, clearables: &Clearables, end: usize) -> Cost {
        let whole_from = ledger.first_of(self.stripped);
        let saved = clearables.saving_until(whole_from..self.cleared.max(whole_from), end);
        // (Saturating: a result the view leaves out, unpaired, costs its step nothing.)
        Cost { tokens: self.cost.tokens.saturating_sub(saved), items: self.cost.items }
    }
}

impl Stepper for Monologue {
    type State = Zones;

    fn step(&self, costs: &mut Costs<'_>, previous: Zones, newest: usize) -> Zones {
        let mut zones = previous;
        let whole = costs.of(newest, Treatment::Whole);
        zones.cost = Cost { tokens: zones.cost.tokens + whole.tokens, items: zones.cost.items + whole.items };
        let ledger = *costs.renderer().ledger();
        // What clearing saves, read from the cache while the step is planned.
        let clearables = std::mem::take(&mut costs.cache().clearables);
        let end = ledger.unit_range(newest).end;
        let sent = |zones: &Zones| zones.sent(&ledger, &clearables, end);
        if self.limits.admit(sent(&zones), 0) {
            costs.cache().clearables = clearables;
            return zones;
        }
        if let Some(stage) = self.clear.map(|clear| clear.stage(&clearables)) {
            let from = zones.cleared.max(ledger.first_of(zones.stripped));
            let protected = clearables.protected_from(ledger.unit_range(newest).end, stage.keep);
            let low = stage.low(self.limits.tokens, self.limits.low().tokens);
            if let Some((to, _)) = stage.advance(from, protected, sent(&zones).tokens, low, end) {
                zones.cleared = to;
            }
        }
        let strip_end = self.strip_end(&ledger, newest);
        let guard = Rules { ledger, free: 0, keep_recent_steps: self.keep_recent_steps, marker: Cost::default() }.guard(newest);
        let zones = shrink(zones, &self.limits, sent, |zones| {
            let (turn, from, to) = if zones.stripped < strip_end {
                zones.stripped += 1;
                (zones.stripped - 1, Treatment::Whole, Treatment::Stripped)
            } else if zones.dropped < guard {
                let from = if zones.dropped < zones.stripped { Treatment::Stripped } else { Treatment::Whole };
                zones.dropped += 1;
                zones.stripped = zones.stripped.max(zones.dropped);
                (zones.dropped - 1, from, Treatment::Dropped)
            } else {
                return false;
            };
            let (before, after) = (costs.of(turn, from), costs.of(turn, to));
            zones.cost.tokens = zones.cost.tokens - before.tokens + after.tokens;
            zones.cost.items = zones.cost.items - before.items + after.items;
            true
        });
        costs.cache().clearables = clearables;
        zones
    }
}

/// The plan of `zones` over `unit_count` steps: steps before `floor` are dropped (by hand
/// or archived by a summary), and steps before `stripped_by_hand` are stripped (a manual
/// compaction), but never the newest.
pub fn plan(zones: &Zones, unit_count: usize, floor: usize, stripped_by_hand: usize) -> Plan {
    let newest = unit_count.saturating_sub(1);
    let dropped = zones.dropped.max(floor).min(unit_count);
    let stripped = zones.stripped.max(stripped_by_hand.min(newest)).max(dropped).min(unit_count);
    let mut plan = Plan::empty();
    plan.push(0..dropped, Treatment::Dropped);
    plan.push(dropped..stripped, Treatment::Stripped);
    plan.push(stripped..unit_count, Treatment::Whole);
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Fraction;
    use crate::message::Kind;
    use crate::strategy::plan::CostCache;
    use crate::strategy::replay::Replay;
    use crate::view::render::Renderer;
    use crate::window::Window;

    fn session() -> Window {
        let mut window = Window::new("estimated-model");
        window.configure(r#"{"strategy":"monologue","history_budget":1000000,"pin_task":false}"#).unwrap();
        // Each turn one step (the answer comes with the call), as a chat turn.
        for t in 0..5 {
            window.push(Kind::User, &format!("Question {t}: why is the build red?")).unwrap();
            window.push(Kind::Thinking, "I should read the CI log before answering anything.").unwrap();
            window.push(Kind::Assistant, &format!("Answer {t}: a missing library.")).unwrap();
            window.push_tool(Kind::ToolCall, &format!("log_{t}"), "fetch the log").unwrap();
            window.push_tool(Kind::ToolResult, &format!("log_{t}"), "error: linker failed with exit code 1").unwrap();
            window.end_turn();
        }
        window
    }

    /// The ledger indices `monologue` sends under a token limit of `tokens`, keeping the last
    /// two turns whole.
    fn sent(window: &Window, tokens: u64, low_water: f64) -> (Vec<usize>, u64) {
        let planner = Monologue {
            limits: Limits { tokens, items: None, turns: None, low_water: Fraction::new(low_water).unwrap() },
            keep_recent_turns: 2,
            keep_recent_steps: 1,
            clear: None,
        };
        let mut cache = CostCache::default();
        let ledger = window.ledger();
        let mut costs = Costs::new(Renderer::new(ledger), &mut cache);
        let zones = Replay::default().run(&planner, &mut costs);
        let overlay = plan(&zones, ledger.unit_count(), 0, 0).build(&Renderer::new(ledger), None);
        (overlay.items.iter().map(|item| item.index).collect(), overlay.history().tokens())
    }

    #[test]
    fn strips_the_oldest_turns_first_then_drops_the_oldest() {
        let window = session();
        let all = window.view_history().tokens();
        assert_eq!(sent(&window, all, 1.0).0, (0..25).collect::<Vec<_>>(), "under the limit nothing happens");
        let one: Vec<usize> = [0, 2].into_iter().chain(5..25).collect();
        assert_eq!(sent(&window, all - 1, 1.0).0, one, "stripping turn 0 is enough");
        let three: Vec<usize> = [0, 2, 5, 7, 10, 12].into_iter().chain(15..25).collect();
        // Stripping a turn saves `saved`; a low water between two and three turns' saving.
        let mut cache = CostCache::default();
        let mut costs = Costs::new(Renderer::new(window.ledger()), &mut cache);
        let saved = costs.of(0, Treatment::Whole).tokens - costs.of(0, Treatment::Stripped).tokens;
        let low_water = (all as f64 - 2.5 * saved as f64) / (all - 1) as f64;
        let (sent_three, stripped) = sent(&window, all - 1, low_water);
        assert_eq!(sent_three, three, "down to low water: turns 0 to 2 stripped, 3 and 4 whole");
        let four: Vec<usize> = [5, 7, 10, 12].into_iter().chain(15..25).collect();
        assert_eq!(sent(&window, stripped - 1, 1.0).0, four, "then the oldest turn goes");
    }
}
