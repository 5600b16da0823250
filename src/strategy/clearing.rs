//! The clearing stage (the field's cheapest tier, needing no LLM call): old tool results are
//! replaced by a short placeholder while their calls stay, so the model still sees what it
//! did and can ask again. It acts before the strategy, only while the view is over its
//! limits, oldest result first, down to `low_water`, never on the newest `keep_tool_results`
//! results or the results of `exclude_tools`, and only when it saves at least
//! `clear_at_least` tokens (a clearing changes the prompt from its first cleared result on,
//! so the provider's cached prefix is lost from there and a small saving does not pay).
//!
//! What is cleared is a prefix of the ledger: every clearable result before the ledger index
//! the walk's clear pointer reached ([`Clearables::cleared`]). The pointer is part of the
//! sliding walk's state (see `strategy::sliding`), walked as if the strategy ran after every
//! step, so it only moves forward and the view stays a function of the ledger and the
//! settings.

use crate::config::clearing::{Clearing, placeholder_text};
use crate::ledger::Ledger;
use crate::message::{Kind, Message, counted_text};
use std::collections::HashMap;
use std::ops::Range;

/// What clearing each tool result would save, and which call each answers: built once per
/// message, as the walk reaches it, and kept between runs like the walk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Clearables {
    /// `saved_before[i]`: the tokens clearing every clearable result before ledger index `i`
    /// saves. One longer than the messages seen.
    saved_before: Vec<u64>,
    /// The ledger indices of the tool results seen, ascending (clearable or not).
    results: Vec<usize>,
    /// The call each result seen answers, by the result's ledger index.
    calls: HashMap<usize, usize>,
    /// The calls of the turn being read, by id, and where that turn starts.
    turn_calls: HashMap<Box<str>, usize>,
}

impl Clearables {
    /// Messages read so far.
    pub fn seen(&self) -> usize {
        self.saved_before.len().saturating_sub(1)
    }

    /// Forgets every message from ledger index `index` on (they changed or are gone).
    pub fn forget_from(&mut self, index: usize) {
        if index < self.seen() {
            // The calls of the turn being read are read again from its start.
            *self = Clearables::default();
        }
    }

    /// Reads the ledger's messages up to `end` (exclusive) under `clearing`.
    pub fn read_to(&mut self, ledger: &Ledger<'_>, clearing: &Clearing, end: usize) {
        if self.saved_before.is_empty() {
            self.saved_before.push(0);
        }
        let messages = ledger.messages();
        while self.seen() < end.min(messages.len()) {
            let index = self.seen();
            let message = &messages[index];
            let mut saving = 0;
            match message.kind() {
                Kind::User => self.turn_calls.clear(),
                Kind::ToolCall => {
                    if let Some(id) = message.call_id() {
                        self.turn_calls.insert(id.into(), index);
                    }
                }
                Kind::ToolResult => {
                    let call = message.call_id().and_then(|id| self.turn_calls.get(id).copied());
                    if let Some(call) = call {
                        self.calls.insert(index, call);
                    }
                    self.results.push(index);
                    saving = Cleared::of(ledger, clearing, index, call).map_or(0, |cleared| cleared.saving);
                }
                _ => {}
            }
            let before = self.saved_before[index];
            self.saved_before.push(before + saving);
        }
    }

    /// Tokens clearing every clearable result in ledger range `range` saves (of messages
    /// read).
    pub fn saving_in(&self, range: Range<usize>) -> u64 {
        let at = |i: usize| self.saved_before[i.min(self.seen())];
        at(range.end) - at(range.start.min(range.end))
    }

    /// The ledger index before which the clear pointer may go at most once the ledger reads
    /// up to `end`: the newest `keep` results before `end` are never cleared.
    pub fn protected_from(&self, end: usize, keep: usize) -> usize {
        let before = self.results.partition_point(|&r| r < end);
        match before.checked_sub(keep) {
            Some(0) | None => self.results.first().copied().unwrap_or(end).min(end),
            Some(newest_kept) => self.results[newest_kept],
        }
    }

    /// The call that the result at ledger index `result` answers, if its turn has it.
    pub fn call_of(&self, result: usize) -> Option<usize> {
        self.calls.get(&result).copied()
    }
}

/// How one cleared result is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cleared {
    /// The placeholder that stands for the result.
    pub placeholder: String,
    /// The placeholder's tokens.
    pub placeholder_tokens: u32,
    /// Tokens clearing saves: the result's less the placeholder's, and with
    /// `clear_tool_inputs` the call's arguments less an empty object's.
    pub saving: u64,
}

/// Arguments a call with cleared inputs is sent with.
pub const CLEARED_ARGUMENTS: &str = "{}";

impl Cleared {
    /// How the tool result at ledger index `result` (answering the call at `call`, if known)
    /// is sent when cleared, or `None` when it is not clearable: a pinned result, a result of
    /// an excluded tool, or one the placeholder would not shorten.
    pub fn of(ledger: &Ledger<'_>, clearing: &Clearing, result: usize, call: Option<usize>) -> Option<Cleared> {
        let messages: &[Message] = ledger.messages();
        let message = &messages[result];
        let call_message = call.map(|call| &messages[call]);
        let tool = call_message.and_then(Message::name).or(message.name());
        if message.kind() != Kind::ToolResult || ledger.is_pinned(result) || !clearing.clears(tool) {
            return None;
        }
        let tokens = ledger.calibrated(message.count()).tokens;
        let placeholder = placeholder_text(clearing.placeholder.as_deref(), tool, message.call_id(), message.host_id(), tokens);
        let placeholder_tokens = ledger.model().count(&placeholder).tokens;
        let mut saving = u64::from(tokens).checked_sub(u64::from(placeholder_tokens)).filter(|&s| s > 0)?;
        if let (true, Some(call)) = (clearing.clear_tool_inputs, call_message) {
            let whole = ledger.calibrated(call.count()).tokens;
            let emptied = ledger.model().count(&counted_text(call.name(), CLEARED_ARGUMENTS)).tokens;
            saving += u64::from(whole.saturating_sub(emptied));
        }
        Some(Cleared { placeholder, placeholder_tokens, saving })
    }
}
