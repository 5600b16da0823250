//! The view: what to send, item by item, and the validation report of tool pairs.

use super::boundary::{ffi_boundary, out_arg, try_ref};
use super::count::ctxwin_count;
use super::error::{FfiError, ctxwin_status};
use super::handle::ctxwin_window;
use crate::report::validation_report;
use crate::view::{ItemType, ViewItem};
use crate::window::Window;
use libc::c_char;

/// View item type: a message of the ledger, sent as pushed.
pub const CTXWIN_ITEM_MESSAGE: i32 = 0;
/// View item type: a message of the ledger with its text shortened (a long tool output cut
/// to head and tail).
pub const CTXWIN_ITEM_TRUNCATED: i32 = 1;
/// View item type: an item the library wrote (a `[Summary]` of a turn, the
/// `[Context compacted: …]` marker, or the cancelled result of an unanswered tool call).
pub const CTXWIN_ITEM_SYNTHETIC: i32 = 2;

/// One item of the view.
///
/// `index` is the ledger index the item stands for: the message itself for MESSAGE and
/// TRUNCATED; for SYNTHETIC, the summarized turn's USER message (a summary, kind USER), the
/// first removed message (the marker, kind USER), or the unanswered TOOL_CALL (a cancelled
/// result, kind TOOL_RESULT: answer it with that call's id).
///
/// `text` is borrowed, NOT NUL-terminated (use `text_len`), and valid until the next
/// mutating call on the window or `ctxwin_window_free`. It is NULL with `text_len` 0 for a
/// message whose text the window did not keep (`retain_text` false, `push_counted`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ctxwin_item {
    /// One of `CTXWIN_ITEM_*`.
    pub r#type: i32,
    /// One of `CTXWIN_KIND_*`.
    pub kind: i32,
    /// The ledger index the item stands for (see above).
    pub index: usize,
    /// The item's text (borrowed, not NUL-terminated), or NULL.
    pub text: *const c_char,
    /// Bytes of `text`.
    pub text_len: usize,
    /// The item's tokens.
    pub tokens: ctxwin_count,
}

impl From<ViewItem<'_>> for ctxwin_item {
    fn from(item: ViewItem<'_>) -> ctxwin_item {
        let (text, text_len) = item.text.map_or((std::ptr::null(), 0), |t| (t.as_ptr().cast(), t.len()));
        ctxwin_item {
            r#type: match item.item_type {
                ItemType::Message => CTXWIN_ITEM_MESSAGE,
                ItemType::Truncated => CTXWIN_ITEM_TRUNCATED,
                ItemType::Synthetic => CTXWIN_ITEM_SYNTHETIC,
            },
            kind: item.kind.code(),
            index: item.index,
            text,
            text_len,
            tokens: item.tokens.into(),
        }
    }
}

/// Items in the view: what the next request sends, pinned messages included.
///
/// With the `sliding` strategy and well-paired tool calls, the view is exactly the pinned
/// messages before `ctxwin_window_start` followed by messages `[start, count)`, so a request
/// builder may keep looping from `start`. Other strategies (and tool pairs the view repairs)
/// add truncated and synthetic items: iterate the view instead. Messages pushed since the
/// strategy last ran are at the end, as pushed.
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
pub unsafe extern "C" fn ctxwin_window_view_len(w: *const ctxwin_window) -> usize {
    ffi_boundary! { try_ref!(w).value(Window::view_len) }
}

/// Reads item `i` of the view (0-based, below `ctxwin_window_view_len`).
///
/// Parameters: `out` is caller-owned, written only on success; its `text` is borrowed from
/// the window until the next mutating call on it or `ctxwin_window_free`.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_OUT_OF_RANGE` when
/// `i >= ctxwin_window_view_len(w)`. O(1) for computed views, O(log messages) otherwise.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_view_get(w: *const ctxwin_window, i: usize, out: *mut ctxwin_item) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            let item = window.view_item(i).ok_or_else(|| {
                FfiError::new(
                    ctxwin_status::OutOfRange,
                    format!("view item {i} does not exist: the view holds {} items", window.view_len()),
                )
            })?;
            *out = item.into();
            Ok(())
        })
    }
}

/// Writes a JSON report of the tool pairing problems in what was pushed, and what the view
/// does about each, for example
/// `{"valid":false,"problems":[{"index":7,"turn":1,"call_id":"call_2","problem":"unanswered_call","repair":"the view answers it with a synthetic cancelled result"}],"over_budget_by":0}`.
///
/// Problems are `orphan_result` (a result whose call is not earlier in its turn),
/// `duplicate_result`, `duplicate_call` (the view leaves these out) and `unanswered_call` (a
/// call of a completed turn without a result; the newest turn may still be running, so its
/// calls are not reported). Tool messages pushed without a call id are not checked.
/// `over_budget_by` is how many tokens the view exceeds the budget by: 0 unless the newest
/// steps alone are over, or the fixed cost is (system prompt, tools, pinned messages,
/// summary: a pinned task over the context limit counts in full).
///
/// Parameters: `buf`, `cap`, `needed` as for every string out: at most `cap` bytes including
/// a NUL; `*needed` (may be NULL) receives the full length; `buf = NULL, cap = 0` queries it.
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
pub unsafe extern "C" fn ctxwin_window_validate(
    w: *const ctxwin_window,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        let handle = try_ref!(w);
        // SAFETY: forwarded from this function's contract.
        unsafe { handle.inspect_text(buf, cap, needed, |window| Ok(validation_report(window))) }
    }
}
