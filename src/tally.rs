//! Token totals that remember whether they are exact.

use crate::tokens::{Count, saturate_u32};

/// Token totals split by exactness, so a sum knows whether it is exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Tokens of exact counts.
    pub exact: u64,
    /// Tokens of estimated counts.
    pub estimated: u64,
}

impl Tally {
    /// Adds `count`.
    pub fn add(&mut self, count: Count) {
        let tokens = u64::from(count.tokens);
        if count.exact {
            self.exact += tokens;
        } else {
            self.estimated += tokens;
        }
    }

    /// Subtracts `count`, which an earlier `add` added.
    pub fn sub(&mut self, count: Count) {
        let tokens = u64::from(count.tokens);
        if count.exact {
            self.exact -= tokens;
        } else {
            self.estimated -= tokens;
        }
    }

    /// This total plus `other`.
    pub fn plus(self, other: Tally) -> Tally {
        Tally { exact: self.exact + other.exact, estimated: self.estimated + other.estimated }
    }

    /// This total less `other`, a part of it.
    pub fn minus(self, other: Tally) -> Tally {
        Tally { exact: self.exact - other.exact, estimated: self.estimated - other.estimated }
    }

    /// All tokens.
    pub fn tokens(self) -> u64 {
        self.exact + self.estimated
    }

    /// True when no part is an estimate.
    pub fn is_exact(self) -> bool {
        self.estimated == 0
    }

    /// The total as a count, saturating at `u32::MAX`.
    pub fn count(self) -> Count {
        Count { tokens: saturate_u32(self.tokens()), exact: self.is_exact() }
    }
}
