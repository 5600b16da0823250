//! The summary slot: the request the agent's LLM answers, the answer that replaces the
//! archived turns, and the numbered compaction records kept for the UI.
//!
//! The window holds the state (see `Window::summary_request` and `Window::set_summary`);
//! this module holds the pieces that do not need the ledger.

pub mod conversation;
pub mod prompt;
pub mod record;

pub use record::CompactionRecord;

/// The summary request last handed out, which `set_summary` answers: the steps it covers
/// and the generation it was built at. A chat turn is one step; a request may end at a step
/// boundary inside a turn (the oldest steps of a long tool loop), never inside a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingSummary {
    /// The window's generation when the request was built.
    pub generation: u32,
    /// The first step the request covers (the steps before it are already archived).
    pub first_step: usize,
    /// One past the last step it covers.
    pub end_step: usize,
}
