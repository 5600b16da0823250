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

use crate::config::{Settings, StrategyName};
use crate::error::{Error, ErrorKind, Result};
use crate::json::FormatSet;
use crate::message::{CountSource, Kind, Message};
use crate::strategy::sliding;
use crate::summary::{CompactionRecord, PendingSummary};
use crate::tokens::{Calibration, Count, Model, saturate_u32};

mod restore;
mod summarize;

pub use restore::SavedWindow;

/// Token totals split by exactness, so a sum knows whether it is exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    exact: u64,
    estimated: u64,
}

impl Tally {
    fn add(&mut self, count: Count) {
        let tokens = u64::from(count.tokens);
        if count.exact {
            self.exact += tokens;
        } else {
            self.estimated += tokens;
        }
    }

    fn sub(&mut self, count: Count) {
        let tokens = u64::from(count.tokens);
        if count.exact {
            self.exact -= tokens;
        } else {
            self.estimated -= tokens;
        }
    }

    fn minus(self, other: Tally) -> Tally {
        Tally {
            exact: self.exact - other.exact,
            estimated: self.estimated - other.estimated,
        }
    }

    fn is_exact(self) -> bool {
        self.estimated == 0
    }
}

/// Where a turn starts, and the history tokens of all turns before it (a prefix sum, so any
/// run of turns is summed in O(1)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TurnStart {
    first: usize,
    before: Tally,
}

/// What the ledger reports about one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnInfo {
    /// Index of the turn's USER message.
    pub first_message: usize,
    /// Messages in the turn, pinned SYSTEM messages inside it included.
    pub message_count: usize,
    /// History tokens of the turn (pinned SYSTEM messages inside it excluded).
    pub tokens: Count,
    /// True when the turn is sent; false when the window pruned it.
    pub live: bool,
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

/// A conversation ledger with a window boundary. Cheap to clone (a fork of the session).
#[derive(Clone, Debug)]
pub struct Window {
    model: Model,
    settings: Settings,
    overhead: Overhead,
    messages: Vec<Message>,
    turns: Vec<TurnStart>,
    /// History tokens of every turn.
    history: Tally,
    /// Tokens of pinned messages.
    pinned: Tally,
    first_live_turn: usize,
    /// Turns dropped by hand: the boundary never moves before this turn.
    forced_first_live: usize,
    /// Learned from provider usage; scales estimated counts.
    calibration: Calibration,
    generation: u32,
    /// Accepted summaries, oldest first; the newest holds the summary in place.
    compactions: Vec<CompactionRecord>,
    /// The summary request last handed out, which `set_summary` answers.
    pending_summary: Option<PendingSummary>,
    /// The last prompt total the provider reported (see [`Window::record_prompt_total`]).
    prompt_total: Option<u64>,
    /// The provider formats the messages pushed as JSON are compatible with.
    wire_formats: FormatSet,
}

impl Window {
    /// An empty window for `model`, with the default settings.
    pub fn new(model: &str) -> Window {
        Window {
            model: Model::resolve(model),
            settings: Settings::default(),
            overhead: Overhead::default(),
            messages: Vec::new(),
            turns: Vec::new(),
            history: Tally::default(),
            pinned: Tally::default(),
            first_live_turn: 0,
            forced_first_live: 0,
            calibration: Calibration::default(),
            generation: 0,
            compactions: Vec::new(),
            pending_summary: None,
            prompt_total: None,
            wire_formats: FormatSet::ANY,
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

    /// Applies the JSON configuration object `json`; nothing changes unless every key is
    /// valid. Re-enforces the strategy.
    pub fn configure(&mut self, json: &str) -> Result<()> {
        self.settings = self.settings.with_json(json)?;
        self.enforce();
        Ok(())
    }

    /// Sets the history budget and re-enforces the strategy over the whole ledger, so turns
    /// that fit a larger budget are live again.
    pub fn set_budget(&mut self, history_tokens: i32) -> Result<()> {
        self.settings.history_budget = non_negative("history budget", history_tokens)?;
        self.enforce();
        Ok(())
    }

    /// Sets the tokens of the system prompt and tool definitions sent with every request.
    pub fn set_overhead(&mut self, system_tokens: i32, tool_tokens: i32) -> Result<()> {
        let overhead = Overhead {
            system: non_negative("system tokens", system_tokens)?,
            tools: non_negative("tool tokens", tool_tokens)?,
        };
        self.overhead = overhead;
        self.enforce();
        Ok(())
    }

    /// The overhead set by [`Window::set_overhead`].
    pub fn overhead(&self) -> Overhead {
        self.overhead
    }

    /// Switches to `model`: recounts every message the library counted and still has the
    /// text of, flags the counts it cannot recount as estimates (a counts-only window),
    /// keeps caller-supplied counts as given, recounts the summaries, forgets the calibration
    /// (it belonged to the old model's tokenizer), and re-enforces the strategy.
    pub fn set_model(&mut self, model: &str) {
        let next = Model::resolve(model);
        for message in &mut self.messages {
            if message.source() == CountSource::Caller {
                continue;
            }
            let count = match message.text() {
                Some(text) => message.media().map_or(next.count(text), |media| next.count(text).plus(media)),
                None => Count::estimate(message.count().tokens),
            };
            message.set_count(count);
        }
        for record in &mut self.compactions {
            record.summary_tokens = next.count(&record.summary);
        }
        self.model = next;
        self.calibration = Calibration::default();
        self.rebuild_tallies();
        self.enforce();
    }

    /// Appends a message whose text the library counts, and returns the count as the
    /// window uses it (an estimate scaled by the calibration). A text above the configured
    /// `max_message_bytes` is refused and nothing is appended.
    pub fn push(&mut self, kind: Kind, text: &str) -> Result<Count> {
        self.check_message_size(text.len())?;
        let count = self.model.count(text);
        let text = self.settings.retain_text.then(|| Box::from(text));
        self.append(Message::new(kind, count, CountSource::Library, text));
        Ok(self.calibrated(count))
    }

    /// Refuses a message of `len` bytes above the configured `max_message_bytes`. The C API
    /// calls it before reading the text, so an oversized buffer is never touched.
    pub fn check_message_size(&self, len: usize) -> Result<()> {
        self.settings.max_message_bytes.check("message text", len)
    }

    /// Learns from a provider's usage report: the request that carried the overhead, the
    /// pinned messages before `end`, the summary in place and the messages `first..end` cost
    /// `prompt_tokens` (which the `summary` strategy's trigger also watches). The
    /// part of the report above the exact counts calibrates the estimated ones; later
    /// totals scale every estimate by the learned ratio (raw counts stay cached) and the
    /// strategy is re-enforced. A range of exact counts only teaches nothing.
    pub fn observe_usage(&mut self, first: usize, end: usize, prompt_tokens: i64) -> Result<()> {
        if first > end || end > self.messages.len() {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "usage range {first}..{end} is not within the window's {} messages",
                    self.messages.len()
                ),
            ));
        }
        let reported = u64::try_from(prompt_tokens)
            .map_err(|_| Error::invalid_arg(format!("prompt tokens must not be negative (got {prompt_tokens})")))?;
        self.record_prompt_total(reported);
        let mut request = self.overhead_tally();
        if let Some(summary) = self.summary() {
            request.add(summary.summary_tokens);
        }
        for (index, message) in self.messages[..end].iter().enumerate() {
            if index >= first || self.is_pinned(index, message.kind()) {
                request.add(message.count());
            }
        }
        if request.estimated == 0 {
            return Ok(());
        }
        let real = reported.checked_sub(request.exact).filter(|&real| real > 0).ok_or_else(|| {
            Error::new(
                ErrorKind::Mismatch,
                format!(
                    "reported prompt total {reported} does not exceed the exact part of the request ({} tokens)",
                    request.exact
                ),
            )
        })?;
        self.calibration.observe(real, request.estimated);
        self.enforce();
        Ok(())
    }

    /// Real tokens per estimated token, as learned by [`Window::observe_usage`] (1 before).
    pub fn calibration_ratio(&self) -> f64 {
        self.calibration.ratio()
    }

    /// What the window learned from provider usage.
    pub fn calibration(&self) -> Calibration {
        self.calibration
    }

    /// `count` as the window uses it: estimates scaled by the calibration.
    fn calibrated(&self, count: Count) -> Count {
        if count.exact {
            count
        } else {
            Count::estimate(saturate_u32(self.calibration.apply(u64::from(count.tokens))))
        }
    }

    /// Appends a message with a count the caller already has (a provider's count_tokens
    /// answer, say); the count is taken as given.
    pub fn push_counted(&mut self, kind: Kind, count: Count) {
        self.append(Message::new(kind, count, CountSource::Caller, None));
    }

    /// Appends messages parsed from provider JSON (see [`crate::json`]), whose formats are
    /// `formats`: the formats the window's JSON messages have in common from now on.
    pub fn push_parsed(&mut self, messages: Vec<Message>, formats: FormatSet) {
        self.wire_formats = formats;
        for message in messages {
            self.append(message);
        }
    }

    /// The provider formats every message pushed as JSON fits; [`FormatSet::ANY`] until
    /// one is pushed, and again once the window is empty.
    pub fn wire_formats(&self) -> FormatSet {
        self.wire_formats
    }

    fn append(&mut self, message: Message) {
        if message.kind() == Kind::User {
            self.turns.push(TurnStart {
                first: self.messages.len(),
                before: self.history,
            });
        }
        if self.is_pinned(self.messages.len(), message.kind()) {
            self.pinned.add(message.count());
        } else {
            self.history.add(message.count());
        }
        self.messages.push(message);
    }

    /// True when message `index` is pinned: a SYSTEM message, or one before the first USER
    /// message. Pinned messages are always sent.
    pub fn is_pinned_at(&self, index: usize) -> bool {
        self.messages.get(index).is_some_and(|message| self.is_pinned(index, message.kind()))
    }

    /// True for SYSTEM messages and messages before the first USER message.
    fn is_pinned(&self, index: usize, kind: Kind) -> bool {
        kind == Kind::System || self.turns.first().is_none_or(|turn| index < turn.first)
    }

    /// Marks the current turn complete and enforces the strategy. Returns how many turns
    /// this call pruned. Succeeds even when the newest turn alone exceeds the budget: it is
    /// never dropped, and [`Window::live_tokens`] shows the overrun.
    pub fn end_turn(&mut self) -> usize {
        let before = self.first_live_turn;
        self.enforce();
        self.first_live_turn.saturating_sub(before)
    }

    /// Prunes one more turn than the strategy requires. The newest turn is never dropped.
    pub fn drop_oldest_turn(&mut self) -> Result<()> {
        if self.first_live_turn + 1 >= self.turns.len() {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                "no turn to drop: only the newest turn is live",
            ));
        }
        self.forced_first_live = self.first_live_turn + 1;
        self.enforce();
        Ok(())
    }

    /// Rewinds the ledger to its first `message_count` messages and re-enforces the strategy,
    /// so turns that fit again are live again.
    pub fn truncate(&mut self, message_count: usize) -> Result<()> {
        if message_count > self.messages.len() {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "cannot truncate to {message_count} messages: the window holds {}",
                    self.messages.len()
                ),
            ));
        }
        while self.messages.len() > message_count {
            let index = self.messages.len() - 1;
            let kind = self.messages[index].kind();
            let count = self.messages[index].count();
            if self.is_pinned(index, kind) {
                self.pinned.sub(count);
            } else {
                self.history.sub(count);
            }
            if self.turns.last().is_some_and(|turn| turn.first == index) {
                self.turns.pop();
            }
            self.messages.pop();
        }
        self.forget_after_rewind();
        if self.messages.is_empty() {
            self.wire_formats = FormatSet::ANY;
        }
        self.enforce();
        Ok(())
    }

    /// After a rewind: drops the compaction records whose archived range is no longer
    /// followed by a live turn (the summary falls back to the newest record that survives),
    /// the pending summary request, and the provider's prompt total, which described a
    /// longer ledger.
    fn forget_after_rewind(&mut self) {
        let turns = self.turns.len();
        let kept = self.compactions.iter().take_while(|record| record.archived_turns < turns).count();
        if kept < self.compactions.len() {
            self.compactions.truncate(kept);
            self.bump_generation();
        }
        self.pending_summary = None;
        self.prompt_total = None;
    }

    /// Ties message `index` to the caller's id (a database row id), kept across save and
    /// load and checked by a checked import.
    pub fn set_external_id(&mut self, index: usize, id: i64) -> Result<()> {
        let count = self.messages.len();
        let message = self.messages.get_mut(index).ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfRange,
                format!("message {index} does not exist: the window holds {count} messages"),
            )
        })?;
        message.set_external_id(id);
        Ok(())
    }

    /// Removes every message; settings, model and overhead stay.
    pub fn reset(&mut self) {
        self.messages.clear();
        self.turns.clear();
        self.history = Tally::default();
        self.pinned = Tally::default();
        self.forced_first_live = 0;
        self.forget_after_rewind();
        self.wire_formats = FormatSet::ANY;
        self.enforce();
    }

    /// Recomputes the boundary from the whole ledger and bumps the generation if it moved.
    /// Turns dropped by hand and turns archived by a summary are a floor under it. The
    /// `summary` strategy keeps the history budget as a backstop: it archives only when the
    /// agent's LLM answers a summary request.
    fn enforce(&mut self) {
        self.forced_first_live = self.forced_first_live.min(self.turns.len().saturating_sub(1));
        let floor = self.forced_first_live.max(self.archived_turns());
        let next = match self.settings.strategy {
            StrategyName::Sliding | StrategyName::Summary => sliding::first_live_turn(
                self.turns.len(),
                |k| self.tokens_of(self.history_from(k)),
                self.available_for_history(),
                floor,
            ),
        };
        if next != self.first_live_turn {
            self.first_live_turn = next;
            self.bump_generation();
        }
    }

    /// Marks a change of the boundary or of the summary.
    fn bump_generation(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// Tokens live history may use under the budget.
    fn available_for_history(&self) -> u64 {
        let budget = u64::from(self.settings.history_budget);
        if self.settings.budget_includes_overhead {
            budget.saturating_sub(self.tokens_of(self.fixed_cost()))
        } else {
            budget
        }
    }

    /// What every request costs besides history: overhead, pinned messages and the summary.
    fn fixed_cost(&self) -> Tally {
        let overhead = self.overhead_tally();
        let mut cost = Tally {
            exact: self.pinned.exact + overhead.exact,
            estimated: self.pinned.estimated,
        };
        if let Some(summary) = self.summary() {
            cost.add(summary.summary_tokens);
        }
        cost
    }

    /// The overhead as a tally: the caller's numbers are taken as exact.
    fn overhead_tally(&self) -> Tally {
        Tally {
            exact: u64::from(self.overhead.system) + u64::from(self.overhead.tools),
            estimated: 0,
        }
    }

    /// History tokens of turns `k..`.
    fn history_from(&self, k: usize) -> Tally {
        match self.turns.get(k) {
            Some(turn) => self.history.minus(turn.before),
            None => Tally::default(),
        }
    }

    fn rebuild_tallies(&mut self) {
        self.history = Tally::default();
        self.pinned = Tally::default();
        let mut next_turn = 0;
        for index in 0..self.messages.len() {
            if self.turns.get(next_turn).is_some_and(|turn| turn.first == index) {
                self.turns[next_turn].before = self.history;
                next_turn += 1;
            }
            let (kind, count) = (self.messages[index].kind(), self.messages[index].count());
            if self.is_pinned(index, kind) {
                self.pinned.add(count);
            } else {
                self.history.add(count);
            }
        }
    }

    /// `context_window_start`: index of the first live message. 0 when nothing was pruned,
    /// otherwise the USER message of the first live turn. O(1).
    pub fn start(&self) -> usize {
        if self.first_live_turn == 0 {
            0
        } else {
            self.turns[self.first_live_turn].first
        }
    }

    /// Index of the first live turn, which is also the number of turns pruned. O(1).
    pub fn first_live_turn(&self) -> usize {
        self.first_live_turn
    }

    /// Turns dropped by hand with [`Window::drop_oldest_turn`]: the boundary never moves
    /// before this turn.
    pub fn forced_first_live(&self) -> usize {
        self.forced_first_live
    }

    /// Increments whenever the boundary moves or the summary changes, so a UI knows to redraw
    /// its divider and a summarizer knows its request is stale.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Messages in the ledger, pruned ones included.
    pub fn message_count(&self) -> usize {
        self.messages.len()
    }

    /// The message at `index`.
    pub fn message(&self, index: usize) -> Option<&Message> {
        self.messages.get(index)
    }

    /// Turns in the ledger, pruned ones included.
    pub fn turn_count(&self) -> usize {
        self.turns.len()
    }

    /// What the ledger knows about turn `turn`.
    pub fn turn_info(&self, turn: usize) -> Result<TurnInfo> {
        let start = self.turns.get(turn).ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfRange,
                format!("turn {turn} does not exist: the window holds {} turns", self.turns.len()),
            )
        })?;
        let (end, after) = match self.turns.get(turn + 1) {
            Some(next) => (next.first, next.before),
            None => (self.messages.len(), self.history),
        };
        let tokens = after.minus(start.before);
        Ok(TurnInfo {
            first_message: start.first,
            message_count: end - start.first,
            tokens: self.count_of(tokens),
            live: turn >= self.first_live_turn,
        })
    }

    /// Tokens of the next request: overhead + pinned messages + summary + live history. Not
    /// exact if any of them is an estimate.
    pub fn live_tokens(&self) -> Count {
        let mut total = self.fixed_cost();
        let history = self.history_from(self.first_live_turn);
        total.exact += history.exact;
        total.estimated += history.estimated;
        self.count_of(total)
    }

    /// Tokens of `tally`, estimates scaled by the calibration.
    fn tokens_of(&self, tally: Tally) -> u64 {
        tally.exact + self.calibration.apply(tally.estimated)
    }

    fn count_of(&self, tally: Tally) -> Count {
        Count {
            tokens: saturate_u32(self.tokens_of(tally)),
            exact: tally.is_exact(),
        }
    }
}

fn non_negative(what: &str, value: i32) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::invalid_arg(format!("{what} must not be negative (got {value})")))
}
