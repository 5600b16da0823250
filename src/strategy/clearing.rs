//! The clearing stage (the field's cheapest tier, needing no LLM call): old tool results are
//! replaced by a short placeholder while their calls stay, so the model still sees what it
//! did and can ask again; old USER messages' images likewise. It acts before the strategy, only while the view is over its
//! limits, oldest result first, down to `clear_low_water` (the policy's `low_water` unless
//! set), never on the newest `keep_tool_results`
//! results or the results of `exclude_tools`, and only when it saves at least
//! `clear_at_least` tokens (a clearing changes the prompt from its first cleared result on,
//! so the provider's cached prefix is lost from there and a small saving does not pay).
//!
//! What is cleared is a prefix of the ledger: every clearable result before the ledger index
//! the walk's clear pointer reached. The pointer is part of the
//! sliding walk's state (see `strategy::sliding`), walked as if the strategy ran after every
//! step, so it only moves forward and the view stays a function of the ledger and the
//! settings.

use crate::config::Fraction;
use crate::ledger::Ledger;
use crate::view::clearing::Clearables;
use std::ops::Range;

/// The clearing stage's settings, as the planners compare them: a planner made under other
/// settings plans again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClearSettings {
    /// Newest results never cleared.
    pub keep: usize,
    /// Tokens a clearing saves at least, or it does not happen.
    pub at_least: u64,
    /// How far a clearing goes, as a fraction of the token limit; `None`: the policy's
    /// low water.
    pub low_water: Option<Fraction>,
}

impl ClearSettings {
    /// The stage under these settings over `clearables`.
    pub fn stage(self, clearables: &Clearables) -> ClearStage<'_> {
        ClearStage { clearables, keep: self.keep, at_least: self.at_least, low_water: self.low_water }
    }
}

/// The clearing stage as the sliding walk runs it: what clearing saves where, and the
/// settings that bound it.
#[derive(Clone, Copy)]
pub struct ClearStage<'c> {
    /// What clearing each result saves, read up to the ledger's end.
    pub clearables: &'c Clearables,
    /// Newest results never cleared.
    pub keep: usize,
    /// Tokens a clearing saves at least, or it does not happen.
    pub at_least: u64,
    /// How far a clearing goes, as a fraction of the token limit; `None`: the policy's
    /// low water.
    pub low_water: Option<Fraction>,
}

impl ClearStage<'_> {
    /// The tokens a clearing brings the view down to under a token limit of `limit`, whose
    /// policy's low water is `low`.
    pub fn low(&self, limit: u64, low: u64) -> u64 {
        self.low_water.map_or(low, |fraction| fraction.floor_of(limit))
    }

    /// Where the clear pointer goes when it starts at ledger index `from`, may not pass
    /// `protected`, and the kept steps cost `kept` tokens that must come within `low`, at the
    /// step ending at ledger index `end`: the nearest index clearing up to which saves at
    /// least `kept - low` and at least `at_least` (all there is up to `protected` when that
    /// is less than `kept - low`), with the tokens saved (nothing for the images of the
    /// step's own turn's USER message, see [`Clearables::saving_until`]). `None` when
    /// everything clearable there saves less than `at_least`: such a clearing would not pay
    /// for the cached prefix it breaks. O(log messages).
    pub fn advance(&self, from: usize, protected: usize, kept: u64, low: u64, end: usize) -> Option<(usize, u64)> {
        let protected = protected.min(self.clearables.seen());
        if from >= protected {
            return None;
        }
        let available = self.clearables.saving_until(from..protected, end);
        if available == 0 || available < self.at_least {
            return None;
        }
        let target = kept.saturating_sub(low).max(self.at_least).min(available);
        let to = self.clearables.reach_until(from, protected, target, end);
        Some((to, self.clearables.saving_until(from..to, end)))
    }

    /// What clearing before ledger index `clear` saves in step `unit`, on the messages the
    /// walk counts in the step's cost (see `Costs::of`): a turn's USER message with the
    /// turn's last step, not its first. (Counting it with the first step, as its ledger index
    /// is, took the saving of an old USER message's images off the kept tokens when the
    /// turn's first step went, though its cost went only with the last step: a multi-step
    /// turn with a cleared image then left the walk thinking the view within the budget when
    /// it was over.)
    pub fn saving_in_step(&self, ledger: &Ledger<'_>, unit: usize, clear: usize) -> u64 {
        let before_clear = |range: Range<usize>| self.clearables.saving_in(range.start..range.end.min(clear).max(range.start));
        let saving = before_clear(ledger.unit_range(unit));
        let (opens, closes) = (ledger.opens_turn(unit), ledger.closes_turn(unit));
        if opens == closes {
            return saving;
        }
        let question = ledger.question_of(ledger.turn_of_unit(unit));
        let question = before_clear(question..question + 1);
        if opens { saving - question } else { saving + question }
    }
}
