//! The policy state a [`Window`](super::Window) keeps: what the strategy decided (the
//! boundary, the computed view and the costs it cached), the choices made by hand, and the
//! summaries. All of it is derived from the ledger and the settings, except the choices and
//! the accepted summaries, which are saved.

use super::choices::ChoiceLog;
use crate::strategy::plan::CostCache;
use crate::summary::{CompactionRecord, PendingSummary};
use crate::view::Overlay;

/// The strategy's and the summaries' memory.
#[derive(Clone, Debug, Default)]
pub(super) struct PolicyState {
    /// The first turn whose USER message is sent.
    pub first_live_turn: usize,
    /// The first step sent with its turn's USER message: `context_window_start` is its
    /// first message (0 for the first step).
    pub first_unit: usize,
    /// Turns dropped by hand: the boundary never moves before this turn.
    pub forced_first_live: usize,
    /// Steps dropped by `recover` inside a turn: the boundary never moves before this step.
    pub forced_first_step: usize,
    /// The choices `drop_oldest_turn`, `compact` and `recover` recorded, with the ledger
    /// length each was made at, so a rewind undoes the ones made after it.
    pub choices: ChoiceLog,
    /// Turns before this one were compacted by hand ([`Window::compact`](super::Window::compact)).
    pub compacted_through: usize,
    /// Accepted summaries, oldest first; the newest holds the summary in place.
    pub compactions: Vec<CompactionRecord>,
    /// The summary request last handed out, which `set_summary` answers.
    pub pending_summary: Option<PendingSummary>,
    /// The computed view, when it is not simply the pinned messages + `[start, count)`.
    pub overlay: Option<Overlay>,
    /// What completed steps cost under each treatment.
    pub costs: CostCache,
    /// Messages in the ledger when the strategy last ran: later pushes sit at the end of the
    /// view as pushed until the next `end_turn` (saved, so a restore replays exactly).
    pub enforced_messages: usize,
    /// Marks every change of the view other than growth, and of the summary (see
    /// [`Window::generation`](super::Window::generation)).
    pub generation: u32,
}
