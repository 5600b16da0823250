//! The ledger: messages grouped into turns, per-turn token totals, and the window boundary
//! `context_window_start`.
//!
//! A turn is a USER message and everything up to the next USER message. Messages before the
//! first USER message, and SYSTEM messages anywhere, are pinned: never dropped and not counted
//! against the history budget. The boundary is recomputed from the whole ledger whenever the
//! strategy is enforced, so it is a function of the ledger's contents and settings, never of
//! the order of calls.
//!
//! Accepted summaries (see [`Window::set_summary`]) archive the turns they replace: the
//! newest compaction record is a floor under the first live turn, and its summary is sent
//! right after the pinned head.

use crate::classify::{ErrorCategory, ErrorInfo};
use crate::config::{BudgetMode, Fraction, Settings, StrategyName};
use crate::error::{Error, ErrorKind, Result, echo};
use crate::ledger::Ledger;
use crate::message::{CountSource, Kind, Message, MessageExtras, counted_text, split_call_text};
use crate::strategy::clearing::{ClearSettings, ClearStage};
use crate::strategy::monologue::Monologue;
use crate::strategy::plan::{Cost, CostCache, Costs, Limits, Plan, Rules};
use crate::strategy::sliding::WalkUnits;
use crate::strategy::tiered::{Keep, Tiered};
use crate::strategy::{drop_oldest, monologue, running_turn, tiered};
use crate::tally::Tally;
use crate::tokens::{Calibration, Count, Model, Tokenizer};
use crate::view::Overlay;
use crate::view::clearing::ClearedView;
use crate::view::render::Renderer;
use crate::view::text::CANCELLED_RESULT;
use crate::view::thinking::OldThinking;
use crate::wire::{Format, FormatSet};
use std::borrow::Cow;
use std::sync::Arc;

mod choices;
mod deferred;
mod fixed_parts;
mod generation;
mod host;
mod last_request;
mod pins;
mod ledger_state;
mod policy_state;
mod provider_compaction;
mod request;
mod restore;
mod settings;
mod summarize;
mod tool_parts;
mod unit_sums;
mod usage;
mod utf8;
mod view;
mod wire_state;

pub use choices::Choice;
pub use host::Part;
pub use last_request::LastRequest;
use ledger_state::LedgerState;
use policy_state::PolicyState;
pub use restore::{SavedPending, SavedWindow};
pub use utf8::Decoded;
use wire_state::WireState;

/// What the ledger reports about one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnInfo {
    /// Index of the turn's USER message.
    pub first_message: usize,
    /// Messages in the turn, pinned SYSTEM messages inside it included.
    pub message_count: usize,
    /// History tokens of the turn (its pinned messages excluded: SYSTEM messages, the task,
    /// the host's pins), counts recorded by `set_count` / `set_turn_count` included at once.
    pub tokens: Count,
    /// True when the turn's USER message is sent as itself; false when the window pruned (or
    /// summarized) it.
    pub live: bool,
    /// The host ids of the turn's first message (its USER message) and last message (the
    /// newest so far, for the running turn), when both were pushed with
    /// [`Window::push_message`]; `None` otherwise.
    pub host_ids: Option<(i64, i64)>,
}

/// Token overhead the caller sends with every request: the system prompt and the tool
/// definitions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overhead {
    /// Tokens of the system prompt.
    pub system: u32,
    /// Tokens of the tool definitions.
    pub tools: u32,
}

/// What [`Window::reset_with`] clears besides the messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResetFlags {
    /// Sets the overhead (system prompt and tool tokens) to 0.
    pub overhead: bool,
    /// Forgets the calibration learned from provider usage.
    pub calibration: bool,
}

/// A conversation ledger with a window boundary. Cheap to clone (a fork of the session).
///
/// A thin composition of its parts, each in its own file: the ledger
/// ([`ledger_state`]: messages, turns and their sums), the policy state ([`policy_state`]:
/// the boundary, the computed view, manual choices and summaries) and the provider-facing
/// state ([`wire_state`]: formats, requests, usage and calibration).
#[derive(Clone, Debug)]
pub struct Window {
    model: Model,
    settings: Settings,
    overhead: Overhead,
    ledger: LedgerState,
    policy: PolicyState,
    wire: WireState,
    /// For a window restored from a saved document, the fingerprint of the loaded tokenizer
    /// that document's counts were made with (`Some(None)`: none); `None` for a window never
    /// restored. Not saved.
    restored_with: Option<Option<String>>,
    /// For a window restored from a document counted with a loaded tokenizer, the saved
    /// counts of its messages while they stay in the ledger: a message kept without its text
    /// (`retain_text` false) cannot be recounted, and takes its saved count again when that
    /// tokenizer is set again. Not saved.
    restored_counts: Vec<Count>,
}

impl Window {
    /// An empty window for `model`, with the default settings.
    pub fn new(model: &str) -> Window {
        Window {
            model: Model::resolve(model),
            settings: Settings::default(),
            overhead: Overhead::default(),
            ledger: LedgerState::default(),
            policy: PolicyState::default(),
            wire: WireState::default(),
            restored_with: None,
            restored_counts: Vec::new(),
        }
    }

    /// The model whose tokens are counted.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The current settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Switches to `model`: recounts every message the library counted and still has the
    /// text of, flags the counts it cannot recount as estimates (a counts-only window),
    /// keeps caller-supplied counts as given, recounts the summaries, forgets the calibration
    /// (it belonged to the old model's tokenizer), and re-enforces the strategy.
    pub fn set_model(&mut self, model: &str) {
        self.switch_model(Model::resolve(model), false);
    }

    /// [`Window::set_model`], also dropping the counts the caller gave for the old model
    /// when `recount`: every message whose text the window keeps is recounted for the new
    /// one (its count becomes the library's), counts recorded by `set_count` and not applied
    /// yet are forgotten, and a caller's count without a text (`push_counted`, a window
    /// keeping counts only) is kept as an estimate. So a host that recorded the provider's
    /// counts switches models without a reset and a re-push.
    pub fn set_model_with(&mut self, model: &str, recount: bool) {
        self.switch_model(Model::resolve(model), recount);
    }

    /// Counts with `tokenizer` from now on, exactly, keeping the model name (and its context
    /// limit): recounts as [`Window::set_model`] does. The window shares the tokenizer.
    pub fn set_tokenizer(&mut self, tokenizer: Arc<Tokenizer>) {
        let next = Model::with_tokenizer(self.model.name(), tokenizer);
        self.switch_model(next, false);
    }

    /// Counts with `next`; `recount` recounts the caller's counts too (see
    /// [`Window::set_model_with`]).
    fn switch_model(&mut self, next: Model, recount: bool) {
        if recount {
            drop(self.ledger.pending_counts.take());
        }
        let saved_tokenizer = matches!((&self.restored_with, next.tokenizer()),
            (Some(Some(saved)), Some(tokenizer)) if saved.as_str() == tokenizer.fingerprint());
        for (index, message) in self.ledger.messages.iter_mut().enumerate() {
            if message.source() == CountSource::Caller && !recount {
                continue;
            }
            let count = match (message.counted_text(), self.restored_counts.get(index)) {
                (Some(text), _) => message.media().map_or(next.count(&text), |media| next.count(&text).plus(media)),
                // Without its text, a count is exact again only with the tokenizer that made it.
                (None, Some(&saved)) if saved_tokenizer => saved,
                (None, _) => Count::estimate(message.count().tokens),
            };
            if message.text().is_some() {
                message.set_source(CountSource::Library);
            }
            message.set_count(count);
        }
        // Every message the library counts was counted just now.
        self.ledger.uncounted.clear();
        for record in &mut self.policy.compactions {
            record.summary_tokens = match record.provider {
                true => self.ledger.messages[record.last_archived + 1].count(),
                false => next.count(&record.summary),
            };
        }
        self.model = next;
        self.wire.calibration = Calibration::default();
        self.wire.last_report = None;
        self.policy.costs.clear();
        self.rebuild_tallies();
        self.enforce();
    }

    /// Appends a message whose text the library counts, and returns the count as the
    /// window uses it (an estimate scaled by the calibration). A text above the configured
    /// `max_message_bytes` is refused and nothing is appended.
    ///
    /// A TOOL_CALL's text is its tool name, a newline and its arguments; the name is kept
    /// apart (see [`Message::name`]) and the text kept is the arguments. A TOOL_CALL text
    /// without a name is refused (see [`crate::message::split_call_text`]).
    pub fn push(&mut self, kind: Kind, text: &str) -> Result<Count> {
        self.check_message_size(text.len())?;
        let (name, text) = match kind {
            Kind::ToolCall => {
                let (name, arguments) = split_call_text(text)?;
                (Some(name), arguments)
            }
            _ => (None, Cow::Borrowed(text)),
        };
        let name = name.as_deref();
        let extras = MessageExtras { name: name.map(Box::from), ..MessageExtras::default() };
        let count = self.model.count(&counted_text(name, &text));
        let text = text.as_ref();
        self.append(self.library_message(kind, count, text, extras));
        Ok(self.calibrated(count))
    }

    /// A message the library counted, keeping its text unless the window keeps counts only.
    fn library_message(&self, kind: Kind, count: Count, text: &str, extras: MessageExtras) -> Message {
        let message = Message::new(kind, count, CountSource::Library, self.settings.retain_text.then(|| Box::from(text)));
        if extras == MessageExtras::default() { message } else { message.with_extras(extras) }
    }

    /// Refuses a message of `len` bytes above the configured `max_message_bytes`. The C API
    /// calls it before reading the text, so an oversized buffer is never touched.
    pub fn check_message_size(&self, len: usize) -> Result<()> {
        self.settings.max_message_bytes.check("message text", len)
    }

    /// Appends a message with a count the caller already has (a provider's count_tokens
    /// answer, say); the count is taken as given.
    pub fn push_counted(&mut self, kind: Kind, count: Count) {
        self.append(Message::new(kind, count, CountSource::Caller, None));
    }

    /// Appends messages parsed from provider JSON (see [`crate::json`]), whose formats are
    /// `formats`: the formats the window's JSON messages have in common from now on.
    /// A provider's compaction among them (an Anthropic `compaction` block, a Responses
    /// `compaction` item) archives the turns before it, as an accepted summary does, and is
    /// itself the summary in place (see [`Window::sent_summary`]).
    ///
    /// Errors (nothing is appended): a tool result whose call id no call earlier in its
    /// turn carries (a mistyped id), as [`Window::push_tool`] refuses it, naming the id and
    /// the element of the push; under `"invalid_tool_parts":"keep"` it is kept, flagged
    /// (see [`Window::check_parsed_results`]).
    pub fn push_parsed(&mut self, mut messages: Vec<Message>, formats: FormatSet) -> Result<()> {
        for orphan in self.check_parsed_results(&messages)? {
            messages[orphan].mark_kept_as_text();
        }
        self.wire.wire_formats = formats;
        for message in messages {
            let compaction = message.is_compaction();
            self.append(message);
            if compaction {
                self.archive_before_provider_compaction(self.ledger.messages.len() - 1);
            }
        }
        Ok(())
    }

    /// The provider formats the window may still speak: [`FormatSet::ANY`] until JSON is
    /// pushed, then the formats every JSON push fits (a message such as
    /// `{"role":"user","content":"hi"}` fits three), until one format is left: fixed by the
    /// configuration key `format` or a push only one format reads, for the window's life.
    pub fn wire_formats(&self) -> FormatSet {
        self.wire.wire_formats
    }

    /// The provider format the window renders and reads ambiguous JSON in: the fixed one, or
    /// while none is, the API of the model's family ([`Format::of_model`]).
    pub fn format(&self) -> Format {
        let family = Format::of_model(&self.model);
        if self.wire.wire_formats.contains(family) { family } else { self.wire.wire_formats.preferred().unwrap_or(family) }
    }

    /// Appends a tool call or tool result carrying the provider's call id, and returns its
    /// count. Calls and results pair by id within a turn; several calls in one turn are
    /// parallel calls.
    ///
    /// Errors (nothing is appended): a kind other than TOOL_CALL or TOOL_RESULT, an empty
    /// id, no turn yet, a call reusing an id of its turn, a result for a call already
    /// answered, or a result whose call never came in this turn. Under
    /// `"invalid_tool_parts":"keep"` a call or result refused for its id or its text is kept
    /// instead, flagged (see [`Window::keep_tool_part_or`]); a wrong kind is still refused.
    ///
    /// A TOOL_CALL's text is its tool name, a newline and its arguments, as for
    /// [`Window::push`]; [`Window::push_tool_call`] takes them apart.
    pub fn push_tool(&mut self, kind: Kind, call_id: &str, text: &str) -> Result<Count> {
        match kind {
            Kind::ToolCall => match split_call_text(text) {
                Ok((name, arguments)) => self.push_paired(kind, call_id, Some(&name), &arguments),
                Err(refusal) => self.keep_tool_part_or(refusal, kind, call_id, None, text),
            },
            Kind::ToolResult => self.push_paired(kind, call_id, None, text),
            _ => Err(Error::invalid_arg(format!("push_tool takes a TOOL_CALL or TOOL_RESULT, not kind {}", kind.code()))),
        }
    }

    /// Appends a tool call: its provider id, the tool's name and its arguments (JSON), and
    /// returns its count (the name and the arguments, as the providers count them). Pairs
    /// with results as [`Window::push_tool`] does.
    ///
    /// Errors (nothing is appended): an empty name; arguments that are not a JSON object
    /// (empty is `{}`) in a window whose format needs one (Anthropic, Gemini); and the
    /// errors of [`Window::push_tool`]. Under `"invalid_tool_parts":"keep"` these are kept
    /// as ASSISTANT text instead, flagged (see [`Window::keep_tool_part_or`]).
    pub fn push_tool_call(&mut self, call_id: &str, name: &str, arguments: &str) -> Result<Count> {
        let checked = match name.trim().is_empty() {
            true => Err(Error::invalid_arg(format!("tool call id '{}': name must not be empty", echo(call_id)))),
            false => self.check_call_arguments(call_id, arguments),
        };
        match checked {
            Ok(()) => self.push_paired(Kind::ToolCall, call_id, Some(name), arguments),
            Err(refusal) => self.keep_tool_part_or(refusal, Kind::ToolCall, call_id, Some(name), arguments),
        }
    }

    /// Refuses a call's arguments that are not a JSON object (empty is `{}`) in a window
    /// whose format needs one (Anthropic, Gemini).
    pub(crate) fn check_call_arguments(&self, call_id: &str, arguments: &str) -> Result<()> {
        let format = self.format();
        if format.needs_object_arguments() && !arguments.trim().is_empty() {
            let why = match crate::strict_json::parse(arguments) {
                Ok(value) if value.is_object() => return Ok(()),
                Ok(_) => String::new(),
                Err(e) => format!(": {e}"),
            };
            return Err(Error::invalid_arg(format!(
                "tool call id '{}': arguments must be a JSON object in this window's format ({}){why}",
                echo(call_id),
                format.name()
            )));
        }
        Ok(())
    }

    /// Appends a tool call or result with its id (and a call's name), checking its pairing.
    fn push_paired(&mut self, kind: Kind, call_id: &str, name: Option<&str>, text: &str) -> Result<Count> {
        self.check_message_size(text.len().saturating_add(name.map_or(0, str::len)))?;
        if let Err(refusal) = self.check_pairing(kind, call_id) {
            return self.keep_tool_part_or(refusal, kind, call_id, name, text);
        }
        let count = self.model.count(&counted_text(name, text));
        let extras = MessageExtras { call_id: Some(call_id.into()), name: name.map(Box::from), ..MessageExtras::default() };
        self.append(self.library_message(kind, count, text, extras));
        Ok(count)
    }

    /// Refuses a tool message of `kind` with id `call_id` that would not pair: an empty id,
    /// no turn yet, a call reusing an id of its turn, a result for a call already answered
    /// or that never came in this turn. O(1): the running turn's calls are indexed.
    fn check_pairing(&self, kind: Kind, call_id: &str) -> Result<()> {
        if call_id.is_empty() {
            return Err(Error::invalid_arg("call id must not be empty"));
        }
        if self.ledger.turns.is_empty() {
            return Err(Error::invalid_arg(format!(
                "tool call id '{}': a tool message needs a turn; push a USER message first",
                echo(call_id)
            )));
        }
        match self.ledger.calls.check(kind, call_id) {
            Some(problem) => Err(Error::invalid_arg(format!("tool call id '{}': {}", echo(call_id), problem.refusal()))),
            None => Ok(()),
        }
    }

    /// Appends `message`. A USER message completes the previous turn: if that turn left tool
    /// calls unanswered, the view is rebuilt with the same plan so that their cancelled
    /// results are in place before the next request (the boundary does not move).
    fn append(&mut self, message: Message) {
        let count = self.calibrated(message.count());
        let index = self.ledger.messages.len();
        let defective = self.ledger.push(message, count);
        // A late result answers a call the view had cancelled in an older step: that step is
        // rendered again, and the result is sent with it, or left out when it is not sent.
        let answered = self.ledger.late.call_of(index).map(|call| self.ledger.unit_of(call).unwrap_or(0));
        if let Some(unit) = answered {
            self.policy.costs.forget(unit..unit + 1);
        }
        if answered.is_some() || defective.is_some_and(|unit| unit >= self.policy.first_unit) {
            self.rebuild_view();
        }
    }

    /// Rebuilds the view with the current plan, extended to steps pushed since.
    fn rebuild_view(&mut self) {
        self.resolve_counts();
        let plan = match &self.policy.overlay {
            Some(overlay) => overlay.plan.clone().extended(self.ledger.units.len()),
            None => Plan::whole_from(self.policy.first_unit, self.ledger.units.len()),
        };
        let previous = self.policy.overlay.as_ref().filter(|_| self.policy.costs.view_reusable);
        // Rendered as the plan was made: its cleared results and its old thinking left out.
        let mut renderer = Renderer::new(self.ledger()).with_thinking(plan.old_thinking());
        if self.settings.clearing.enabled {
            let clearables = &self.policy.costs.clearables;
            renderer = renderer.with_clearing(ClearedView {
                before: plan.cleared_before(),
                clearing: &self.settings.clearing,
                clearables,
            });
        }
        let overlay = plan.build(&renderer, previous);
        self.note_view_change(self.policy.first_unit, Some(&overlay));
        self.policy.overlay = Some(overlay);
    }

    /// True when message `index` is sent whatever the boundary: a SYSTEM message, one before
    /// the first USER message, the task (the first USER message, unless `pin_task` is off), a
    /// message the host pinned ([`Window::pin`]), and the USER message of the turn
    /// `start` falls inside (when its oldest steps were dropped). A host that sends the
    /// pinned messages before `start` and then every message from `start` sends the view's
    /// messages, less its synthetic items (the marker, a summary, cancelled results).
    pub fn is_pinned_at(&self, index: usize) -> bool {
        let pinned = self.ledger.messages.get(index).is_some_and(|message| self.is_pinned(index, message.kind()));
        pinned || self.boundary_question() == Some(index)
    }

    /// True for pinned messages: SYSTEM messages, messages before the first USER message,
    /// the task (unless `pin_task` is off) and the host's pins. They are counted with the
    /// system prompt, outside the history budget.
    pub(crate) fn is_pinned(&self, index: usize, kind: Kind) -> bool {
        self.ledger.is_pinned(index, kind)
    }

    /// Marks the current turn complete and enforces the strategy. Returns how many turns
    /// this call pruned. Succeeds even when the newest turn alone exceeds the budget: it is
    /// never dropped, and [`Window::live_tokens`] shows the overrun.
    pub fn end_turn(&mut self) -> usize {
        let before = self.dead_turns();
        self.enforce();
        self.dead_turns().saturating_sub(before)
    }

    /// Runs the configured strategy now, as a manual `/compact`, even if its trigger has not
    /// fired: `monologue` strips every turn older than `keep_recent_turns`; `tiered` cuts
    /// every long tool output, the running turn's included, and goes on to L2/L3 only while
    /// still over; `sliding` and `drop_oldest` drop only what their limits require. The choice is
    /// recorded, so later turns do not undo it. Returns how many ledger messages this call
    /// took out of the view or replaced by a shorter form.
    pub fn compact(&mut self) -> usize {
        let before = self.verbatim();
        self.record_compaction();
        self.note_choice();
        self.enforce();
        before.saturating_sub(self.verbatim())
    }

    fn record_compaction(&mut self) {
        let through = match self.settings.strategy {
            StrategyName::Monologue => self.ledger.turns.len().saturating_sub(self.settings.keep_recent_turns as usize),
            StrategyName::Tiered => self.ledger.turns.len(),
            StrategyName::Sliding | StrategyName::DropOldest | StrategyName::Summary => 0,
        };
        self.policy.compacted_through = self.policy.compacted_through.max(through);
    }

    /// Shrinks the view after the provider rejected a request as too long: by the error's
    /// excess plus a margin (10% of the excess plus 1% of the limit, at least 64 tokens; 10%
    /// of the view's history when the error states no excess), first with the configured
    /// strategy as [`Window::compact`] does, then by dropping the oldest turns, then the
    /// newest turn's oldest steps (a one-task tool loop's) behind the step marker, never its
    /// newest `keep_recent_steps`. Returns how many ledger messages left the view or were
    /// shortened.
    ///
    /// Errors (the window is left as it was): `info` is not a context overflow, or even the
    /// newest turn's newest steps alone are over the target.
    pub fn recover(&mut self, info: &ErrorInfo) -> Result<usize> {
        if info.category != ErrorCategory::ContextOverflow {
            return Err(Error::invalid_arg(format!(
                "recover needs a context overflow error (category {}), not category {}",
                ErrorCategory::ContextOverflow as i32,
                info.category as i32
            )));
        }
        let current = self.view_history().tokens();
        let stated = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        let margin = (stated(info.excess).unwrap_or(0) / 10 + stated(info.limit).unwrap_or(0) / 100).max(64);
        let need = stated(info.excess).unwrap_or(current / 10).saturating_add(margin);
        // Success promises a view `need` tokens smaller: impossible when the history holds
        // less (the overflow is in the overhead or the pinned messages).
        let Some(target) = current.checked_sub(need) else {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "cannot shrink the view by {need} tokens: its whole history, the newest turn included, holds only {current}"
                ),
            ));
        };
        let saved = self.clone();
        let before = self.verbatim();
        self.record_compaction();
        self.enforce();
        while self.view_history().tokens() > target {
            // The oldest turn goes whole; in the newest turn (a long tool loop), its oldest
            // step, never one of the newest `keep_recent_steps`.
            let next_step = self.policy.first_unit.max(self.policy.forced_first_step) + 1;
            if self.policy.first_live_turn + 1 < self.ledger.turns.len() {
                self.policy.forced_first_live = self.policy.first_live_turn + 1;
            } else if next_step <= self.latest_first_step() {
                self.policy.forced_first_step = next_step;
            } else {
                let newest = self.view_history().tokens();
                *self = saved;
                return Err(Error::new(
                    ErrorKind::OutOfRange,
                    format!(
                        "cannot shrink the view by {need} tokens (to {target} history tokens): \
                         the newest turn's newest steps (keep_recent_steps {}) alone take {newest}",
                        self.settings.keep_recent_steps
                    ),
                ));
            }
            self.enforce();
        }
        self.note_choice();
        Ok(before.saturating_sub(self.verbatim()))
    }

    /// Prunes one more turn than the strategy requires. The newest turn is never dropped.
    pub fn drop_oldest_turn(&mut self) -> Result<()> {
        if self.policy.first_live_turn + 1 >= self.ledger.turns.len() {
            return Err(Error::new(ErrorKind::OutOfRange, "no turn to drop: only the newest turn is live"));
        }
        self.policy.forced_first_live = self.policy.first_live_turn + 1;
        self.note_choice();
        self.enforce();
        Ok(())
    }

    /// The latest step the boundary may move to: never past the newest `keep_recent_steps`
    /// steps, nor into a newest turn of fewer steps (a chat's newest turn stays whole).
    fn latest_first_step(&self) -> usize {
        let Some(newest) = self.ledger.units.len().checked_sub(1) else { return 0 };
        let turn_first = self.ledger.first_unit_of(self.ledger.turn_of_unit(newest));
        let keep = (self.settings.keep_recent_steps as usize).max(1);
        turn_first.max((newest + 1).saturating_sub(keep)).min(newest)
    }

    /// Records the current manual choices, stamped with the ledger's length, so that a
    /// rewind to fewer messages undoes them.
    fn note_choice(&mut self) {
        self.policy.choices.record(Choice {
            messages: self.ledger.messages.len(),
            forced_first_live: self.policy.forced_first_live,
            compacted_through: self.policy.compacted_through,
            forced_first_step: self.policy.forced_first_step,
        });
    }

    /// The manual choices in force, oldest first, each with the ledger length it was made at.
    pub fn choices(&self) -> &[Choice] {
        self.policy.choices.as_slice()
    }

    /// Rewinds the ledger to its first `message_count` messages and re-enforces the strategy,
    /// so turns that fit again are live again.
    pub fn truncate(&mut self, message_count: usize) -> Result<()> {
        if message_count > self.ledger.messages.len() {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("cannot truncate to {message_count} messages: the window holds {}", self.ledger.messages.len()),
            ));
        }
        self.remove_from(message_count);
        self.forget_after_rewind();
        let kept = self.policy.choices.rewind(message_count);
        self.policy.forced_first_live = kept.forced_first_live;
        self.policy.compacted_through = kept.compacted_through;
        self.policy.forced_first_step = kept.forced_first_step;
        self.enforce();
        Ok(())
    }

    /// Removes the messages from `message_count` on, without enforcing.
    fn remove_from(&mut self, message_count: usize) {
        self.policy.enforced_messages = self.policy.enforced_messages.min(message_count);
        if message_count < self.ledger.messages.len() {
            self.wire.cache.prepared.rewound(message_count);
        }
        // A late result removed leaves its call, in an older step, answered as cancelled again.
        let unanswered = self.ledger.late.calls_answered_from(message_count).min();
        self.ledger.truncate(message_count, self.wire.calibration);
        self.wire.last_request.forget_from(message_count);
        self.wire.last_report = None;
        let first_changed = unanswered.and_then(|call| self.ledger.unit_of(call));
        self.policy.costs.forget_from(self.ledger.units.len().saturating_sub(1).min(first_changed.unwrap_or(usize::MAX)));
        self.policy.costs.clearables.forget_from(message_count);
    }

    /// After a rewind: drops the compaction records whose archived range is no longer
    /// followed by a step (the summary falls back to the newest record that survives),
    /// the pending summary request, and the provider's prompt total, which described a
    /// longer ledger.
    fn forget_after_rewind(&mut self) {
        self.restored_counts.truncate(self.ledger.messages.len());
        let messages = self.ledger.messages.len();
        let kept = self.policy.compactions.iter().take_while(|record| record.archive_end() < messages).count();
        if kept < self.policy.compactions.len() {
            self.policy.compactions.truncate(kept);
            self.refloor();
            self.bump_generation();
        }
        self.policy.pending_summary = None;
        self.wire.prompt_total = None;
    }

    /// Ties message `index` to the caller's id (a database row id), kept across save and
    /// load and checked by a checked import.
    pub fn set_external_id(&mut self, index: usize, id: i64) -> Result<()> {
        let count = self.ledger.messages.len();
        let message = self.ledger.messages.get_mut(index).ok_or_else(|| {
            Error::new(ErrorKind::OutOfRange, format!("message {index} does not exist: the window holds {count} messages"))
        })?;
        message.set_external_id(id);
        Ok(())
    }

    /// Removes every message and what was recorded about them: turns, summaries and
    /// compaction records, the pending summary request, the choices of `drop_oldest_turn`,
    /// `compact` and `recover`, host ids, the prompt total and the last request. The model,
    /// the settings (the format included), the overhead and the calibration stay (see
    /// [`Window::reset_with`]).
    pub fn reset(&mut self) {
        self.wire.cache.prepared.rewound(0);
        self.ledger = LedgerState { pin_task: self.settings.pin_task, ..LedgerState::default() };
        self.policy.forced_first_live = 0;
        self.policy.forced_first_step = 0;
        self.policy.choices.clear();
        self.wire.last_request.forget();
        self.wire.last_report = None;
        self.policy.compacted_through = 0;
        self.policy.costs.clear();
        self.forget_after_rewind();
        self.enforce();
    }

    /// [`Window::reset`], also clearing what `flags` names: the overhead (a `/clear` that
    /// expects a zero total) and what the calibration learned.
    pub fn reset_with(&mut self, flags: ResetFlags) {
        if flags.overhead {
            self.overhead = Overhead::default();
        }
        if flags.calibration {
            self.wire.calibration = Calibration::default();
        }
        self.reset();
    }

    /// Recomputes the boundary and the view from the whole ledger and bumps the generation
    /// if the view changed otherwise than by the messages pushed since (see [`generation`]).
    fn enforce(&mut self) {
        let applied = self.apply_pending_counts();
        self.keep_counts(applied);
        self.policy.forced_first_live = self.policy.forced_first_live.min(self.ledger.turns.len().saturating_sub(1));
        self.policy.compacted_through = self.policy.compacted_through.min(self.ledger.turns.len());
        self.policy.forced_first_step = self.policy.forced_first_step.min(self.ledger.units.len().saturating_sub(1));
        let mut costs = std::mem::take(&mut self.policy.costs);
        let (first_unit, overlay) = self.plan_view(&mut costs);
        self.policy.costs = costs;
        self.policy.enforced_messages = self.ledger.messages.len();
        self.note_view_change(first_unit, overlay.as_ref());
        self.policy.first_unit = first_unit;
        self.policy.first_live_turn = self.ledger.turn_of_unit(first_unit);
        self.policy.overlay = overlay;
    }

    /// The first step sent and the computed view (see [`Window::plan_strategy`]). When the
    /// request is still over the room the context limit leaves (the newest
    /// `keep_recent_steps` alone are over it), the running turn's oldest long tool outputs in
    /// the strategy's view are cut, until it fits ([`running_turn::fit`]); only when that is
    /// not enough do steps go: the newest that fit with those outputs cut are kept
    /// ([`drop_oldest::fit_from`], the newest step at least), and cut as far as needed.
    fn plan_view(&self, cache: &mut CostCache) -> (usize, Option<Overlay>) {
        let (first, overlay) = self.plan_strategy(cache);
        let (Some(room), Some(turn)) = (self.context_room(), self.ledger.turns.len().checked_sub(1)) else {
            return (first, overlay);
        };
        let history = match &overlay {
            Some(overlay) => overlay.history().tokens(),
            None => self.ledger.history_from_unit(first).tokens(),
        };
        if history <= room {
            return (first, overlay);
        }
        cache.view_reusable = false;
        let ledger = self.ledger();
        let unit_count = self.ledger.units.len();
        let thinking = OldThinking::of(&ledger, self.format(), self.settings.clearing.keep_thinking);
        let cleared_before = overlay.as_ref().map_or(0, |overlay| overlay.plan.cleared_before());
        let clearables = std::mem::take(&mut cache.clearables);
        let view = ClearedView { before: cleared_before, clearing: &self.settings.clearing, clearables: &clearables };
        let renderer = Renderer::new(ledger).with_clearing(view).with_thinking(thinking);
        let mut cut = overlay.unwrap_or_else(|| Plan::whole_from(first, unit_count).build(&renderer, None));
        running_turn::fit(&renderer, &mut cut, turn, room);
        if cut.history().tokens() > room {
            let strict = Limits { tokens: room, items: None, turns: None, low_water: Fraction::ONE };
            // Planned with results and thinking counted whole (the costs remembered are the
            // steps' own) but the running turn's long outputs cut, sent as the strategy's plan
            // sends them (cleared results and superseded reads as their placeholders and
            // notes, without the old thinking): never more than planned.
            let running = self.ledger.first_unit_of(turn)..unit_count;
            let mut plan = drop_oldest::fit_from(&mut Costs::new(Renderer::new(ledger), cache), first, running, &strict);
            plan.clear_before(cleared_before, clearables.superseded_count());
            plan.leave_out_thinking(thinking);
            cut = plan.build(&renderer, None);
            running_turn::fit(&renderer, &mut cut, turn, room);
        }
        cache.clearables = clearables;
        (cut.plan.first_live_unit().min(unit_count.saturating_sub(1)), Some(cut))
    }

    /// The first step sent (with its turn's USER message) and, unless the view is simply the
    /// pinned messages + `[start, count)`, the computed view. The sliding window without
    /// tool pairs to repair and with its boundary on a turn is O(log steps) amortised; with
    /// pairs to repair or a boundary inside a turn, O(pinned + live messages); the other
    /// strategies O(messages).
    fn plan_strategy(&self, cache: &mut CostCache) -> (usize, Option<Overlay>) {
        let unit_count = self.ledger.units.len();
        let available = self.available_for_history();
        let settings = &self.settings;
        let ledger = self.ledger();
        let renderer = Renderer::new(ledger);
        let previous = self.policy.overlay.as_ref().filter(|_| cache.view_reusable);
        // The clearing stage, before the strategy.
        let clearing = settings.clearing.enabled;
        let mut clearables = std::mem::take(&mut cache.clearables);
        if clearing {
            clearables.read_to(
                &ledger,
                &settings.clearing,
                self.ledger.messages.len(),
                settings.strategy == StrategyName::Tiered,
            );
        }
        let cleared_before;
        let thinking = OldThinking::of(&ledger, self.format(), settings.clearing.keep_thinking);
        let mut costs = Costs::new(renderer, cache);
        if matches!(settings.strategy, StrategyName::Tiered | StrategyName::Monologue) {
            costs = costs.reserving_late_cancellations();
        }
        // Turns and steps dropped by hand and steps archived by a summary are a floor under
        // the boundary.
        let floor = self
            .ledger
            .first_unit_of(self.policy.forced_first_live)
            .max(self.policy.forced_first_step)
            .max(self.archived_steps());
        let tokens = settings.token_threshold.map_or(available, |t| u64::from(t).min(available));
        let low_water = settings.low_water;
        let keep_recent_steps = settings.keep_recent_steps as usize;
        let clear = clearing.then_some(ClearSettings {
            keep: settings.clearing.keep_tool_results as usize,
            at_least: u64::from(settings.clearing.clear_at_least),
            low_water: settings.clearing.low_water,
        });
        let cut_by_hand = self.ledger.first_unit_of(self.policy.compacted_through);
        let mut plan = match settings.strategy {
            StrategyName::Sliding | StrategyName::Summary => {
                let limits = Limits { tokens: available, items: None, turns: None, low_water };
                let newest = unit_count.saturating_sub(1);
                // The summary strategy's view holds the summary instead of the archived steps.
                let free = match settings.strategy == StrategyName::Summary {
                    true => self.archived_steps(),
                    false => 0,
                };
                let marker = costs.step_marker_reserve();
                let mut units = Summed {
                    ledger: &self.ledger,
                    calibration: self.wire.calibration,
                    rules: Rules { ledger, free, keep_recent_steps, marker },
                    clear: clear.map(|clear| clear.stage(&clearables)),
                };
                let kept = costs.first_kept(&limits, &mut units);
                let first = kept.first.max(floor.min(newest));
                cleared_before = kept.cleared_before;
                let from = ledger.unit_range(first).start;
                let thinking_in_view = thinking.is_some_and(|thinking| thinking.before > first);
                let clears_in_view =
                    unit_count > 0 && (cleared_before > from || clearables.supersedes_from(from) || thinking_in_view);
                match self.repairs_from(first) {
                    false if (unit_count == 0 || ledger.opens_turn(first)) && !clears_in_view => {
                        costs.cache().clearables = clearables;
                        return (first, None);
                    }
                    false => drop_oldest::whole_from(&costs, first),
                    // Repaired steps cost what the renderer says; it counts cleared results
                    // whole, so this may drop a step more than the walk did, never less.
                    true => drop_oldest::fit_from(&mut costs, first, 0..0, &Limits { low_water: Fraction::ONE, ..limits }),
                }
            }
            StrategyName::DropOldest => {
                let limits = Limits {
                    tokens,
                    items: settings.message_threshold.map(u64::from),
                    turns: settings.turn_threshold.map(u64::from),
                    low_water,
                };
                let stage = clear.map(|clear| clear.stage(&clearables));
                let (plan, cleared) = drop_oldest::plan(&mut costs, floor, &limits, keep_recent_steps, stage);
                cleared_before = cleared;
                plan
            }
            StrategyName::Tiered => {
                let tiered = Tiered {
                    limits: Limits { tokens, items: settings.message_threshold.map(u64::from), turns: None, low_water },
                    keep: Keep {
                        first: settings.keep_first as usize,
                        recent: settings.keep_recent as usize,
                        recent_steps: keep_recent_steps,
                    },
                    cut_by_hand,
                    clear,
                };
                // The planner reads what clearing saves from the cache while it plans.
                costs.cache().clearables = std::mem::take(&mut clearables);
                let mut replay = std::mem::take(&mut costs.cache().tiered);
                let zones = replay.run(&tiered, &mut costs);
                costs.cache().tiered = replay;
                clearables = std::mem::take(&mut costs.cache().clearables);
                cleared_before = zones.cleared_before();
                tiered::plan(&ledger, &zones, unit_count, floor)
            }
            StrategyName::Monologue => {
                let planner = Monologue {
                    limits: Limits { tokens, items: None, turns: None, low_water },
                    keep_recent_turns: settings.keep_recent_turns as usize,
                    keep_recent_steps,
                    clear,
                };
                // The planner reads what clearing saves from the cache while it plans.
                costs.cache().clearables = std::mem::take(&mut clearables);
                let mut replay = std::mem::take(&mut costs.cache().monologue);
                let zones = replay.run(&planner, &mut costs);
                costs.cache().monologue = replay;
                clearables = std::mem::take(&mut costs.cache().clearables);
                cleared_before = zones.cleared_before();
                monologue::plan(&zones, unit_count, floor, cut_by_hand)
            }
        };
        plan.clear_before(cleared_before, clearables.superseded_count());
        plan.leave_out_thinking(thinking);
        let view = ClearedView { before: cleared_before, clearing: &settings.clearing, clearables: &clearables };
        let overlay = plan.build(&renderer.with_clearing(view).with_thinking(thinking), previous);
        cache.clearables = clearables;
        cache.view_reusable = true;
        (overlay.plan.first_live_unit().min(unit_count.saturating_sub(1)), Some(overlay))
    }

    /// The ledger, read-only, as strategies and the view read it.
    pub(crate) fn ledger(&self) -> Ledger<'_> {
        Ledger::new(
            &self.ledger.messages,
            &self.ledger.turns,
            &self.ledger.units,
            &self.ledger.pinned_indices,
            &self.model,
            self.wire.calibration,
            self.settings.tool_output_max_lines as usize,
        )
        .with_late_results(&self.ledger.late)
        .with_archived(self.archived_steps())
    }

    /// True when a step from `first` on has tool pairs the view must repair. O(1).
    fn repairs_from(&self, first: usize) -> bool {
        if self.ledger.defective_units.last().is_some_and(|&u| u >= first) {
            return true;
        }
        self.ledger.step_calls.defective(false)
    }

    /// Tokens live history may use now, the budget the strategy enforces: `history_budget`
    /// (less the fixed cost with `budget_includes_overhead`), and never more than the context
    /// limit leaves once the fixed cost and `output_reserve` are taken, when the limit is
    /// known (which is all of it with `"history_budget": "auto"`). It moves with the fixed
    /// cost (a pin, a summary, the overhead declared or learned); [`Settings::history_budget`]
    /// is the configured number.
    pub fn available_for_history(&self) -> u64 {
        at_least_zero(self.history_allowance())
    }

    /// [`Window::available_for_history`] before it stops at 0: negative by as many tokens
    /// as the fixed cost alone is over the budget or the limit.
    pub(crate) fn history_allowance(&self) -> i128 {
        let fixed = i128::from(self.fixed_cost().tokens());
        let room = self.signed_context_room(fixed);
        let budget = match self.settings.budget_mode == BudgetMode::Auto && room.is_some() {
            true => i128::from(u64::MAX),
            false => i128::from(self.settings.history_budget),
        };
        let budget = if self.settings.budget_includes_overhead { budget - fixed } else { budget };
        room.map_or(budget, |room| budget.min(room))
    }

    /// History tokens the context limit leaves once the fixed cost and the output reserve are
    /// taken; `None` when the limit is unknown.
    fn context_room(&self) -> Option<u64> {
        self.signed_context_room(i128::from(self.fixed_cost().tokens())).map(at_least_zero)
    }

    /// [`Window::context_room`] before it stops at 0, given the fixed cost `fixed`:
    /// negative by as many tokens as the fixed cost and the output reserve are over the
    /// limit.
    fn signed_context_room(&self, fixed: i128) -> Option<i128> {
        let limit = self.known_context_limit()?;
        Some(i128::from(limit) - i128::from(self.output_reserve()) - fixed)
    }

    /// Tokens of the context limit kept free for the model's answer (0 when the limit is
    /// unknown).
    pub fn output_reserve(&self) -> u32 {
        self.known_context_limit().map_or(0, |limit| self.settings.output_reserve_in(limit))
    }

    /// The model's context limit: the `context_limit` setting, else the model table's; `None`
    /// when neither knows it.
    pub fn known_context_limit(&self) -> Option<u32> {
        self.settings.context_limit.or(self.model.context_limit())
    }

    /// What every request costs besides history: overhead (declared, and learned from usage),
    /// pinned messages, the summary and the cancelled results the render adds for the running
    /// turn's open calls.
    fn fixed_cost(&self) -> Tally {
        let overhead = self.overhead_tally();
        let mut cost = Tally { exact: self.ledger.pinned.exact + overhead.exact, estimated: self.ledger.pinned.estimated };
        cost.add(self.learned_overhead());
        if let Some(summary) = self.sent_summary() {
            cost.add(self.calibrated(summary.summary_tokens));
        }
        cost.add(self.running_cancellations());
        cost
    }

    /// The overhead as a tally: the caller's numbers are taken as exact.
    fn overhead_tally(&self) -> Tally {
        Tally { exact: u64::from(self.overhead.system) + u64::from(self.overhead.tools), estimated: 0 }
    }

    /// History tokens of turns `k..`.
    fn history_from(&self, k: usize) -> Tally {
        self.ledger.history_from(k)
    }

    fn rebuild_tallies(&mut self) {
        self.ledger.rebuild_tallies(self.wire.calibration);
    }

    /// `context_window_start`: index of the first live message. 0 when nothing was pruned,
    /// otherwise the first message of the first step sent: the USER message of the first
    /// live turn, or, when the oldest steps of that turn were dropped, the first message of
    /// its first step sent (its USER message is then sent among the pinned messages, see
    /// [`Window::is_pinned_at`]). O(1).
    pub fn start(&self) -> usize {
        if self.policy.first_unit == 0 { 0 } else { self.ledger.units[self.policy.first_unit] }
    }

    /// The USER message sent from before `start` because `start` falls inside its turn.
    fn boundary_question(&self) -> Option<usize> {
        let turn = self.ledger.turns.get(self.policy.first_live_turn)?;
        (self.policy.first_unit > turn.first_unit).then_some(turn.first)
    }

    /// Where each step starts, as ledger indices, ascending: the planner's units (see
    /// [`crate::ledger`]). A step starts at a USER message, or at thinking, text or a tool
    /// call after a result answered a call of the step before.
    pub fn step_starts(&self) -> &[usize] {
        &self.ledger.units
    }

    /// The step a request sends the message at ledger index `index` in: its own, or for a
    /// late result the step of the call it answers (see [`crate::pairing::LateResults`]);
    /// `None` before the first step. O(log steps).
    pub(crate) fn step_sent_in(&self, index: usize) -> Option<usize> {
        self.ledger.unit_of(self.ledger.late.call_of(index).unwrap_or(index))
    }

    /// Index of the first live turn, which is also the number of turns pruned. O(1).
    pub fn first_live_turn(&self) -> usize {
        self.policy.first_live_turn
    }

    /// The first step sent with its turn's USER message (see [`Window::step_starts`]):
    /// `start()` is where it begins. O(1).
    pub fn first_live_step(&self) -> usize {
        self.policy.first_unit
    }

    /// Turns dropped by hand with [`Window::drop_oldest_turn`]: the boundary never moves
    /// before this turn.
    pub fn forced_first_live(&self) -> usize {
        self.policy.forced_first_live
    }

    /// Steps dropped by [`Window::recover`] from the newest turn (a long tool loop): the
    /// boundary never moves before this step.
    pub fn forced_first_step(&self) -> usize {
        self.policy.forced_first_step
    }

    /// Turns compacted by hand with [`Window::compact`] (or [`Window::recover`]): later turns
    /// do not undo it.
    pub fn compacted_through(&self) -> usize {
        self.policy.compacted_through
    }

    /// Messages in the ledger when the strategy last ran; later pushes sit at the end of the
    /// view as pushed.
    pub fn enforced_messages(&self) -> usize {
        self.policy.enforced_messages
    }

    /// Increments whenever the view changes otherwise than by growing, or the summary
    /// changes, so a UI knows to redraw its divider. The messages pushed since the strategy
    /// last ran, appended as pushed, keep it (so does a rewind, which cuts the view back);
    /// anything else the strategy does to the messages already in the view changes it:
    /// `start` moves (steps or turns dropped, or back), the step marker changes, a result is
    /// cleared, a message cut, old thinking left out, cancelled results put in, a pin adds or
    /// takes away a message before `start`; and so does a summary accepted or forgotten. A
    /// new calibration changes tokens, not what is sent, and keeps it. A summary request
    /// remembers it: [`Window::set_summary`] takes the answer with it, steps late too.
    pub fn generation(&self) -> u32 {
        self.policy.generation
    }

    /// Messages in the ledger, pruned ones included.
    pub fn message_count(&self) -> usize {
        self.ledger.messages.len()
    }

    /// The message at `index`.
    pub fn message(&self, index: usize) -> Option<&Message> {
        self.ledger.messages.get(index)
    }

    /// Turns in the ledger, pruned ones included.
    pub fn turn_count(&self) -> usize {
        self.ledger.turns.len()
    }

    /// What the ledger knows about turn `turn`.
    pub fn turn_info(&self, turn: usize) -> Result<TurnInfo> {
        let start = self.ledger.turns.get(turn).ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfRange,
                format!("turn {turn} does not exist: the window holds {} turns", self.ledger.turns.len()),
            )
        })?;
        let end = self.ledger.turns.get(turn + 1).map_or(self.ledger.messages.len(), |next| next.first);
        let host_id = |index: usize| self.ledger.messages[index].host_id();
        Ok(TurnInfo {
            first_message: start.first,
            message_count: end - start.first,
            tokens: self.shown_turn_tokens(turn),
            live: match &self.policy.overlay {
                Some(overlay) => overlay.is_live(turn),
                None => turn >= self.policy.first_live_turn,
            },
            host_ids: host_id(start.first).zip(host_id(end - 1)),
        })
    }

    /// Tokens of the next request: overhead (declared, and learned from usage:
    /// [`Window::learned_overhead`]) + pinned messages + summary + live history + the
    /// cancelled results a request adds for the running turn's open calls
    /// ([`Window::running_cancelled`]). Not exact if any of them is an estimate.
    pub fn live_tokens(&self) -> Count {
        let total = match &self.policy.overlay {
            Some(overlay) => {
                let mut total = overlay.total();
                for message in &self.ledger.messages[overlay.through..] {
                    total.add(self.calibrated(message.count()));
                }
                total.exact += u64::from(self.overhead.system) + u64::from(self.overhead.tools);
                total.add(self.learned_overhead());
                if let Some(summary) = self.sent_summary() {
                    total.add(self.calibrated(summary.summary_tokens));
                }
                total.add(self.running_cancellations());
                total
            }
            None => {
                let mut total = self.fixed_cost();
                let history = self.ledger.history_from_unit(self.policy.first_unit);
                total.exact += history.exact;
                total.estimated += history.estimated;
                total
            }
        };
        total.count()
    }

    /// How many cancelled results a request adds for the running turn's unanswered calls (a
    /// call still running, or interrupted, when the request is rendered): they are not view
    /// items, but the render sends them and [`Window::live_tokens`] counts them.
    pub fn running_cancelled(&self) -> usize {
        self.ledger.running.open_cancelled()
    }

    /// Tokens of the [`Window::running_cancelled`] results.
    fn running_cancellations(&self) -> Count {
        let calls = u32::try_from(self.running_cancelled()).unwrap_or(u32::MAX);
        if calls == 0 {
            return Count::exact(0);
        }
        let one = self.model.count(CANCELLED_RESULT);
        Count { tokens: one.tokens.saturating_mul(calls), exact: one.exact }
    }
}

/// The sliding walk over the ledger's step sums: O(log steps) a step, no rendering.
struct Summed<'a> {
    ledger: &'a LedgerState,
    calibration: Calibration,
    rules: Rules<'a>,
    clear: Option<ClearStage<'a>>,
}

impl<'a> WalkUnits<'a> for Summed<'a> {
    fn cost(&mut self, unit: usize) -> Cost {
        match unit < self.rules.free {
            true => Cost::default(),
            false => Cost { tokens: self.ledger.unit_cost(unit, self.calibration), items: 0 },
        }
    }

    fn rules(&self) -> Rules<'a> {
        self.rules
    }

    fn clear(&self) -> Option<ClearStage<'_>> {
        self.clear
    }
}

/// `tokens` (a signed difference) as a count: 0 when it is negative.
fn at_least_zero(tokens: i128) -> u64 {
    u64::try_from(tokens.max(0)).unwrap_or(u64::MAX)
}
