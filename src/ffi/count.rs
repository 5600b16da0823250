//! Token counting: stateless and safe to call from any thread.

use super::boundary::{ffi_boundary, out_arg, str_arg};
use super::buffer::OutBuffer;
use super::error::{FfiError, ctxwin_status};
use super::last_error;
use crate::limits::MessageLimit;
use crate::tokens::{Count, Model, format_count};
use libc::c_char;

/// A token count and whether it is exact.
///
/// `exact` is true when the count comes from the model's public tokenizer (OpenAI's
/// encodings) or from the caller; false for estimates, which a UI prints with `~`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ctxwin_count {
    /// Number of tokens.
    pub tokens: i32,
    /// True when `tokens` is exact for the model.
    pub exact: bool,
}

impl From<Count> for ctxwin_count {
    fn from(count: Count) -> ctxwin_count {
        ctxwin_count { tokens: i32::try_from(count.tokens).unwrap_or(i32::MAX), exact: count.exact }
    }
}

impl TryFrom<ctxwin_count> for Count {
    type Error = FfiError;

    fn try_from(count: ctxwin_count) -> Result<Count, FfiError> {
        let tokens = u32::try_from(count.tokens).map_err(|_| {
            FfiError::new(ctxwin_status::InvalidArg, format!("token count must not be negative (got {})", count.tokens))
        })?;
        Ok(Count { tokens, exact: count.exact })
    }
}

/// Counts the tokens of `text` for `model`.
///
/// Parameters:
/// - `model`, `model_len`: borrowed UTF-8 model name, as users write it (`gpt-4o`,
///   `openai/gpt-4o`, `claude-sonnet-4-5`, or an encoding name such as `o200k_base`).
///   An unknown model is not an error: its count is an estimate.
/// - `text`, `len`: borrowed UTF-8 text, not NUL-terminated; `(NULL, 0)` is empty.
/// - `out`: caller-owned; written only on success.
///
/// Returns `CTXWIN_STATUS_OK`; `CTXWIN_STATUS_NULL_ARG` when `out` is NULL or a pointer is
/// NULL with a non-zero length; `CTXWIN_STATUS_INVALID_UTF8`; `CTXWIN_STATUS_OUT_OF_RANGE`
/// when `len` exceeds `CTXWIN_DEFAULT_MAX_MESSAGE_BYTES` (checked before the text is read:
/// exact counting needs memory proportional to the text). Counts above `INT32_MAX` saturate.
/// `ctxwin_last_error` explains a failure.
///
/// Thread-safety: safe to call from any number of threads at once.
///
/// Since: 0.1
///
/// # Safety
/// Each pointer is NULL or valid for its stated length; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_count_text(
    model: *const c_char,
    model_len: usize,
    text: *const c_char,
    len: usize,
    out: *mut ctxwin_count,
) -> ctxwin_status {
    ffi_boundary! {
        let counted = || -> Result<(), FfiError> {
            MessageLimit::check_unconfigured(len)?;
            // SAFETY: forwarded from this function's contract.
            let (model, text, out) = unsafe {
                (str_arg(model, model_len, "model")?, str_arg(text, len, "text")?, out_arg(out, "out")?)
            };
            *out = Model::resolve(model).count(text).into();
            Ok(())
        };
        last_error::settle(counted())
    }
}

/// Formats a count compactly for a UI: `950`, `1.5k`, `77k`, `~77k` (an estimate), `1.2M`.
///
/// Writes at most `cap` bytes including a terminating NUL into `buf`, like `snprintf`.
/// `buf` may be NULL when `cap` is 0 (a length query). A negative count is formatted as 0.
///
/// Returns the length of the full text without the NUL (at most 16); the text was cut
/// when the return value is `>= cap`.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
///
/// # Safety
/// `buf` is NULL or points to `cap` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_format_count(count: ctxwin_count, buf: *mut c_char, cap: usize) -> usize {
    ffi_boundary! {
        let text = format_count(Count {
            tokens: u32::try_from(count.tokens).unwrap_or(0),
            exact: count.exact,
        });
        let buf = if cap == 0 { std::ptr::null_mut() } else { buf };
        // SAFETY: forwarded from this function's contract.
        if let Ok(out) = unsafe { OutBuffer::new(buf, cap, std::ptr::null_mut()) } {
            // snprintf semantics: a cut text is reported through the return value.
            let _ = out.write(&text);
        }
        text.len()
    }
}

/// The context window of `model` in tokens, or 0 when the model is unknown (or the name is
/// NULL with a length, or not UTF-8).
///
/// Knows the current OpenAI, Anthropic and Google families; provider prefixes and case are
/// ignored as in `ctxwin_count_text`.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
///
/// # Safety
/// `model` is NULL or valid for `model_len` bytes.
#[unsafe(no_mangle)]
#[must_use]
pub unsafe extern "C" fn ctxwin_model_context_limit(model: *const c_char, model_len: usize) -> i32 {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        match unsafe { str_arg(model, model_len, "model") } {
            Ok(model) => Model::resolve(model)
                .context_limit()
                .map_or(0, |limit| i32::try_from(limit).unwrap_or(i32::MAX)),
            Err(_) => 0,
        }
    }
}

/// True when `model` is a name the library recognises: an OpenAI model or encoding name
/// (exact counts), a model whose context limit it knows, or a family it has an estimate
/// for (Claude, Gemini, Gemma, Llama, Mistral, DeepSeek, Qwen); provider prefixes and case are ignored as in
/// `ctxwin_count_text`. False for anything else, a misspelling such as `gpt4o` included:
/// such a model is still usable, but its counts are generic estimates and
/// `ctxwin_model_context_limit` is 0. Also false when `model` is NULL with a length or not
/// UTF-8. An agent checks its configured model once at start-up and warns.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.2
///
/// # Safety
/// `model` is NULL or valid for `model_len` bytes.
#[unsafe(no_mangle)]
#[must_use]
pub unsafe extern "C" fn ctxwin_model_known(model: *const c_char, model_len: usize) -> bool {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        match unsafe { str_arg(model, model_len, "model") } {
            Ok(model) => Model::resolve(model).is_known(),
            Err(e) => {
                last_error::record(&e.message);
                false
            }
        }
    }
}
