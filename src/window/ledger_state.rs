//! The ledger a [`Window`](super::Window) owns: every message pushed, grouped into turns,
//! with the token sums the strategies read and what the host recorded about its messages.
//! Nothing here depends on a strategy or a provider format.

use super::host::{HostIds, PendingCounts};
use super::turn_sums::TurnSums;
use crate::ledger::{TurnStart, calibrated};
use crate::message::{CountSource, Kind, Message};
use crate::pairing::{self, RunningStep};
use crate::tally::Tally;
use crate::tokens::{Calibration, Count};
use std::ops::Range;

/// Messages, turns and their sums: the record of what was pushed.
#[derive(Clone, Debug, Default)]
pub(super) struct LedgerState {
    /// Every message pushed, pruned ones included.
    pub messages: Vec<Message>,
    /// Where each turn starts.
    pub turns: Vec<TurnStart>,
    /// History tokens of each turn, with prefix sums.
    pub sums: TurnSums,
    /// History tokens of every turn.
    pub history: Tally,
    /// Tokens of pinned messages.
    pub pinned: Tally,
    /// Indices of the pinned messages, ascending.
    pub pinned_indices: Vec<usize>,
    /// Completed turns (all but the newest) whose tool pairs the view repairs, ascending.
    pub defective_turns: Vec<usize>,
    /// The host's ids of its messages (`push_message`), and where each starts.
    pub host_ids: HostIds,
    /// Counts `set_count` recorded, applied at the next enforcement (saved).
    pub pending_counts: PendingCounts,
    /// The newest turn's steps as a request reads them: how many cancelled results a
    /// request adds for its unanswered calls.
    pub running: RunningStep,
    /// Messages the library has not counted yet, ascending (see [`Message::is_uncounted`]):
    /// the sums leave them out until [`LedgerState::settle`] gives them their counts.
    pub uncounted: Vec<usize>,
}

impl LedgerState {
    /// True for SYSTEM messages and messages before the first USER message.
    pub fn is_pinned(&self, index: usize, kind: Kind) -> bool {
        kind == Kind::System || self.turns.first().is_none_or(|turn| index < turn.first)
    }

    /// The ledger indices of turn `turn`.
    pub fn turn_range(&self, turn: usize) -> Range<usize> {
        let first = self.turns[turn].first;
        let end = self.turns.get(turn + 1).map_or(self.messages.len(), |next| next.first);
        first..end
    }

    /// The indices of the pinned messages before ledger index `end`.
    pub fn pinned_before(&self, end: usize) -> &[usize] {
        &self.pinned_indices[..self.pinned_indices.partition_point(|&i| i < end)]
    }

    /// The turn holding ledger index `index`, if any (messages before the first USER message
    /// belong to none).
    pub fn turn_of(&self, index: usize) -> Option<usize> {
        self.turns.partition_point(|turn| turn.first <= index).checked_sub(1)
    }

    /// History tokens of turns `k..`.
    pub fn history_from(&self, k: usize) -> Tally {
        if k < self.turns.len() { self.history.minus(self.sums.before(k)) } else { Tally::default() }
    }

    /// Appends `message`, which the window counts as `count` (calibrated; left out of the
    /// sums while the message is uncounted). A USER message starts a turn and completes the
    /// previous one; returns that turn when it left tool pairs for the view to repair.
    pub fn push(&mut self, message: Message, count: Count) -> Option<usize> {
        let mut defective = None;
        if message.kind() == Kind::User {
            if let Some(previous) = self.turns.len().checked_sub(1) {
                let range = self.turn_range(previous);
                if !pairing::analyze(&self.messages, range.start, range.end, true).is_empty() {
                    self.defective_turns.push(previous);
                    defective = Some(previous);
                }
            }
            self.turns.push(TurnStart { first: self.messages.len() });
            self.sums.push(Tally::default());
        }
        let index = self.messages.len();
        let pinned = self.is_pinned(index, message.kind());
        if pinned {
            self.pinned_indices.push(index);
        }
        if message.is_uncounted() {
            self.uncounted.push(index);
        } else if pinned {
            self.pinned.add(count);
        } else {
            self.history.add(count);
            self.sums.add(self.turns.len() - 1, count);
        }
        self.host_ids.note(&self.messages, &message);
        self.running.feed(&message);
        self.messages.push(message);
        defective
    }

    /// Removes the messages from `message_count` on, with what was recorded about them;
    /// `calibration` scales the counts as the window summed them.
    pub fn truncate(&mut self, message_count: usize, calibration: Calibration) {
        while self.messages.len() > message_count {
            let index = self.messages.len() - 1;
            let kind = self.messages[index].kind();
            let count = calibrated(calibration, self.messages[index].count());
            if self.messages[index].is_uncounted() {
                // Not in the sums.
            } else if self.is_pinned(index, kind) {
                self.pinned.sub(count);
            } else {
                self.history.sub(count);
                self.sums.sub(self.turns.len() - 1, count);
            }
            if self.turns.last().is_some_and(|turn| turn.first == index) {
                self.turns.pop();
                self.sums.pop();
            }
            if let Some(message) = self.messages.pop() {
                self.host_ids.forget(index, &message);
            }
        }
        self.pending_counts.forget_from(message_count);
        let uncounted = self.uncounted.partition_point(|&i| i < message_count);
        self.uncounted.truncate(uncounted);
        let pinned = self.pinned_indices.partition_point(|&i| i < message_count);
        self.pinned_indices.truncate(pinned);
        let newest = self.turns.len().saturating_sub(1);
        let defective = self.defective_turns.partition_point(|&t| t < newest);
        self.defective_turns.truncate(defective);
        self.running = RunningStep::default();
        let first = self.turns.last().map_or(0, |turn| turn.first);
        for message in &self.messages[first..] {
            self.running.feed(message);
        }
    }

    /// Gives uncounted message `index` its first count, `count` (raw; the sums add it scaled
    /// by `calibration`), from `source`; the caller takes `index` out of `uncounted`.
    /// Returns the message's turn, if it is in one (a pinned SYSTEM message inside a turn
    /// included: the view renders it with its turn).
    pub fn settle(&mut self, index: usize, count: Count, source: CountSource, calibration: Calibration) -> Option<usize> {
        let message = &mut self.messages[index];
        debug_assert!(message.is_uncounted(), "message {index} was counted already");
        message.set_count(count);
        message.set_source(source);
        let (kind, count) = (message.kind(), calibrated(calibration, count));
        let turn = self.turn_of(index);
        if self.is_pinned(index, kind) {
            self.pinned.add(count);
        } else {
            let turn = turn.expect("a history message belongs to a turn");
            self.history.add(count);
            self.sums.add(turn, count);
        }
        turn
    }

    /// Makes message `index`, settled by [`LedgerState::settle`], uncounted again (undoing a
    /// count applied by a call that then failed). Returns its turn, as `settle` does.
    pub fn unsettle(&mut self, index: usize, calibration: Calibration) -> Option<usize> {
        let (kind, count) = (self.messages[index].kind(), calibrated(calibration, self.messages[index].count()));
        let turn = self.turn_of(index);
        if self.is_pinned(index, kind) {
            self.pinned.sub(count);
        } else {
            let turn = turn.expect("a history message belongs to a turn");
            self.history.sub(count);
            self.sums.sub(turn, count);
        }
        self.messages[index].mark_uncounted();
        let at = self.uncounted.partition_point(|&i| i < index);
        self.uncounted.insert(at, index);
        turn
    }

    /// Sums every count again, scaled by `calibration` (after a new ratio or new counts).
    pub fn rebuild_tallies(&mut self, calibration: Calibration) {
        self.history = Tally::default();
        self.pinned = Tally::default();
        self.sums.clear();
        let mut turn = Tally::default();
        let mut next_turn = 0;
        for index in 0..self.messages.len() {
            if self.turns.get(next_turn).is_some_and(|turn| turn.first == index) {
                if next_turn > 0 {
                    self.sums.push(turn);
                }
                turn = Tally::default();
                next_turn += 1;
            }
            let (kind, count) = (self.messages[index].kind(), calibrated(calibration, self.messages[index].count()));
            if self.messages[index].is_uncounted() {
                // Not in the sums until counted.
            } else if self.is_pinned(index, kind) {
                self.pinned.add(count);
            } else {
                self.history.add(count);
                turn.add(count);
            }
        }
        if next_turn > 0 {
            self.sums.push(turn);
        }
    }
}
