//! The sliding window (Ikigai's dynamic sliding window) with a low-water mark: when the
//! oldest whole turns must go, enough of them go for the history to be within `low_water` of
//! the limits, so the window then stays put (and the provider's cached prefix valid) for
//! many turns. The newest turn is never dropped.
//!
//! **Determinism.** The first kept turn is defined turn by turn, as if the strategy ran after
//! every turn: after turn `t`, when turns `first..=t` are over the limits, `first` moves to
//! the oldest turn from which turns `first..=t` are within the low-water limits (never past
//! `t`). That depends only on the turns' costs and the limits, never on when or how often
//! the strategy ran: running it once at the end walks the same steps. The newest turn is
//! walked but not remembered, since it may still grow; as it grows its step only moves
//! `first` further, so pruning mid-turn (`prepare`) and pruning at `end_turn` agree.
//! With `low_water` 1 the walk is the classic rule: the longest run of newest turns within
//! the limits.
//!
//! The `summary` strategy walks the same way over what its view holds: the turns a summary
//! archived cost nothing to it (the summary in place is counted with the fixed cost), so the
//! view grows back to the limit after a summary before the walk prunes again.

use super::plan::{Cost, Limits};

/// The walk over the completed turns, remembered between runs. O(1) amortized per turn:
/// `first` only moves forward. Forgotten (and walked again) when the limits change or a
/// walked turn changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// The limits walked under, and the turns walked as free (archived by a summary).
    key: Option<(Limits, usize)>,
    /// Turns walked.
    turns: usize,
    /// The first kept turn after them.
    first: usize,
    /// The cost of turns `first..turns`.
    kept: Cost,
}

impl Walk {
    /// Forgets the walk if it covered turn `turn` or a later one (they changed).
    pub fn forget_from(&mut self, turn: usize) {
        if self.turns > turn {
            *self = Walk::default();
        }
    }

    /// The first kept turn of `turn_count` turns under `limits`, where turns before `free`
    /// cost nothing and `cost(t)` is what turn `t` costs whole. Remembers the walk over every
    /// turn but the newest.
    pub fn first_kept(&mut self, limits: &Limits, free: usize, turn_count: usize, mut cost: impl FnMut(usize) -> Cost) -> usize {
        let key = Some((*limits, free));
        if self.key != key {
            *self = Walk { key, ..Walk::default() };
        }
        let mut cost = |turn: usize| if turn < free { Cost::default() } else { cost(turn) };
        let Some(newest) = turn_count.checked_sub(1) else {
            return 0;
        };
        if self.turns > newest {
            // The ledger lost turns without the walk being told: walk again.
            *self = Walk { key, ..Walk::default() };
        }
        while self.turns < newest {
            self.step(limits, &mut cost);
        }
        let mut last = *self;
        last.step(limits, &mut cost);
        last.first
    }

    /// Adds the next turn; when the kept turns are over `limits`, drops the oldest until they
    /// are within the low-water limits or only the new turn is left.
    fn step(&mut self, limits: &Limits, cost: &mut impl FnMut(usize) -> Cost) {
        let turn = self.turns;
        self.kept = self.kept.plus(cost(turn));
        self.turns += 1;
        if limits.admit(self.kept, (self.turns - self.first) as u64) {
            return;
        }
        let low = limits.low();
        while self.first < turn && !low.admit(self.kept, (self.turns - self.first) as u64) {
            self.kept = self.kept.minus(cost(self.first));
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
            let first = walk.first_kept(&limits(available, 1.0), 0, turns.len(), |t| cost(turns[t]));
            assert_eq!(first, one_at_a_time(&turns, available), "available {available}");
        }
        assert_eq!(Walk::default().first_kept(&limits(0, 1.0), 0, 0, |_| cost(1)), 0);
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
                    walk.first_kept(&limits, 0, end, |t| cost(turns[t]));
                }
            }
            let once = Walk::default().first_kept(&limits, 0, len, |t| cost(turns[t]));
            let incremental = walk.first_kept(&limits, 0, len, |t| cost(turns[t]));
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
        assert_eq!(walk.first_kept(&limits, 0, turns.len(), |t| cost(turns[t])), 4);
        for free in 0..turns.len() {
            let zeroed: Vec<u64> = turns.iter().enumerate().map(|(t, &c)| if t < free { 0 } else { c }).collect();
            let reference = after_every_turn(&zeroed, 20, 10);
            assert_eq!(walk.first_kept(&limits, free, turns.len(), |t| cost(turns[t])), reference, "free {free}");
        }
    }

    #[test]
    fn forgets_turns_that_changed() {
        let limits = limits(10, 0.5);
        let mut walk = Walk::default();
        assert_eq!(walk.first_kept(&limits, 0, 4, |_| cost(4)), 2);
        walk.forget_from(1);
        assert_eq!(walk.first_kept(&limits, 0, 4, |t| cost(if t == 0 { 0 } else { 4 })), 3);
    }
}
