//! The host's own messages: counts learned after the push, host messages of several parts
//! with the host's ids, the lookups a request builder looping over its own array needs, and
//! usage attributed to the request last rendered. Thin shims over [`crate::window::host`]'s
//! methods of [`Window`].

use super::boundary::{bytes_arg, ffi_boundary, out_arg, slice_arg, str_arg, try_mut, try_ref, write_optional};
use super::count::ctxwin_count;
use super::error::{FfiError, ctxwin_status};
use super::handle::ctxwin_window;
use crate::message::Kind;
use crate::tokens::Count;
use crate::window::{Decoded, Part, Window};
use libc::c_char;

/// One block of a host message, for `ctxwin_window_push_message`: text, thinking, a tool
/// call or a tool result. Every pointer is borrowed for the call only; `(NULL, 0)` is empty.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ctxwin_part {
    /// One of `CTXWIN_KIND_*`: the ledger kind of the block.
    pub kind: i32,
    /// The block's text (for a tool call, its arguments), decoded as the window's
    /// `invalid_utf8` setting says.
    pub text: *const c_char,
    /// Bytes of `text`.
    pub text_len: usize,
    /// The provider's tool call id of a TOOL_CALL or TOOL_RESULT block (UTF-8), or NULL /
    /// length 0 for none.
    pub call_id: *const c_char,
    /// Bytes of `call_id`.
    pub call_id_len: usize,
    /// The tool name of a TOOL_CALL block (UTF-8), its `text` then being the arguments alone
    /// (as `ctxwin_window_push_tool_call` takes them); NULL / length 0 for none, the text then
    /// being the name, a newline and the arguments (as `ctxwin_window_push` takes them).
    pub name: *const c_char,
    /// Bytes of `name`.
    pub name_len: usize,
}

impl ctxwin_part {
    /// A block borrowing `text`, `call_id` and `name` (empty for none), for Rust code calling
    /// the C functions (tests, fuzzing, benchmarks): the slices must outlive the call the part
    /// is passed to.
    pub fn borrowing(kind: i32, text: &[u8], call_id: &[u8], name: &[u8]) -> ctxwin_part {
        ctxwin_part {
            kind,
            text: text.as_ptr().cast(),
            text_len: text.len(),
            call_id: call_id.as_ptr().cast(),
            call_id_len: call_id.len(),
            name: name.as_ptr().cast(),
            name_len: name.len(),
        }
    }
}

/// Replaces the count of message `index` with the caller's, for example a provider's exact
/// figure learned after the push (a count_tokens answer, or the difference of two usage
/// reports). The count is then the caller's, as `ctxwin_window_push_counted`'s are: taken as
/// given, with its `exact` flag, and kept by `ctxwin_window_set_model`.
///
/// The count is recorded now and applied by the next `ctxwin_window_end_turn` (or any call
/// that re-enforces the strategy: `set_budget`, `set_overhead`, `set_model`, `configure`,
/// `truncate`, `compact`...): until then nothing the window shows moves (boundary, view,
/// `ctxwin_window_live_tokens`, `ctxwin_window_turn_info`), so indexes a host computed
/// relative to `ctxwin_window_start` stay valid, and a window saved in between restores
/// exactly. A later `set_count` of the same message replaces the recorded count. Recording
/// is O(1) for a message after every one recorded (the usual order), O(recorded counts) at
/// worst; applying costs O(log turns) per count (O(1) in the newest turn). A part pushed by
/// `ctxwin_window_push_message` with `out` NULL whose count is recorded before it is needed
/// is never counted by the library. An agent that knows only a turn's total records it with
/// `ctxwin_window_set_turn_count`.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_OUT_OF_RANGE` for an
/// index at or past the message count; `CTXWIN_STATUS_INVALID_ARG` for a negative count.
/// Nothing changes on failure.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_count(w: *mut ctxwin_window, index: usize, count: ctxwin_count) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update_uncounted(|window| {
            let count = Count::try_from(count)?;
            Ok(window.set_count(index, count)?)
        })
    }
}

/// Records the total of turn `turn` for an agent that knows only that: the counts of the
/// turn's messages are scaled to sum to `count`, each recorded as `ctxwin_window_set_count`
/// records it, with `count.exact`. SYSTEM messages inside the turn keep their counts. After
/// the next `ctxwin_window_end_turn`, `ctxwin_window_turn_info(w, turn, &info)` gives
/// `info.tokens == count`, less the share of a pinned task in the turn (it was sent in the
/// turn the total covers, but its tokens count as pinned, not as the turn's history).
///
/// The total is spread in proportion to the messages' sizes, which takes no counting: a
/// message whose count the caller gave (`push_counted`, an earlier `set_count`) weighs four
/// per token of that count; a message the library counts weighs the bytes of its text (a tool
/// call's name and arguments), plus four per token of its media (or, in a window keeping
/// counts only, four per token of its count). Largest remainders first; all of it on the
/// USER message when they weigh 0. So the parts of a turn pushed with
/// `ctxwin_window_push_message(..., out NULL)` and given their turn's total before the next
/// `ctxwin_window_end_turn` are never counted. O(messages of the turn).
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_OUT_OF_RANGE` for a
/// turn at or past the turn count; `CTXWIN_STATUS_INVALID_ARG` for a negative count. Nothing
/// changes on failure.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_turn_count(w: *mut ctxwin_window, turn: usize, count: ctxwin_count) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update_uncounted(|window| {
            let count = Count::try_from(count)?;
            Ok(window.set_turn_count(turn, count)?)
        })
    }
}

/// Appends one host message of `n` parts (an assistant message with text, thinking and tool
/// calls; a user message with tool results and text) under the host's own id `host_id`.
/// The ledger gets exactly what `n` pushes would give it (a USER part starts a turn, a
/// TOOL_RESULT never does): per part, `ctxwin_window_push_tool_call(call_id, name, text)` for
/// a TOOL_CALL with an id and a name, `ctxwin_window_push_tool` for a tool part with an id,
/// `ctxwin_window_push` otherwise (a TOOL_CALL with a name but no id is pushed as its name, a
/// newline and its text). No format needs a call id: one without is rendered with a
/// deterministic id (`ctxwin_window_render_json`). Every part carries `host_id`, so the host's index space is kept:
/// `ctxwin_window_host_index` maps an id to the ledger, `ctxwin_window_host_id` a ledger
/// index (any view item's `index`) back, and `ctxwin_window_start_host_id` tells a request
/// builder where to start in its own array.
///
/// Parameters:
/// - `parts`, `n`: borrowed array of `n` parts (see `ctxwin_part`); texts are copied unless
///   `retain_text` is false.
/// - `host_id`: the host's id of the message (an array index, a database row id). Each host
///   message has its own: an id already in the window is refused (to replace a message,
///   `ctxwin_window_truncate(w, host_index)` first, then push it again).
/// - `out`: may be NULL; otherwise receives the total count of the parts on success. With
///   `out` NULL the parts are counted when their counts are first needed (the next
///   `ctxwin_window_end_turn` or `ctxwin_window_prepare`, or any other call but a push,
///   `set_count` and `set_turn_count`), and never if a count recorded by
///   `ctxwin_window_set_count` or `ctxwin_window_set_turn_count` replaces theirs before
///   then: restoring a session whose provider counts are known costs no counting. Every
///   reading call sees the counts resolved; nothing else differs.
///
/// All or nothing: every part is checked before any is appended.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG` (`parts` NULL with `n` > 0, or a
/// part's pointer NULL with a length); `CTXWIN_STATUS_INVALID_UTF8` for a text that is not
/// UTF-8 while `invalid_utf8` is `"error"`, or a call id or name that is not UTF-8;
/// `CTXWIN_STATUS_OUT_OF_RANGE` for a text over `max_message_bytes`;
/// `CTXWIN_STATUS_INVALID_ARG` for `n` = 0, a part of an unknown kind, a call id or name on a
/// part that cannot carry one, a TOOL_CALL without a name (none given, and none on the first
/// line of its text), arguments that are not a JSON object in an Anthropic or Gemini window
/// (as `ctxwin_window_push_tool_call`), a tool part with an id before any USER message, an id
/// the tool pairing refuses (as `ctxwin_window_push_tool`), or a host id already used.
/// `ctxwin_window_last_error` names the part and field (`parts[2].call_id`).
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `parts` is NULL or valid for `n` parts, each of whose
/// pointers is NULL or valid for its length; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_push_message(
    w: *mut ctxwin_window,
    parts: *const ctxwin_part,
    n: usize,
    host_id: i64,
    out: *mut ctxwin_count,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update_uncounted(|window| {
            // SAFETY: forwarded from this function's contract.
            let parts = unsafe { slice_arg(parts, n, "parts") }?;
            let mut decoded = Vec::with_capacity(parts.len());
            for (i, part) in parts.iter().enumerate() {
                // SAFETY: forwarded from this function's contract.
                decoded.push(unsafe { read_part(window, part, i) }?);
            }
            let parts: Vec<Part<'_>> = decoded
                .iter()
                .map(|(kind, text, call_id, name)| Part {
                    kind: *kind,
                    text: &text.text,
                    replaced: text.replaced,
                    call_id: *call_id,
                    name: *name,
                })
                .collect();
            if out.is_null() {
                // Counted when first needed, or never if the caller's count comes first.
                return Ok(window.push_message_uncounted(&parts, host_id)?);
            }
            let count = window.push_message(&parts, host_id)?;
            // SAFETY: `out` is NULL or writable per this function's contract.
            unsafe { write_optional(out, count.into()) };
            Ok(())
        })
    }
}

/// A part read from C: kind, decoded text, call id and name.
type ReadPart<'a> = (Kind, Decoded<'a>, Option<&'a str>, Option<&'a str>);

/// Part `i` read from C: its kind, its text decoded as the window says, and its call id.
/// Errors name the part's field (`parts[2].call_id`); the names are written only then.
///
/// # Safety
/// The part's pointers are NULL or valid for their lengths.
unsafe fn read_part<'a>(window: &Window, part: &'a ctxwin_part, i: usize) -> Result<ReadPart<'a>, FfiError> {
    let in_part = |e: FfiError| FfiError::new(e.status, format!("parts[{i}].{}", e.message));
    let kind = Kind::from_code(part.kind).ok_or_else(|| {
        FfiError::new(
            ctxwin_status::InvalidArg,
            format!("kind: unknown message kind {} (expected 0 to 5, see CTXWIN_KIND_*)", part.kind),
        )
    });
    let kind = kind.map_err(in_part)?;
    window
        .check_message_size(part.text_len)
        .map_err(|e| in_part(FfiError::new(e.kind().into(), format!("text: {}", e.message()))))?;
    // SAFETY: forwarded from this function's contract.
    let read = unsafe {
        (
            bytes_arg(part.text, part.text_len, "text"),
            str_arg(part.call_id, part.call_id_len, "call_id"),
            str_arg(part.name, part.name_len, "name"),
        )
    };
    let (text, call_id, name) = (read.0.map_err(in_part)?, read.1.map_err(in_part)?, read.2.map_err(in_part)?);
    let text = window.decode(text, "text").map_err(|e| in_part(e.into()))?;
    Ok((kind, text, Some(call_id).filter(|id| !id.is_empty()), Some(name).filter(|name| !name.is_empty())))
}

/// The host id of the first live message (`ctxwin_window_start`): a request builder sends
/// its own messages from this one on (and its pinned ones). The boundary can fall inside a
/// host message whose first parts closed the pruned turn (tool results, then the USER
/// text): send that message's parts from `ctxwin_window_start(w) - host_index` on.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_OUT_OF_RANGE` for an
/// empty window; `CTXWIN_STATUS_INVALID_ARG` when the first live message was not pushed with
/// `ctxwin_window_push_message`. `*out` is written only on success.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_start_host_id(w: *const ctxwin_window, out: *mut i64) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.start_host_id()?;
            Ok(())
        })
    }
}

/// The ledger index of the first part of host message `host_id`.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_OUT_OF_RANGE` when no
/// host message in the window has this id (never pushed, or rewound away). `*out` is written
/// only on success.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_host_index(w: *const ctxwin_window, host_id: i64, out: *mut usize) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.host_index(host_id)?;
            Ok(())
        })
    }
}

/// The host id of ledger message `index`: every part of a host message carries it, so any
/// view item (`ctxwin_item.index`, also for synthetic items) is traced to the host's message.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_OUT_OF_RANGE` for an
/// index at or past the message count; `CTXWIN_STATUS_INVALID_ARG` for a message not pushed
/// with `ctxwin_window_push_message`. `*out` is written only on success.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_host_id(w: *const ctxwin_window, index: usize, out: *mut i64) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.host_id(index)?;
            Ok(())
        })
    }
}

/// Whether message `index` was pushed as bytes that were not valid UTF-8 and kept with
/// U+FFFD in place of each invalid sequence (configuration `"invalid_utf8":"replace"`). Its
/// count is the count of the replaced text.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_OUT_OF_RANGE` for an
/// index at or past the message count. `*out` is written only on success.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_replaced_utf8(w: *const ctxwin_window, index: usize, out: *mut bool) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.message_at(index)?.replaced_utf8();
            Ok(())
        })
    }
}

/// Whether message `index` is a tool part a model produced that the window kept as text
/// instead of refusing it (configuration `"invalid_tool_parts":"keep"`): a call whose
/// arguments are not a JSON object where the format needs one, a call without a tool name,
/// an empty call id, or an id no call (or a second call) carries. A call is kept as an
/// ASSISTANT message holding the call as written (its name, a newline and its arguments); a
/// result stays a TOOL_RESULT with its id, which requests leave out. Either is counted as
/// its text.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_OUT_OF_RANGE` for an
/// index at or past the message count. `*out` is written only on success.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.3
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_kept_as_text(w: *const ctxwin_window, index: usize, out: *mut bool) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.message_at(index)?.kept_as_text();
            Ok(())
        })
    }
}

/// `ctxwin_window_observe_usage` for the request last prepared or rendered
/// (`ctxwin_window_prepare`, `ctxwin_window_render_json`, `ctxwin_window_render_request`), so
/// the caller need not record its message range: the provider's `prompt_tokens` are judged
/// against what that request sent, as recorded when it was built (its overhead, pinned
/// messages, summary and history items; under `tiered` and `monologue` the cut outputs,
/// summary blocks and markers), whatever was pushed or pruned since.
///
/// A report counts once per request: the same total again for the same prepared or
/// rendered request changes nothing and returns OK; another total for it replaces the first
/// (each `prepare`, `render_json` or `render_request` is a request of its own).
///
/// Returns what `ctxwin_window_observe_usage` returns, and `CTXWIN_STATUS_MISMATCH` when no
/// request was rendered since the window was created, reset or restored, or the ledger was
/// rewound below the request's end since. Nothing changes on failure.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_observe_last_usage(w: *mut ctxwin_window, prompt_tokens: i64) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| Ok(window.observe_last_usage(prompt_tokens)?))
    }
}
