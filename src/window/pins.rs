//! Pins: messages the host wants in every request (a skill's instructions, a key file), and
//! the task, the session's first USER message, pinned by default (`pin_task`). A pinned
//! message is always sent and counted like the system prompt, outside the history budget.
//!
//! **Pair safety.** Only USER, ASSISTANT and SYSTEM messages can be pinned: a tool call,
//! a tool result or a thinking block belongs to its step and is sent with it (a call pinned
//! alone would be sent without its result, a thinking block without its turn's rules met),
//! so pinning one is refused, naming the kind.

use super::Window;
use crate::error::{Error, ErrorKind, Result};
use crate::message::Kind;
use crate::summary::CompactionRecord;

impl Window {
    /// Pins message `index` (`pinned` true) or takes the host's pin off it (false): a pinned
    /// message is sent in every request, wherever the boundary is, and counted with the
    /// system prompt. Pinning a message already pinned, or unpinning one the host did not
    /// pin, changes nothing and succeeds. Re-enforces the strategy.
    ///
    /// Errors (nothing changes): OUT_OF_RANGE for an index past the last message;
    /// INVALID_ARG for a TOOL_CALL, TOOL_RESULT or THINKING message (they go with their
    /// step); OUT_OF_RANGE when the pinned messages would then total more than the history
    /// budget, or leave no room for history in the context limit (the message names the
    /// total).
    pub fn pin(&mut self, index: usize, pinned: bool) -> Result<()> {
        let count = self.ledger.messages.len();
        let message = self.ledger.messages.get(index).ok_or_else(|| {
            Error::new(ErrorKind::OutOfRange, format!("message {index} does not exist: the window holds {count} messages"))
        })?;
        let kind = message.kind();
        let by_host = self.ledger.host_pins.binary_search(&index);
        if pinned == by_host.is_ok() {
            return Ok(());
        }
        if pinned {
            if matches!(kind, Kind::ToolCall | Kind::ToolResult | Kind::Thinking) {
                return Err(Error::invalid_arg(format!(
                    "message {index} is of kind {} (a tool call, tool result or thinking block): it is sent with its \
                     step (a call with its results, thinking with its response), so it cannot be pinned alone; pin a \
                     USER, ASSISTANT or SYSTEM message",
                    kind.code()
                )));
            }
            if !self.is_pinned(index, kind) {
                self.check_pin_fits(index)?;
            }
        }
        match by_host {
            Ok(at) => drop(self.ledger.host_pins.remove(at)),
            Err(at) => self.ledger.host_pins.insert(at, index),
        }
        self.repin();
        Ok(())
    }

    /// The messages the host pinned, ascending.
    pub fn host_pins(&self) -> &[usize] {
        &self.ledger.host_pins
    }

    /// Refuses to pin message `index` when the pinned messages would then total more than
    /// the history budget, or leave no room for history in the context limit.
    fn check_pin_fits(&self, index: usize) -> Result<()> {
        let added = u64::from(self.calibrated(self.ledger.messages[index].count()).tokens);
        let total = self.ledger.pinned.tokens() + added;
        let budget = u64::from(self.settings.history_budget);
        if total > budget {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "cannot pin message {index} ({added} tokens): the pinned messages would total {total} tokens, more \
                     than the history budget {budget}"
                ),
            ));
        }
        if let Some(limit) = self.known_context_limit() {
            let fixed = self.fixed_cost().tokens() + added + u64::from(self.output_reserve());
            if fixed >= u64::from(limit) {
                return Err(Error::new(
                    ErrorKind::OutOfRange,
                    format!(
                        "cannot pin message {index} ({added} tokens): the pinned messages would total {total} tokens, and \
                         with the rest every request sends and the output reserve ({fixed} tokens) leave no room in the \
                         context limit {limit}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Moves the task pin to the newest provider compaction's message after the compaction
    /// records changed (see [`super::ledger_state::LedgerState::pin_floor`]): when it moved,
    /// recomputes the pins and forgets the costs. The caller enforces.
    pub(super) fn refloor(&mut self) {
        let floor = provider_floor(&self.policy.compactions);
        if floor != self.ledger.pin_floor {
            self.ledger.pin_floor = floor;
            self.ledger.repin(self.wire.calibration);
            self.policy.costs.clear();
        }
    }

    /// Recomputes which messages are pinned after a pin or `pin_task` changed, forgets the
    /// costs and re-enforces the strategy. O(messages).
    ///
    /// A plain view sends the pinned messages before its start, which [`Window::enforce`]
    /// reads with the new pins: when they changed, so did what the view sends (a pinned
    /// message is sent in every view), and the generation marks it.
    pub(super) fn repin(&mut self) {
        let plain_start = self.policy.overlay.is_none().then(|| self.start());
        let pinned_before = plain_start.map(|start| self.pinned_before(start).to_vec());
        self.ledger.pin_task = self.settings.pin_task;
        self.ledger.repin(self.wire.calibration);
        let pins_moved = plain_start.zip(pinned_before).is_some_and(|(start, before)| self.pinned_before(start) != before);
        self.policy.costs.clear();
        let generation = self.policy.generation;
        self.enforce();
        if pins_moved && self.policy.generation == generation {
            self.bump_generation();
        }
    }
}

/// The USER message of the newest provider compaction among `records`, 0 when none is.
pub(super) fn provider_floor(records: &[CompactionRecord]) -> usize {
    records.iter().rev().find(|record| record.provider).map_or(0, |record| record.last_archived + 1)
}
