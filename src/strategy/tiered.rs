//! Tiered compaction (three-level compaction), for sessions of any length, over steps (a
//! chat turn is one step; a tool loop is many). Once the view is over its limits, it gives
//! up, one move at a time and oldest first:
//! - L1: tool outputs longer than `tool_output_max_lines` (or with lines over 400
//!   characters) cut to head and tail, step by step, the running step's included;
//! - L2: steps of the middle (between the first `keep_first` and the last `keep_recent`
//!   history messages) replaced by a one-line summary in one `[Summary]` block, which holds
//!   at most [`BLOCK_LINES`] lines and an eighth of the token limit (older lines go first);
//! - L3: the oldest summarized steps dropped behind one `[Context compacted: …]` marker;
//! - then the dropped run widens into the recent steps (never the newest
//!   `keep_recent_steps` of the running turn) and back through the first ones.
//!
//! It goes on until the view is within `low_water` of its limits (see [`super::band`]).
//! Every move only moves a boundary between zones of steps forward, so the zones are a
//! handful of numbers, decided step by step ([`super::replay`]) in O(1) amortized per step.
//! Every move works on whole steps, so a tool call never loses its result.
//!
//! With the clearing stage first (`"stages": ["clear", "tiered"]`), once the view is over
//! the oldest tool results it still sends are cleared first (oldest first, down to the
//! clearing's low water, only when that saves at least `clear_at_least`, never the newest
//! `keep_tool_results`, see [`super::clearing`]), and only if the view is still over does
//! L1 cut, and so on. A cleared result is sent as its placeholder in a cut step too (never
//! cut further), so the view counts what clearing saves in each step sent as it is sent:
//! the result's tokens less the placeholder's in a whole step, its cut's less the
//! placeholder's in a cut step ([`Zones::cleared_saving`]). The clear pointer is one more
//! number of the decision.

use super::band::shrink;
use super::clearing::{ClearSettings, ClearStage};
use super::plan::{Cost, Costs, Limits, Plan, Rules};
use super::replay::Stepper;
use crate::ledger::Ledger;
use crate::view::clearing::Clearables;
use crate::view::render::Treatment;

/// Most lines the summary block holds.
pub const BLOCK_LINES: u64 = 50;

/// What tiered compaction keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    /// Messages at the start of the history to keep (rounded up to whole steps).
    pub first: usize,
    /// Messages at the end of the history to keep (rounded up to whole steps).
    pub recent: usize,
    /// Newest steps of the running turn never dropped.
    pub recent_steps: usize,
}

/// The tiered planner's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiered {
    /// The limits it enforces, and the low water it brings the view down to once it acts.
    pub limits: Limits,
    /// What it keeps.
    pub keep: Keep,
    /// Turns before this one had their tool outputs cut by a manual compaction, which ran
    /// when the step before it was the newest: from that step on they stay cut.
    pub cut_by_hand: usize,
    /// The clearing stage before it, if the policy has one.
    pub clear: Option<ClearSettings>,
}

/// Tiered's decision after a step: steps `..first` are the first group (kept), steps
/// `first..dropped` are dropped behind the marker, `dropped..summarized` are in the summary
/// block, and later steps are kept; kept steps before `cut` have their long tool outputs cut.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Zones {
    first: usize,
    dropped: usize,
    summarized: usize,
    cut: usize,
    /// True once the first group is fixed (L2 began).
    grouped: bool,
    /// What the kept steps cost.
    kept: Cost,
    /// What the summary block costs: counted when `block_counted`, else the sum of its lines.
    block: Cost,
    block_counted: bool,
    /// What the marker costs (zero when nothing is dropped).
    marker: Cost,
    /// What the USER message of a turn the first group opens costs when none of the turn's
    /// later steps is kept whole: the step closing a turn is charged its USER message (see
    /// [`Costs::of`]), and here it is summarized or dropped.
    question: Cost,
    /// The marker is left out: only the newest step is left and it alone is over.
    unmarked: bool,
    /// The clear pointer: every clearable tool result before this ledger index is sent
    /// cleared (those of kept steps; summarized and dropped steps send none).
    cleared: usize,
}

impl Zones {
    /// Every clearable tool result before this ledger index is sent cleared.
    pub fn cleared_before(&self) -> usize {
        self.cleared
    }

    /// Tokens clearing saves in the steps these zones send (the first group and the steps
    /// from `summarized` on): each cleared result's tokens as sent less its placeholder's,
    /// that is its whole tokens in a step sent whole and its cut's in a cut step (less, even
    /// negative, where the cut is shorter than the placeholder), at the step ending at ledger
    /// index `end` (see [`Clearables::saving_until`]). O(log messages).
    fn cleared_saving(&self, ledger: &Ledger<'_>, clearables: &Clearables, end: usize) -> i64 {
        let cut = ledger.first_of(self.cut);
        let saving = |range: std::ops::Range<usize>| {
            let cleared = range.start..range.end.min(self.cleared).max(range.start);
            let cut = cleared.start..cleared.end.min(cut).max(cleared.start);
            clearables.saving_until(cleared, end) as i64 - clearables.cut_saving_in(cut) as i64
        };
        saving(0..ledger.first_of(self.first)) + saving(ledger.first_of(self.summarized)..ledger.messages().len())
    }

    /// What the view of these zones costs as sent at the step ending at ledger index `end`,
    /// its cleared results as their placeholders.
    fn sent(&self, ledger: &Ledger<'_>, clearables: &Clearables, end: usize) -> Cost {
        let cost = self.cost();
        // (Saturating: a result the view leaves out, unpaired, costs its step nothing.)
        let tokens = (cost.tokens as i64 - self.cleared_saving(ledger, clearables, end)).max(0) as u64;
        Cost { tokens, items: cost.items }
    }

    /// The clearing stage, once the view is over: moves the clear pointer over the oldest
    /// results the view still sends, to the nearest point where clearing saves enough to
    /// bring the view within the stage's low water (all there is before `protected` when
    /// that saves less), and only when that saves at least `clear_at_least` tokens (and some).
    fn clear(&mut self, stage: ClearStage<'_>, ledger: &Ledger<'_>, protected: usize, limits: &Limits, end: usize) {
        let clearables = stage.clearables;
        let mut from = self.cleared;
        // Summarized and dropped steps send no results: nothing there to clear.
        if (ledger.first_of(self.first)..ledger.first_of(self.summarized)).contains(&from) {
            from = ledger.first_of(self.summarized);
        }
        if from >= protected {
            return;
        }
        let target = self.sent(ledger, clearables, end).tokens.saturating_sub(stage.low(limits.tokens, limits.low().tokens));
        let target = target.max(stage.at_least) as i64;
        let before = self.cleared_saving(ledger, clearables, end);
        let mut trial = Zones { cleared: from, ..*self };
        // The whole results' savings find the nearest candidate; in cut steps a clearing
        // saves less, so the search goes on from there. Each round moves forward.
        loop {
            let gained = trial.cleared_saving(ledger, clearables, end) - before;
            if gained >= target || trial.cleared >= protected {
                break;
            }
            trial.cleared = clearables.reach_until(trial.cleared, protected, (target - gained) as u64, end);
        }
        let gained = trial.cleared_saving(ledger, clearables, end) - before;
        if gained > 0 && gained >= stage.at_least as i64 {
            *self = trial;
        }
    }

    /// What the view of these zones costs, its results counted as cut or whole.
    fn cost(&self) -> Cost {
        let marker = if self.unmarked { Cost::default() } else { self.marker };
        Cost {
            tokens: self.kept.tokens + self.block.tokens + marker.tokens + self.question.tokens,
            items: self.kept.items + self.block.items + marker.items + self.question.items,
        }
    }
}

impl Stepper for Tiered {
    type State = Zones;

    fn step(&self, costs: &mut Costs<'_>, previous: Zones, newest: usize) -> Zones {
        // What clearing saves, read from the cache while the step is planned.
        let clearables = std::mem::take(&mut costs.cache().clearables);
        let zones = self.plan_step(costs, &clearables, previous, newest);
        costs.cache().clearables = clearables;
        zones
    }
}

impl Tiered {
    /// [`Stepper::step`], with what clearing saves.
    fn plan_step(&self, costs: &mut Costs<'_>, clearables: &Clearables, previous: Zones, newest: usize) -> Zones {
        let ledger = *costs.renderer().ledger();
        let end = ledger.first_of(newest + 1);
        let sent = |zones: &Zones| zones.sent(&ledger, clearables, end);
        let mut zones = Zones { unmarked: false, ..previous };
        add(&mut zones.kept, costs.of(newest, Treatment::Whole));
        let mut step = Step { tiered: self, costs, newest };
        if newest + 1 >= self.cut_by_hand {
            while zones.cut < self.cut_by_hand && step.cut_one(&mut zones) {}
        }
        if self.limits.admit(sent(&zones), 0) {
            return zones;
        }
        if let Some(stage) = self.clear.map(|clear| clear.stage(clearables)) {
            let protected = clearables.protected_from(end, stage.keep);
            zones.clear(stage, &ledger, protected, &self.limits, end);
            if self.limits.admit(sent(&zones), 0) {
                return zones;
            }
        }
        loop {
            zones = shrink(zones, &self.limits, sent, |zones| step.advance(zones));
            // The block was costed as the sum of its lines: count it as sent, and go on if
            // that puts the view over.
            if zones.block_counted || zones.dropped == zones.summarized {
                break;
            }
            zones.block = step.costs.block(zones.dropped..zones.summarized);
            zones.block_counted = true;
            // The block as sent can cost more than its lines apart (an estimate is not
            // additive): its bound holds for the block as sent, so older lines go first.
            if zones.block.tokens > self.limits.tokens / 8 {
                step.drop_line(&mut zones);
                continue;
            }
            if self.limits.admit(sent(&zones), 0) {
                break;
            }
        }
        if !self.limits.admit(sent(&zones), 0) {
            // Everything but the newest step is gone and it alone is over: the marker would
            // only add to it.
            zones.unmarked = true;
        }
        zones
    }
}

/// One prune of the tiered planner, at the step `newest`.
struct Step<'t, 'c, 'a> {
    tiered: &'t Tiered,
    costs: &'c mut Costs<'a>,
    newest: usize,
}

impl Step<'_, '_, '_> {
    fn ledger(&self) -> Ledger<'_> {
        *self.costs.renderer().ledger()
    }

    /// L1: cuts the tool outputs of the oldest kept step not cut yet, the newest included;
    /// false when every step is cut.
    fn cut_one(&mut self, zones: &mut Zones) -> bool {
        if zones.cut < zones.summarized && zones.cut >= zones.first {
            zones.cut = zones.summarized;
        }
        if zones.cut > self.newest {
            return false;
        }
        let turn = zones.cut;
        sub(&mut zones.kept, self.costs.of(turn, Treatment::Whole));
        add(&mut zones.kept, self.costs.of(turn, Treatment::OutputsTruncated));
        zones.cut += 1;
        true
    }

    /// Gives up one more step of the view; false when only the newest step is left.
    fn advance(&mut self, zones: &mut Zones) -> bool {
        if self.cut_one(zones) {
            return true;
        }
        let recent = self.recent_start();
        if !zones.grouped {
            zones.grouped = true;
            zones.first = self.first_group_end(recent);
            (zones.dropped, zones.summarized) = (zones.first, zones.first);
        }
        // L2: the oldest step of the middle into the block; the block's oldest lines go while
        // it is over its bounds.
        if zones.summarized < recent {
            let turn = zones.summarized;
            let cost = self.kept_cost(zones, turn);
            sub(&mut zones.kept, cost);
            let line = self.costs.of(turn, Treatment::Summarized);
            zones.block = Cost { tokens: zones.block.tokens + line.tokens, items: 1 };
            zones.block_counted = false;
            zones.summarized += 1;
            let cap = self.tiered.limits.tokens / 8;
            while zones.dropped < zones.summarized
                && (zones.block.tokens > cap || (zones.summarized - zones.dropped) as u64 > BLOCK_LINES)
            {
                self.drop_line(zones);
            }
            self.mark(zones);
            return true;
        }
        // L3: the oldest summarized step.
        if zones.dropped < zones.summarized {
            self.drop_line(zones);
            return true;
        }
        // Widening: the oldest recent step (never the newest ones), then the first group
        // from its end, so the first steps (usually the task) go last.
        let guard =
            Rules { ledger: self.ledger(), free: 0, keep_recent_steps: self.tiered.keep.recent_steps, marker: Cost::default() }
                .guard(self.newest);
        let turn = if zones.summarized < guard {
            zones.summarized += 1;
            zones.dropped = zones.summarized;
            zones.summarized - 1
        } else if zones.first > 0 {
            zones.first -= 1;
            zones.first
        } else {
            return false;
        };
        let cost = self.kept_cost(zones, turn);
        sub(&mut zones.kept, cost);
        self.mark(zones);
        true
    }

    /// Drops the oldest line of the summary block.
    fn drop_line(&mut self, zones: &mut Zones) {
        let line = self.costs.of(zones.dropped, Treatment::Summarized);
        zones.dropped += 1;
        zones.block = match zones.dropped < zones.summarized {
            true => Cost { tokens: zones.block.tokens.saturating_sub(line.tokens), items: 1 },
            false => Cost::default(),
        };
        zones.block_counted = false;
        self.mark(zones);
    }

    /// Recosts the marker for the steps dropped, and the question the first group leaves
    /// uncharged.
    fn mark(&mut self, zones: &mut Zones) {
        zones.marker = match zones.first < zones.dropped {
            true => self.costs.marker(self.ledger().history_messages(zones.first..zones.dropped)),
            false => Cost::default(),
        };
        zones.question = self.uncharged_question(zones);
    }

    /// The cost of the USER message of the turn whose first steps end the first group, when
    /// the step that closes that turn is summarized or dropped (so nothing charges it).
    fn uncharged_question(&self, zones: &Zones) -> Cost {
        let ledger = self.ledger();
        let Some(last) = zones.first.checked_sub(1) else { return Cost::default() };
        if ledger.closes_turn(last) {
            return Cost::default();
        }
        let turn = ledger.turn_of_unit(last);
        let closer = ledger.first_unit_of(turn + 1) - 1;
        match closer < zones.summarized {
            true => self.costs.question(turn),
            false => Cost::default(),
        }
    }

    /// What a kept step costs now.
    fn kept_cost(&mut self, zones: &Zones, turn: usize) -> Cost {
        let treatment = if turn < zones.cut { Treatment::OutputsTruncated } else { Treatment::Whole };
        self.costs.of(turn, treatment)
    }

    /// The first step of the recent group: the latest step from which the steps up to the
    /// newest hold the last `keep.recent` history messages (0 when all of them do not).
    /// O(log² steps).
    fn recent_start(&self) -> usize {
        let (ledger, newest, keep) = (self.ledger(), self.newest, self.tiered.keep.recent);
        let holds = |start: usize| ledger.history_messages(start..newest + 1) >= keep;
        if !holds(0) {
            return 0;
        }
        // `holds` is true up to the answer and false after it.
        let (mut lo, mut hi) = (0, newest);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if holds(mid) { lo = mid } else { hi = mid - 1 }
        }
        lo
    }

    /// The end of the first group: the fewest steps holding the first `keep.first` history
    /// messages, never into the recent group. O(log² steps).
    fn first_group_end(&self, recent: usize) -> usize {
        let (ledger, keep) = (self.ledger(), self.tiered.keep.first);
        let (mut lo, mut hi) = (0, recent);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if ledger.history_messages(0..mid) >= keep { hi = mid } else { lo = mid + 1 }
        }
        lo
    }
}

/// The plan of `zones` over `turn_count` steps; steps before `floor` are dropped too (by
/// hand or archived by a summary), which only makes the view smaller.
pub fn plan(ledger: &Ledger<'_>, zones: &Zones, turn_count: usize, floor: usize) -> Plan {
    let floor = floor.min(turn_count);
    let at = |turn: usize| turn.max(floor);
    let cut = zones.cut;
    let mut plan = Plan::empty();
    let kept = |plan: &mut Plan, turns: std::ops::Range<usize>| {
        plan.push(turns.start..turns.end.min(cut).max(turns.start), Treatment::OutputsTruncated);
        plan.push(turns.start.max(cut).min(turns.end)..turns.end, Treatment::Whole);
    };
    plan.push(0..floor, Treatment::Dropped);
    kept(&mut plan, floor..at(zones.first));
    plan.push(at(zones.first)..at(zones.dropped), Treatment::Dropped);
    plan.push(at(zones.dropped)..at(zones.summarized), Treatment::Summarized);
    kept(&mut plan, at(zones.summarized)..turn_count);
    let dropped = at(zones.first)..at(zones.dropped);
    if !dropped.is_empty() && !zones.unmarked {
        plan.mark(dropped.start, ledger.history_messages(dropped));
    }
    plan
}

fn add(total: &mut Cost, cost: Cost) {
    total.tokens += cost.tokens;
    total.items += cost.items;
}

fn sub(total: &mut Cost, cost: Cost) {
    total.tokens -= cost.tokens;
    total.items -= cost.items;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Fraction;
    use crate::message::Kind;
    use crate::strategy::plan::CostCache;
    use crate::strategy::replay::Replay;
    use crate::view::ItemType;
    use crate::view::render::Renderer;
    use crate::window::Window;

    /// A window of `turns` turns, each a question, a tool call with a 30-line output and an
    /// answer; counts are estimates (bytes / 4). Nothing is pruned by the window itself.
    fn session(turns: usize) -> Window {
        let mut window = Window::new("estimated-model");
        window.configure(r#"{"strategy":"tiered","tool_output_max_lines":4,"history_budget":1000000,"pin_task":false}"#).unwrap();
        window.push(Kind::System, "You are terse.").unwrap();
        let output: String = (0..30).map(|i| format!("line {i} of the output\n")).collect();
        for t in 0..turns {
            // One step a turn (the answer comes with the call), as a chat turn.
            window.push(Kind::User, &format!("Question number {t}: what does this module do?")).unwrap();
            window.push(Kind::Assistant, &format!("Answer {t}: it parses the configuration.")).unwrap();
            window.push_tool(Kind::ToolCall, &format!("call_{t}"), "read module").unwrap();
            window.push_tool(Kind::ToolResult, &format!("call_{t}"), &output).unwrap();
            window.end_turn();
        }
        window
    }

    /// The runs `tiered` plans for `window` under a token limit of `tokens`, keeping the
    /// first message and the last four, and the items of its view.
    type Runs = Vec<(std::ops::Range<usize>, Treatment)>;

    fn planned(window: &Window, tokens: u64, low_water: f64) -> (Runs, Vec<(ItemType, String)>) {
        let tiered = Tiered {
            limits: Limits { tokens, items: None, turns: None, low_water: Fraction::new(low_water).unwrap() },
            keep: Keep { first: 1, recent: 4, recent_steps: 1 },
            cut_by_hand: 0,
            clear: None,
        };
        let mut cache = CostCache::default();
        let ledger = window.ledger();
        let mut costs = Costs::new(Renderer::new(ledger), &mut cache);
        let zones = Replay::default().run(&tiered, &mut costs);
        let plan = plan(&ledger, &zones, ledger.unit_count(), 0);
        let runs = plan.runs().collect();
        let overlay = plan.build(&Renderer::new(ledger), None);
        let items = overlay.items.iter().map(|item| (item.item_type, item.text.as_deref().unwrap_or("").to_owned())).collect();
        (runs, items)
    }

    /// History tokens of turn 0 whole and with its output cut.
    fn turn_costs(window: &Window) -> (u64, u64) {
        let mut cache = CostCache::default();
        let mut costs = Costs::new(Renderer::new(window.ledger()), &mut cache);
        (costs.of(0, Treatment::Whole).tokens, costs.of(0, Treatment::OutputsTruncated).tokens)
    }

    #[test]
    fn l1_cuts_the_oldest_outputs_first_and_the_running_turn_last() {
        let window = session(6);
        let (whole, cut) = turn_costs(&window);
        let all = window.view_history().tokens();
        assert_eq!(all, 6 * whole);
        let (runs, _) = planned(&window, all - (whole - cut) - 1, 1.0);
        assert_eq!(runs, vec![(0..2, Treatment::OutputsTruncated), (2..6, Treatment::Whole)], "two turns are enough");
        let (runs, items) = planned(&window, 6 * cut, 1.0);
        assert_eq!(runs, vec![(0..6, Treatment::OutputsTruncated)], "the running turn too, before any summary");
        assert_eq!(items.iter().filter(|item| item.0 == ItemType::Truncated).count(), 6);
        assert!(items.iter().all(|item| item.0 != ItemType::Synthetic));
        assert_eq!(items[items.len() - 3].0, ItemType::Message, "the answer is sent as itself");
    }

    #[test]
    fn l2_sends_one_summary_block_of_the_oldest_middle_turns() {
        let window = session(8);
        let (_, cut) = turn_costs(&window);
        let (runs, items) = planned(&window, 8 * cut - 1, 1.0);
        // Turn 0 holds the first message, turn 7 the last four: the middle starts at turn 1.
        assert_eq!(
            runs,
            vec![(0..1, Treatment::OutputsTruncated), (1..2, Treatment::Summarized), (2..8, Treatment::OutputsTruncated)]
        );
        assert_eq!(items.iter().filter(|item| item.1.starts_with("[Summary]")).count(), 1);
        // Many summarized turns: still one item, its lines oldest first.
        let window = session(40);
        let (runs, items) = planned(&window, 30 * cut, 1.0);
        let block: Vec<_> = items.iter().filter(|item| item.1.starts_with("[Summary]")).collect();
        assert_eq!(block.len(), 1, "one block: {runs:?}");
        let lines: Vec<&str> = block[0].1.lines().collect();
        assert!(lines.len() >= 2 && lines.iter().all(|line| line.starts_with("[Summary] User asked")));
        let run = runs.iter().find(|run| run.1 == Treatment::Summarized).unwrap();
        assert_eq!(lines.len(), run.0.len());
        assert!(lines[0].contains(&format!("Question number {}:", run.0.start)));
    }

    /// At every limit, the turns dropped are the oldest summarized ones, behind one marker.
    /// The zones do not only grow as the limit falls: the plan is replayed turn by turn and
    /// never undone, so a slightly lower limit can act a turn earlier, when cutting outputs
    /// is enough, and end with fewer turns dropped than a higher one that acted later (with
    /// today's estimates, this session at `low_water` 0.65: at 1006 tokens turn 1 is dropped
    /// and turns 2 to 4 summarized, at 1005 none is dropped and turns 1 and 2 are summarized;
    /// `low_water` 1 does the same elsewhere).
    #[test]
    fn as_the_limit_falls_summaries_come_before_drops_and_drops_take_the_oldest_first() {
        let window = session(12);
        let all = window.view_history().tokens();
        for tokens in (0..all).rev().step_by(7) {
            let (runs, items) = planned(&window, tokens, 0.9);
            let zone = |t: Treatment| runs.iter().find(|run| run.1 == t).map(|run| run.0.clone());
            let (dropped, block) = (zone(Treatment::Dropped), zone(Treatment::Summarized));
            if let (Some(dropped), Some(block)) = (&dropped, &block) {
                assert_eq!(dropped.end, block.start, "the drops take the oldest summaries: {runs:?}");
            }
            let markers = items.iter().filter(|item| item.1.starts_with("[Context compacted")).count();
            assert!(markers <= 1 && (markers == 0 || dropped.is_some()), "{tokens}: {runs:?}");
        }
    }

    #[test]
    fn a_manual_compact_cuts_the_running_turns_long_output() {
        let mut window = Window::new("estimated-model");
        window.configure(r#"{"strategy":"tiered","tool_output_max_lines":10}"#).unwrap();
        window.push(Kind::User, "Why does the build fail?").unwrap();
        window.push_tool(Kind::ToolCall, "log", "cat build.log").unwrap();
        let log: String = (0..500).map(|i| format!("build step {i} ok\n")).collect();
        window.push_tool(Kind::ToolResult, "log", &log).unwrap();
        window.compact();
        let item = window.view_item(2).unwrap();
        assert_eq!(item.item_type, ItemType::Truncated);
        assert!(item.text.unwrap().contains("[... 490 lines truncated ...]"));
    }
}
