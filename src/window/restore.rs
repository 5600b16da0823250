//! Rebuilding a window from saved parts (see `crate::persist`): the ledger is replayed and
//! the saved boundary and records are checked against it, so a restored window is exactly
//! the one that was saved, and as consistent as one built by pushing.

use super::Window;
use crate::config::Settings;
use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;
use crate::summary::CompactionRecord;
use crate::json::FormatSet;
use crate::tokens::Calibration;
use crate::window::Overhead;

/// Everything that determines a window's state, as read from a saved file.
#[derive(Clone, Debug)]
pub struct SavedWindow {
    /// The model name as the caller gave it.
    pub model: String,
    /// The settings.
    pub settings: Settings,
    /// The overhead.
    pub overhead: Overhead,
    /// The ledger, with counts as they were (not recounted).
    pub messages: Vec<Message>,
    /// The first live turn. Saved rather than recomputed: pushes do not move the boundary
    /// until `end_turn`, so a window saved mid-turn must not be re-enforced.
    pub first_live_turn: usize,
    /// Turns dropped by hand.
    pub forced_first_live: usize,
    /// Compaction records, oldest first.
    pub compactions: Vec<CompactionRecord>,
    /// The provider's last prompt total.
    pub prompt_total: Option<u64>,
    /// What the window learned from provider usage.
    pub calibration: Calibration,
    /// The provider formats the JSON-pushed messages fit.
    pub wire_formats: FormatSet,
    /// The generation.
    pub generation: u32,
}

impl Window {
    /// The window `saved` describes. Fails with PARSE, naming the field, when the boundary,
    /// the forced floor or the compaction records do not fit the ledger.
    pub fn restore(saved: SavedWindow) -> Result<Window> {
        let mut window = Window::new(&saved.model);
        window.settings = saved.settings;
        window.overhead = saved.overhead;
        for message in saved.messages {
            window.append(message);
        }
        if saved.forced_first_live > window.turns.len().saturating_sub(1) {
            return Err(inconsistent(format!(
                "forced_first_live {} is past the newest of {} turns",
                saved.forced_first_live,
                window.turns.len()
            )));
        }
        window.check_records(&saved.compactions)?;
        let floor = saved.forced_first_live.max(saved.compactions.last().map_or(0, |r| r.archived_turns));
        if saved.first_live_turn < floor || saved.first_live_turn > window.turns.len().saturating_sub(1) {
            return Err(inconsistent(format!(
                "first_live_turn {} is not between the floor {floor} and the newest of {} turns",
                saved.first_live_turn,
                window.turns.len()
            )));
        }
        window.first_live_turn = saved.first_live_turn;
        window.forced_first_live = saved.forced_first_live;
        window.compactions = saved.compactions;
        window.prompt_total = saved.prompt_total;
        window.calibration = saved.calibration;
        window.wire_formats = saved.wire_formats;
        window.generation = saved.generation;
        Ok(window)
    }

    /// Checks that each record archives the turns after the previous record's, as
    /// `set_summary` would have recorded them, and leaves a live turn after it.
    fn check_records(&self, records: &[CompactionRecord]) -> Result<()> {
        let mut archived = 0;
        for (i, record) in records.iter().enumerate() {
            let fits = record.number == i + 1
                && record.archived_turns > archived
                && record.archived_turns < self.turns.len()
                && record.first_archived == self.turns[archived].first
                && record.last_archived + 1 == self.turns[record.archived_turns].first;
            if !fits {
                return Err(inconsistent(format!(
                    "compactions[{i}] (number {}, messages {}..={}, {} turns archived) does not match the saved messages",
                    record.number, record.first_archived, record.last_archived, record.archived_turns
                )));
            }
            archived = record.archived_turns;
        }
        Ok(())
    }
}

fn inconsistent(message: String) -> Error {
    Error::new(ErrorKind::Parse, message)
}
