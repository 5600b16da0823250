//! The window (ledger) functions. Each is a thin shim over [`crate::window::Window`].
//!
//! Common rules, stated once in the header's conventions and repeated briefly per function:
//! `w` is a handle from `ctxwin_window_new` or `ctxwin_window_clone`; a NULL `w` returns
//! `CTXWIN_STATUS_NULL_ARG` (or 0 for functions returning a value); a failure leaves the
//! window unchanged and `ctxwin_window_last_error` explains it.

use super::boundary::{bytes_arg, ffi_boundary, out_arg, str_arg, try_mut, try_ref, write_optional};
use super::buffer::OutBuffer;
use super::count::ctxwin_count;
use super::error::{FfiError, ctxwin_status};
use super::handle::ctxwin_window;
use super::last_error;
use crate::message::Kind;
use crate::tokens::{Count, Model};
use crate::window::{TurnInfo, Window};
use libc::c_char;

/// Message kind: a system prompt or instruction (always pinned).
pub const CTXWIN_KIND_SYSTEM: i32 = 0;
/// Message kind: a user message; starts a turn.
pub const CTXWIN_KIND_USER: i32 = 1;
/// Message kind: assistant text.
pub const CTXWIN_KIND_ASSISTANT: i32 = 2;
/// Message kind: a tool call made by the assistant.
pub const CTXWIN_KIND_TOOL_CALL: i32 = 3;
/// Message kind: a tool's result (never starts a turn, whatever its wire role).
pub const CTXWIN_KIND_TOOL_RESULT: i32 = 4;
/// Message kind: assistant reasoning.
pub const CTXWIN_KIND_THINKING: i32 = 5;

/// The largest message text, in bytes, a window accepts unless configured otherwise
/// (`max_message_bytes`), and the largest text `ctxwin_count_text` counts: 64 MiB.
pub const CTXWIN_DEFAULT_MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;

/// The smallest stack, in bytes, of a thread that calls the library: 64 KiB (glibc's default
/// is 8 MiB, musl's 128 KiB). Every JSON the library reads nests at most 64 levels (deeper
/// input is PARSE), so reading, rendering, saving and freeing it fit, as do counting and the
/// strategies (the C test `small_stacks_are_enough` runs them on a thread of this size).
pub const CTXWIN_MIN_THREAD_STACK: usize = 64 * 1024;

/// What the ledger reports about one turn.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ctxwin_turn_info {
    /// Index of the turn's USER message.
    pub first_message: usize,
    /// Messages in the turn (pinned SYSTEM messages inside it included).
    pub message_count: usize,
    /// History tokens of the turn: its pinned messages (SYSTEM messages, the task, the
    /// host's pins) are excluded, as they are counted with the overhead.
    pub tokens: ctxwin_count,
    /// True when the turn's USER message is sent as itself; false when the turn was pruned
    /// (or, with `tiered`, summarized).
    pub live: bool,
    /// True when the turn's first and last messages were both pushed with
    /// `ctxwin_window_push_message`, so `first_host_id` and `last_host_id` hold their host
    /// ids (both 0 otherwise). Since: 0.3
    pub has_host_ids: bool,
    /// The host id of the turn's first message (its USER message). Since: 0.3
    pub first_host_id: i64,
    /// The host id of the turn's last message (the newest so far, for the running turn), so
    /// a host maps a turn to its own rows. Since: 0.3
    pub last_host_id: i64,
}

impl From<TurnInfo> for ctxwin_turn_info {
    fn from(info: TurnInfo) -> ctxwin_turn_info {
        ctxwin_turn_info {
            first_message: info.first_message,
            message_count: info.message_count,
            tokens: info.tokens.into(),
            live: info.live,
            has_host_ids: info.host_ids.is_some(),
            first_host_id: info.host_ids.map_or(0, |(first, _)| first),
            last_host_id: info.host_ids.map_or(0, |(_, last)| last),
        }
    }
}

fn kind_arg(kind: i32) -> Result<Kind, FfiError> {
    Kind::from_code(kind).ok_or_else(|| {
        FfiError::new(ctxwin_status::InvalidArg, format!("unknown message kind {kind} (expected 0 to 5, see CTXWIN_KIND_*)"))
    })
}

/// Creates an empty window for `model` with the default settings (strategy `sliding`,
/// history budget 100000 tokens, texts retained, no overhead).
///
/// Parameters:
/// - `model`, `model_len`: borrowed UTF-8 model name; an unknown model is not an error (its
///   counts are estimates), an empty one is.
/// - `out`: receives a new handle, owned by the caller, who releases it with
///   `ctxwin_window_free`. Written only on success.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_UTF8` or
/// `CTXWIN_STATUS_INVALID_ARG` for an empty name (or white space only);
/// `ctxwin_last_error` explains a failure.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
///
/// # Safety
/// `model` is NULL or valid for `model_len` bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_new(
    model: *const c_char,
    model_len: usize,
    out: *mut *mut ctxwin_window,
) -> ctxwin_status {
    ffi_boundary! {
        let created = || -> Result<(), FfiError> {
            // SAFETY: forwarded from this function's contract.
            let (model, out) = unsafe { (str_arg(model, model_len, "model")?, out_arg(out, "out")?) };
            Model::check_name(model)?;
            *out = ctxwin_window::into_raw(Window::new(model));
            Ok(())
        };
        last_error::settle(created())
    }
}

/// Releases a window. NULL is a no-op; a poisoned window is freed too.
///
/// Parameters: `w` is consumed; it must not be used afterwards, and must not be freed twice.
///
/// Thread-safety: no other thread may be using `w`.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_free(w: *mut ctxwin_window) {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { ctxwin_window::free(w) }
    }
}

/// Forks a window: a new, independent handle with a copy of the ledger and settings.
///
/// Parameters: `w` is borrowed; `out` receives a new caller-owned handle (release it with
/// `ctxwin_window_free`), written only on success.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_PANIC` for a
/// poisoned `w`; `ctxwin_last_error` (and `ctxwin_window_last_error` on `w`) explains a
/// failure.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_clone(w: *const ctxwin_window, out: *mut *mut ctxwin_window) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = ctxwin_window::into_raw(window.clone());
            Ok(())
        })
    }
}

/// Applies settings from a JSON object, for example
/// `{"strategy":"sliding","history_budget":50000,"retain_text":false}`.
///
/// Keys: `strategy` ("sliding", "drop_oldest", "tiered", "monologue" or "summary"),
/// `history_budget` (0 to INT32_MAX; "auto": the context limit less `output_reserve` and the
/// overhead and pinned messages; or "default": 100000, capped by what the model can take,
/// never refused, and what a window starts with; a number above what the model can take is
/// INVALID_ARG naming the key, whatever the number), `retain_text` (false keeps counts only for messages
/// pushed from now on), `budget_includes_overhead` (true: the budget caps overhead + pinned
/// messages + summary + history); the strategies' `token_threshold`, `message_threshold`,
/// `turn_threshold` (1 to INT32_MAX, or null for none), `keep_first`, `keep_recent`,
/// `keep_recent_turns` (0 to INT32_MAX) and `tool_output_max_lines` (1 to INT32_MAX); see
/// docs/strategies.md. With `tiered`, `keep_first + keep_recent` above `message_threshold`
/// is a contradiction (INVALID_ARG naming the keys). Stages (Since: 0.3): `stages`, the
/// policy as an ordered list, `["clear", S]` or `[S]` for a strategy S (`"strategy": S` is
/// `[S]`): `"clear"` sends old tool results as a placeholder naming the tool, the call and
/// the tokens cleared (their calls stay), oldest first, only while the view is over, down to
/// `clear_low_water`, and only when that saves at least `clear_at_least` tokens; then the
/// strategy acts on what is still over. It runs before every strategy, `tiered` included
/// (a cleared result is counted and sent as its placeholder, never cut further). Its keys:
/// `keep_tool_results` (newest results never cleared, 0 to INT32_MAX, default 4),
/// `exclude_tools` (a list of tool names never cleared), `clear_at_least` (0 to INT32_MAX
/// tokens, default 2000), `clear_low_water` (above 0, at most 1, or null: `low_water`),
/// `clear_tool_inputs`, `clear_placeholder`, `supersede` and `keep_thinking`; see
/// docs/strategies.md, which recommends `["clear", "sliding"]` with `keep_tool_results` 3,
/// `clear_low_water` 0.2 and `clear_at_least` 3500 for a coding agent. An empty list, an
/// unknown stage, `"clear"` anywhere but first or a list disagreeing with `strategy` is
/// INVALID_ARG naming `stages`. The summary slot's `summary_budget`
/// (tokens, 1 to INT32_MAX, default 2000; with the `summary` strategy, below the context
/// limit, `context_limit` or else the model table's: a summary must be possible), `threshold`
/// (above 0, at most 1; default 0.85; the summary is also due once the history budget pruned
/// turns, which at a small limit comes first) and `context_limit` (tokens, overrides the
/// model table; 0 = use the table);
/// `invalid_utf8` ("error", the default: a push of bytes that are not UTF-8 fails with
/// INVALID_UTF8; "replace": U+FFFD replaces each invalid sequence of a pushed text, flagged
/// per message); `max_message_bytes` (the largest
/// text `ctxwin_window_push` accepts; default `CTXWIN_DEFAULT_MAX_MESSAGE_BYTES`, 0 = no
/// limit). Cache-aware windows: `low_water` (above 0, at most 1; default 0.65: a strategy that
/// has to act acts until the view is within this fraction of its limits, so the view, and the
/// provider's cached prefix, then stay unchanged for many turns), `output_reserve` (0 to
/// INT32_MAX or "auto", the default: a quarter of the context limit, at most 4096; tokens of
/// the context limit left for the model's answer, which
/// the view never grows into when the limit is known; a reserve leaving no room for what
/// every request sends besides the history is INVALID_ARG naming it and each part: the
/// system prompt, tool definitions, pinned messages, summary in place, and the cancelled
/// results a render adds for open tool calls); `cache_breakpoints` (default false:
/// Anthropic renders mark the end of the stable prefix and the newest message with
/// `cache_control`, at most four breakpoints with the caller's own); `summary_request`
/// (`"standalone"`, the default: `ctxwin_window_summary_request` writes a prompt of its own
/// around a transcript of the turns to archive; `"conversation"`: the conversation as
/// rendered in the window's format, then a final user instruction, which the provider
/// serves mostly from its prompt cache); `format` (`"auto"`, the default,
/// `"openai_chat"`, `"openai_responses"`, `"anthropic"` or `"gemini"`: the wire format of
/// `ctxwin_window_push_json`, `render_json` and `render_request`; `"auto"` takes the format of
/// the first JSON message only one format has (a message that fits several, such as
/// `{"role":"user","content":"hi"}`, fixes none), and before any the model family's; once
/// fixed, by this key or a JSON push, it never changes for the window's life, saved and
/// restored with it: another value is `CTXWIN_STATUS_MISMATCH`). Unknown keys, keys given twice and bad values return
/// `CTXWIN_STATUS_INVALID_ARG`; malformed JSON returns `CTXWIN_STATUS_PARSE`. Nothing is
/// applied unless every key is valid. Re-enforces the strategy over the whole ledger.
///
/// Parameters: `w` is borrowed mutably; `json`, `len` is borrowed UTF-8.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `json` is NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_configure(w: *mut ctxwin_window, json: *const c_char, len: usize) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            // SAFETY: forwarded from this function's contract.
            let json = unsafe { str_arg(json, len, "json") }?;
            Ok(window.configure(json)?)
        })
    }
}

/// Sets the history budget in tokens and re-enforces the strategy over the whole ledger, as
/// if every turn had been pushed under this budget: turns that fit a larger budget are live
/// again. With `low_water` below 1 (the default is 0.65) each prune goes deeper than the
/// budget needs, so a slightly smaller budget, pruning at other turns, can leave a turn or
/// two more live than a larger one.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_ARG` for a
/// negative budget, or `CTXWIN_STATUS_OUT_OF_RANGE` (changing nothing) for a budget above what
/// the model can take when its context limit is known: the limit less the output reserve and,
/// unless `budget_includes_overhead`, what every request sends besides the history (the
/// overhead, pinned messages, summary in place, and the cancelled results a render adds for
/// open tool calls); `last_error` says how much it can take, naming each part. `{"history_budget":"auto"}` (`ctxwin_window_configure`) follows the model.
/// A later `ctxwin_window_configure` that lowers what the model can take under this budget
/// (`context_limit`, `output_reserve`, `budget_includes_overhead`) is refused the same way
/// (`CTXWIN_STATUS_INVALID_ARG` naming the key), unless it gives a budget that fits.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_budget(w: *mut ctxwin_window, history_tokens: i32) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| Ok(window.set_budget(history_tokens)?))
    }
}

/// Sets the tokens sent with every request besides the messages: the system prompt and the
/// tool definitions. They count in `ctxwin_window_live_tokens`, and against the budget when
/// `budget_includes_overhead` is set. Re-enforces the strategy.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_INVALID_ARG` for a
/// negative value.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_overhead(
    w: *mut ctxwin_window,
    system_tokens: i32,
    tool_tokens: i32,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| Ok(window.set_overhead(system_tokens, tool_tokens)?))
    }
}

/// Switches the window to another model: recounts every message whose text it kept, flags
/// counts it cannot recount (counts-only windows) as estimates, keeps counts pushed with
/// `ctxwin_window_push_counted` as given, and re-enforces the strategy. A tokenizer set with
/// `ctxwin_window_set_tokenizer` is dropped: the window counts with what the new name gives
/// (estimates unless it is an OpenAI model) until it is set again.
///
/// Parameters: `model`, `len` is a borrowed UTF-8 model name.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_UTF8` or
/// `CTXWIN_STATUS_INVALID_ARG` for an empty name (white space only); nothing changes on
/// failure.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `model` is NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_model(w: *mut ctxwin_window, model: *const c_char, len: usize) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            // SAFETY: forwarded from this function's contract.
            let model = unsafe { str_arg(model, len, "model") }?;
            Model::check_name(model)?;
            window.set_model(model);
            Ok(())
        })
    }
}

/// `ctxwin_window_set_model_with` flag: also drop the counts the host gave for the old model
/// (`ctxwin_window_set_count`, `ctxwin_window_set_turn_count`, `ctxwin_window_push_counted`),
/// so every message whose text the window kept is recounted for the new one.
///
/// Since: 0.3
pub const CTXWIN_SET_MODEL_RECOUNT: u32 = 1;

/// `ctxwin_window_set_model`, with options. With `CTXWIN_SET_MODEL_RECOUNT` every message
/// whose text the window kept is recounted for the new model, the host's counts included
/// (they were the old model's: its count becomes the library's), counts recorded by
/// `ctxwin_window_set_count` / `ctxwin_window_set_turn_count` and not applied yet are
/// forgotten, and a count given without a text (`ctxwin_window_push_counted`, a window with
/// `retain_text` false) is kept as an estimate: a host that records the provider's counts
/// switches models without `ctxwin_window_reset` and a re-push. Then re-enforces the
/// strategy, as `ctxwin_window_set_model` does; `ctxwin_window_set_model(w, m, n)` is
/// `ctxwin_window_set_model_with(w, m, n, 0)`.
///
/// Parameters: `model`, `len` is a borrowed UTF-8 model name; `flags` is 0 or
/// `CTXWIN_SET_MODEL_RECOUNT`.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_UTF8`, or
/// `CTXWIN_STATUS_INVALID_ARG` for an unknown flag bit (nothing changes).
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.3
///
/// # Safety
/// `w` is NULL or a live handle; `model` is NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_model_with(
    w: *mut ctxwin_window,
    model: *const c_char,
    len: usize,
    flags: u32,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            if flags & !CTXWIN_SET_MODEL_RECOUNT != 0 {
                return Err(FfiError::new(
                    ctxwin_status::InvalidArg,
                    format!("flags: unknown bits {:#x} (expected CTXWIN_SET_MODEL_RECOUNT)", flags & !CTXWIN_SET_MODEL_RECOUNT),
                ));
            }
            // SAFETY: forwarded from this function's contract.
            let model = unsafe { str_arg(model, len, "model") }?;
            window.set_model_with(model, flags & CTXWIN_SET_MODEL_RECOUNT != 0);
            Ok(())
        })
    }
}

/// Appends a message and counts its text once, now. A USER message starts a new turn.
///
/// Parameters:
/// - `kind`: one of `CTXWIN_KIND_*`.
/// - `text`, `len`: borrowed UTF-8, not NUL-terminated; `(NULL, 0)` is empty. The window
///   copies it unless `retain_text` is false. A TOOL_CALL's text is its tool name, a newline
///   and its arguments, as for `ctxwin_window_push_tool` (better: push calls with
///   `ctxwin_window_push_tool_call`, and results with `ctxwin_window_push_tool`, with their
///   ids; tool messages pushed here carry none, see `ctxwin_window_render_json`).
///   Bytes that are not UTF-8 are refused (INVALID_UTF8) unless the window is configured
///   `"invalid_utf8":"replace"`: then each invalid sequence becomes U+FFFD, the text is
///   counted so, and `ctxwin_window_replaced_utf8` flags the message.
/// - `out`: may be NULL; otherwise receives the message's count on success.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_UTF8`,
/// `CTXWIN_STATUS_INVALID_ARG` for an unknown kind or a TOOL_CALL text without a name, or `CTXWIN_STATUS_OUT_OF_RANGE` when `len`
/// exceeds the window's `max_message_bytes` (default `CTXWIN_DEFAULT_MAX_MESSAGE_BYTES`,
/// 64 MiB), checked before the text is read. Nothing is appended on failure. Does not move
/// the boundary: `ctxwin_window_end_turn` does.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `text` is NULL or valid for `len` bytes; `out` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_push(
    w: *mut ctxwin_window,
    kind: i32,
    text: *const c_char,
    len: usize,
    out: *mut ctxwin_count,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            let kind = kind_arg(kind)?;
            window.check_message_size(len)?;
            // SAFETY: forwarded from this function's contract.
            let text = unsafe { bytes_arg(text, len, "text") }?;
            let count = window.push_bytes(kind, text)?;
            // SAFETY: `out` is NULL or writable per this function's contract.
            unsafe { write_optional(out, count.into()) };
            Ok(())
        })
    }
}

/// Appends a message whose count the caller already has (for example from a provider's
/// count_tokens endpoint). The count is taken as given, with its `exact` flag, and never
/// recounted. No text is kept.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_INVALID_ARG` for an
/// unknown kind or a negative count.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_push_counted(w: *mut ctxwin_window, kind: i32, count: ctxwin_count) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            let kind = kind_arg(kind)?;
            let count = Count::try_from(count)?;
            window.push_counted(kind, count);
            Ok(())
        })
    }
}

/// Appends a tool call or a tool result carrying the provider's call id (OpenAI's
/// `tool_call_id`, Anthropic's `tool_use_id`), and counts its text. A result answers the call
/// with the same id in the same turn; several calls in one turn are parallel calls, answered
/// in any order. A result may come after the model went on (its call is in an older step of
/// the turn): a request sends it in its call's step, after that step's other results, and
/// leaves it out when that step is no longer sent. The view keeps each call with its
/// results, and answers a call left unanswered when its turn ends with a synthetic
/// cancelled result.
///
/// Parameters:
/// - `kind`: `CTXWIN_KIND_TOOL_CALL` or `CTXWIN_KIND_TOOL_RESULT`.
/// - `call_id`, `id_len`: borrowed UTF-8 id, not empty.
/// - `text`, `len`: borrowed UTF-8; copied unless `retain_text` is false. For a
///   TOOL_RESULT, the tool's output. For a TOOL_CALL, the tool's name, a newline, then its
///   arguments (`"read_file\n{\"path\":\"a.c\"}"`), or a JSON object naming the call
///   (`{"name":"read_file","arguments":{...}}`, also with `input` or `args`); a text with no
///   name (an empty first line, or arguments alone) is refused: prefer
///   `ctxwin_window_push_tool_call`, which takes the name and the arguments apart.
///   Invalid UTF-8 is handled as `ctxwin_window_push` handles it (`invalid_utf8`).
/// - `out`: may be NULL; otherwise receives the message's count on success.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_INVALID_UTF8`;
/// `CTXWIN_STATUS_INVALID_ARG` for another kind, an empty id, a TOOL_CALL text without a
/// name, no USER message yet, a call
/// reusing an id of its turn, a second result for a call, or a result whose call never came
/// in this turn (`ctxwin_window_last_error` names the id). Nothing is appended on failure.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `call_id` is NULL or valid for `id_len` bytes; `text` is
/// NULL or valid for `len` bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_push_tool(
    w: *mut ctxwin_window,
    kind: i32,
    call_id: *const c_char,
    id_len: usize,
    text: *const c_char,
    len: usize,
    out: *mut ctxwin_count,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            let kind = kind_arg(kind)?;
            // SAFETY: forwarded from this function's contract.
            let (call_id, text) = unsafe { (str_arg(call_id, id_len, "call_id")?, bytes_arg(text, len, "text")?) };
            let count = window.push_tool_bytes(kind, call_id, text)?;
            // SAFETY: `out` is NULL or writable per this function's contract.
            unsafe { write_optional(out, count.into()) };
            Ok(())
        })
    }
}

/// Marks the current turn complete and enforces the strategy: with `sliding`, drops the
/// oldest whole turns, then the newest turn's oldest steps (a long tool loop's), while live
/// history exceeds the budget; the other strategies fire on their own thresholds
/// (docs/strategies.md) and rebuild the view. The newest turn's USER message and its newest
/// step are never dropped, nor for the budget its newest `keep_recent_steps` steps, so this
/// succeeds even when they alone are over budget (`ctxwin_window_live_tokens` shows the
/// overrun, `ctxwin_window_validate` reports it).
///
/// Parameters: `pruned_turns` may be NULL; otherwise receives how many turns this call took
/// out of the view (turns whose USER message is no longer sent as itself). Turns that an
/// earlier call already took out (`ctxwin_window_prepare` in the middle of the turn, a usage
/// report that re-enforced) are not counted again: an agent that prepares every request
/// watches `ctxwin_request_info.removed` instead.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` or `CTXWIN_STATUS_PANIC`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `pruned_turns` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_end_turn(w: *mut ctxwin_window, pruned_turns: *mut usize) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update_uncounted(|window| {
            let pruned = window.end_turn();
            // SAFETY: `pruned_turns` is NULL or writable per this function's contract.
            unsafe { write_optional(pruned_turns, pruned) };
            Ok(())
        })
    }
}

/// `context_window_start`: the index of the first live message, where the request builder
/// starts iterating. 0 when nothing was pruned, otherwise the index of a USER message, or,
/// when the oldest steps of a long tool loop were dropped, the first message of the first
/// step still sent. Pinned messages before it (`ctxwin_window_is_pinned`: the head before
/// the first USER message, SYSTEM messages, the task, the host's pins, and the USER message
/// of the turn the boundary falls inside) are still sent: under plain `sliding` an agent
/// looping from here sends those itself, and then sends exactly the view's messages (less
/// its synthetic items), but for a late result whose call's step left the view (send it in
/// its call's step, or not at all). Where the view sends messages otherwise than pushed (the
/// `clear` stage's placeholders, `supersede`'s notes, `keep_thinking`'s left-out thinking:
/// TRUNCATED items or items absent from the view) or with strategies other than `sliding`
/// (after `start`, the first USER message the view sends as itself, may come truncated,
/// summarized or synthetic items), iterate `ctxwin_window_view_get` instead. O(1); never
/// fails.
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
pub unsafe extern "C" fn ctxwin_window_start(w: *const ctxwin_window) -> usize {
    ffi_boundary! { try_ref!(w).value(Window::start) }
}

/// A counter that changes whenever the view changes otherwise than by growing, or the summary
/// changes, so a UI knows to redraw its context divider. Messages pushed since the strategy
/// last ran, appended as pushed, keep it (so does a rewind, which cuts the view back);
/// anything else done to the messages already in the view changes it: `start` moves (steps
/// or turns dropped, or back), the step marker changes, a result is cleared, a message cut,
/// cancelled results put in, a pin adds or takes away a message before `start`; and so does
/// a summary accepted or forgotten. A new calibration (`ctxwin_window_observe_usage`)
/// changes tokens, not what is sent, and keeps it. A summary request remembers it:
/// `ctxwin_window_set_summary` takes the answer with it, steps late too. Wraps around at
/// UINT32_MAX.
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
pub unsafe extern "C" fn ctxwin_window_generation(w: *const ctxwin_window) -> u32 {
    ffi_boundary! { try_ref!(w).value(Window::generation) }
}

/// Messages pushed (pruned ones included: nothing is ever removed but by truncate or reset).
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
pub unsafe extern "C" fn ctxwin_window_message_count(w: *const ctxwin_window) -> usize {
    ffi_boundary! { try_ref!(w).value(Window::message_count) }
}

/// Turns in the ledger (pruned ones included).
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
pub unsafe extern "C" fn ctxwin_window_turn_count(w: *const ctxwin_window) -> usize {
    ffi_boundary! { try_ref!(w).value(Window::turn_count) }
}

/// The index of the first live turn, which is also the number of turns pruned. O(1).
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
pub unsafe extern "C" fn ctxwin_window_first_live_turn(w: *const ctxwin_window) -> usize {
    ffi_boundary! { try_ref!(w).value(Window::first_live_turn) }
}

/// Describes turn `turn` (0-based, pruned turns included).
///
/// Parameters: `out` is caller-owned, written only on success.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_OUT_OF_RANGE` when
/// `turn >= ctxwin_window_turn_count(w)`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_turn_info(
    w: *const ctxwin_window,
    turn: usize,
    out: *mut ctxwin_turn_info,
) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.turn_info(turn)?.into();
            Ok(())
        })
    }
}

/// Tokens the next request will carry: overhead + pinned messages + live history. `exact` is
/// false when any part is an estimate. Saturates at INT32_MAX.
///
/// Parameters: `out` is caller-owned, written only on success.
///
/// Returns `CTXWIN_STATUS_OK` or `CTXWIN_STATUS_NULL_ARG`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_live_tokens(w: *const ctxwin_window, out: *mut ctxwin_count) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { out_arg(out, "out") }?;
            *out = window.live_tokens().into();
            Ok(())
        })
    }
}

/// Rewinds the window to its first `message_count` messages (an undo, or a retry from an
/// earlier point) and re-enforces the strategy over what remains, so turns that fit again
/// are live again. The choices `ctxwin_window_drop_oldest_turn`, `ctxwin_window_compact` and
/// `ctxwin_window_recover` made while the ledger held more than `message_count` messages are
/// undone; those made earlier stay. Host messages whose first part is removed are forgotten
/// (their ids may be pushed again); to replace a host message, rewind to its
/// `ctxwin_window_host_index`.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_OUT_OF_RANGE` when
/// `message_count` exceeds the number of messages.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_truncate(w: *mut ctxwin_window, message_count: usize) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| Ok(window.truncate(message_count)?))
    }
}

/// Removes every message and what was recorded about them (turns, summaries and
/// compaction records, the pending summary request, the choices of `drop_oldest_turn`,
/// `compact` and `recover`, host ids, the provider's last prompt total, the last rendered
/// request). The model, the settings, the overhead and the calibration stay;
/// `ctxwin_window_reset_with` can clear the overhead and the calibration too.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` or `CTXWIN_STATUS_PANIC`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_reset(w: *mut ctxwin_window) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            window.reset();
            Ok(())
        })
    }
}

/// Prunes one more turn than the strategy requires (for example after a provider rejected
/// the request as too long). The newest turn is never dropped. A later larger budget does
/// not bring the dropped turn back; a reset does, and so does a truncate to fewer messages
/// than the ledger held when this was called.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_OUT_OF_RANGE` when
/// only the newest turn is live.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_drop_oldest_turn(w: *mut ctxwin_window) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| Ok(window.drop_oldest_turn()?))
    }
}

/// Pins message `index` (`pinned` true), so every request sends it wherever the boundary
/// is, counted like the system prompt (outside the history budget); `pinned` false takes
/// the host's pin off. The session's first USER message (the task) is pinned by the window
/// unless the configuration key `pin_task` is false. Only USER, ASSISTANT and SYSTEM
/// messages can be pinned: a tool call, tool result or thinking block is sent with its step.
/// Pinning a pinned message, or unpinning one the host did not pin, succeeds and changes
/// nothing. Pins are saved with the window. Re-enforces the strategy.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_OUT_OF_RANGE` when
/// `index >= ctxwin_window_message_count(w)` or when the pinned messages would total more
/// than the history budget or leave no room in the context limit (the message names the
/// total), or `CTXWIN_STATUS_INVALID_ARG` for a TOOL_CALL, TOOL_RESULT or THINKING message.
/// Nothing changes on failure.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.3
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_pin(w: *mut ctxwin_window, index: usize, pinned: bool) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| Ok(window.pin(index, pinned)?))
    }
}

/// True when message `index` is sent whatever the boundary: a SYSTEM message, a message
/// before the first USER message, the task (unless `pin_task` is false), a message pinned
/// with `ctxwin_window_pin`, or the USER message of the turn `ctxwin_window_start` falls
/// inside. Under plain `sliding` a request builder sends the pinned messages before
/// `ctxwin_window_start(w)`, then every message from it (see `ctxwin_window_start`).
/// O(log messages).
///
/// Returns false for NULL, a poisoned window or an index past the last message.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.3
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
#[must_use]
pub unsafe extern "C" fn ctxwin_window_is_pinned(w: *const ctxwin_window, index: usize) -> bool {
    ffi_boundary! { try_ref!(w).value(|window| window.is_pinned_at(index)) }
}

/// Explains the most recent failure on `w` (empty before any failure). A successful call
/// does not clear it; this call itself never records a failure on `w`. A failure with no
/// window to hold it (a constructor, a stateless function) is explained by
/// `ctxwin_last_error`, declared next.
///
/// Writes at most `cap` bytes including a NUL into `buf` and sets `*needed` (may be NULL) to
/// the full length without the NUL. `buf = NULL, cap = 0` queries the length (and succeeds).
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` (NULL `w`, or NULL `buf` with
/// non-zero `cap`), or `CTXWIN_STATUS_BUFFER_TOO_SMALL` (a NUL-terminated prefix was written).
/// Works on a poisoned window.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_last_error(
    w: *const ctxwin_window,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        let message = try_ref!(w).last_error();
        // SAFETY: forwarded from this function's contract.
        unsafe { write_message(&message, buf, cap, needed) }
    }
}

/// Explains the most recent failure of any ctxwin call on the calling thread (empty before
/// any failure). It is the only explanation of a failed constructor (`ctxwin_window_new`,
/// `ctxwin_window_clone`, `ctxwin_window_load`, `ctxwin_window_import`,
/// `ctxwin_window_import_checked`, `ctxwin_tokenizer_load`, `ctxwin_tokenizer_from_bytes`),
/// of a stateless function (`ctxwin_count_text`, `ctxwin_count_tools_json`,
/// `ctxwin_classify_error`, `ctxwin_tokenizer_count`) and of a call given a NULL handle;
/// a failed call on a window records the same message on the window too
/// (`ctxwin_window_last_error`). A successful call does not clear it; this call itself never
/// records a failure.
///
/// Parameters: `buf`, `cap` and `needed` (may be NULL) follow the string-out convention:
/// at most `cap` bytes including a NUL, `*needed` set to the full length without the NUL;
/// `buf = NULL, cap = 0` queries the length (and succeeds).
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` (NULL `buf` with non-zero `cap`) or
/// `CTXWIN_STATUS_BUFFER_TOO_SMALL` (a NUL-terminated prefix was written).
///
/// Thread-safety: safe to call from any thread; each thread reads its own last error, so
/// read it on the thread that made the failed call, before that thread's next failure.
///
/// Since: 0.2
///
/// # Safety
/// `buf` is NULL or valid for `cap` bytes; `needed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_last_error(buf: *mut c_char, cap: usize, needed: *mut usize) -> ctxwin_status {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { write_message(&last_error::message(), buf, cap, needed) }
    }
}

/// Writes a last-error message to the caller's buffer; a buffer problem is not recorded.
///
/// # Safety
/// `buf` is NULL or valid for `cap` bytes; `needed` is NULL or writable.
unsafe fn write_message(message: &str, buf: *mut c_char, cap: usize, needed: *mut usize) -> ctxwin_status {
    // SAFETY: forwarded from this function's contract.
    match unsafe { OutBuffer::new(buf, cap, needed) }.and_then(|out| out.write(message)) {
        Ok(()) => ctxwin_status::Ok,
        Err(e) => e.status,
    }
}

/// Calibrates estimates from a provider's usage report: the request that carried the
/// overhead, the pinned messages before `end`, the summary in place and the messages
/// `first..end` reported
/// `prompt_tokens` prompt tokens (OpenAI `usage.prompt_tokens`, Anthropic `input_tokens`
/// plus cache tokens, Gemini `promptTokenCount`).
///
/// The part of the report above the exact counts teaches the window how the provider's
/// count relates to its estimates: a ratio of real to estimated tokens, and an overhead
/// every request holds that was not declared with `ctxwin_window_set_overhead`
/// (`ctxwin_window_calibration` shows both and how they are fitted: one small report cannot
/// swing the ratio, recent reports weigh most). Every estimated count is then scaled by the
/// ratio, still flagged `exact = false`, the learned overhead is added to every request's
/// tokens, and the strategy is re-enforced. Raw counts stay cached: nothing is recounted. A
/// request with exact counts only teaches nothing; its total is still recorded as the
/// provider's last prompt total (which the `summary` strategy's trigger watches).
/// `ctxwin_window_set_model` forgets the calibration.
///
/// A report counts once: the same total for the same range again changes nothing and
/// returns OK (for the request last prepared or rendered, see
/// `ctxwin_window_observe_last_usage`).
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_OUT_OF_RANGE` when
/// `first > end` or `end` exceeds the message count, `CTXWIN_STATUS_INVALID_ARG` for a
/// negative total, or `CTXWIN_STATUS_MISMATCH`, changing nothing, when no request of this
/// range could explain the total: below the exact part of the request, not above it while
/// the request holds estimates, or above the most it could hold (twice its estimated part
/// plus 32768 tokens of undeclared overhead beyond its exact part: an agent whose requests
/// send more than that declares it with `ctxwin_window_set_overhead`). `last_error` gives
/// the numbers.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_observe_usage(
    w: *mut ctxwin_window,
    first: usize,
    end: usize,
    prompt_tokens: i64,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| Ok(window.observe_usage(first, end, prompt_tokens)?))
    }
}
