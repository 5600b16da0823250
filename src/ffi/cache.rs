//! Cache-aware requests: `prepare` before each request, provider usage objects, and the
//! cache statistics. Thin shims over the window's request methods.

use super::boundary::{ffi_boundary, out_arg, str_arg, try_mut, try_ref};
use super::error::ctxwin_status;
use super::handle::ctxwin_window;
use crate::cache::{CacheStats, RequestInfo};
use libc::c_char;

/// What `ctxwin_window_prepare` reports about the request it prepared.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ctxwin_request_info {
    /// Ledger messages this call took out of the view or shortened.
    pub removed: usize,
    /// Items in the view (`ctxwin_window_view_len`).
    pub view_len: usize,
    /// Tokens of the request's input: overhead, pinned messages, summary and the view's
    /// history (`ctxwin_window_live_tokens`).
    pub tokens: i64,
    /// Leading view items byte-identical to those of the previous `ctxwin_window_prepare`:
    /// the provider can serve them from its prompt cache, and a cache breakpoint belongs
    /// after them. Never more than the true common prefix.
    pub stable_items: usize,
    /// Tokens of those items.
    pub stable_tokens: i64,
    /// Tool results the request sends cleared: a placeholder naming the tool, the call and
    /// the tokens cleared stands in place of the output, or a note pointing to the later call
    /// of a result a later read superseded (`supersede`); the call stays (the clearing stage,
    /// `"stages": ["clear", ...]`). Old USER messages sent with their images cleared (their
    /// text and a placeholder naming the tokens) count here too. Since: 0.3
    pub cleared_results: usize,
    /// Tokens clearing them saves. Since: 0.3
    pub cleared_tokens: i64,
}

impl From<RequestInfo> for ctxwin_request_info {
    fn from(info: RequestInfo) -> ctxwin_request_info {
        ctxwin_request_info {
            removed: info.removed,
            view_len: info.view_len,
            tokens: i64::try_from(info.tokens).unwrap_or(i64::MAX),
            stable_items: info.stable_items,
            stable_tokens: i64::try_from(info.stable_tokens).unwrap_or(i64::MAX),
            cleared_results: info.cleared_results,
            cleared_tokens: i64::try_from(info.cleared_tokens).unwrap_or(i64::MAX),
        }
    }
}

/// The sums of the usage reports `ctxwin_window_observe_usage_json` took.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ctxwin_cache_stats {
    /// Usage reports taken.
    pub requests: u64,
    /// Prompt tokens the provider billed, cached ones included.
    pub prompt_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cached_tokens: u64,
}

impl From<CacheStats> for ctxwin_cache_stats {
    fn from(stats: CacheStats) -> ctxwin_cache_stats {
        ctxwin_cache_stats { requests: stats.requests, prompt_tokens: stats.prompt_tokens, cached_tokens: stats.cached_tokens }
    }
}

/// Prepares the next request. Call it before every request to the model, in the middle of
/// a turn too (between tool calls), then send the view (`ctxwin_window_view_len` /
/// `ctxwin_window_view_get`, or `ctxwin_window_render_json`).
///
/// Runs the strategy over the whole ledger as `ctxwin_window_end_turn` does, so that
/// overhead + pinned messages + summary + view + `output_reserve` fit the model's context
/// limit: older turns, then the running turn's oldest steps, are pruned or compacted by the
/// strategy's rules (never the task, a pinned message or the newest step). If that is still
/// over the limit (the newest `keep_recent_steps` steps are kept whatever they cost), the
/// running turn's long tool outputs are cut to head and tail (tiered L1's rule), oldest
/// first, until it fits; only when cutting is not enough do more of its oldest steps go
/// (never the newest), those left cut as far as needed. The view it yields is the one `end_turn` would give for the
/// same pushes: the boundary stays a function of the ledger's contents and settings.
///
/// `out->stable_items` / `out->stable_tokens` are the leading view items byte-identical to
/// those of the previous `prepare` (0 on the first): where a provider cache breakpoint
/// belongs. A rewind (`truncate`, `reset`) makes every item from the rewound message on
/// count as changed. The request prepared is recorded as the last one, so
/// `ctxwin_window_observe_last_usage` attributes the provider's report to it.
///
/// Parameters: `w` is borrowed mutably; `out` is caller-owned, written only on success.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_OUT_OF_RANGE`
/// when even the task, the pinned messages and the newest step, cut, do not fit the context
/// limit (the window is left unchanged; `last_error` gives the numbers).
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_prepare(w: *mut ctxwin_window, out: *mut ctxwin_request_info) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update_uncounted(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.prepare()?.into();
            Ok(())
        })
    }
}

/// Reads a provider's usage object, as it comes in the response, for the request that sent
/// messages `first..end`, and feeds its prompt total to `ctxwin_window_observe_usage` (the
/// calibration of estimates) and its cached part to the cache statistics. Most agents want
/// `ctxwin_window_observe_last_usage_json`, which needs no range.
///
/// Accepted shapes (the object itself, or a whole response body holding it as `usage` or
/// `usageMetadata`): OpenAI Chat `usage` (`prompt_tokens`, which includes
/// `prompt_tokens_details.cached_tokens`), OpenAI Responses `usage` (`input_tokens`, which
/// includes `input_tokens_details.cached_tokens`), Anthropic `usage` (the prompt is
/// `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`; the reads are
/// cached), Gemini `usageMetadata` (`promptTokenCount`, which includes
/// `cachedContentTokenCount`, plus `toolUsePromptTokenCount`: the results of Gemini's own
/// tools, billed as input; the statistics count them, the calibration leaves them out since
/// the request sent did not hold them).
///
/// Streaming: the event or chunk that carries the usage is accepted as it comes. Anthropic's
/// `message_start` event (its `message.usage`); an OpenAI Responses `response.completed`,
/// `response.incomplete` or `response.failed` event (its `response.usage`); the last OpenAI
/// Chat `chat.completion.chunk` of a stream with `stream_options.include_usage` (its
/// `usage`); a Gemini `streamGenerateContent` chunk (its `usageMetadata`; the last chunk's is
/// final). Anthropic's `message_delta` event is accepted when its usage states
/// `input_tokens` (its counts are cumulative, those of the final message) and refused when it
/// states output tokens only, as the API sent before it added the input counts:
/// `last_error` names `message_start`, which always states them. A chunk or event whose
/// usage is still null (the Chat chunks before the last, `response.created`) is refused.
///
/// A report counts once: a report is the request it answers and its numbers (prompt total,
/// cached and tool-use parts), so a stream's events that repeat the same counts (Anthropic's
/// `message_start` and `message_delta`, every Gemini chunk) may all be observed: the same
/// report again changes nothing and returns OK. For the request last prepared or rendered,
/// another report replaces the first in the calibration and the statistics (a later chunk's
/// final counts); for another range, other numbers are another request's report.
///
/// A window whose format is fixed (the configuration key `format`, or its JSON pushes)
/// refuses another provider's usage object with `CTXWIN_STATUS_MISMATCH`, naming both (an
/// Anthropic usage without cache fields has the shape of OpenAI Responses' and fits either);
/// a window of no fixed format takes any shape (a Claude model behind an OpenAI-compatible
/// gateway reports OpenAI usage).
///
/// Parameters: `json`, `len` is borrowed UTF-8.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_UTF8`,
/// `CTXWIN_STATUS_PARSE` (not JSON), `CTXWIN_STATUS_INVALID_ARG` (a usage object of unknown
/// shape, a usage still null, a `message_delta` without input tokens, a negative or non-integer count, more cached tokens than prompt tokens:
/// `last_error` names the field), `CTXWIN_STATUS_MISMATCH` for another provider's usage
/// object (naming both formats), or `ctxwin_window_observe_usage`'s errors (OUT_OF_RANGE
/// for a range that does not match the window, MISMATCH for a total no request of the range
/// could explain). On failure nothing changes.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `json` is NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_observe_usage_json(
    w: *mut ctxwin_window,
    first: usize,
    end: usize,
    json: *const c_char,
    len: usize,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            // SAFETY: forwarded from this function's contract.
            let json = unsafe { str_arg(json, len, "json") }?;
            window.observe_usage_json(first, end, json)?;
            Ok(())
        })
    }
}

/// `ctxwin_window_observe_usage_json` for the request last prepared or rendered
/// (`ctxwin_window_prepare`, `ctxwin_window_render_json`, `ctxwin_window_render_request`): the
/// usage object (the same shapes) is judged against what that request sent, as recorded when
/// it was built, whatever was pushed, pruned or compacted since. Under `tiered` and
/// `monologue`, whose views send cut outputs, summary blocks and markers instead of whole
/// messages, this is the only attribution that matches the provider's count.
///
/// Parameters: `json`, `len` is borrowed UTF-8.
///
/// Returns what `ctxwin_window_observe_usage_json` returns, and `CTXWIN_STATUS_MISMATCH` when
/// no request was prepared or rendered since the window was created, reset or restored, or
/// the ledger was rewound below the request's end since. On failure nothing changes.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `json` is NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_observe_last_usage_json(
    w: *mut ctxwin_window,
    json: *const c_char,
    len: usize,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            // SAFETY: forwarded from this function's contract.
            let json = unsafe { str_arg(json, len, "json") }?;
            window.observe_last_usage_json(json)?;
            Ok(())
        })
    }
}

/// Writes the sums of every usage report `ctxwin_window_observe_usage_json` took (each
/// report once): requests,
/// prompt tokens billed and prompt tokens served from the cache (their ratio is the cache
/// hit rate). Saved and restored with the window.
///
/// Parameters: `out` is caller-owned, written only on success.
///
/// Returns `CTXWIN_STATUS_OK` or `CTXWIN_STATUS_NULL_ARG`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_cache_stats(w: *const ctxwin_window, out: *mut ctxwin_cache_stats) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.cache_stats().into();
            Ok(())
        })
    }
}

/// What the window learned from the provider's usage reports (`ctxwin_window_observe_usage`
/// and the other observe calls): `*ratio` is the provider's real tokens per estimated token,
/// which scales every estimated count; `*overhead_tokens` is what every request holds that
/// was not declared with `ctxwin_window_set_overhead` (a system prompt or tool definitions
/// left out of it, the provider's framing of a request), which `ctxwin_window_live_tokens`
/// and the budget arithmetic add to the declared overhead (an estimate: `~`). Before any
/// report, and for a window whose requests hold exact counts only: 1 and 0.
///
/// The fit: each report says what a request of so many estimated tokens really held beyond
/// its exact part; the window fits that as `overhead + ratio * estimated`, recent reports
/// weighing most. The ratio counts as 4096 estimated tokens seen at ratio 1, so one small
/// report cannot swing it (reports of requests of other sizes tell a ratio from an
/// overhead); the ratio stays within 0.5 to 2 and the overhead within 0 to 32768 tokens. A
/// report more than a request could hold (twice its estimated part plus 32768 tokens beyond
/// its exact part) is refused by the observe calls with `CTXWIN_STATUS_MISMATCH`: an agent
/// whose requests send more than that which it did not declare declares it.
///
/// Parameters: `ratio` and `overhead_tokens` are caller-owned, written only on success.
///
/// Returns `CTXWIN_STATUS_OK` or `CTXWIN_STATUS_NULL_ARG`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.3
///
/// # Safety
/// `w` is NULL or a live handle; `ratio` and `overhead_tokens` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_calibration(
    w: *const ctxwin_window,
    ratio: *mut f64,
    overhead_tokens: *mut i32,
) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let (ratio, overhead) = unsafe { (out_arg(ratio, "ratio")?, out_arg(overhead_tokens, "overhead_tokens")?) };
            *ratio = window.calibration_ratio();
            *overhead = i32::try_from(window.learned_overhead().tokens).unwrap_or(i32::MAX);
            Ok(())
        })
    }
}
