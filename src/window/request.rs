//! Requests: `prepare` before every request (the view fitted to the context limit, and how
//! much of it the previous request sent identically), and the provider's usage reports.
//!
//! **Determinism.** `prepare` runs the strategy over the whole ledger as `end_turn` does, so
//! the view it yields is the one `end_turn` would give for the same pushes: the sliding
//! walk treats the running turn as the newest turn of the walk (not remembered until the next
//! turn starts), and as that turn grows its step only moves the boundary further. Cutting
//! the running turn's tool outputs depends on its contents alone. Replaying the same pushes,
//! with or without `prepare` between them, gives the same view.

use super::Window;
use crate::cache::{CacheState, CacheStats, RequestInfo, SentItem, Usage, fingerprints, parse_usage};
use crate::error::{Error, ErrorKind, Result};
use crate::message::Kind;
use crate::view::ItemType;
use crate::view::clearing::ClearedView;
use crate::wire::FormatSet;

impl Window {
    /// Prepares the next request; call it before every request, in the middle of a turn too.
    /// Runs the strategy over the whole ledger, so overhead + pinned messages + summary +
    /// view + `output_reserve` fit the context limit: older steps, those of the running turn
    /// included, are dropped or compacted by the strategy's rules (never the newest step, nor
    /// a turn's USER message while one of its steps is sent). If that is still over the limit,
    /// the running turn's long tool outputs are cut by tiered L1's rule, oldest first, and only
    /// when cutting is not enough do more of its oldest steps go (see `Window::plan_view`).
    /// Reports what the request holds and how many of its leading items the previous prepared
    /// request sent byte for byte.
    ///
    /// Errors (nothing changes): OUT_OF_RANGE when even then the request does not fit: the
    /// task, the pinned messages and the newest step alone exceed the limit (the message
    /// says how much each takes).
    pub fn prepare(&mut self) -> Result<RequestInfo> {
        let verbatim = self.verbatim();
        let counts = self.apply_pending_counts();
        let saved =
            (self.policy.first_live_turn, self.policy.overlay.clone(), self.policy.enforced_messages, self.policy.generation);
        self.enforce();
        let tokens = u64::from(self.live_tokens().tokens);
        if let Some(limit) = self.known_context_limit() {
            let reserve = u64::from(self.output_reserve());
            if tokens + reserve > u64::from(limit) {
                (self.policy.first_live_turn, self.policy.overlay, self.policy.enforced_messages, self.policy.generation) = saved;
                self.unapply_counts(counts);
                return Err(Error::new(
                    ErrorKind::OutOfRange,
                    format!(
                        "the request cannot fit: {tokens} tokens + output reserve {reserve} exceed the context limit \
                         {limit} with every older step dropped and the newest step's long tool outputs cut: what every \
                         request sends besides the history (the task, pinned messages, system prompt, tools, summary) \
                         takes {fixed} and the newest step {newest}",
                        fixed = self.fixed_cost().tokens(),
                        newest = self.view_history().tokens(),
                    ),
                ));
            }
        }
        let items: Vec<SentItem<'_>> = (0..self.view_len())
            .filter_map(|i| self.view_item(i))
            .map(|item| SentItem { item, message: self.message(item.index) })
            .collect();
        let next = fingerprints(&items);
        let indices: Vec<usize> = items.iter().map(|sent| sent.item.index).collect();
        let item_tokens: Vec<u64> = items.iter().map(|sent| u64::from(sent.item.tokens.tokens)).collect();
        let (cleared_results, cleared_tokens) = self.cleared_in_view(&items);
        let stable_items = self.wire.cache.prepared.advance(next, &indices);
        // The request prepared is the one the next usage report is about.
        self.note_request();
        Ok(RequestInfo {
            removed: verbatim.saturating_sub(self.verbatim()),
            view_len: item_tokens.len(),
            tokens,
            stable_items,
            stable_tokens: item_tokens[..stable_items].iter().sum(),
            cleared_results,
            cleared_tokens,
        })
    }

    /// Tool results among `items` (the view's) sent cleared (a placeholder, or a superseded
    /// result's note) and USER messages sent with their images cleared, and the tokens that
    /// saves: the items sent as the clearing's text, not a result `tiered` cut that the clear
    /// pointer passed but that is not clearable (before, such a cut counted as cleared).
    /// O(items).
    fn cleared_in_view(&self, items: &[SentItem<'_>]) -> (usize, u64) {
        let before = self.policy.overlay.as_ref().map_or(0, |overlay| overlay.plan.cleared_before());
        let view = ClearedView { before, clearing: &self.settings.clearing, clearables: &self.policy.costs.clearables };
        let ledger = self.ledger();
        let cleared = |sent: &SentItem<'_>| {
            sent.item.item_type == ItemType::Truncated
                && view
                    .cleared(&ledger, sent.item.index, || u32::MAX)
                    .is_some_and(|(text, _)| sent.item.text == Some(text.as_str()))
        };
        let (mut results, mut tokens) = (0, 0);
        for sent in items.iter().filter(|sent| cleared(sent)) {
            if let (Kind::ToolResult | Kind::User, Some(message)) = (sent.item.kind, sent.message) {
                results += 1;
                tokens += u64::from(self.calibrated(message.count()).tokens.saturating_sub(sent.item.tokens.tokens));
            }
        }
        (results, tokens)
    }

    /// Tool results the current view sends cleared and the tokens that saves (see
    /// [`Window::prepare`]'s `cleared_results`), as the compaction records note them.
    pub(crate) fn cleared_now(&self) -> (usize, u64) {
        let items: Vec<SentItem<'_>> = (0..self.view_len())
            .filter_map(|i| self.view_item(i))
            .map(|item| SentItem { item, message: self.message(item.index) })
            .collect();
        self.cleared_in_view(&items)
    }

    /// Leading view items the last prepared request sent as the one before it did: where a
    /// provider's cache breakpoint belongs. 0 before the second `prepare`.
    pub fn stable_items(&self) -> usize {
        self.wire.cache.prepared.stable()
    }

    /// Reads a provider's usage object (or a response body holding one) for the request that
    /// sent messages `first..end` (see [`crate::cache::parse_usage`] for every provider's
    /// rule), feeds the prompt tokens of the request as sent (the billed total less Gemini's
    /// tool-use prompt, which the request did not hold) to [`Window::observe_usage`], and
    /// adds the billed total to the cache statistics. The same report twice counts once
    /// (see [`Window::observe_usage`]).
    ///
    /// Errors (nothing changes): PARSE for malformed JSON, INVALID_ARG naming the field for a
    /// usage object of unknown shape or a negative count, MISMATCH for a usage object of
    /// another provider than the window's fixed format, and `observe_usage`'s errors.
    pub fn observe_usage_json(&mut self, first: usize, end: usize, json: &str) -> Result<Usage> {
        let usage = self.parse_window_usage(json)?;
        let (key, sent) = self.range_request(first, end)?;
        self.observe_report(key, sent, usage, true)?;
        Ok(usage)
    }

    /// [`Window::observe_usage_json`] for the request last rendered or prepared, as
    /// [`Window::observe_last_usage`] attributes a prompt total: the report is judged against
    /// what that request sent, whatever was pushed or pruned since.
    ///
    /// Errors (nothing changes): `observe_usage_json`'s, and MISMATCH when no request was
    /// rendered since the window was created, reset, restored or rewound below its end.
    pub fn observe_last_usage_json(&mut self, json: &str) -> Result<Usage> {
        let usage = self.parse_window_usage(json)?;
        let (key, sent) = self.last_request_report()?;
        self.observe_report(key, sent, usage, true)?;
        Ok(usage)
    }

    /// The usage object in `json`, refused when the window's format is fixed (the
    /// configuration key `format` or its JSON pushes) and the object is another provider's.
    fn parse_window_usage(&self, json: &str) -> Result<Usage> {
        let usage = parse_usage(json)?;
        let window = self.wire_formats();
        if window != FormatSet::ANY && usage.formats.and(window).is_empty() {
            return Err(Error::new(
                ErrorKind::Mismatch,
                format!("a usage object of the {} shape for a window in the {window} format", usage.formats),
            ));
        }
        Ok(usage)
    }

    /// The sums of every usage report [`Window::observe_usage_json`] took.
    pub fn cache_stats(&self) -> CacheStats {
        self.wire.cache.stats
    }

    /// The cache state, for saving.
    pub fn cache_state(&self) -> &CacheState {
        &self.wire.cache
    }
}
