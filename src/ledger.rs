//! A read-only view of the ledger: messages grouped into turns, which messages are pinned,
//! and how the window counts. Strategies plan over it and the view renders from it; neither
//! needs the [`crate::Window`] that owns the data.

use crate::message::{Kind, Message};
use crate::tokens::{Calibration, Count, Model, saturate_u32};
use std::ops::Range;

/// Where a turn starts (its USER message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnStart {
    /// Index of the turn's USER message.
    pub first: usize,
}

/// The ledger as strategies and the renderer read it. Cheap to copy: it only borrows.
#[derive(Clone, Copy, Debug)]
pub struct Ledger<'a> {
    messages: &'a [Message],
    turns: &'a [TurnStart],
    pinned: &'a [usize],
    model: &'a Model,
    calibration: Calibration,
    tool_output_max_lines: usize,
}

impl<'a> Ledger<'a> {
    /// The ledger of `messages`, grouped by `turns`, with the pinned messages at the indices
    /// `pinned` (ascending), counted by `model` scaled by `calibration`; tool outputs are cut
    /// to `tool_output_max_lines` lines when a strategy cuts them.
    pub fn new(
        messages: &'a [Message],
        turns: &'a [TurnStart],
        pinned: &'a [usize],
        model: &'a Model,
        calibration: Calibration,
        tool_output_max_lines: usize,
    ) -> Ledger<'a> {
        Ledger { messages, turns, pinned, model, calibration, tool_output_max_lines }
    }

    /// Every message, in ledger order.
    pub fn messages(&self) -> &'a [Message] {
        self.messages
    }

    /// Messages in the ledger.
    pub fn message_count(&self) -> usize {
        self.messages.len()
    }

    /// Turns in the ledger.
    pub fn turn_count(&self) -> usize {
        self.turns.len()
    }

    /// The ledger indices of turn `turn`.
    pub fn turn_range(&self, turn: usize) -> Range<usize> {
        self.first_of(turn)..self.first_of(turn + 1)
    }

    /// The first ledger index of turn `turn`; the message count for `turn_count()`.
    pub fn first_of(&self, turn: usize) -> usize {
        self.turns.get(turn).map_or(self.messages.len(), |start| start.first)
    }

    /// Non-pinned messages of turns `turns`. O(log pinned).
    pub fn history_messages(&self, turns: Range<usize>) -> usize {
        if turns.is_empty() {
            return 0;
        }
        let range = self.first_of(turns.start)..self.first_of(turns.end);
        range.len() - self.pinned_in(range).len()
    }

    /// True for SYSTEM messages and messages before the first USER message.
    pub fn is_pinned(&self, index: usize) -> bool {
        self.messages[index].kind() == Kind::System || self.turns.first().is_none_or(|turn| index < turn.first)
    }

    /// The indices of the pinned messages within `range`.
    pub fn pinned_in(&self, range: Range<usize>) -> &'a [usize] {
        let start = self.pinned.partition_point(|&i| i < range.start);
        let end = self.pinned.partition_point(|&i| i < range.end);
        &self.pinned[start..end.max(start)]
    }

    /// The model that counts.
    pub fn model(&self) -> &'a Model {
        self.model
    }

    /// Lines a cut tool output keeps.
    pub fn tool_output_max_lines(&self) -> usize {
        self.tool_output_max_lines
    }

    /// `count` as the window uses it: estimates scaled by the calibration.
    pub fn calibrated(&self, count: Count) -> Count {
        calibrated(self.calibration, count)
    }
}

/// `count` scaled by `calibration` when it is an estimate.
pub fn calibrated(calibration: Calibration, count: Count) -> Count {
    if count.exact { count } else { Count::estimate(saturate_u32(calibration.apply(u64::from(count.tokens)))) }
}
