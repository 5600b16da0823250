//! Compaction on demand: a manual `/compact`, and recovery from a provider's overflow error.

use super::boundary::{ffi_boundary, in_arg, try_mut, write_optional};
use super::classify::ctxwin_error_info;
use super::error::ctxwin_status;
use super::handle::ctxwin_window;
use crate::classify::ErrorInfo;

/// Runs the configured strategy now, as a manual `/compact`, even if its trigger has not
/// fired: `monologue` strips every turn older than `keep_recent_turns` to its user message and
/// final answer; `tiered` cuts every tool output longer than `tool_output_max_lines` lines or
/// with a line longer than 400 characters, the running turn's included, and goes on to
/// summaries and dropping only while still over; `sliding` and
/// `drop_oldest` drop only what their limits require. The choice is recorded: later turns do
/// not undo it (`ctxwin_window_reset` does, and `ctxwin_window_truncate` to fewer messages
/// than the ledger held when it was made). The ledger is never
/// changed, only the view.
///
/// Parameters: `removed` may be NULL; otherwise receives how many ledger messages this call
/// took out of the view or replaced by a shorter form.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` or `CTXWIN_STATUS_PANIC`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `removed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_compact(w: *mut ctxwin_window, removed: *mut usize) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            let count = window.compact();
            // SAFETY: `removed` is NULL or writable per this function's contract.
            unsafe { write_optional(removed, count) };
            Ok(())
        })
    }
}

/// Shrinks the view after the provider rejected the request as too long, so the retry fits.
///
/// Takes what `ctxwin_classify_error` read from the error: the view shrinks by at least
/// `excess` plus a margin (10% of the excess plus 1% of `limit`, at least 64 tokens; when
/// `excess` is -1, by 10% of the view's history tokens plus the margin). It first runs the
/// configured strategy as `ctxwin_window_compact` does, then drops the oldest turns, then the
/// newest turn's oldest steps (a one-task tool loop's), behind the step marker; the newest
/// `keep_recent_steps` steps and the task are never dropped. Choices are recorded as for
/// `ctxwin_window_compact` (the step dropped to is saved since 0.3).
///
/// Parameters: `info` is borrowed; `removed` may be NULL, otherwise receives how many ledger
/// messages left the view or were shortened.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG` (NULL `w` or `info`);
/// `CTXWIN_STATUS_INVALID_ARG` when `info` is not a context overflow or has an unknown
/// category; `CTXWIN_STATUS_OUT_OF_RANGE` when even the newest turn's newest
/// `keep_recent_steps` steps alone are too large
/// (`ctxwin_window_last_error` says by how much). On failure the window is unchanged.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `info` is NULL or readable; `removed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_recover(
    w: *mut ctxwin_window,
    info: *const ctxwin_error_info,
    removed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            // SAFETY: forwarded from this function's contract.
            let info = ErrorInfo::try_from(*unsafe { in_arg(info, "info") }?)?;
            let count = window.recover(&info)?;
            // SAFETY: `removed` is NULL or writable per this function's contract.
            unsafe { write_optional(removed, count) };
            Ok(())
        })
    }
}
