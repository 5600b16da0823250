//! The history tokens of every step (the planner's unit, see [`crate::ledger`]), kept as a
//! Fenwick (binary indexed) tree so that both the tokens before any step and a count
//! replaced in any step cost O(log steps); a turn's tokens are those of its steps.
//!
//! The ledger needs prefix sums (the sliding window reads the cost of steps and turns from
//! them), and `set_count` replaces a count anywhere in the ledger, which would shift every
//! later prefix sum of a plain array. In the tree, node `i` (1-based) holds the steps
//! `(i - lowbit(i), i]`, so a change touches at most log2(steps) nodes, and a change in the
//! newest step (every push, and the usual `set_count`) touches exactly one.

use crate::tally::Tally;
use crate::tokens::Count;

/// Per-step history tokens with O(log units) prefix sums and updates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct UnitSums {
    tree: Vec<Tally>,
}

/// The lowest set bit of `i` (i > 0).
fn lowbit(i: usize) -> usize {
    i & i.wrapping_neg()
}

impl UnitSums {
    /// Appends a unit holding `tally`. O(log units).
    pub fn push(&mut self, tally: Tally) {
        let i = self.tree.len() + 1;
        let covered_from = i - lowbit(i);
        let mut node = tally;
        let mut j = i - 1;
        while j > covered_from {
            node = node.plus(self.tree[j - 1]);
            j -= lowbit(j);
        }
        self.tree.push(node);
    }

    /// Removes the newest unit. O(1): no other node covers it.
    pub fn pop(&mut self) {
        self.tree.pop();
    }

    /// Forgets every unit.
    pub fn clear(&mut self) {
        self.tree.clear();
    }

    /// Adds `count` to unit `unit`.
    pub fn add(&mut self, unit: usize, count: Count) {
        let mut i = unit + 1;
        while let Some(node) = self.tree.get_mut(i - 1) {
            node.add(count);
            i += lowbit(i);
        }
    }

    /// Takes `count`, which an earlier [`UnitSums::add`] added, from unit `unit`.
    pub fn sub(&mut self, unit: usize, count: Count) {
        let mut i = unit + 1;
        while let Some(node) = self.tree.get_mut(i - 1) {
            node.sub(count);
            i += lowbit(i);
        }
    }

    /// Tokens of the units before unit `unit` (all of them when `unit` is past the last).
    pub fn before(&self, unit: usize) -> Tally {
        let mut sum = Tally::default();
        let mut i = unit.min(self.tree.len());
        while i > 0 {
            sum = sum.plus(self.tree[i - 1]);
            i -= lowbit(i);
        }
        sum
    }

    /// Tokens of unit `unit`.
    pub fn unit(&self, unit: usize) -> Tally {
        self.before(unit + 1).minus(self.before(unit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Prefix sums and unit totals against a plain array, under random pushes, pops,
        /// additions and subtractions.
        #[test]
        fn matches_a_plain_array(ops in proptest::collection::vec((0u8..10, 0u32..1000, any::<bool>(), any::<u32>()), 1..400)) {
            let mut sums = UnitSums::default();
            let mut plain: Vec<Tally> = Vec::new();
            for (op, tokens, exact, at) in ops {
                let count = Count { tokens, exact };
                let unit = (at as usize).checked_rem(plain.len());
                match (op, unit) {
                    (0..=3, _) | (_, None) => {
                        let mut tally = Tally::default();
                        tally.add(count);
                        sums.push(tally);
                        plain.push(tally);
                    }
                    (4, _) => {
                        sums.pop();
                        plain.pop();
                    }
                    (5..=7, Some(unit)) => {
                        sums.add(unit, count);
                        plain[unit].add(count);
                    }
                    (_, Some(unit)) => {
                        let taken = Count { tokens: tokens.min(plain[unit].exact as u32), exact: true };
                        sums.sub(unit, taken);
                        plain[unit].sub(taken);
                    }
                }
                for k in 0..=plain.len() {
                    let expected = plain[..k].iter().fold(Tally::default(), |sum, t| sum.plus(*t));
                    prop_assert_eq!(sums.before(k), expected);
                    if let Some(unit) = plain.get(k) {
                        prop_assert_eq!(sums.unit(k), *unit);
                    }
                }
            }
        }
    }
}
