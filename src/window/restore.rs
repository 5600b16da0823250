//! Rebuilding a window from saved parts (see `crate::persist`): the ledger is replayed and
//! the saved boundary and records are checked against it, so a restored window is exactly
//! the one that was saved, and as consistent as one built by pushing.

use super::Window;
use super::choices::{Choice, ChoiceLog};
use super::host::HostIds;
use crate::cache::CacheState;
use crate::config::Settings;
use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;
use crate::summary::{CompactionRecord, PendingSummary};
use crate::tokens::Calibration;
use crate::tokens::Count;
use crate::window::Overhead;
use crate::wire::FormatSet;

/// Everything that determines a window's state, as read from a saved file.
#[derive(Clone, Debug)]
pub struct SavedWindow {
    /// The model name as the caller gave it.
    pub model: String,
    /// The fingerprint of the loaded tokenizer the counts were made with, if any.
    pub tokenizer: Option<String>,
    /// The settings.
    pub settings: Settings,
    /// The overhead.
    pub overhead: Overhead,
    /// The ledger, with counts as they were (not recounted).
    pub messages: Vec<Message>,
    /// Messages in the ledger when the strategy last ran; the rest were pushed since.
    pub enforced_messages: usize,
    /// The first live turn, checked against the replay (unless `before_steps`).
    pub first_live_turn: usize,
    /// True for a document saved before steps were the planner's unit (its settings lack
    /// `keep_recent_steps`): its boundary was computed over whole turns, so the replay's is
    /// taken instead of being checked against it.
    pub before_steps: bool,
    /// The messages the host pinned, ascending.
    pub pins: Vec<usize>,
    /// Turns dropped by hand.
    pub forced_first_live: usize,
    /// Turns compacted by hand (`compact`).
    pub compacted_through: usize,
    /// Steps dropped by `recover` inside a turn (0 in a document saved before).
    pub forced_first_step: usize,
    /// The manual choices with the ledger length each was made at; the newest is
    /// `forced_first_live` and `compacted_through`.
    pub choices: Vec<Choice>,
    /// Counts `set_count` recorded for the next enforcement: (index, count).
    pub pending_counts: Vec<(usize, Count)>,
    /// Compaction records, oldest first.
    pub compactions: Vec<CompactionRecord>,
    /// The provider's last prompt total.
    pub prompt_total: Option<u64>,
    /// The summary request awaiting its answer.
    pub pending_summary: Option<SavedPending>,
    /// What the window learned from provider usage.
    pub calibration: Calibration,
    /// The provider formats the JSON-pushed messages fit.
    pub wire_formats: FormatSet,
    /// The generation.
    pub generation: u32,
    /// The request last prepared and the provider's cache reports.
    pub cache: CacheState,
}

/// A saved summary request awaiting its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SavedPending {
    /// The steps it covers.
    Steps(PendingSummary),
    /// The turns it covers, in a document saved before a request could end inside a turn.
    Turns {
        /// The window's generation when the request was built.
        generation: u32,
        /// The first turn it covers.
        first_turn: usize,
        /// One past the last turn it covers.
        end_turn: usize,
    },
}

impl Window {
    /// The window `saved` describes, rebuilt the way it was built: the messages the strategy
    /// last saw are pushed and the strategy runs, then the later messages are pushed. The
    /// recorded choices (forced drops, manual compaction, summaries, calibration) are in
    /// place first, so the view is exactly the saved window's. Fails with PARSE, naming the
    /// field, when the saved boundary, floors or records do not fit the ledger.
    pub fn restore(saved: SavedWindow) -> Result<Window> {
        if saved.enforced_messages > saved.messages.len() {
            return Err(inconsistent(format!(
                "enforced_messages {} is past the {} saved messages",
                saved.enforced_messages,
                saved.messages.len()
            )));
        }
        let choices = ChoiceLog::from_saved(saved.choices).ok_or_else(|| {
            inconsistent("choices must be made at increasing ledger lengths, with floors that never go down".into())
        })?;
        let current = choices.current();
        let floors = |c: &Choice| (c.forced_first_live, c.compacted_through, c.forced_first_step);
        if floors(&current) != (saved.forced_first_live, saved.compacted_through, saved.forced_first_step)
            || current.messages > saved.messages.len()
        {
            return Err(inconsistent(format!(
                "the newest of choices ({} messages, {}, {}, step {}) is not forced_first_live {}, compacted_through {} \
                 and forced_first_step {} within {} messages",
                current.messages,
                current.forced_first_live,
                current.compacted_through,
                current.forced_first_step,
                saved.forced_first_live,
                saved.compacted_through,
                saved.forced_first_step,
                saved.messages.len()
            )));
        }
        if let Some((index, id)) = HostIds::first_reuse(&saved.messages) {
            return Err(inconsistent(format!("messages[{index}].host_id {id} is the id of an earlier host message")));
        }
        if let Some(&(index, _)) = saved.pending_counts.iter().find(|&&(index, _)| index >= saved.messages.len()) {
            return Err(inconsistent(format!(
                "pending_counts names message {index}, past the {} saved messages",
                saved.messages.len()
            )));
        }
        if let Some(window) = saved.pins.windows(2).find(|pair| pair[0] >= pair[1]) {
            return Err(inconsistent(format!("pins must be ascending message indices, not {} then {}", window[0], window[1])));
        }
        if let Some(&pin) = saved.pins.iter().find(|&&pin| pin >= saved.messages.len()) {
            return Err(inconsistent(format!("pins names message {pin}, past the {} saved messages", saved.messages.len())));
        }
        let mut window = Window::new(&saved.model);
        window.policy.choices = choices;
        window.ledger.pin_task = saved.settings.pin_task;
        window.ledger.host_pins = saved.pins;
        window.settings = saved.settings;
        window.overhead = saved.overhead;
        window.wire.calibration = saved.calibration;
        window.policy.forced_first_live = saved.forced_first_live;
        window.policy.compacted_through = saved.compacted_through;
        window.policy.forced_first_step = saved.forced_first_step;
        window.policy.compactions = saved.compactions;
        window.ledger.pin_floor = super::pins::provider_floor(&window.policy.compactions);
        let mut messages = saved.messages.into_iter();
        for message in messages.by_ref().take(saved.enforced_messages) {
            window.append(message);
        }
        window.check_choices(saved.enforced_messages)?;
        window.check_records(&window.policy.compactions)?;
        window.enforce();
        for message in messages {
            window.append(message);
        }
        if window.policy.first_live_turn != saved.first_live_turn && !saved.before_steps {
            return Err(inconsistent(format!(
                "first_live_turn {} does not match the ledger, whose strategy gives {}",
                saved.first_live_turn, window.policy.first_live_turn
            )));
        }
        let pending = saved.pending_summary.map(|pending| window.check_pending(pending)).transpose()?;
        for (index, count) in saved.pending_counts {
            window.set_count(index, count)?;
        }
        window.policy.pending_summary = pending;
        window.wire.prompt_total = saved.prompt_total;
        window.wire.wire_formats = saved.wire_formats;
        window.policy.generation = saved.generation;
        window.wire.cache = saved.cache;
        window.restored_with = Some(saved.tokenizer.clone());
        if saved.tokenizer.is_some() {
            window.restored_counts = window.ledger.messages.iter().map(Message::count).collect();
            // The counts were made with a loaded tokenizer this window does not have: count
            // again with what the model name gives (estimates unless it is an OpenAI model),
            // until the host sets the tokenizer again (`set_tokenizer` recounts exactly).
            window.set_model(&saved.model);
        }
        Ok(window)
    }

    /// Whether the window was restored from a saved document whose counts were made with
    /// another loaded tokenizer than the one it counts with now (having none is one case):
    /// its messages were then recounted, with its own tokenizer or, without one, with what
    /// the model name gives. False for a window never restored, and once the tokenizer the
    /// document names is set again.
    pub fn tokenizer_changed(&self) -> bool {
        self.restored_with
            .as_ref()
            .is_some_and(|saved| saved.as_deref() != self.model.tokenizer().map(|tokenizer| tokenizer.fingerprint()))
    }

    /// Checks that each recorded choice fits the ledger it was made on, as `drop_oldest_turn`
    /// and `compact` make them: `forced_first_live` below the turn count,
    /// `compacted_through` at most the turn count and `forced_first_step` below the step
    /// count, counting the turns and steps of the messages the strategy had seen. A choice beyond them would be cut down by the next enforcement and
    /// no longer match the log, and the window could not be saved again.
    fn check_choices(&self, enforced_messages: usize) -> Result<()> {
        for (i, choice) in self.policy.choices.as_slice().iter().enumerate() {
            let messages = choice.messages.min(enforced_messages);
            let turns = self.ledger.turns.partition_point(|turn| turn.first < messages);
            let steps = self.ledger.units.partition_point(|&first| first < messages);
            let (field, value, most) = if choice.forced_first_live > turns.saturating_sub(1) {
                ("forced_first_live", choice.forced_first_live, turns.saturating_sub(1))
            } else if choice.compacted_through > turns {
                ("compacted_through", choice.compacted_through, turns)
            } else if choice.forced_first_step > steps.saturating_sub(1) {
                ("forced_first_step", choice.forced_first_step, steps.saturating_sub(1))
            } else {
                continue;
            };
            return Err(inconsistent(format!(
                "{field} {value} (choices[{i}], made at {} messages) is past the {turns} turns and {steps} steps of \
                 the first {messages} messages: at most {most}",
                choice.messages
            )));
        }
        Ok(())
    }

    /// The saved summary request as steps, checked against the ledger: it covers steps
    /// before the newest, none of them archived.
    fn check_pending(&self, pending: SavedPending) -> Result<PendingSummary> {
        let (first_step, end_step, generation) = match pending {
            SavedPending::Steps(pending) => (pending.first_step, pending.end_step, pending.generation),
            SavedPending::Turns { generation, first_turn, end_turn } if end_turn < self.ledger.turns.len() => {
                (self.ledger.first_unit_of(first_turn), self.ledger.first_unit_of(end_turn), generation)
            }
            SavedPending::Turns { first_turn, end_turn, .. } => {
                return Err(inconsistent(format!(
                    "pending_summary covers turns {first_turn}..{end_turn}, not within the {} turns before the newest",
                    self.ledger.turns.len()
                )));
            }
        };
        if first_step >= end_step || end_step >= self.ledger.units.len() || first_step < self.archived_steps() {
            return Err(inconsistent(format!(
                "pending_summary covers steps {first_step}..{end_step}, not within the {} steps after the {} archived",
                self.ledger.units.len(),
                self.archived_steps()
            )));
        }
        Ok(PendingSummary { generation, first_step, end_step })
    }

    /// Checks that each record archives the steps after the previous record's, as
    /// `set_summary` would have recorded them: it ends where a step starts (a turn's USER
    /// message, or a later step of turn `archived_turns`: a record saved before summaries
    /// could end inside a turn always ends on one), and leaves a step after it.
    fn check_records(&self, records: &[CompactionRecord]) -> Result<()> {
        let mut archived = self.ledger.turns.first().map(|turn| turn.first);
        for (i, record) in records.iter().enumerate() {
            let end = record.archive_end();
            let fits = record.number == i + 1
                && archived.is_some_and(|archived| record.first_archived == archived && end > archived)
                && end < self.ledger.messages.len()
                && self.ledger.units.binary_search(&end).is_ok()
                && self.ledger.turn_of(end) == Some(record.archived_turns);
            if !fits {
                return Err(inconsistent(format!(
                    "compactions[{i}] (number {}, messages {}..={}, {} turns archived) does not match the saved messages",
                    record.number, record.first_archived, record.last_archived, record.archived_turns
                )));
            }
            archived = Some(end);
        }
        Ok(())
    }
}

fn inconsistent(message: String) -> Error {
    Error::new(ErrorKind::Parse, message)
}
