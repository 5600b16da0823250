//! Messages one by one: a tool call with its name and arguments in, any stored message out.

use super::boundary::{ffi_boundary, out_arg, str_arg, try_mut, try_ref, write_optional};
use super::count::ctxwin_count;
use super::error::{FfiError, ctxwin_status};
use super::handle::ctxwin_window;
use crate::json;
use crate::message::Message;
use crate::window::Window;
use libc::c_char;

/// A message of the ledger as stored, read with `ctxwin_window_message_get`.
///
/// Every pointer is borrowed from the window, NOT NUL-terminated (use the lengths), and valid
/// until the next mutating call on the window or `ctxwin_window_free`. A field the message
/// lacks is NULL with length 0.
///
/// - `text`: the text as pushed, but for a TOOL_CALL, whose `text` is its arguments (the
///   tool's name is in `name`); NULL when the window did not keep it (`retain_text` false,
///   `ctxwin_window_push_counted`).
/// - `call_id`: the provider's call id of a TOOL_CALL or TOOL_RESULT pushed with one.
/// - `name`: the tool's name of a TOOL_CALL (and of a result whose provider JSON names it,
///   a Gemini `functionResponse`).
/// - `tokens`: the message's count as the window uses it (estimates scaled by what
///   `ctxwin_window_observe_usage` taught); a count recorded by `ctxwin_window_set_count`
///   or `ctxwin_window_set_turn_count` shows at once, with its `exact` flag.
///
/// Since: 0.2
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ctxwin_message {
    /// One of `CTXWIN_KIND_*`.
    pub kind: i32,
    /// The text (borrowed, not NUL-terminated), or NULL.
    pub text: *const c_char,
    /// Bytes of `text`.
    pub text_len: usize,
    /// The tool call id (borrowed, not NUL-terminated), or NULL.
    pub call_id: *const c_char,
    /// Bytes of `call_id`.
    pub call_id_len: usize,
    /// The tool name (borrowed, not NUL-terminated), or NULL.
    pub name: *const c_char,
    /// Bytes of `name`.
    pub name_len: usize,
    /// The message's tokens.
    pub tokens: ctxwin_count,
}

fn borrowed(text: Option<&str>) -> (*const c_char, usize) {
    text.map_or((std::ptr::null(), 0), |t| (t.as_ptr().cast(), t.len()))
}

impl ctxwin_message {
    fn of(window: &Window, index: usize, message: &Message) -> ctxwin_message {
        let (text, text_len) = borrowed(message.text());
        let (call_id, call_id_len) = borrowed(message.call_id());
        let (name, name_len) = borrowed(message.name());
        ctxwin_message {
            kind: message.kind().code(),
            text,
            text_len,
            call_id,
            call_id_len,
            name,
            name_len,
            tokens: window.shown_count(index).unwrap_or(message.count()).into(),
        }
    }
}

fn missing(window: &Window, index: usize) -> FfiError {
    FfiError::new(
        ctxwin_status::OutOfRange,
        format!("message {index} does not exist: the window holds {} messages", window.message_count()),
    )
}

/// Appends a tool call: the provider's call id, the tool's name and its arguments (JSON, as
/// the model wrote them), counted as the providers count a call (the name and the
/// arguments). Answer it with `ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, call_id,
/// ...)`. Calls pushed one after the other in a step are parallel calls: the renders send
/// them as one assistant message (Chat `tool_calls`, Anthropic `tool_use` blocks, Gemini
/// `functionCall` parts) followed by their answers.
///
/// Parameters:
/// - `call_id`, `id_len`: borrowed UTF-8 id, not empty.
/// - `name`, `name_len`: borrowed UTF-8 tool name, not empty.
/// - `arguments`, `args_len`: borrowed UTF-8 JSON. In a window whose format sends arguments
///   as an object (Anthropic `input`, Gemini `args`) it must be a JSON object, or empty for
///   `{}`; the OpenAI formats send it as the string it is.
/// - `out`: may be NULL; otherwise receives the call's count on success.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_INVALID_UTF8`
/// (naming the parameter); `CTXWIN_STATUS_INVALID_ARG` for an empty id or name, arguments
/// that are not a JSON object where one is needed, no USER message yet, or a call reusing
/// an id of its turn (`ctxwin_window_last_error` names the id and the field);
/// `CTXWIN_STATUS_OUT_OF_RANGE` above `max_message_bytes`. Nothing is appended on failure.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `call_id`, `name` and `arguments` are each NULL or valid for
/// their lengths; `out` is NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ctxwin_window_push_tool_call(
    w: *mut ctxwin_window,
    call_id: *const c_char,
    id_len: usize,
    name: *const c_char,
    name_len: usize,
    arguments: *const c_char,
    args_len: usize,
    out: *mut ctxwin_count,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            window.check_message_size(args_len)?;
            // SAFETY: forwarded from this function's contract.
            let (call_id, name, arguments) = unsafe {
                (str_arg(call_id, id_len, "call_id")?, str_arg(name, name_len, "name")?, str_arg(arguments, args_len, "arguments")?)
            };
            let count = window.push_tool_call(call_id, name, arguments)?;
            // SAFETY: `out` is NULL or writable per this function's contract.
            unsafe { write_optional(out, count.into()) };
            Ok(())
        })
    }
}

/// Reads ledger message `index` (0-based, below `ctxwin_window_message_count`, pruned
/// messages included) as it is stored: its kind, text, call id, tool name and tokens. See
/// `ctxwin_message` for what each field holds and how long the pointers live.
///
/// Parameters: `out` is caller-owned, written only on success.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_OUT_OF_RANGE` when
/// `index >= ctxwin_window_message_count(w)`. O(1).
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_message_get(
    w: *const ctxwin_window,
    index: usize,
    out: *mut ctxwin_message,
) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            let message = window.message(index).ok_or_else(|| missing(window, index))?;
            *out = ctxwin_message::of(window, index, message);
            Ok(())
        })
    }
}

/// Writes the provider JSON ledger message `index` was pushed as with
/// `ctxwin_window_push_json`: the whole wire message (an assistant message holding text and
/// two tool calls is three ledger messages, each of which gives the same object). Writes ""
/// (`*needed` = 0) for a message not pushed as JSON, or whose JSON the window did not keep
/// (`retain_text` false).
///
/// Parameters: `buf`, `cap`, `needed` as for every string out: at most `cap` bytes including
/// a NUL; `*needed` (may be NULL) receives the full length; `buf = NULL, cap = 0` queries it.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_BUFFER_TOO_SMALL`, or
/// `CTXWIN_STATUS_OUT_OF_RANGE` when `index >= ctxwin_window_message_count(w)`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_message_json(
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
                window.message(index).ok_or_else(|| missing(window, index))?;
                Ok(json::wire_json(window, index).unwrap_or_default().to_owned())
            })
        }
    }
}
