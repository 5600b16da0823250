//! A read-only view of the ledger: messages grouped into turns and steps, which messages are
//! pinned, and how the window counts. Strategies plan over it and the view renders from it;
//! neither needs the [`crate::Window`] that owns the data.
//!
//! **Steps are the unit of planning.** A step is one model response (its thinking, text and
//! tool calls) with the results that answer its calls; a new step starts at an
//! assistant-side message after a result of the current step ([`crate::pairing::RunningStep`]
//! holds that rule). A turn is its USER message followed by a run of steps; the USER message
//! opens the turn's first step. Strategies plan over the steps ("units") in ledger order, so
//! a chat turn is one unit and a tool loop of a thousand steps under one user message is a
//! thousand units.

use crate::message::{Kind, Message};
use crate::pairing::LateResults;
use crate::tokens::{Calibration, Count, Model, saturate_u32};
use std::ops::Range;

/// Where a turn starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnStart {
    /// Index of the turn's USER message.
    pub first: usize,
    /// Index of the turn's first step among the ledger's steps.
    pub first_unit: usize,
}

/// What makes a message pinned: always sent, counted like the system prompt (outside the
/// history budget), never dropped.
#[derive(Clone, Copy, Debug)]
pub struct PinRule<'a> {
    /// Where the turns start.
    pub turns: &'a [TurnStart],
    /// True when the session's first USER message (the task) is pinned.
    pub pin_task: bool,
    /// The messages the host pinned, ascending.
    pub host_pins: &'a [usize],
    /// The USER message of the newest provider compaction (0 when none): it is the task from
    /// there on, and the host's pins before it lapse (the provider dropped what came before).
    pub floor: usize,
}

impl PinRule<'_> {
    /// True for SYSTEM messages, messages before the first USER message, the task (unless
    /// the setting `pin_task` is off: the first USER message, or a provider compaction's
    /// message once there is one) and the messages the host pinned (from the floor on).
    pub fn is_pinned(&self, index: usize, kind: Kind) -> bool {
        kind == Kind::System
            || self.turns.first().is_none_or(|turn| index < turn.first || (self.pin_task && index == turn.first.max(self.floor)))
            || index >= self.floor && self.host_pins.binary_search(&index).is_ok()
    }
}

/// The ledger as strategies and the renderer read it. Cheap to copy: it only borrows.
#[derive(Clone, Copy, Debug)]
pub struct Ledger<'a> {
    messages: &'a [Message],
    turns: &'a [TurnStart],
    units: &'a [usize],
    pinned: &'a [usize],
    model: &'a Model,
    calibration: Calibration,
    tool_output_max_lines: usize,
    late: Option<&'a LateResults>,
    archived: usize,
}

impl<'a> Ledger<'a> {
    /// The ledger of `messages`, grouped by `turns` and the steps starting at `units`, with
    /// the pinned messages at the indices `pinned` (ascending), counted by `model` scaled by
    /// `calibration`; tool outputs are cut to `tool_output_max_lines` lines when a strategy
    /// cuts them.
    pub fn new(
        messages: &'a [Message],
        turns: &'a [TurnStart],
        units: &'a [usize],
        pinned: &'a [usize],
        model: &'a Model,
        calibration: Calibration,
        tool_output_max_lines: usize,
    ) -> Ledger<'a> {
        Ledger { messages, turns, units, pinned, model, calibration, tool_output_max_lines, late: None, archived: 0 }
    }

    /// This ledger, whose results answering an older step's call are `late`.
    pub fn with_late_results(self, late: &'a LateResults) -> Ledger<'a> {
        Ledger { late: Some(late), ..self }
    }

    /// The results that answer an older step's call (none unless
    /// [`Ledger::with_late_results`] said).
    pub fn late_results(&self) -> &'a LateResults {
        static NONE: std::sync::LazyLock<LateResults> = std::sync::LazyLock::new(LateResults::default);
        self.late.unwrap_or(&NONE)
    }

    /// This ledger with steps `0..archived` archived by a summary: they are replaced by the
    /// summary, so a marker before a later step of their turn does not count them.
    pub fn with_archived(self, archived: usize) -> Ledger<'a> {
        Ledger { archived, ..self }
    }

    /// Steps archived by a summary (see [`Ledger::with_archived`]); 0 when none is.
    pub fn archived(&self) -> usize {
        self.archived
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

    /// Steps (planning units) in the ledger.
    pub fn unit_count(&self) -> usize {
        self.units.len()
    }

    /// The ledger indices of step `unit`.
    pub fn unit_range(&self, unit: usize) -> Range<usize> {
        self.first_of(unit)..self.first_of(unit + 1)
    }

    /// The step holding ledger message `index`. O(log steps).
    pub fn unit_of(&self, index: usize) -> usize {
        self.units.partition_point(|&first| first <= index).saturating_sub(1)
    }

    /// The first ledger index of step `unit`; the message count for `unit_count()`.
    pub fn first_of(&self, unit: usize) -> usize {
        self.units.get(unit).copied().unwrap_or(self.messages.len())
    }

    /// The ledger indices of turn `turn`.
    pub fn turn_range(&self, turn: usize) -> Range<usize> {
        let end = self.turns.get(turn + 1).map_or(self.messages.len(), |next| next.first);
        self.turns[turn].first..end
    }

    /// The steps of turn `turn`.
    pub fn turn_units(&self, turn: usize) -> Range<usize> {
        self.first_unit_of(turn)..self.first_unit_of(turn + 1)
    }

    /// The first step of turn `turn`; the step count for `turn_count()`.
    pub fn first_unit_of(&self, turn: usize) -> usize {
        self.turns.get(turn).map_or(self.units.len(), |start| start.first_unit)
    }

    /// The ledger index of turn `turn`'s USER message (its first message); the message
    /// count for `turn_count()`.
    pub fn question_of(&self, turn: usize) -> usize {
        self.first_of(self.first_unit_of(turn))
    }

    /// The turn step `unit` belongs to. O(log turns).
    pub fn turn_of_unit(&self, unit: usize) -> usize {
        self.turns.partition_point(|turn| turn.first_unit <= unit).saturating_sub(1)
    }

    /// True when step `unit` opens its turn (it holds the turn's USER message).
    pub fn opens_turn(&self, unit: usize) -> bool {
        self.turns.get(self.turn_of_unit(unit)).is_some_and(|turn| turn.first_unit == unit)
    }

    /// True when step `unit` is the last of its turn so far (a later step of the same turn
    /// may still come while `unit` is the newest).
    pub fn closes_turn(&self, unit: usize) -> bool {
        unit + 1 == self.first_unit_of(self.turn_of_unit(unit) + 1)
    }

    /// Non-pinned messages of steps `units`. O(log pinned).
    pub fn history_messages(&self, units: Range<usize>) -> usize {
        if units.is_empty() {
            return 0;
        }
        let range = self.first_of(units.start)..self.first_of(units.end);
        range.len() - self.pinned_in(range).len()
    }

    /// Tool calls in steps `units`. O(messages of those steps).
    pub fn tool_calls(&self, units: Range<usize>) -> usize {
        let range = self.first_of(units.start)..self.first_of(units.end);
        self.messages[range].iter().filter(|message| message.kind() == Kind::ToolCall).count()
    }

    /// True for pinned messages (see [`PinRule`]). O(log pinned).
    pub fn is_pinned(&self, index: usize) -> bool {
        self.pinned.binary_search(&index).is_ok()
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
