//! The ledger a [`Window`](super::Window) owns: every message pushed, grouped into turns and
//! steps, with the token sums the strategies read, the pins, and what the host recorded about
//! its messages. Nothing here depends on a strategy or a provider format.

use super::host::{HostIds, PendingCounts};
use super::unit_sums::UnitSums;
use crate::ledger::{PinRule, TurnStart, calibrated};
use crate::message::{CountSource, Kind, Message};
use crate::pairing::{CallForm, LateResults, Problem, RunningStep, TurnCalls, analyze};
use crate::tally::Tally;
use crate::tokens::{Calibration, Count};
use rustc_hash::FxHashMap;
use std::ops::Range;

/// Messages, turns, steps and their sums: the record of what was pushed.
#[derive(Clone, Debug)]
pub(super) struct LedgerState {
    /// Every message pushed, pruned ones included.
    pub messages: Vec<Message>,
    /// Where each turn starts.
    pub turns: Vec<TurnStart>,
    /// Where each step starts (a ledger index), ascending; recorded at push time, O(1).
    pub units: Vec<usize>,
    /// History tokens of each step, with prefix sums.
    pub sums: UnitSums,
    /// History tokens of every turn.
    pub history: Tally,
    /// Tokens of pinned messages.
    pub pinned: Tally,
    /// Indices of the pinned messages, ascending.
    pub pinned_indices: Vec<usize>,
    /// True when the session's first USER message is pinned (the setting `pin_task`).
    pub pin_task: bool,
    /// The messages the host pinned ([`super::Window::pin`]), ascending.
    pub host_pins: Vec<usize>,
    /// The USER message of the newest provider compaction, 0 when there is none: the
    /// provider dropped everything before it, so the task pin moves to it and the host's
    /// pins before it lapse.
    pub pin_floor: usize,
    /// Completed steps (all but the newest) whose tool pairs the view repairs, ascending.
    pub defective_units: Vec<usize>,
    /// The running turn's defective steps: their problems and their calls left unanswered,
    /// which late results may still answer (a step they all answer is no longer defective).
    pub running_defects: FxHashMap<usize, (usize, usize)>,
    /// The host's ids of its messages (`push_message`), and where each starts.
    pub host_ids: HostIds,
    /// Counts `set_count` recorded, applied at the next enforcement (saved).
    pub pending_counts: PendingCounts,
    /// The newest turn's tool calls, indexed by id: what a push checks a tool message
    /// against, in O(1).
    pub calls: TurnCalls,
    /// The newest step's tool calls: its defects, known in O(1) when it completes (late
    /// results are not fed to it: they answer an older step's call).
    pub step_calls: TurnCalls,
    /// Results whose call is in an older step of their turn.
    pub late: LateResults,
    /// The newest step as a request reads it: where steps start, and how many cancelled
    /// results a request adds for its unanswered calls.
    pub running: RunningStep,
    /// Messages the library has not counted yet, ascending (see [`Message::is_uncounted`]):
    /// the sums leave them out until [`LedgerState::settle`] gives them their counts.
    pub uncounted: Vec<usize>,
}

impl Default for LedgerState {
    fn default() -> LedgerState {
        LedgerState {
            messages: Vec::new(),
            turns: Vec::new(),
            units: Vec::new(),
            sums: UnitSums::default(),
            history: Tally::default(),
            pinned: Tally::default(),
            pinned_indices: Vec::new(),
            pin_task: true,
            host_pins: Vec::new(),
            pin_floor: 0,
            defective_units: Vec::new(),
            running_defects: FxHashMap::default(),
            host_ids: HostIds::default(),
            pending_counts: PendingCounts::default(),
            calls: TurnCalls::default(),
            step_calls: TurnCalls::default(),
            late: LateResults::default(),
            running: RunningStep::default(),
            uncounted: Vec::new(),
        }
    }
}

impl LedgerState {
    /// What pins a message.
    pub fn pin_rule(&self) -> PinRule<'_> {
        PinRule { turns: &self.turns, pin_task: self.pin_task, host_pins: &self.host_pins, floor: self.pin_floor }
    }

    /// True for pinned messages (see [`PinRule`]).
    pub fn is_pinned(&self, index: usize, kind: Kind) -> bool {
        self.pin_rule().is_pinned(index, kind)
    }

    /// The ledger indices of turn `turn`.
    pub fn turn_range(&self, turn: usize) -> Range<usize> {
        let first = self.turns[turn].first;
        let end = self.turns.get(turn + 1).map_or(self.messages.len(), |next| next.first);
        first..end
    }

    /// The ledger indices of step `unit`.
    pub fn unit_range(&self, unit: usize) -> Range<usize> {
        self.units[unit]..self.units.get(unit + 1).copied().unwrap_or(self.messages.len())
    }

    /// The steps of turn `turn`.
    pub fn turn_units(&self, turn: usize) -> Range<usize> {
        self.turns[turn].first_unit..self.turns.get(turn + 1).map_or(self.units.len(), |next| next.first_unit)
    }

    /// The first step of turn `turn`; the step count for the turn count.
    pub fn first_unit_of(&self, turn: usize) -> usize {
        self.turns.get(turn).map_or(self.units.len(), |start| start.first_unit)
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

    /// The step holding ledger index `index`, if any.
    pub fn unit_of(&self, index: usize) -> Option<usize> {
        self.units.partition_point(|&first| first <= index).checked_sub(1)
    }

    /// The turn step `unit` belongs to.
    pub fn turn_of_unit(&self, unit: usize) -> usize {
        self.turns.partition_point(|turn| turn.first_unit <= unit).saturating_sub(1)
    }

    /// History tokens of turns `k..`.
    pub fn history_from(&self, k: usize) -> Tally {
        self.history_from_unit(self.first_unit_of(k))
    }

    /// History tokens of steps `u..`.
    pub fn history_from_unit(&self, u: usize) -> Tally {
        if u < self.units.len() { self.history.minus(self.sums.before(u)) } else { Tally::default() }
    }

    /// History tokens of turn `turn`.
    pub fn turn_tokens(&self, turn: usize) -> Tally {
        let units = self.turn_units(turn);
        self.sums.before(units.end).minus(self.sums.before(units.start))
    }

    /// What the planner counts for step `unit` sent whole: its history tokens, with its
    /// turn's USER message counted with the turn's last step rather than its first (the USER
    /// message is sent whenever a step of its turn is, and a strategy that drops the oldest
    /// steps keeps the last one longest). O(log steps).
    pub fn unit_cost(&self, unit: usize, calibration: Calibration) -> u64 {
        let own = self.sums.unit(unit).tokens();
        let turn = self.turn_of_unit(unit);
        let units = self.turn_units(turn);
        let (opens, closes) = (units.start == unit, units.end == unit + 1);
        if opens == closes {
            return own;
        }
        let user = self.user_cost(turn, calibration);
        if opens { own - user } else { own + user }
    }

    /// History tokens a view sending steps `u..` whole holds: theirs, and their turn's USER
    /// message when `u` is not its turn's first step (it is sent before them). Never grows
    /// with `u`. O(log steps).
    pub fn history_kept_from(&self, u: usize, calibration: Calibration) -> u64 {
        let steps = self.history_from_unit(u).tokens();
        if u >= self.units.len() {
            return steps;
        }
        let turn = self.turn_of_unit(u);
        match self.turns[turn].first_unit == u {
            true => steps,
            false => steps + self.user_cost(turn, calibration),
        }
    }

    /// History tokens of turn `turn`'s USER message (0 when it is pinned or not counted yet).
    fn user_cost(&self, turn: usize, calibration: Calibration) -> u64 {
        let index = self.turns[turn].first;
        let message = &self.messages[index];
        match self.is_pinned(index, Kind::User) || message.is_uncounted() {
            true => 0,
            false => u64::from(calibrated(calibration, message.count()).tokens),
        }
    }

    /// Appends `message`, which the window counts as `count` (calibrated; left out of the
    /// sums while the message is uncounted). A USER message starts a turn, and a step starts
    /// where [`RunningStep::feed`] says; either completes the previous step: returns that
    /// step when it left tool pairs for the view to repair.
    pub fn push(&mut self, message: Message, count: Count) -> Option<usize> {
        let mut defective = None;
        let starts = self.running.feed(&message);
        if starts && (message.kind() == Kind::User || !self.turns.is_empty()) {
            if let Some(previous) = self.units.len().checked_sub(1) {
                if self.step_calls.defective(true) {
                    self.defective_units.push(previous);
                    self.running_defects.insert(previous, (self.step_calls.problems(), self.step_calls.unanswered()));
                    defective = Some(previous);
                }
            }
            if message.kind() == Kind::User {
                self.turns.push(TurnStart { first: self.messages.len(), first_unit: self.units.len() });
                self.calls = TurnCalls::default();
                self.running_defects.clear();
            }
            self.units.push(self.messages.len());
            self.step_calls = TurnCalls::default();
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
            self.sums.add(self.units.len() - 1, count);
        }
        self.host_ids.note(&self.messages, &message);
        let late = match self.turns.is_empty() {
            true => None,
            false => feed_calls(&mut self.calls, Some(&mut self.step_calls), &mut self.late, index, &message),
        };
        self.messages.push(message);
        if let Some(call) = late {
            self.answered_late(call);
        }
        defective
    }

    /// Notes that a late result answered the call at `call`: its step is no longer defective
    /// once late results answered every call it left open and it has no other problem.
    fn answered_late(&mut self, call: usize) {
        let Some(unit) = self.unit_of(call) else { return };
        let Some((problems, open)) = self.running_defects.get_mut(&unit) else { return };
        *open -= usize::from(CallForm::of(&self.messages[call]).cancellable()).min(*open);
        if (*problems, *open) == (0, 0) {
            self.running_defects.remove(&unit);
            if let Ok(at) = self.defective_units.binary_search(&unit) {
                self.defective_units.remove(at);
            }
        }
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
                self.sums.sub(self.units.len() - 1, count);
            }
            if self.units.last() == Some(&index) {
                self.units.pop();
                self.sums.pop();
            }
            if self.turns.last().is_some_and(|turn| turn.first == index) {
                self.turns.pop();
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
        let pins = self.host_pins.partition_point(|&i| i < message_count);
        self.host_pins.truncate(pins);
        self.running = RunningStep::default();
        self.calls = TurnCalls::default();
        self.step_calls = TurnCalls::default();
        let first = self.turns.last().map_or(0, |turn| turn.first);
        self.late.truncate(first);
        let step = self.units.last().copied().unwrap_or(0);
        let LedgerState { messages, turns, calls, step_calls, late, running, .. } = self;
        for (index, message) in messages.iter().enumerate().skip(first) {
            running.feed(message);
            if !turns.is_empty() {
                feed_calls(calls, (index >= step).then_some(&mut *step_calls), late, index, message);
            }
        }
        // The running turn's completed steps (all but the newest), analysed again with the
        // late results left; older turns' steps keep what was found when they completed.
        self.running_defects.clear();
        let units = self.turns.len().checked_sub(1).map_or(0..0, |turn| self.turn_units(turn));
        let kept = self.defective_units.partition_point(|&u| u < units.start);
        self.defective_units.truncate(kept);
        for unit in units.start..units.end.saturating_sub(1) {
            let range = self.unit_range(unit);
            let defects = analyze(&self.messages, range.start, range.end, true, &self.late);
            if !defects.is_empty() {
                let open = defects.iter().filter(|d| d.problem == Problem::UnansweredCall).count();
                self.defective_units.push(unit);
                self.running_defects.insert(unit, (defects.len() - open, open));
            }
        }
    }

    /// Gives uncounted message `index` its first count, `count` (raw; the sums add it scaled
    /// by `calibration`), from `source`; the caller takes `index` out of `uncounted`.
    /// Returns the steps whose cost it changed (see [`LedgerState::touched_units`]).
    pub fn settle(&mut self, index: usize, count: Count, source: CountSource, calibration: Calibration) -> Range<usize> {
        let message = &mut self.messages[index];
        debug_assert!(message.is_uncounted(), "message {index} was counted already");
        message.set_count(count);
        message.set_source(source);
        let (kind, count) = (message.kind(), calibrated(calibration, count));
        if self.is_pinned(index, kind) {
            self.pinned.add(count);
        } else {
            let unit = self.unit_of(index).expect("a history message belongs to a step");
            self.history.add(count);
            self.sums.add(unit, count);
        }
        self.touched_units(index)
    }

    /// Makes message `index`, settled by [`LedgerState::settle`], uncounted again (undoing a
    /// count applied by a call that then failed). Returns the steps it changed, as `settle`.
    pub fn unsettle(&mut self, index: usize, calibration: Calibration) -> Range<usize> {
        let (kind, count) = (self.messages[index].kind(), calibrated(calibration, self.messages[index].count()));
        if self.is_pinned(index, kind) {
            self.pinned.sub(count);
        } else {
            let unit = self.unit_of(index).expect("a history message belongs to a step");
            self.history.sub(count);
            self.sums.sub(unit, count);
        }
        self.messages[index].mark_uncounted();
        let at = self.uncounted.partition_point(|&i| i < index);
        self.uncounted.insert(at, index);
        self.touched_units(index)
    }

    /// The steps whose rendering or cost a new count of message `index` changes: its step
    /// (a pinned SYSTEM message inside a step is rendered with it), and for a turn's USER
    /// message every step of its turn (its cost is counted with the turn's last step).
    /// Empty for a message before the first turn.
    pub fn touched_units(&self, index: usize) -> Range<usize> {
        let Some(unit) = self.unit_of(index) else { return 0..0 };
        match self.turn_of(index).filter(|&turn| self.turns[turn].first == index) {
            Some(turn) => self.turn_units(turn),
            None => unit..unit + 1,
        }
    }

    /// Recomputes which messages are pinned (after a pin or the setting `pin_task` changed)
    /// and sums every count again. O(messages).
    pub fn repin(&mut self, calibration: Calibration) {
        let rule = self.pin_rule();
        let pinned: Vec<usize> = (0..self.messages.len()).filter(|&i| rule.is_pinned(i, self.messages[i].kind())).collect();
        self.pinned_indices = pinned;
        self.rebuild_tallies(calibration);
    }

    /// Sums every count again, scaled by `calibration` (after a new ratio or new counts).
    pub fn rebuild_tallies(&mut self, calibration: Calibration) {
        self.history = Tally::default();
        self.pinned = Tally::default();
        self.sums.clear();
        let mut unit = Tally::default();
        let mut next_unit = 0;
        for index in 0..self.messages.len() {
            if self.units.get(next_unit) == Some(&index) {
                if next_unit > 0 {
                    self.sums.push(unit);
                }
                unit = Tally::default();
                next_unit += 1;
            }
            let (kind, count) = (self.messages[index].kind(), calibrated(calibration, self.messages[index].count()));
            if self.messages[index].is_uncounted() {
                // Not in the sums until counted.
            } else if self.is_pinned(index, kind) {
                self.pinned.add(count);
            } else {
                self.history.add(count);
                unit.add(count);
            }
        }
        if next_unit > 0 {
            self.sums.push(unit);
        }
    }
}

/// Feeds `message`, at ledger index `index`, to the running turn's `calls` and (unless it
/// belongs to an older step) the newest step's `step_calls`, recording it in `late` when it
/// is a result answering an older step's call (not a defect of the newest step).
fn feed_calls(
    calls: &mut TurnCalls,
    step_calls: Option<&mut TurnCalls>,
    late: &mut LateResults,
    index: usize,
    message: &Message,
) -> Option<usize> {
    let late_call = match message.kind() {
        Kind::ToolResult => message.call_id().and_then(|id| calls.late_call(id)),
        _ => None,
    };
    calls.feed(index, message);
    match late_call {
        Some(call) => late.record(index, call),
        None => {
            if let Some(step_calls) = step_calls {
                step_calls.feed(index, message);
            }
        }
    }
    late_call
}
