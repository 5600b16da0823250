//! The provider error classifier: stateless and safe to call from any thread.

use super::boundary::{ffi_boundary, out_arg, str_arg};
use super::error::{FfiError, ctxwin_status};
use super::last_error;
use crate::classify::{ErrorCategory, ErrorInfo, classify};
use libc::c_char;

/// Error category: anything else (authentication, server errors, unknown wording).
pub const CTXWIN_ERR_CAT_OTHER: i32 = 0;
/// Error category: the prompt does not fit in the model's context window.
pub const CTXWIN_ERR_CAT_CONTEXT_OVERFLOW: i32 = 1;
/// Error category: the requested output (`max_tokens`) is larger than the model allows.
pub const CTXWIN_ERR_CAT_OUTPUT_LIMIT: i32 = 2;
/// Error category: a transient rate limit (requests or tokens per minute); retry later.
pub const CTXWIN_ERR_CAT_RATE_LIMIT: i32 = 3;
/// Error category: quota, billing or credits exhausted; retrying soon will not help.
pub const CTXWIN_ERR_CAT_QUOTA: i32 = 4;
/// Error category: the provider rejected the message sequence (unpaired tool calls, roles).
pub const CTXWIN_ERR_CAT_INVALID_HISTORY: i32 = 5;

/// What a provider error says, as far as context management is concerned.
///
/// The numbers are filled only for `CTXWIN_ERR_CAT_CONTEXT_OVERFLOW` and
/// `CTXWIN_ERR_CAT_OUTPUT_LIMIT`, and only when the message states them; a number the
/// message does not state is -1.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ctxwin_error_info {
    /// One of `CTXWIN_ERR_CAT_*`.
    pub category: i32,
    /// The model's maximum (context window, or maximum output tokens), or -1.
    pub limit: i64,
    /// What the request had (prompt tokens, or prompt plus requested completion when the
    /// provider counts both), or -1.
    pub actual: i64,
    /// How far over the limit the request was (`actual - limit` when both are known, else
    /// what the message states), or -1.
    pub excess: i64,
}

impl From<ErrorInfo> for ctxwin_error_info {
    fn from(info: ErrorInfo) -> ctxwin_error_info {
        ctxwin_error_info {
            category: info.category as i32,
            limit: info.limit.unwrap_or(-1),
            actual: info.actual.unwrap_or(-1),
            excess: info.excess.unwrap_or(-1),
        }
    }
}

impl TryFrom<ctxwin_error_info> for ErrorInfo {
    type Error = FfiError;

    fn try_from(info: ctxwin_error_info) -> Result<ErrorInfo, FfiError> {
        let category = ErrorCategory::from_code(info.category).ok_or_else(|| {
            FfiError::new(
                ctxwin_status::InvalidArg,
                format!("unknown error category {} (expected 0 to 5, see CTXWIN_ERR_CAT_*)", info.category),
            )
        })?;
        let known = |n: i64| (n >= 0).then_some(n);
        Ok(ErrorInfo { category, limit: known(info.limit), actual: known(info.actual), excess: known(info.excess) })
    }
}

/// Classifies an error body or message a provider returned: a context overflow, an output
/// limit, a rate limit, a quota, a rejected history, or something else; and reads the token
/// numbers the message states.
///
/// Understands OpenAI (Chat and Responses), Azure, Anthropic, Gemini and Vertex AI, Bedrock,
/// Mistral, OpenRouter, llama.cpp, vLLM, Ollama and other OpenAI-compatible servers, as a
/// raw JSON body, a plain message or a log line embedding an escaped body. For example "This
/// model's maximum context length is 128000 tokens. However, your messages resulted in 130512
/// tokens." gives `CTXWIN_ERR_CAT_CONTEXT_OVERFLOW`, limit 128000, actual 130512, excess
/// 2512. "Rate limit exceeded" and "quota exceeded" are not overflows. Only the first 256 KiB
/// of `text` are examined.
///
/// Parameters:
/// - `text`, `len`: borrowed UTF-8, not NUL-terminated; `(NULL, 0)` is empty (category
///   OTHER).
/// - `out`: caller-owned; written only on success. Numbers the message does not state are -1.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` (NULL `out`, or NULL `text` with a
/// length) or `CTXWIN_STATUS_INVALID_UTF8`.
/// `ctxwin_last_error` explains a failure.
///
/// Thread-safety: safe to call from any number of threads at once.
///
/// Since: 0.1
///
/// # Safety
/// `text` is NULL or valid for `len` bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_classify_error(text: *const c_char, len: usize, out: *mut ctxwin_error_info) -> ctxwin_status {
    ffi_boundary! {
        let classified = || -> Result<(), FfiError> {
            // SAFETY: forwarded from this function's contract.
            let (text, out) = unsafe { (str_arg(text, len, "text")?, out_arg(out, "out")?) };
            *out = classify(text).into();
            Ok(())
        };
        last_error::settle(classified())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_constants_match_the_classifier() {
        let constants = [
            CTXWIN_ERR_CAT_OTHER,
            CTXWIN_ERR_CAT_CONTEXT_OVERFLOW,
            CTXWIN_ERR_CAT_OUTPUT_LIMIT,
            CTXWIN_ERR_CAT_RATE_LIMIT,
            CTXWIN_ERR_CAT_QUOTA,
            CTXWIN_ERR_CAT_INVALID_HISTORY,
        ];
        for (constant, category) in constants.into_iter().zip(ErrorCategory::ALL) {
            assert_eq!(constant, category as i32, "{category:?}");
        }
    }
}
