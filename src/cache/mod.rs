//! Cache-aware requests: which leading items of a request are byte-identical to the previous
//! request's (what a provider can serve from its prompt cache), and what providers reported
//! about their cache.

mod prefix;
mod usage;

pub use prefix::{Fingerprint, PreparedView, SentItem, fingerprints};
pub use usage::{Usage, parse_usage};

/// The sums of what providers reported through `observe_usage_json`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Usage reports taken.
    pub requests: u64,
    /// Prompt tokens billed, cached ones included.
    pub prompt_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cached_tokens: u64,
}

impl CacheStats {
    /// Adds one request's usage.
    pub fn add(&mut self, usage: Usage) {
        self.requests = self.requests.saturating_add(1);
        self.prompt_tokens = self.prompt_tokens.saturating_add(usage.prompt_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(usage.cached_tokens);
    }
}

/// What `prepare` reports about the request it prepared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// Ledger messages this call took out of the view or shortened.
    pub removed: usize,
    /// Items in the view.
    pub view_len: usize,
    /// Tokens of the request's input: overhead, pinned messages, summary and history.
    pub tokens: u64,
    /// Leading view items byte-identical to those of the previous `prepare`.
    pub stable_items: usize,
    /// Tokens of those items.
    pub stable_tokens: u64,
    /// Tool results the request sends cleared (a placeholder in place of the output, or the
    /// note of a result a later read superseded, `supersede`; the clearing stage,
    /// `"stages": ["clear", ...]`), and old USER messages sent with their images cleared.
    pub cleared_results: usize,
    /// Tokens that clearing them saves.
    pub cleared_tokens: u64,
}

/// A window's cache state: the view last prepared and the provider's reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheState {
    /// The view last prepared.
    pub prepared: PreparedView,
    /// What providers reported.
    pub stats: CacheStats,
}
