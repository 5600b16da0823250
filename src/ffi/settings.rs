//! Reading a window's settings back (budget, model, overhead, the whole configuration) and
//! resetting it with options. Thin shims over [`Window`].

use super::boundary::{ffi_boundary, out_arg, try_mut, try_ref};
use super::error::{FfiError, ctxwin_status};
use super::handle::ctxwin_window;
use crate::window::ResetFlags;
use libc::c_char;

/// `ctxwin_window_reset_with` flag: also set the overhead (system prompt and tool tokens) to
/// 0, so the live total of an empty window is 0 (an agent's `/clear`).
pub const CTXWIN_RESET_OVERHEAD: u32 = 1;
/// `ctxwin_window_reset_with` flag: also forget the calibration learned from provider usage
/// (`ctxwin_window_observe_usage`).
pub const CTXWIN_RESET_CALIBRATION: u32 = 2;

/// The tokens live history may use now: the budget the strategy enforces, what a host shows
/// as "history / budget". That is `history_budget` as set by `ctxwin_window_set_budget` or
/// `ctxwin_window_configure` (less what every request sends besides the history, with
/// `budget_includes_overhead`), and never more than the context limit leaves once the
/// output reserve and what every request sends besides the history (system prompt, tools,
/// pinned messages, the summary, the overhead learned from usage) are taken, when the limit
/// is known: all of that room under `"history_budget": "auto"`, and the default 100000
/// capped for a model of a smaller context. It moves with that fixed part. The configured
/// value (a number, `"auto"` or `"default"`) is in `ctxwin_window_settings`. Until 0.3 it
/// returned the configured number even where the window enforced less or more.
///
/// Returns `CTXWIN_STATUS_OK` or `CTXWIN_STATUS_NULL_ARG`; `*out` is written only on success.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_budget(w: *const ctxwin_window, out: *mut i32) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = i32::try_from(window.available_for_history()).unwrap_or(i32::MAX);
            Ok(())
        })
    }
}

/// The overhead sent with every request, as set by `ctxwin_window_set_overhead`.
///
/// Parameters: `system_tokens` and `tool_tokens` receive the tokens of the system prompt and
/// of the tool definitions; both are written only on success.
///
/// Returns `CTXWIN_STATUS_OK` or `CTXWIN_STATUS_NULL_ARG` (naming the NULL parameter).
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `system_tokens` and `tool_tokens` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_overhead(
    w: *const ctxwin_window,
    system_tokens: *mut i32,
    tool_tokens: *mut i32,
) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let (system, tools) = unsafe { (out_arg(system_tokens, "system_tokens")?, out_arg(tool_tokens, "tool_tokens")?) };
            let overhead = window.overhead();
            *system = i32::try_from(overhead.system).unwrap_or(i32::MAX);
            *tools = i32::try_from(overhead.tools).unwrap_or(i32::MAX);
            Ok(())
        })
    }
}

/// The model name as given to `ctxwin_window_new` or `ctxwin_window_set_model`, into the
/// caller's buffer.
///
/// Parameters: `buf`, `cap`, `needed` follow the buffer convention: at most `cap` bytes
/// including a NUL are written, `*needed` (may be NULL) receives the full length without the
/// NUL, and `buf = NULL, cap = 0` queries the length.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` (`buf` NULL with `cap` > 0) or
/// `CTXWIN_STATUS_BUFFER_TOO_SMALL`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_model(
    w: *const ctxwin_window,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        let handle = try_ref!(w);
        // SAFETY: forwarded from this function's contract.
        unsafe { handle.inspect_text(buf, cap, needed, |window| Ok::<_, FfiError>(window.model().name().to_owned())) }
    }
}

/// Every setting as a JSON object that `ctxwin_window_configure` accepts (every key, the
/// defaults included), into the caller's buffer: configuring another window with it gives
/// it the same settings.
///
/// Parameters: `buf`, `cap`, `needed` follow the buffer convention: at most `cap` bytes
/// including a NUL are written, `*needed` (may be NULL) receives the full length without the
/// NUL, and `buf = NULL, cap = 0` queries the length.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` or `CTXWIN_STATUS_BUFFER_TOO_SMALL`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_settings(
    w: *const ctxwin_window,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        let handle = try_ref!(w);
        // SAFETY: forwarded from this function's contract.
        unsafe { handle.inspect_text(buf, cap, needed, |window| Ok::<_, FfiError>(window.settings().to_value().to_string())) }
    }
}

/// `ctxwin_window_reset`, with options. Removes every message and what was recorded about
/// them: turns, summaries and compaction records, the pending summary request, the choices of
/// `drop_oldest_turn`, `compact` and `recover`, host ids, the provider's last prompt total
/// and the last rendered request. Keeps the model, the settings, and (unless `flags` says
/// otherwise) the overhead and the calibration.
///
/// Parameters: `flags` is 0 or a combination of `CTXWIN_RESET_OVERHEAD` (also set the
/// overhead to 0) and `CTXWIN_RESET_CALIBRATION` (also forget the calibration);
/// `ctxwin_window_reset(w)` is `ctxwin_window_reset_with(w, 0)`.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_INVALID_ARG` for
/// an unknown flag bit (nothing is reset).
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_reset_with(w: *mut ctxwin_window, flags: u32) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            let known = CTXWIN_RESET_OVERHEAD | CTXWIN_RESET_CALIBRATION;
            if flags & !known != 0 {
                return Err(FfiError::new(
                    ctxwin_status::InvalidArg,
                    format!("flags: unknown bits {:#x} (expected CTXWIN_RESET_OVERHEAD | CTXWIN_RESET_CALIBRATION)", flags & !known),
                ));
            }
            window.reset_with(ResetFlags {
                overhead: flags & CTXWIN_RESET_OVERHEAD != 0,
                calibration: flags & CTXWIN_RESET_CALIBRATION != 0,
            });
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::Window;

    #[test]
    fn unknown_flags_change_nothing() {
        let mut window = Window::new("gpt-4o");
        window.set_overhead(10, 5).unwrap();
        window.push(crate::message::Kind::User, "hi").unwrap();
        let handle = ctxwin_window::into_raw(window);
        // SAFETY: a live handle from into_raw.
        unsafe {
            assert_eq!(ctxwin_window_reset_with(handle, 4), ctxwin_status::InvalidArg);
            assert_eq!(super::super::window::ctxwin_window_message_count(handle), 1);
            assert_eq!(ctxwin_window_reset_with(handle, CTXWIN_RESET_OVERHEAD), ctxwin_status::Ok);
            let (mut system, mut tools) = (-1, -1);
            assert_eq!(ctxwin_window_overhead(handle, &mut system, &mut tools), ctxwin_status::Ok);
            assert_eq!((system, tools), (0, 0));
            ctxwin_window::free(handle);
        }
    }
}
