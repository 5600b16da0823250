//! Plans: how each turn of the ledger is sent, what a plan costs, and the view it yields.

use super::sliding::Walk;
use crate::config::Fraction;
use crate::view::render::{Renderer, Treatment};
use crate::view::{Item, Overlay};

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
        Cost {
            tokens: self.tokens + other.tokens,
            items: self.items + other.items,
        }
    }

    /// This cost without `other`, a part of it.
    pub fn minus(self, other: Cost) -> Cost {
        Cost {
            tokens: self.tokens - other.tokens,
            items: self.items - other.items,
        }
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

/// What each completed turn costs under each treatment, kept between runs of the strategy:
/// a completed turn changes only by truncate, a model change or new settings, which clear it
/// ([`CostCache::forget_from`], [`CostCache::clear`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CostCache {
    turns: Vec<[Option<Cost>; Treatment::ALL.len()]>,
    /// The sliding walk over the completed turns, which depends on their costs too.
    walk: Walk,
}

impl CostCache {
    /// Forgets turn `turn` and every later one.
    pub fn forget_from(&mut self, turn: usize) {
        self.turns.truncate(turn);
        self.walk.forget_from(turn);
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.turns.clear();
        self.walk = Walk::default();
    }

    /// Forgets turn `turn`'s costs (one of its counts changed), and the sliding walk if it
    /// covered that turn.
    pub fn forget(&mut self, turn: usize) {
        if let Some(costs) = self.turns.get_mut(turn) {
            *costs = [None; Treatment::ALL.len()];
        }
        self.walk.forget_from(turn);
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
        Costs {
            renderer,
            cache,
            newest: vec![None; Treatment::ALL.len()],
            scratch: Vec::new(),
        }
    }

    /// The renderer the costs come from.
    pub fn renderer(&self) -> &Renderer<'a> {
        &self.renderer
    }

    /// What turn `turn` costs under `treatment`.
    pub fn of(&mut self, turn: usize, treatment: Treatment) -> Cost {
        let completed = turn + 1 < self.renderer.window().turn_count();
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

    /// The first kept turn of the sliding walk (see [`Walk`]) under `limits`, where turn `t`
    /// costs `cost(t)` whole.
    pub fn first_kept(&mut self, limits: &Limits, turn_count: usize, cost: impl FnMut(usize) -> Cost) -> usize {
        self.cache.walk.first_kept(limits, turn_count, cost)
    }

    /// The first kept turn of the sliding walk under `limits`, over the turns as rendered
    /// whole.
    pub fn first_kept_whole(&mut self, limits: &Limits, turn_count: usize) -> usize {
        let mut walk = std::mem::take(&mut self.cache.walk);
        let first = walk.first_kept(limits, turn_count, |turn| self.of(turn, Treatment::Whole));
        self.cache.walk = walk;
        first
    }

    /// What the compaction marker for `removed` messages costs.
    pub fn marker(&self, removed: usize) -> Cost {
        history_cost(&[self.renderer.marker(0, removed)])
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

/// How every turn is sent: turns before `prefix` are dropped, `treatments[t - prefix]` says
/// how turn `t` is sent, and `marker` places the compaction marker (before a turn, counting
/// the messages removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Turns before this one are dropped (only their pinned messages are sent).
    pub prefix: usize,
    /// How each turn from `prefix` on is sent.
    pub treatments: Vec<Treatment>,
    /// The turn the marker stands before, and the messages it says were removed.
    pub marker: Option<(usize, usize)>,
}

impl Plan {
    /// The view this plan yields: the pinned head and the pinned messages of the dropped
    /// prefix, then each turn from `prefix` on. O(pinned messages + turns from `prefix`).
    pub fn build(self, renderer: &Renderer<'_>) -> Overlay {
        let window = renderer.window();
        let mut items = Vec::new();
        self.render(renderer, &mut items);
        Overlay::new(items, self, window.message_count())
    }

    /// The plan sending turns from `prefix` on whole, extended with whole turns up to
    /// `turn_count`.
    pub fn whole_from(prefix: usize, turn_count: usize) -> Plan {
        Plan {
            prefix,
            treatments: vec![Treatment::Whole; turn_count.saturating_sub(prefix)],
            marker: None,
        }
    }

    /// This plan, with turns added since sent whole.
    pub fn extended(mut self, turn_count: usize) -> Plan {
        let planned = self.prefix + self.treatments.len();
        self.treatments.extend((planned..turn_count).map(|_| Treatment::Whole));
        self
    }

    fn render(&self, renderer: &Renderer<'_>, items: &mut Vec<Item>) {
        let window = renderer.window();
        let prefix_end = if self.prefix < window.turn_count() {
            window.turn_range(self.prefix).start
        } else {
            window.message_count()
        };
        items.extend(window.pinned_before(prefix_end).iter().map(|&i| renderer.message_item(i, false)));
        for (offset, &treatment) in self.treatments.iter().enumerate() {
            let turn = self.prefix + offset;
            if let Some((_, removed)) = self.marker.filter(|&(before, _)| before == turn) {
                items.push(renderer.marker(window.turn_range(turn).start, removed));
            }
            renderer.render(turn, treatment, items);
        }
    }
}

/// A plan being worked out, with its running cost.
pub struct Draft {
    plan: Plan,
    cost: Cost,
    live_turns: u64,
    dropped_messages: usize,
}

impl Draft {
    /// A draft dropping the turns before `prefix` and sending each later turn `t` of
    /// `turn_count` as `initial(t)`.
    pub fn new(costs: &mut Costs<'_>, prefix: usize, turn_count: usize, initial: impl Fn(usize) -> Treatment) -> Draft {
        let mut draft = Draft {
            plan: Plan {
                prefix,
                treatments: vec![Treatment::Dropped; turn_count.saturating_sub(prefix)],
                marker: None,
            },
            cost: Cost::default(),
            live_turns: 0,
            dropped_messages: 0,
        };
        for turn in prefix..turn_count {
            draft.dropped_messages += costs.renderer().history_messages(turn);
            draft.set(costs, turn, initial(turn));
        }
        draft
    }

    /// A draft sending the turns before `by_hand` (but the newest) as `treatment`, as a
    /// manual compaction recorded, and the others whole.
    pub fn compacted_by_hand(
        costs: &mut Costs<'_>,
        prefix: usize,
        turn_count: usize,
        treatment: Treatment,
        by_hand: usize,
    ) -> Draft {
        let newest = turn_count.saturating_sub(1);
        Draft::new(costs, prefix, turn_count, |turn| {
            if turn < by_hand && turn < newest { treatment } else { Treatment::Whole }
        })
    }

    /// How turn `turn` (at least `prefix`) is sent.
    pub fn treatment(&self, turn: usize) -> Treatment {
        self.plan.treatments[turn - self.plan.prefix]
    }

    /// Sends turn `turn` (at least `prefix`) as `treatment`.
    pub fn set(&mut self, costs: &mut Costs<'_>, turn: usize, treatment: Treatment) {
        let old = self.treatment(turn);
        if old == treatment {
            return;
        }
        let (before, after) = (costs.of(turn, old), costs.of(turn, treatment));
        self.cost.tokens = self.cost.tokens - before.tokens + after.tokens;
        self.cost.items = self.cost.items - before.items + after.items;
        self.live_turns = self.live_turns - u64::from(old.keeps_user_message()) + u64::from(treatment.keeps_user_message());
        let messages = costs.renderer().history_messages(turn);
        if old == Treatment::Dropped {
            self.dropped_messages -= messages;
        }
        if treatment == Treatment::Dropped {
            self.dropped_messages += messages;
        }
        self.plan.treatments[turn - self.plan.prefix] = treatment;
    }

    /// Places the compaction marker before turn `turn`; it counts every message dropped
    /// from `prefix` on.
    pub fn mark(&mut self, turn: usize) {
        self.plan.marker = Some((turn, 0));
    }

    /// Removes the compaction marker.
    pub fn unmark(&mut self) {
        self.plan.marker = None;
    }

    /// The draft's cost, the marker included.
    pub fn cost(&self, costs: &Costs<'_>) -> Cost {
        match self.plan.marker {
            Some(_) => {
                let marker = costs.marker(self.dropped_messages);
                Cost {
                    tokens: self.cost.tokens + marker.tokens,
                    items: self.cost.items + marker.items,
                }
            }
            None => self.cost,
        }
    }

    /// True when the draft is within `limits`.
    pub fn fits(&self, costs: &Costs<'_>, limits: &Limits) -> bool {
        limits.admit(self.cost(costs), self.live_turns)
    }

    /// The finished plan.
    pub fn finish(mut self) -> Plan {
        if let Some((turn, _)) = self.plan.marker {
            self.plan.marker = Some((turn, self.dropped_messages));
        }
        self.plan
    }
}
