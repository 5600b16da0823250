//! The history tokens of every turn, kept as a Fenwick (binary indexed) tree so that both
//! the tokens before any turn and a count replaced in any turn cost O(log turns).
//!
//! The ledger needs prefix sums (the sliding window binary-searches the first live turn over
//! them), and `set_count` replaces a count anywhere in the ledger, which would shift every
//! later prefix sum of a plain array. In the tree, node `i` (1-based) holds the turns
//! `(i - lowbit(i), i]`, so a change touches at most log2(turns) nodes, and a change in the
//! newest turn (every push, and the usual `set_count`) touches exactly one.

use crate::tally::Tally;
use crate::tokens::Count;

/// Per-turn history tokens with O(log turns) prefix sums and updates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct TurnSums {
    tree: Vec<Tally>,
}

/// The lowest set bit of `i` (i > 0).
fn lowbit(i: usize) -> usize {
    i & i.wrapping_neg()
}

impl TurnSums {
    /// Appends a turn holding `tally`. O(log turns).
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

    /// Removes the newest turn. O(1): no other node covers it.
    pub fn pop(&mut self) {
        self.tree.pop();
    }

    /// Forgets every turn.
    pub fn clear(&mut self) {
        self.tree.clear();
    }

    /// Adds `count` to turn `turn`.
    pub fn add(&mut self, turn: usize, count: Count) {
        let mut i = turn + 1;
        while let Some(node) = self.tree.get_mut(i - 1) {
            node.add(count);
            i += lowbit(i);
        }
    }

    /// Takes `count`, which an earlier [`TurnSums::add`] added, from turn `turn`.
    pub fn sub(&mut self, turn: usize, count: Count) {
        let mut i = turn + 1;
        while let Some(node) = self.tree.get_mut(i - 1) {
            node.sub(count);
            i += lowbit(i);
        }
    }

    /// Tokens of the turns before turn `turn` (all of them when `turn` is past the last).
    pub fn before(&self, turn: usize) -> Tally {
        let mut sum = Tally::default();
        let mut i = turn.min(self.tree.len());
        while i > 0 {
            sum = sum.plus(self.tree[i - 1]);
            i -= lowbit(i);
        }
        sum
    }

    /// Tokens of turn `turn`.
    pub fn turn(&self, turn: usize) -> Tally {
        self.before(turn + 1).minus(self.before(turn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Prefix sums and turn totals against a plain array, under random pushes, pops,
        /// additions and subtractions.
        #[test]
        fn matches_a_plain_array(ops in proptest::collection::vec((0u8..10, 0u32..1000, any::<bool>(), any::<u32>()), 1..400)) {
            let mut sums = TurnSums::default();
            let mut plain: Vec<Tally> = Vec::new();
            for (op, tokens, exact, at) in ops {
                let count = Count { tokens, exact };
                let turn = (at as usize).checked_rem(plain.len());
                match (op, turn) {
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
                    (5..=7, Some(turn)) => {
                        sums.add(turn, count);
                        plain[turn].add(count);
                    }
                    (_, Some(turn)) => {
                        let taken = Count { tokens: tokens.min(plain[turn].exact as u32), exact: true };
                        sums.sub(turn, taken);
                        plain[turn].sub(taken);
                    }
                }
                for k in 0..=plain.len() {
                    let expected = plain[..k].iter().fold(Tally::default(), |sum, t| sum.plus(*t));
                    prop_assert_eq!(sums.before(k), expected);
                    if let Some(turn) = plain.get(k) {
                        prop_assert_eq!(sums.turn(k), *turn);
                    }
                }
            }
        }
    }
}
