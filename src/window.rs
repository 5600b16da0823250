//! The ledger: messages grouped into turns, per-turn token totals, and the window boundary
//! `context_window_start`.
//!
//! A turn is a USER message and everything up to the next USER message. Messages before the
//! first USER message, and SYSTEM messages anywhere, are pinned: never dropped and not counted
//! against the history budget. The boundary is recomputed from the whole ledger whenever the
//! strategy is enforced, so it is a function of the ledger's contents and settings, never of
//! the order of calls.

use crate::config::{Settings, StrategyName};
use crate::error::{Error, ErrorKind, Result};
use crate::message::{CountSource, Kind, Message};
use crate::strategy::sliding;
use crate::tokens::{Count, Model, saturate_u32};

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

    fn tokens(self) -> u64 {
        self.exact + self.estimated
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
    generation: u32,
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
            generation: 0,
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
    /// keeps caller-supplied counts as given, and re-enforces the strategy.
    pub fn set_model(&mut self, model: &str) {
        let next = Model::resolve(model);
        for message in &mut self.messages {
            if message.source() == CountSource::Caller {
                continue;
            }
            let count = match message.text() {
                Some(text) => next.count(text),
                None => Count::estimate(message.count().tokens),
            };
            message.set_count(count);
        }
        self.model = next;
        self.rebuild_tallies();
        self.enforce();
    }

    /// Appends a message whose text the library counts, and returns the count. A text above
    /// the configured `max_message_bytes` is refused and nothing is appended.
    pub fn push(&mut self, kind: Kind, text: &str) -> Result<Count> {
        self.check_message_size(text.len())?;
        let count = self.model.count(text);
        let text = self.settings.retain_text.then(|| Box::from(text));
        self.append(Message::new(kind, count, CountSource::Library, text));
        Ok(count)
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
        self.enforce();
        Ok(())
    }

    /// Removes every message; settings, model and overhead stay.
    pub fn reset(&mut self) {
        self.messages.clear();
        self.turns.clear();
        self.history = Tally::default();
        self.pinned = Tally::default();
        self.forced_first_live = 0;
        self.enforce();
    }

    /// Recomputes the boundary from the whole ledger and bumps the generation if it moved.
    fn enforce(&mut self) {
        self.forced_first_live = self.forced_first_live.min(self.turns.len().saturating_sub(1));
        let next = match self.settings.strategy {
            StrategyName::Sliding => sliding::first_live_turn(
                self.turns.len(),
                |k| self.history_from(k).tokens(),
                self.available_for_history(),
                self.forced_first_live,
            ),
        };
        if next != self.first_live_turn {
            self.first_live_turn = next;
            self.generation = self.generation.wrapping_add(1);
        }
    }

    /// Tokens live history may use under the budget.
    fn available_for_history(&self) -> u64 {
        let budget = u64::from(self.settings.history_budget);
        if self.settings.budget_includes_overhead {
            budget.saturating_sub(self.fixed_cost().tokens())
        } else {
            budget
        }
    }

    /// What every request costs besides history: overhead and pinned messages.
    fn fixed_cost(&self) -> Tally {
        let mut cost = self.pinned;
        cost.exact += u64::from(self.overhead.system) + u64::from(self.overhead.tools);
        cost
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

    /// Increments whenever the boundary moves, so a UI knows to redraw its divider.
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
            tokens: tally_count(tokens),
            live: turn >= self.first_live_turn,
        })
    }

    /// Tokens of the next request: overhead + pinned messages + live history. Not exact if
    /// any of them is an estimate.
    pub fn live_tokens(&self) -> Count {
        let mut total = self.fixed_cost();
        let history = self.history_from(self.first_live_turn);
        total.exact += history.exact;
        total.estimated += history.estimated;
        tally_count(total)
    }
}

fn tally_count(tally: Tally) -> Count {
    Count {
        tokens: saturate_u32(tally.tokens()),
        exact: tally.is_exact(),
    }
}

fn non_negative(what: &str, value: i32) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::invalid_arg(format!("{what} must not be negative (got {value})")))
}
