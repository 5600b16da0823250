//! What planning needs: the limits a strategy enforces, and what each turn costs under each
//! treatment, remembered between runs together with the strategies' own per-turn decisions.

use super::monologue::Monologue;
use super::replay::Replay;
use super::sliding::Walk;
use super::tiered::Tiered;
use crate::config::Fraction;
use crate::view::Item;
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
    /// Live turns, if limited.
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

/// What each completed turn costs under each treatment, the per-turn decisions of the
/// strategies that keep them, and whether the view's items of completed turns may be reused:
/// kept between runs of the strategy. A completed turn changes only by truncate, a model
/// change, a new calibration or new settings, which forget it ([`CostCache::forget_from`],
/// [`CostCache::clear`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostCache {
    turns: Vec<[Option<Cost>; Treatment::ALL.len()]>,
    /// The sliding walk over the completed turns, which depends on their costs too.
    walk: Walk,
    /// The decisions of `tiered`, turn by turn.
    pub tiered: Replay<Tiered>,
    /// The decisions of `monologue`, turn by turn.
    pub monologue: Replay<Monologue>,
    /// True when the items of the view's completed turns are still what those turns render
    /// to (nothing was forgotten since the view was built).
    pub view_reusable: bool,
}

impl CostCache {
    /// Forgets turn `turn` and every later one.
    pub fn forget_from(&mut self, turn: usize) {
        self.turns.truncate(turn);
        self.walk.forget_from(turn);
        self.tiered.forget_from(turn);
        self.monologue.forget_from(turn);
        self.view_reusable = false;
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        *self = CostCache::default();
    }

    /// Forgets turn `turn`'s costs (one of its counts changed), and every decision made
    /// since it (the sliding walk, the per-turn decisions, the view's items).
    pub fn forget(&mut self, turn: usize) {
        if let Some(costs) = self.turns.get_mut(turn) {
            *costs = [None; Treatment::ALL.len()];
        }
        self.walk.forget_from(turn);
        self.tiered.forget_from(turn);
        self.monologue.forget_from(turn);
        self.view_reusable = false;
    }
}

/// The cost of each turn under each treatment, rendered once and remembered; completed turns
/// are remembered across runs in a [`CostCache`].
pub struct Costs<'a> {
    renderer: Renderer<'a>,
    cache: &'a mut CostCache,
    newest: Vec<Option<Cost>>,
    scratch: Vec<Item>,
}

impl<'a> Costs<'a> {
    /// Costs over `renderer`'s window, remembering completed turns in `cache`.
    pub fn new(renderer: Renderer<'a>, cache: &'a mut CostCache) -> Costs<'a> {
        Costs { renderer, cache, newest: vec![None; Treatment::ALL.len()], scratch: Vec::new() }
    }

    /// The renderer the costs come from.
    pub fn renderer(&self) -> &Renderer<'a> {
        &self.renderer
    }

    /// What turn `turn` costs under `treatment`.
    pub fn of(&mut self, turn: usize, treatment: Treatment) -> Cost {
        let completed = turn + 1 < self.renderer.ledger().turn_count();
        let slot = match completed {
            true => {
                if self.cache.turns.len() <= turn {
                    self.cache.turns.resize(turn + 1, [None; Treatment::ALL.len()]);
                }
                &mut self.cache.turns[turn][treatment as usize]
            }
            false => &mut self.newest[treatment as usize],
        };
        if let Some(cost) = *slot {
            return cost;
        }
        self.scratch.clear();
        self.renderer.render(turn, treatment, &mut self.scratch);
        let cost = history_cost(&self.scratch);
        *slot = Some(cost);
        cost
    }

    /// The first kept turn of the sliding walk (see [`Walk`]) under `limits`, where turns
    /// before `free` cost nothing and turn `t` costs `cost(t)` whole.
    pub fn first_kept(&mut self, limits: &Limits, free: usize, turn_count: usize, cost: impl FnMut(usize) -> Cost) -> usize {
        self.cache.walk.first_kept(limits, free, turn_count, cost)
    }

    /// The first kept turn of the sliding walk under `limits`, over the turns as rendered
    /// whole.
    pub fn first_kept_whole(&mut self, limits: &Limits, turn_count: usize) -> usize {
        let mut walk = std::mem::take(&mut self.cache.walk);
        let first = walk.first_kept(limits, 0, turn_count, |turn| self.of(turn, Treatment::Whole));
        self.cache.walk = walk;
        first
    }

    /// What the compaction marker for `removed` messages costs.
    pub fn marker(&self, removed: usize) -> Cost {
        history_cost(&[self.renderer.marker(0, removed)])
    }

    /// What the summary block of turns `turns` costs: rendered and counted, O(block).
    pub fn block(&mut self, turns: std::ops::Range<usize>) -> Cost {
        self.scratch.clear();
        self.renderer.render_block(turns, &mut self.scratch);
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
