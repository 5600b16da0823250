//! The summary slot: the request the agent's LLM answers, the answer that replaces the
//! archived turns, and the numbered compaction records kept for the UI.
//!
//! The window holds the state (see `Window::summary_request` and `Window::set_summary`);
//! this module holds the pieces that do not need the ledger.

pub mod conversation;
pub mod prompt;
pub mod record;

pub use record::CompactionRecord;

/// The summary request last handed out, which `set_summary` answers: the turns it covers
/// and the generation it was built at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingSummary {
    /// The window's generation when the request was built.
    pub generation: u32,
    /// The first turn the request covers (the turns before it are already archived).
    pub first_turn: usize,
    /// One past the last turn it covers.
    pub end_turn: usize,
}
