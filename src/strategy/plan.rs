//! What planning needs: the limits a strategy enforces, and what each step (the planner's
//! unit, see [`crate::ledger`]) costs under each treatment, remembered between runs together
//! with the strategies' own per-step decisions.

use super::clearing::ClearStage;
use super::monologue::Monologue;
use super::replay::Replay;
use super::sliding::{Kept, Walk, WalkUnits};
use super::tiered::Tiered;
use crate::config::Fraction;
use crate::ledger::Ledger;
use crate::view::Item;
use crate::view::clearing::Clearables;
pub use crate::view::plan::Plan;
use crate::view::render::{Renderer, Treatment};

/// What a part of the view costs against the history budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Tokens of its non-pinned items.
    pub tokens: u64,
    /// Its non-pinned items.
    pub items: u64,
}

impl Cost {
    /// This cost and `other`'s together.
    pub fn plus(self, other: Cost) -> Cost {
        Cost { tokens: self.tokens + other.tokens, items: self.items + other.items }
    }

    /// This cost without `other`, a part of it.
    pub fn minus(self, other: Cost) -> Cost {
        Cost { tokens: self.tokens - other.tokens, items: self.items - other.items }
    }
}

/// The limits a strategy must bring the view under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// History tokens.
    pub tokens: u64,
    /// History items, if limited.
    pub items: Option<u64>,
    /// Live turns (turns with a step sent), if limited.
    pub turns: Option<u64>,
    /// When the strategy has to act, it acts until the view is within this fraction of each
    /// limit ([`Limits::low`]), so the view then stays unchanged for many turns.
    pub low_water: Fraction,
}

impl Limits {
    /// True when a view of `cost` with `live_turns` live turns is within every limit.
    pub fn admit(&self, cost: Cost, live_turns: u64) -> bool {
        cost.tokens <= self.tokens
            && self.items.is_none_or(|limit| cost.items <= limit)
            && self.turns.is_none_or(|limit| live_turns <= limit)
    }

    /// The limits a strategy that has to act brings the view under: each limit scaled by
    /// `low_water`, rounded down.
    pub fn low(&self) -> Limits {
        let scale = |limit: u64| self.low_water.floor_of(limit);
        Limits {
            tokens: scale(self.tokens),
            items: self.items.map(scale),
            turns: self.turns.map(scale),
            low_water: Fraction::ONE,
        }
    }
}

/// What each completed step costs under each treatment, the per-step decisions of the
/// strategies that keep them, and whether the view's items of completed steps may be reused:
/// kept between runs of the strategy. A completed step changes only by truncate, a model
/// change, a new calibration, a new count, a pin or new settings, which forget it
/// ([`CostCache::forget_from`], [`CostCache::forget`], [`CostCache::clear`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostCache {
    units: Vec<[Option<Cost>; Treatment::ALL.len()]>,
    /// The sliding walk over the completed steps, which depends on their costs too.
    walk: Walk,
    /// What clearing each tool result saves, for the clearing stage.
    pub clearables: Clearables,
    /// The decisions of `tiered`, step by step.
    pub tiered: Replay<Tiered>,
    /// The decisions of `monologue`, step by step.
    pub monologue: Replay<Monologue>,
    /// True when the items of the view's completed steps are still what those steps render
    /// to (nothing was forgotten since the view was built).
    pub view_reusable: bool,
}

impl CostCache {
    /// Forgets step `unit` and every later one.
    pub fn forget_from(&mut self, unit: usize) {
        self.units.truncate(unit);
        self.walk.forget_from(unit);
        self.tiered.forget_from(unit);
        self.monologue.forget_from(unit);
        self.view_reusable = false;
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        *self = CostCache::default();
    }

    /// Forgets the costs of steps `units` (one of their counts changed), and every decision
    /// made since the first (the sliding walk, the per-step decisions, the view's items).
    pub fn forget(&mut self, units: std::ops::Range<usize>) {
        for unit in units.clone() {
            if let Some(costs) = self.units.get_mut(unit) {
                *costs = [None; Treatment::ALL.len()];
            }
        }
        if !units.is_empty() {
            self.walk.forget_from(units.start);
            self.tiered.forget_from(units.start);
            self.monologue.forget_from(units.start);
        }
        self.view_reusable = false;
    }
}

/// The cost of each step under each treatment, rendered once and remembered; completed steps
/// are remembered across runs in a [`CostCache`].
pub struct Costs<'a> {
    renderer: Renderer<'a>,
    cache: &'a mut CostCache,
    newest: Vec<Option<Cost>>,
    scratch: Vec<Item>,
    reserve_late: bool,
}

impl<'a> Costs<'a> {
    /// Costs over `renderer`'s window, remembering completed turns in `cache`.
    pub fn new(renderer: Renderer<'a>, cache: &'a mut CostCache) -> Costs<'a> {
        Costs { renderer, cache, newest: vec![None; Treatment::ALL.len()], scratch: Vec::new(), reserve_late: false }
    }

    /// These costs, counting for each call answered late the cancelled result that answers
    /// it when the plan sends its step but not its result's (see `view::plan`): what a
    /// strategy that may send an older step whole and a later one not (`tiered`'s first
    /// messages, `monologue`) needs to stay within its limits. The cache must be cleared
    /// when this changes.
    pub fn reserving_late_cancellations(self) -> Costs<'a> {
        Costs { reserve_late: true, ..self }
    }

    /// The renderer the costs come from.
    pub fn renderer(&self) -> &Renderer<'a> {
        &self.renderer
    }

    /// What step `unit` costs under `treatment`. Its turn's USER message is counted with the
    /// turn's last step, not its first (see [`crate::window`]'s `unit_cost`): a treatment
    /// that sends the USER message sends it whenever any step of the turn is sent.
    pub fn of(&mut self, unit: usize, treatment: Treatment) -> Cost {
        let ledger = *self.renderer.ledger();
        let completed = unit + 1 < ledger.unit_count();
        if completed && self.cache.units.len() <= unit {
            self.cache.units.resize(unit + 1, [None; Treatment::ALL.len()]);
        }
        let cached = match completed {
            true => self.cache.units[unit][treatment as usize],
            false => self.newest[treatment as usize],
        };
        if let Some(cost) = cached {
            return cost;
        }
        self.scratch.clear();
        self.renderer.render(unit, treatment, &mut self.scratch);
        let mut cost = history_cost(&self.scratch);
        if self.reserve_late && treatment.sends_tool_calls() {
            let late = ledger.late_results().calls_in(ledger.unit_range(unit)).count() as u64;
            cost.tokens += late * u64::from(self.renderer.cancelled_result(0).tokens.tokens);
        }
        let (opens, closes) = (ledger.opens_turn(unit), ledger.closes_turn(unit));
        if treatment.keeps_user_message() && opens != closes {
            let user = self.question(ledger.turn_of_unit(unit));
            cost = if opens { cost.minus(user) } else { cost.plus(user) };
        }
        match completed {
            true => self.cache.units[unit][treatment as usize] = Some(cost),
            false => self.newest[treatment as usize] = Some(cost),
        }
        cost
    }

    /// What turn `turn`'s USER message costs as history (nothing when it is pinned).
    pub fn question(&self, turn: usize) -> Cost {
        let ledger = self.renderer.ledger();
        history_cost(&[self.renderer.message_item(ledger.question_of(turn), false)])
    }

    /// The first kept step of the sliding walk (see [`Walk`]) over `units`.
    pub fn first_kept<'u>(&mut self, limits: &Limits, units: &mut impl WalkUnits<'u>) -> Kept {
        self.cache.walk.first_kept(limits, units)
    }

    /// The first kept step of the sliding walk under `limits`, over the steps as rendered
    /// whole, keeping the newest `keep_recent_steps` of the running turn, and the clear
    /// pointer when the clearing stage `clear` runs first.
    pub fn first_kept_whole(&mut self, limits: &Limits, keep_recent_steps: usize, clear: Option<ClearStage<'_>>) -> Kept {
        let mut walk = std::mem::take(&mut self.cache.walk);
        let ledger = *self.renderer.ledger();
        let marker = self.step_marker_reserve();
        let mut units = Rendered { costs: self, rules: Rules { ledger, free: 0, keep_recent_steps, marker }, clear };
        let kept = walk.first_kept(limits, &mut units);
        self.cache.walk = walk;
        kept
    }

    /// What the compaction marker for `removed` messages costs.
    pub fn marker(&self, removed: usize) -> Cost {
        history_cost(&[self.renderer.marker(0, removed)])
    }

    /// What the step marker costs at most: the sliding walk reserves it whenever it keeps a
    /// turn's later steps without its first.
    pub fn step_marker_reserve(&self) -> Cost {
        history_cost(&[self.renderer.step_marker(0, u32::MAX as usize, u32::MAX as usize)])
    }

    /// What the summary block of steps `units` costs: rendered and counted, O(block).
    pub fn block(&mut self, units: std::ops::Range<usize>) -> Cost {
        self.scratch.clear();
        self.renderer.render_block(units, &mut self.scratch);
        history_cost(&self.scratch)
    }

    /// The caches, for a strategy's decisions.
    pub fn cache(&mut self) -> &mut CostCache {
        self.cache
    }
}

fn history_cost(items: &[Item]) -> Cost {
    let mut cost = Cost::default();
    for item in items.iter().filter(|item| !item.pinned) {
        cost.tokens += u64::from(item.tokens.tokens);
        cost.items += 1;
    }
    cost
}

/// The rules of the sliding walk besides the costs: which steps cost nothing, which newest
/// steps stay, and what the marker costs when a turn keeps later steps without its first.
#[derive(Clone, Copy, Debug)]
pub struct Rules<'a> {
    /// The ledger walked.
    pub ledger: Ledger<'a>,
    /// Steps before this one cost nothing (archived by a summary).
    pub free: usize,
    /// Newest steps of the running turn never dropped (at least 1).
    pub keep_recent_steps: usize,
    /// What the step marker costs at most.
    pub marker: Cost,
}

impl Rules<'_> {
    /// The latest first kept step when `newest` is the newest: never past the newest
    /// `keep_recent_steps` steps, and never into a turn with fewer steps than that (so a
    /// turn of one step, a chat turn, is kept whole, as the newest turn always was).
    pub fn guard(&self, newest: usize) -> usize {
        let turn_first = self.ledger.first_unit_of(self.ledger.turn_of_unit(newest));
        turn_first.max((newest + 1).saturating_sub(self.keep_recent_steps.max(1))).min(newest)
    }

    /// What the marker costs when `first` is the first kept step: its reserve when `first`
    /// is not the first step of its turn.
    pub fn marker(&self, first: usize) -> Cost {
        match first < self.ledger.unit_count() && !self.ledger.opens_turn(first) {
            true => self.marker,
            false => Cost::default(),
        }
    }

    /// Turns with a step among `first..end`.
    pub fn live_turns(&self, first: usize, end: usize) -> u64 {
        match end > first {
            true => (self.ledger.turn_of_unit(end - 1) - self.ledger.turn_of_unit(first) + 1) as u64,
            false => 0,
        }
    }
}

/// The walk over the steps as rendered whole.
struct Rendered<'c, 'a, 's> {
    costs: &'c mut Costs<'a>,
    rules: Rules<'a>,
    clear: Option<ClearStage<'s>>,
}

impl<'a> WalkUnits<'a> for Rendered<'_, 'a, '_> {
    fn cost(&mut self, unit: usize) -> Cost {
        match unit < self.rules.free {
            true => Cost::default(),
            false => self.costs.of(unit, Treatment::Whole),
        }
    }

    fn rules(&self) -> Rules<'a> {
        self.rules
    }

    fn clear(&self) -> Option<ClearStage<'_>> {
        self.clear
    }
}
