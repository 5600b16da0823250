//! The summary slot and compaction records. Thin shims over the window's summary methods.

use super::boundary::{ffi_boundary, str_arg, try_mut, try_ref};
use super::buffer::OutBuffer;
use super::error::ctxwin_status;
use super::handle::ctxwin_window;
use crate::error::{Error, ErrorKind};
use crate::window::Window;
use libc::c_char;
use std::time::{SystemTime, UNIX_EPOCH};

/// True when the agent should ask its LLM for a summary now: with the `sliding` strategy,
/// steps were pruned since the last summary (whole turns, or the oldest steps of a one-task
/// tool loop; the summary's own tokens can push one more step out, which the next summary
/// covers); with `summary`, live tokens (or the prompt total
/// the provider last reported) reached `threshold` (default 0.85) of the context limit, or
/// the history budget already pushed steps out of the view (at a small limit the output
/// reserve leaves less room than the threshold), and the view is over `low_water` of its
/// limit with a step besides the newest ones to archive. The context
/// limit is the `context_limit` setting, else the model table's, else the history budget.
///
/// Returns false for NULL or a poisoned window.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
#[must_use]
pub unsafe extern "C" fn ctxwin_window_needs_summary(w: *const ctxwin_window) -> bool {
    ffi_boundary! { try_ref!(w).value(Window::needs_summary) }
}

/// Writes the complete prompt to send to the agent's LLM for a summary: the steps to archive
/// (the pruned steps with `sliding`, the turn's USER message, the task, staying sent; with `summary`, the oldest turns, then the oldest steps of
/// the newest turn (a one-task tool loop), that bring the view within `low_water` of its
/// limit, the newest `keep_recent_steps` steps always kept; the summary then stands where
/// they were, after the task), the summary in
/// place (so summaries roll up), and instructions asking for the original task, progress
/// with exact file names, working memory, and a ledger of completed vs pending work. The
/// prompt fits the context limit minus `summary_budget`; when the steps do not, it covers as
/// many as fit, and `ctxwin_window_needs_summary` asks for the rest while it is still needed
/// (with the strategies that drop, while pruned steps are unsummarised; with `summary`,
/// while the view is still over `threshold`): ask again after `ctxwin_window_set_summary`.
///
/// With the `summary_request: "conversation"` key, the request is instead a JSON array in the
/// window's format: the conversation as `ctxwin_window_render_json` renders it, then a final
/// user message asking for the summary of the turns to archive (by where the kept part
/// starts). Send it as the request's `messages` / `input` / `contents` with your usual
/// system prompt and tools: your last request sent the same conversation, so the provider
/// serves it from its prompt cache. Turns to archive that the view no longer sends (pruned
/// before being summarised) go into the final message as a transcript, the conversation cut
/// after a step as far as it takes for all of them to fit. It fits the context
/// limit less `summary_budget` (send it with `max_tokens` at most `summary_budget`): where the
/// whole conversation does not, it is cut after a step, leaving out the newest steps that
/// stay, then the newest steps to archive (the request covers fewer, and
/// `ctxwin_window_needs_summary` asks for the rest as above). Where not even the
/// conversation cut after the first step to archive fits (that step alone too large for the
/// room the answer leaves), the request is the conversation before the steps to archive
/// (the pinned messages, the summary in place), then those steps as a transcript in the
/// final message, as many as fit, the first one's texts clipped if they must be, as the
/// standalone prompt gives them. OUT_OF_RANGE only when not even that fits.
///
/// On success the window remembers what the prompt covers; read
/// `ctxwin_window_generation(w)` now and answer with it (`ctxwin_window_set_summary`), after
/// the agent took more steps too. Works whether or not the trigger fired (a manual
/// compaction).
///
/// Parameters: `w` is borrowed mutably; `buf`, `cap`, `needed` follow the string-out
/// convention (`buf = NULL, cap = 0` queries the length and remembers nothing); `needed` may
/// be NULL.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_BUFFER_TOO_SMALL`
/// (nothing remembered), or `CTXWIN_STATUS_OUT_OF_RANGE` when there is nothing to summarise
/// or the context limit is too small for a request.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_summary_request(
    w: *mut ctxwin_window,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { OutBuffer::new(buf, cap, needed) }?;
            let (prompt, pending) = crate::json::build_summary_request(window)?;
            out.write(&prompt)?;
            if cap > 0 {
                window.await_summary(pending);
            }
            Ok(())
        })
    }
}

/// Takes the LLM's answer to the summary request built at `generation`: the summary replaces
/// the previous one and the turns the request covered are archived (kept in the ledger and
/// listable, no longer sent; the summary is sent right after the pinned head and counts in
/// `ctxwin_window_live_tokens`). A compaction record is kept (see
/// `ctxwin_window_compaction_info`) and the generation changes.
///
/// The answer may come steps late (the agent goes on working while its LLM writes it): it is
/// taken while the request still applies, whatever the view did meanwhile (steps pushed,
/// dropped or cleared), since the steps it covers are still the next to archive: no summary
/// was accepted since (nor a rewind, which cancels the request), and they are all still due
/// (a larger budget can bring them back into the view).
///
/// Parameters: `generation` is `ctxwin_window_generation(w)` when the request was written;
/// `text`, `len` is the summary, borrowed UTF-8 (copied).
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_UTF8`,
/// `CTXWIN_STATUS_MISMATCH` (no request pending, a `generation` other than the pending
/// request's, or a request that no longer applies; ask again), `CTXWIN_STATUS_INVALID_ARG`
/// (an empty or blank summary), or `CTXWIN_STATUS_OUT_OF_RANGE` (more tokens than
/// `summary_budget`, or than the previous summary and the turns it replaces). On failure the
/// history stays exactly as it was.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `text` is NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_summary(
    w: *mut ctxwin_window,
    generation: u32,
    text: *const c_char,
    len: usize,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            // SAFETY: forwarded from this function's contract.
            let text = unsafe { str_arg(text, len, "text") }?;
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
            Ok(window.set_summary(generation, text, now)?)
        })
    }
}

/// Writes the summary in place (the newest compaction record's), which the request builder
/// sends as a user message right after the pinned head; the empty string before the first
/// summary. After a provider's compaction (see `ctxwin_window_compaction_info`'s
/// `provider`) it is that message's text, and the message itself is what is sent.
///
/// Parameters: `buf`, `cap`, `needed` follow the string-out convention;
/// `needed` may be NULL.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` or `CTXWIN_STATUS_BUFFER_TOO_SMALL`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_summary(
    w: *const ctxwin_window,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        let handle = try_ref!(w);
        // SAFETY: forwarded from this function's contract.
        unsafe {
            handle.inspect_text(buf, cap, needed, |window| {
                Ok(window.summary().map_or(String::new(), |record| record.summary.to_string()))
            })
        }
    }
}

/// Compaction records kept: one per accepted summary, numbered from 1. A rewind
/// (`ctxwin_window_truncate`) drops the records whose archived range is no longer followed by
/// a live turn, and the summary falls back to the newest record left; reset drops them all.
///
/// Returns 0 for NULL or a poisoned window.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
#[must_use]
pub unsafe extern "C" fn ctxwin_window_compaction_count(w: *const ctxwin_window) -> usize {
    ffi_boundary! { try_ref!(w).value(|window| window.compactions().len()) }
}

/// Writes compaction record `index` (0-based; its `number` is `index + 1`) as a JSON object:
/// `number`, `timestamp` (Unix seconds), `summary`, `summary_tokens`, `summary_exact`,
/// `messages_archived`, `first_archived` and `last_archived` (this record's own messages:
/// indices inclusive, `messages_archived = last_archived - first_archived + 1`),
/// `archived_turns` (cumulative: turns `0..archived_turns` are archived whole once this
/// record is accepted, earlier records' turns included; `last_archived + 1` is the first
/// message of a step: that turn's USER message, or a later step of turn `archived_turns`
/// when the record archived the oldest steps of a running turn, whose USER message is then
/// still sent, before the summary), `tokens_before`, `tokens_after`
/// (live tokens around the compaction), `provider` (true when the provider compacted: an
/// Anthropic `compaction` block or an OpenAI Responses `compaction` item was pushed with
/// `ctxwin_window_push_json`; that message, `last_archived + 1`, is the summary in place,
/// a USER message sent where it stands, and `summary` is its text, empty for an encrypted
/// item), `cleared_results` and `cleared_tokens` (the tool results the view sent cleared,
/// placeholders and superseded reads' notes, just before the compaction, and the tokens that
/// saved: what the clearing stage had done before a summary was needed; since 0.3, 0 in
/// records saved before). Archived messages stay in the ledger.
///
/// Parameters: `buf`, `cap`, `needed` follow the string-out convention;
/// `needed` may be NULL.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_BUFFER_TOO_SMALL`, or
/// `CTXWIN_STATUS_OUT_OF_RANGE` when `index >= ctxwin_window_compaction_count(w)`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_compaction_info(
    w: *const ctxwin_window,
    index: usize,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        let handle = try_ref!(w);
        // SAFETY: forwarded from this function's contract.
        unsafe {
            handle.inspect_text(buf, cap, needed, |window| {
                let records = window.compactions();
                let record = records.get(index).ok_or_else(|| {
                    Error::new(
                        ErrorKind::OutOfRange,
                        format!("compaction record {index} does not exist: the window holds {}", records.len()),
                    )
                })?;
                Ok(record.to_value().to_string())
            })
        }
    }
}
