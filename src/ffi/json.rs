//! Provider JSON: push wire messages, render what is sent, count tool definitions.

use super::boundary::{ffi_boundary, out_arg, str_arg, try_mut, try_ref};
use super::count::ctxwin_count;
use super::error::{FfiError, ctxwin_status};
use super::handle::ctxwin_window;
use super::last_error;
use crate::json;
use crate::limits::MessageLimit;
use crate::tokens::Model;
use libc::c_char;

/// Appends provider messages given as JSON, in the shape the agent sends its provider: one
/// message object, an array of them, JSON Lines (one message per line, blank lines skipped;
/// errors name the line), or a whole request body holding its conversation under
/// `messages`, `input` or `contents` (its system prompt, `system` / `systemInstruction` /
/// `instructions`, becomes one pinned SYSTEM message before the conversation, and its `tools`
/// are counted as with `ctxwin_count_tools_json` into the tools overhead). The same things
/// `ctxwin inspect` reads.
///
/// Since 0.3, a provider's whole (not streamed) response object may be pushed as it came: it
/// pushes the message(s) it holds and nothing else of it: a Chat completion its
/// `choices[0].message`, a Responses `response` the items of its `output` (as one array), an
/// Anthropic `Message` its `role` and `content` (its `id`, `type`, `model`, `stop_reason` and
/// `usage` are not sent back), a Gemini `GenerateContentResponse` its `candidates[0].content`. The window then
/// speaks that format. A response with several choices or candidates, with none, with a
/// candidate without content or an empty `output`, and a streamed chunk or event are refused
/// (`CTXWIN_STATUS_INVALID_ARG`), last_error saying what to push (docs/pushing-responses.md).
///
/// Formats: OpenAI Chat Completions (`messages`: string or array content, `tool_calls`,
/// role `tool`), OpenAI Responses (`input` items: messages, `function_call`,
/// `function_call_output`, `reasoning`), Anthropic Messages (content blocks: text, image,
/// tool_use, tool_result, thinking, redacted_thinking) and Gemini (`contents` with parts:
/// text, functionCall, functionResponse, inlineData). The format is recognised from the
/// messages; a window holds one format (the configuration key `format`): a message of
/// another recognisable format is `CTXWIN_STATUS_MISMATCH`, one that fits several is read in
/// the window's.
///
/// Each wire message becomes one ledger message per run of content of one kind: an assistant
/// message with text and two tool calls is ASSISTANT + TOOL_CALL + TOOL_CALL; a user message
/// carrying tool results and text is TOOL_RESULT messages (ending the previous turn) then a
/// USER message (starting a new one). Tool call ids are kept. Texts are counted with the
/// window's model (a tool call: its name and arguments); images by the provider's rule
/// (OpenAI's tiles, exact when the size is readable from base64 PNG/JPEG/GIF/WebP data;
/// Anthropic's width*height/750 and Gemini's tiles, estimates; 1024x1024 assumed, as an
/// estimate, when the size is unknown). The JSON is kept verbatim (unless `retain_text` is
/// false) for `ctxwin_window_render_json`.
///
/// Parameters: `w` is borrowed mutably; `json`, `len` is borrowed UTF-8, not NUL-terminated.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_INVALID_UTF8`;
/// `CTXWIN_STATUS_PARSE` for malformed JSON (last_error gives the line and column);
/// `CTXWIN_STATUS_INVALID_ARG` for a message the format does not allow (last_error names
/// the element, its line and the field, such as `element 2 (line 4), field 'role'`);
/// `CTXWIN_STATUS_MISMATCH` for a message (or response object) in another format than the
/// window's;
/// `CTXWIN_STATUS_OUT_OF_RANGE` for a document above `max_message_bytes` (checked before it
/// is read). All or
/// nothing: on failure nothing is appended. Does not move the boundary
/// (`ctxwin_window_end_turn` does).
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `json` is NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_push_json(w: *mut ctxwin_window, json: *const c_char, len: usize) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            window.check_message_size(len)?;
            // SAFETY: forwarded from this function's contract.
            let json = unsafe { str_arg(json, len, "json") }?;
            json::push_json(window, json)?;
            Ok(())
        })
    }
}

/// Writes what the next request sends, as a JSON array in the window's format (the
/// configuration key `format`; with `"auto"`, the format of the first JSON message only one
/// format has, or before any the model family's: Anthropic for claude-*, Gemini for
/// gemini-*, else OpenAI Chat Completions), to splice into the request body as `messages`,
/// `input` or `contents`: the pinned messages and the live messages, in order.
/// `ctxwin_window_render_request` writes the whole body instead, system prompt included.
///
/// One assistant step (its thinking, text and tool calls, whatever route pushed them) is
/// one message, followed by the answers to its calls as the format expects them (Chat:
/// consecutive `tool` messages; Anthropic: one user message whose `tool_result` blocks come
/// first; Gemini: one `user` content of `functionResponse` parts). A call the step left
/// unanswered is answered with the cancelled result; a result that answers no call of the
/// step just before it is left out, and so is a call reusing the id of one sent earlier in
/// its turn (as the view leaves it out), even before `ctxwin_window_prepare`. Tool messages pushed without an id are given one,
/// `ctxwin_call_<ledger index of the call>`; an id-less result answers the oldest
/// unanswered id-less call of its step. Anthropic messages alternate, starting with the
/// user (`[Conversation start]` when the view starts with an assistant message).
///
/// A message pushed with `ctxwin_window_push_json` and sent whole and alone is its original
/// JSON byte for byte, unknown fields included. One only part of which is sent (the window
/// boundary fell inside it) is its original object keeping only the sent parts' blocks;
/// one merged with others of its step is re-serialised compactly. Messages pushed as plain
/// text become messages of their kind; kinds a format has no message for are left out:
/// SYSTEM for Anthropic and Gemini (`render_request` puts them in `system` /
/// `systemInstruction`), THINKING for all but Gemini (the others need the provider's
/// signature or encrypted content). SYSTEM messages come first in the OpenAI formats. An
/// empty text makes no message; in Anthropic's format, which refuses text blocks without
/// non-whitespace text, neither does a whitespace-only one (such a tool result is sent
/// without `content`, such a SYSTEM text adds no `system` block), and an Anthropic message
/// pushed as JSON is sent without its blank text blocks (Anthropic's answers hold them,
/// and it refuses them sent back), or not at all when nothing else is left; the other
/// formats send whitespace as it is.
///
/// A successful render is recorded as the window's last request (its first live message and
/// the message count), so `ctxwin_window_observe_last_usage` can attribute the provider's
/// usage report to it without the caller recording a range.
///
/// With the `cache_breakpoints` setting and Anthropic messages, `cache_control` marks the
/// last block of the last message inside the stable prefix of the last
/// `ctxwin_window_prepare` and of the newest message (re-serialised), within Anthropic's four
/// breakpoints per request counting those already in the messages.
///
/// Parameters: `w` is borrowed; `buf` (caller-owned, `cap` bytes) receives the JSON and a
/// NUL; `needed` may be NULL, otherwise receives the full length without the NUL.
/// `buf = NULL, cap = 0` queries the length.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG` (NULL `w`, or NULL `buf` with
/// non-zero `cap`); `CTXWIN_STATUS_BUFFER_TOO_SMALL` (a NUL-terminated prefix was written;
/// `*needed` says how much is required); `CTXWIN_STATUS_UNSUPPORTED` when a message must be
/// rebuilt but the window keeps counts only (`retain_text` false).
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_render_json(
    w: *const ctxwin_window,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        let handle = try_ref!(w);
        // SAFETY: forwarded from this function's contract.
        unsafe { handle.inspect_text(buf, cap, needed, |window| Ok(json::render_json(window)?)) }
    }
}

/// Writes the whole request body to POST: the agent's `base` body (its model, limits,
/// tools...) with the window's conversation and system prompt placed as the window's format
/// wants them (`ctxwin_window_configure` key `format`):
/// - `openai_chat`: `"messages"`, SYSTEM messages first;
/// - `openai_responses`: `"input"`, SYSTEM messages first as `system` messages (an
///   `"instructions"` key of `base` is kept as it is);
/// - `anthropic`: `"system"` (text blocks, after those of a `"system"` already in `base`) and
///   `"messages"`;
/// - `gemini`: `"systemInstruction"` (parts, after those of a `"systemInstruction"` or
///   `"system_instruction"` already in `base`) and `"contents"`.
///
/// The conversation is `ctxwin_window_render_json`'s: one assistant step is one message
/// whatever the route it was pushed by and whatever the strategy did (Chat `content` +
/// `tool_calls`; Anthropic one message of blocks; Gemini one `model` content), its answers
/// as the format expects them, every call answered (a call left without a result is
/// answered with the cancelled result, which `ctxwin_window_live_tokens` counts; a Responses
/// call OpenAI runs itself, such as `web_search_call`, takes none, and an unanswered
/// `computer_call` or `shell_call` is left out), no result without its call; Anthropic and
/// Gemini messages alternate user/assistant, consecutive ones of one role merged. A
/// provider's compaction pushed as JSON (an Anthropic `compaction` block, a Responses
/// `compaction` item) is sent where it stands, nothing it replaced before it. The base's
/// other keys are kept in their order (re-serialised compactly).
///
/// Parameters:
/// - `base`, `base_len`: borrowed UTF-8 JSON object, the body without its conversation;
///   `(NULL, 0)` is `{}`. It may hold the conversation key only empty (`[]` or `null`).
/// - `buf`, `cap`, `needed`: as for every string out: at most `cap` bytes including a NUL;
///   `*needed` (may be NULL) receives the full length; `buf = NULL, cap = 0` queries it.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_INVALID_UTF8`;
/// `CTXWIN_STATUS_PARSE` for a base that is not JSON; `CTXWIN_STATUS_INVALID_ARG` for a base
/// that is not an object, that already holds a conversation, or whose system key has another
/// shape (`ctxwin_window_last_error` names the key); `CTXWIN_STATUS_OUT_OF_RANGE` when the
/// view holds no message to send (every provider refuses an empty conversation);
/// `CTXWIN_STATUS_BUFFER_TOO_SMALL`; `CTXWIN_STATUS_UNSUPPORTED` when a message must be
/// rebuilt but the window keeps counts only. Never changes the window.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle; `base` is NULL or valid for `base_len` bytes; `buf` is NULL
/// or valid for `cap` bytes; `needed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_render_request(
    w: *const ctxwin_window,
    base: *const c_char,
    base_len: usize,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        let handle = try_ref!(w);
        // SAFETY: forwarded from this function's contract (for `buf`, `needed` and `base`).
        unsafe {
            handle.inspect_text(buf, cap, needed, |window| {
                let base = str_arg(base, base_len, "base")?;
                Ok(json::render_request(window, base)?)
            })
        }
    }
}

/// Counts the tokens of tool (function) definitions, for `ctxwin_window_set_overhead`.
///
/// Parameters:
/// - `model`, `model_len`: borrowed UTF-8 model name, as for `ctxwin_count_text`.
/// - `json`, `len`: borrowed UTF-8 JSON: an array of tool definitions (or one), in any
///   provider's shape: OpenAI Chat `{"type":"function","function":{...}}`, OpenAI Responses
///   `{"type":"function","name":...}`, Anthropic `{"name","description","input_schema"}`,
///   Gemini `{"functionDeclarations":[...]}`. Each function counts its name, description and
///   compact parameter schema; a built-in tool counts its JSON.
/// - `out`: caller-owned; written only on success. Always an estimate (`exact` false):
///   providers do not publish how they render definitions into the prompt.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_INVALID_UTF8`;
/// `CTXWIN_STATUS_PARSE` for malformed JSON; `CTXWIN_STATUS_INVALID_ARG` for a definition
/// without a name or a value that is not an array or object; `CTXWIN_STATUS_OUT_OF_RANGE`
/// for definitions above `CTXWIN_DEFAULT_MAX_MESSAGE_BYTES` (checked before they are read).
/// `ctxwin_last_error` explains a failure.
///
/// Thread-safety: safe to call from any number of threads at once.
///
/// Since: 0.1
///
/// # Safety
/// Each pointer is NULL or valid for its stated length; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_count_tools_json(
    model: *const c_char,
    model_len: usize,
    json: *const c_char,
    len: usize,
    out: *mut ctxwin_count,
) -> ctxwin_status {
    ffi_boundary! {
        let counted = || -> Result<(), FfiError> {
            MessageLimit::check_tool_definitions(len)?;
            // SAFETY: forwarded from this function's contract.
            let (model, json, out) = unsafe {
                (str_arg(model, model_len, "model")?, str_arg(json, len, "json")?, out_arg(out, "out")?)
            };
            *out = json::count_tools(&Model::resolve(model), json)?.into();
            Ok(())
        };
        last_error::settle(counted())
    }
}
