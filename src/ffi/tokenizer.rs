//! Tokenizers loaded from files: exact counts for the families that publish theirs.

use super::boundary::{bytes_arg, ffi_boundary, in_arg, out_arg, str_arg, try_mut, try_ref};
use super::count::ctxwin_count;
use super::error::{FfiError, ctxwin_status};
use super::handle::{ctxwin_tokenizer, ctxwin_window};
use super::last_error;
use super::persist::path_arg;
use crate::Window;
use crate::limits::MessageLimit;
use crate::tokens::{Count, Tokenizer, saturate_u32};
use libc::c_char;

/// Writes a new tokenizer to `out` when `load` succeeds.
///
/// # Safety
/// `out` is NULL or writable; `options` is NULL or valid for `options_len` bytes.
unsafe fn construct(
    options: *const c_char,
    options_len: usize,
    out: *mut *mut ctxwin_tokenizer,
    load: impl FnOnce(&str) -> crate::error::Result<Tokenizer>,
) -> ctxwin_status {
    let built = || -> Result<(), FfiError> {
        // SAFETY: forwarded from this function's contract.
        let (options, out) = unsafe { (str_arg(options, options_len, "options")?, out_arg(out, "out")?) };
        *out = ctxwin_tokenizer::into_raw(load(options)?);
        Ok(())
    };
    last_error::settle(built())
}

/// Loads a tokenizer from the file at `path`, recognising its format from the content:
/// a Hugging Face `tokenizer.json` with a BPE model (byte-level: Llama 3, Qwen 2.5 / 3,
/// DeepSeek; or character-level with byte fallback: Gemma 3), Mistral's `tekken.json`, or a
/// tiktoken-format ranks file (Llama 3 / 4 `tokenizer.model`, `qwen.tiktoken`).
///
/// The file is read into memory, never mapped (another process truncating a mapped file
/// would end this one with `SIGBUS`); only a regular file of at most 4 GB is read.
///
/// Parameters:
/// - `path`, `path_len`: borrowed file path (bytes, not NUL-terminated).
/// - `options`, `options_len`: borrowed UTF-8 JSON object carrying what the file lacks, or
///   `(NULL, 0)`. A ranks file needs `{"pre_tokenizer":"llama3"}` (or `"llama4"`,
///   `"tekken"`, `"qwen"`, `"qwen3.5"`) or `{"pattern":"<regex>"}`, optionally with `"nfc":true`; the
///   JSON formats take no options. As in tiktoken, text the pattern does not match counts
///   nothing; a pattern that matches the empty string is refused.
/// - `out`: caller-owned; on success receives a new tokenizer to release with
///   `ctxwin_tokenizer_free`; untouched on failure.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_INVALID_ARG` for an
/// empty path or options that are malformed or do not apply; `CTXWIN_STATUS_IO` when the
/// file cannot be read or is not a regular file (a FIFO, a device); `CTXWIN_STATUS_UNSUPPORTED` for a kind of file or a feature it does
/// not cover (a SentencePiece unigram model, WordPiece, an unusual normalizer or
/// pre-tokenizer): never a tokenizer that would count wrongly; `CTXWIN_STATUS_PARSE` for a
/// truncated or inconsistent file. `ctxwin_last_error` explains a failure.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.2
///
/// # Safety
/// `path` is NULL or valid for `path_len` bytes; `options` is NULL or valid for
/// `options_len` bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_tokenizer_load(
    path: *const c_char,
    path_len: usize,
    options: *const c_char,
    options_len: usize,
    out: *mut *mut ctxwin_tokenizer,
) -> ctxwin_status {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        let path = match unsafe { path_arg(path, path_len) } {
            Ok(path) => path,
            Err(e) => return last_error::settle(Err(e)),
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { construct(options, options_len, out, |options| Tokenizer::load(path, options)) }
    }
}

/// Reads a tokenizer from the bytes of its file, as `ctxwin_tokenizer_load` reads the file.
///
/// Parameters: `data`, `len` are the borrowed file contents (copied as needed; the caller
/// may release them on return); `options`, `options_len` and `out` as for
/// `ctxwin_tokenizer_load`.
///
/// Returns the statuses of `ctxwin_tokenizer_load` except `CTXWIN_STATUS_IO`.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.2
///
/// # Safety
/// `data` is NULL or valid for `len` bytes; `options` is NULL or valid for `options_len`
/// bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_tokenizer_from_bytes(
    data: *const c_char,
    len: usize,
    options: *const c_char,
    options_len: usize,
    out: *mut *mut ctxwin_tokenizer,
) -> ctxwin_status {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        let data = match unsafe { bytes_arg(data, len, "data") } {
            Ok(data) => data,
            Err(e) => return last_error::settle(Err(e)),
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { construct(options, options_len, out, |options| Tokenizer::from_bytes(data, options)) }
    }
}

/// Counts the tokens of `text` with `t`, exactly as the family's own tokenizer does without
/// adding special tokens around it (Hugging Face `encode(text, add_special_tokens=False)`,
/// tiktoken `encode_ordinary`); never builds the tokens. In a `tokenizer.json` tokenizer an
/// added token written in the text (`<|im_start|>`) counts one, as it does there.
///
/// Parameters: `t` is borrowed; `text`, `len` is borrowed UTF-8, not NUL-terminated
/// (`(NULL, 0)` is empty); `out` is caller-owned, written only on success.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG`; `CTXWIN_STATUS_INVALID_UTF8`;
/// `CTXWIN_STATUS_OUT_OF_RANGE` when `len` exceeds `CTXWIN_DEFAULT_MAX_MESSAGE_BYTES`. The
/// count is exact (`exact = true`) unless a pathological split pattern from the file or
/// the options gave up on the text: then it is an estimate, flagged `exact = false`.
///
/// Thread-safety: safe to call from any number of threads at once.
///
/// Since: 0.2
///
/// # Safety
/// `t` is NULL or a live tokenizer; `text` is NULL or valid for `len` bytes; `out` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_tokenizer_count(
    t: *const ctxwin_tokenizer,
    text: *const c_char,
    len: usize,
    out: *mut ctxwin_count,
) -> ctxwin_status {
    ffi_boundary! {
        let t = try_ref!(t);
        let counted = || -> Result<(), FfiError> {
            MessageLimit::check_unconfigured(len)?;
            // SAFETY: forwarded from this function's contract.
            let (text, out) = unsafe { (str_arg(text, len, "text")?, out_arg(out, "out")?) };
            let count = match t.shared().count(text) {
                Ok(tokens) => Count::exact(saturate_u32(tokens as u64)),
                Err(_) => Count::estimate(saturate_u32(text.len().div_ceil(4) as u64)),
            };
            *out = count.into();
            Ok(())
        };
        last_error::settle(counted())
    }
}

/// Releases a tokenizer. NULL is a no-op; must not be called twice. Windows that count
/// with it (`ctxwin_window_set_tokenizer`) keep it and go on counting exactly.
///
/// Thread-safety: no other thread may use this handle during or after the call.
///
/// Since: 0.2
///
/// # Safety
/// `t` is NULL or a live tokenizer from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_tokenizer_free(t: *mut ctxwin_tokenizer) {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { ctxwin_tokenizer::free(t) }
    }
}

/// Makes `w` count with `t` from now on, exactly, as `ctxwin_window_set_model` does with a
/// built-in encoding: every message the window counted and still has the text of is
/// recounted (a counts-only window flags what it cannot recount as estimates), counts
/// given with `ctxwin_window_push_counted` stay as given, the calibration is forgotten and
/// the strategy is re-enforced. The model name, and its context limit, stay.
///
/// The window shares `t`: the caller may free its handle at once. A saved window records
/// which tokenizer it counted with (a fingerprint of the file and options). A window
/// restored from it (`ctxwin_window_import`, `_load`) has no tokenizer and recounts with
/// what the model name gives (estimates unless it is an OpenAI model) until the same
/// tokenizer is set again; `ctxwin_window_restore` into a window that has a tokenizer
/// keeps it and recounts with it. `ctxwin_window_tokenizer_changed` says when either
/// happened with another tokenizer than the saved one. A message kept without its text
/// (`retain_text` false) cannot be recounted: it becomes an estimate, and takes its saved
/// exact count again when the tokenizer the saved window counted with is set again (since
/// 0.3).
///
/// Returns `CTXWIN_STATUS_OK` or `CTXWIN_STATUS_NULL_ARG`.
///
/// Thread-safety: `w` must not be in use by another thread; `t` may be.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live window; `t` is NULL or a live tokenizer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_tokenizer(w: *mut ctxwin_window, t: *const ctxwin_tokenizer) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            // SAFETY: forwarded from this function's contract.
            let t = unsafe { in_arg(t, "t") }?;
            window.set_tokenizer(t.shared().clone());
            Ok(())
        })
    }
}

/// Whether `w` was restored from a saved document (`ctxwin_window_import`, `_load`,
/// `_restore`) whose counts were made with another tokenizer than the one `w` counts with
/// now: a different loaded tokenizer, or one where `w` has none, or none where `w` has one
/// (`ctxwin_window_set_tokenizer`). Its messages were then recounted, so their counts differ
/// from the saved ones. False for a window never restored, and once the tokenizer the
/// document was counted with is set again (the counts are then the saved ones).
///
/// Returns false for NULL or a poisoned window.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.2
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
#[must_use]
pub unsafe extern "C" fn ctxwin_window_tokenizer_changed(w: *const ctxwin_window) -> bool {
    ffi_boundary! { try_ref!(w).value(Window::tokenizer_changed) }
}
