//! The sliding window (Ikigai's dynamic sliding window) with a low-water mark, over steps:
//! when the oldest steps must go, enough of them go for the history to be within `low_water`
//! of the limits, so the window then stays put (and the provider's cached prefix valid) for
//! many steps. A chat turn is one step, so for chat sessions this is the classic walk over
//! whole turns; in a long tool loop the running turn loses its oldest steps one at a time,
//! never its newest `keep_recent_steps` (see [`Rules::guard`]), and its USER message stays
//! as long as any of its steps does (it is counted with the turn's last step).
//!
//! **Determinism.** The first kept step is defined step by step, as if the strategy ran
//! after every step: after step `t`, when steps `first..=t` (with the marker, when `first`
//! is not its turn's first step) are over the limits, `first` moves to the oldest step from
//! which they are within the low-water limits (never past [`Rules::guard`]). That depends
//! only on the steps' costs, the turn structure and the limits, never on when or how often
//! the strategy ran: running it once at the end walks the same steps. The newest step is
//! walked but not remembered, since it may still grow; as it grows its step only moves
//! `first` further, so pruning mid-turn (`prepare`) and pruning at `end_turn` agree.
//! With `low_water` 1 the walk is the classic rule: the longest run of newest steps within
//! the limits.
//!
//! The `summary` strategy walks the same way over what its view holds: the turns a summary
//! archived cost nothing to it (the summary in place is counted with the fixed cost), so the
//! view grows back to the limit after a summary before the walk prunes again.

use super::clearing::ClearStage;
use super::plan::{Cost, Limits, Rules};

/// The steps a walk goes over: what each costs, and the rules.
pub trait WalkUnits<'a> {
    /// What step `unit` costs sent whole (nothing when it is free).
    fn cost(&mut self, unit: usize) -> Cost;
    /// The rules: the ledger, the free steps, the steps kept, the marker.
    fn rules(&self) -> Rules<'a>;
    /// The clearing stage, when the policy starts with it (see [`super::clearing`]).
    fn clear(&self) -> Option<ClearStage<'_>> {
        None
    }
}

/// What a walk was made under: the limits, the free steps, the newest steps kept, the
/// marker's reserve and the clearing stage's (on, newest results kept, least saving). A walk
/// under other rules starts again. Every field is set, with no `Option` in it: optimised code
/// compares an absent value's bytes too, which valgrind reports as a jump on uninitialised
/// memory. The default key stands for a walk of nothing, which any key may continue.
type Key = (u64, (bool, u64), (bool, u64), u64, usize, usize, Cost, (bool, usize, u64, u64));

/// An optional limit as a pair every byte of which is set.
fn present(limit: Option<u64>) -> (bool, u64) {
    limit.map_or((false, 0), |limit| (true, limit))
}

/// What the walk decided: the first kept step, and the clear pointer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// The first kept step.
    pub first: usize,
    /// Every clearable tool result before this ledger index is sent cleared.
    pub cleared_before: usize,
}

/// The walk over the completed steps, remembered between runs. O(1) amortized per step:
/// `first` only moves forward. Forgotten (and walked again) when the rules change or a
/// walked step changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    key: Key,
    /// Steps walked.
    units: usize,
    /// The first kept step after them.
    first: usize,
    /// The cost of steps `first..units`, less what clearing saves in them.
    kept: Cost,
    /// The clear pointer: every clearable tool result before this ledger index is cleared.
    clear: usize,
}

impl Walk {
    /// Forgets the walk if it covered step `unit` or a later one (they changed).
    pub fn forget_from(&mut self, unit: usize) {
        if self.units > unit {
            *self = Walk::default();
        }
    }

    /// The first kept step of the ledger of `units` under `limits`, and the clear pointer.
    /// Remembers the walk over every step but the newest.
    pub fn first_kept<'a>(&mut self, limits: &Limits, units: &mut impl WalkUnits<'a>) -> Kept {
        let rules = units.rules();
        let clearing = units.clear().map_or((false, 0, 0, 0), |stage| {
            (true, stage.keep, stage.at_least, stage.low_water.map_or(0, |low| low.get().to_bits()))
        });
        let key = (
            limits.tokens,
            present(limits.items),
            present(limits.turns),
            limits.low_water.get().to_bits(),
            rules.free,
            rules.keep_recent_steps,
            rules.marker,
            clearing,
        );
        if self.key != key {
            *self = Walk { key, ..Walk::default() };
        }
        let Some(newest) = rules.ledger.unit_count().checked_sub(1) else {
            return Kept::default();
        };
        if self.units > newest {
            // The ledger lost steps without the walk being told: walk again.
            *self = Walk { key, ..Walk::default() };
        }
        while self.units < newest {
            self.step(limits, units);
        }
        let mut last = *self;
        last.step(limits, units);
        Kept { first: last.first, cleared_before: last.clear }
    }

    /// Adds the next step; when the kept steps are over `limits`, clears the oldest tool
    /// results (when the clearing stage runs) and then, if still over, drops the oldest steps,
    /// each until they are within the low-water limits (or nothing is left to clear, or the
    /// guard is reached).
    fn step<'a>(&mut self, limits: &Limits, units: &mut impl WalkUnits<'a>) {
        let unit = self.units;
        self.kept = self.kept.plus(units.cost(unit));
        self.units += 1;
        let rules = units.rules();
        let admit = |limits: &Limits, walk: &Walk| {
            let cost = walk.kept.plus(rules.marker(walk.first));
            limits.admit(cost, rules.live_turns(walk.first, walk.units))
        };
        if admit(limits, self) {
            return;
        }
        let low = limits.low();
        // Clearing saves tokens only: it acts when the tokens are over.
        let tokens_over = self.kept.plus(rules.marker(self.first)).tokens > limits.tokens;
        if let (Some(stage), true) = (units.clear(), tokens_over) {
            let ledger = rules.ledger;
            let from = self.clear.max(ledger.unit_range(self.first.max(rules.free)).start);
            let protected = stage.clearables.protected_from(ledger.unit_range(unit).end, stage.keep);
            let kept = self.kept.plus(rules.marker(self.first)).tokens;
            let end = ledger.unit_range(unit).end;
            if let Some((to, saved)) = stage.advance(from, protected, kept, stage.low(limits.tokens, low.tokens), end) {
                self.clear = to;
                // (Saturating: a result the view leaves out, unpaired, costs a rendered step
                // nothing.)
                self.kept.tokens = self.kept.tokens.saturating_sub(saved);
            }
            if admit(limits, self) {
                return;
            }
        }
        let guard = rules.guard(unit);
        while self.first < guard && !admit(&low, self) {
            let mut dropped = units.cost(self.first);
            if let (Some(stage), false) = (units.clear(), self.first < rules.free) {
                let saved = stage.saving_in_step(&rules.ledger, self.first, self.clear);
                dropped.tokens = dropped.tokens.saturating_sub(saved);
            }
            self.kept = self.kept.minus(dropped);
            self.first += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Fraction;

    fn limits(tokens: u64, low_water: f64) -> Limits {
        Limits { tokens, items: None, turns: None, low_water: Fraction::new(low_water).unwrap() }
    }

    fn cost(tokens: u64) -> Cost {
        Cost { tokens, items: 1 }
    }

    /// Chat turns of one step each, costing `costs`; turns before `free` cost nothing.
    struct Chat<'a> {
        costs: &'a [u64],
        rules: Rules<'a>,
    }

    impl<'a> WalkUnits<'a> for Chat<'a> {
        fn cost(&mut self, unit: usize) -> Cost {
            if unit < self.rules.free { Cost::default() } else { cost(self.costs[unit]) }
        }

        fn rules(&self) -> Rules<'a> {
            self.rules
        }
    }

    /// The first kept turn of `walk` over chat turns costing `costs`, the first `len` of them.
    fn first_kept(walk: &mut Walk, limits: &Limits, free: usize, costs: &[u64], len: usize) -> usize {
        use crate::ledger::{Ledger, TurnStart};
        use crate::message::{CountSource, Kind, Message};
        use crate::tokens::{Calibration, Count, Model};
        let messages: Vec<Message> =
            (0..len).map(|_| Message::new(Kind::User, Count::exact(0), CountSource::Caller, None)).collect();
        let turns: Vec<TurnStart> = (0..len).map(|i| TurnStart { first: i, first_unit: i }).collect();
        let units: Vec<usize> = (0..len).collect();
        let model = Model::resolve("unknown-model");
        let ledger = Ledger::new(&messages, &turns, &units, &[], &model, Calibration::default(), 10);
        let rules = Rules { ledger, free, keep_recent_steps: 1, marker: Cost::default() };
        walk.first_kept(limits, &mut Chat { costs, rules }).first
    }

    /// The reference at low water 1: drop from the front one turn at a time, as the source
    /// design does.
    fn one_at_a_time(turns: &[u64], available: u64) -> usize {
        let mut k = 0;
        while k + 1 < turns.len() && turns[k..].iter().sum::<u64>() > available {
            k += 1;
        }
        k
    }

    /// The reference with a low-water mark: the strategy run after every turn, on a plain
    /// re-computation of the sums.
    fn after_every_turn(turns: &[u64], available: u64, low: u64) -> usize {
        let mut first = 0;
        for t in 0..turns.len() {
            if turns[first..=t].iter().sum::<u64>() > available {
                while first < t && turns[first..=t].iter().sum::<u64>() > low {
                    first += 1;
                }
            }
        }
        first
    }

    #[test]
    fn at_low_water_one_matches_dropping_one_turn_at_a_time() {
        let turns = [5u64, 0, 7, 3, 9, 1, 1, 20, 2];
        for available in 0..60 {
            let mut walk = Walk::default();
            let first = first_kept(&mut walk, &limits(available, 1.0), 0, &turns, turns.len());
            assert_eq!(first, one_at_a_time(&turns, available), "available {available}");
        }
        assert_eq!(first_kept(&mut Walk::default(), &limits(0, 1.0), 0, &[], 0), 0);
    }

    #[test]
    fn matches_running_after_every_turn_however_often_it_ran() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..300 {
            let len = 1 + next(40) as usize;
            let turns: Vec<u64> = (0..len).map(|_| next(30)).collect();
            let available = next(120);
            let low_water = [0.5, 0.7, 0.8, 0.95, 1.0][next(5) as usize];
            let limits = limits(available, low_water);
            let low = Fraction::new(low_water).unwrap().floor_of(available);
            // Walked incrementally, turn by turn, and at random moments in between.
            let mut walk = Walk::default();
            for end in 1..=len {
                if next(3) == 0 {
                    first_kept(&mut walk, &limits, 0, &turns, end);
                }
            }
            let once = first_kept(&mut Walk::default(), &limits, 0, &turns, len);
            let incremental = first_kept(&mut walk, &limits, 0, &turns, len);
            let reference = after_every_turn(&turns, available, low);
            assert_eq!(once, reference, "{turns:?} available {available} low {low}");
            assert_eq!(incremental, reference, "{turns:?} available {available} low {low}");
            // A growing newest turn only moves the boundary forward.
            let mut grown = turns.clone();
            *grown.last_mut().unwrap() += next(50);
            assert!(after_every_turn(&grown, available, low) >= reference);
        }
    }

    #[test]
    fn free_turns_cost_nothing_and_a_new_archive_walks_again() {
        let turns = [9u64, 9, 9, 4, 4, 4, 4];
        let limits = limits(20, 0.5);
        let mut walk = Walk::default();
        assert_eq!(first_kept(&mut walk, &limits, 0, &turns, turns.len()), 4);
        for free in 0..turns.len() {
            let zeroed: Vec<u64> = turns.iter().enumerate().map(|(t, &c)| if t < free { 0 } else { c }).collect();
            let reference = after_every_turn(&zeroed, 20, 10);
            assert_eq!(first_kept(&mut walk, &limits, free, &turns, turns.len()), reference, "free {free}");
        }
    }

    #[test]
    fn forgets_turns_that_changed() {
        let limits = limits(10, 0.5);
        let mut walk = Walk::default();
        assert_eq!(first_kept(&mut walk, &limits, 0, &[4, 4, 4, 4], 4), 2);
        walk.forget_from(1);
        assert_eq!(first_kept(&mut walk, &limits, 0, &[0, 4, 4, 4], 4), 3);
    }
}
