//! Classification of error bodies and messages returned by LLM providers.
//!
//! [`classify`] takes whatever text an agent got back from a provider (a raw
//! JSON error body, a plain message, or a log line that embeds an escaped
//! JSON body) and tells which of a few actionable categories it belongs to,
//! together with the token numbers the provider stated, if any.
//!
//! The work is split by concept:
//! - `normalize`: bounding the input and folding escapes, case and whitespace;
//! - `category`: the wording and code rules that pick an [`ErrorCategory`];
//! - `extract`: the phrase-anchored rules that read limit/actual/excess;
//! - `numbers`: parsing one token count (thousands separators, overflow);
//! - `pattern`: compiled-once regexes that can never panic.

mod category;
mod extract;
mod normalize;
mod numbers;
mod pattern;

/// What kind of failure a provider reported, as far as context management
/// is concerned. The discriminants are stable and shared with the C ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(i32)]
pub enum ErrorCategory {
    /// Anything else: authentication, server errors, content filters,
    /// unknown wording, empty or garbage text.
    #[default]
    Other = 0,
    /// The prompt (possibly plus the requested completion) does not fit in
    /// the model's context window.
    ContextOverflow = 1,
    /// The requested maximum output (`max_tokens` and friends) is larger than
    /// the model allows, or the output was cut at the length limit.
    OutputLimit = 2,
    /// A transient rate limit (requests or tokens per minute, throttling).
    RateLimit = 3,
    /// Quota, billing or credit exhaustion; retrying soon will not help.
    Quota = 4,
    /// The provider rejected the shape of the message sequence (tool calls
    /// and results not paired, roles not alternating, wrong first message).
    InvalidHistory = 5,
}

impl ErrorCategory {
    /// Every category, in code order.
    pub const ALL: [ErrorCategory; 6] = [
        ErrorCategory::Other,
        ErrorCategory::ContextOverflow,
        ErrorCategory::OutputLimit,
        ErrorCategory::RateLimit,
        ErrorCategory::Quota,
        ErrorCategory::InvalidHistory,
    ];

    /// The category with code `code`, if there is one.
    pub fn from_code(code: i32) -> Option<ErrorCategory> {
        usize::try_from(code).ok().and_then(|i| ErrorCategory::ALL.get(i).copied())
    }
}

/// The result of [`classify`]: a category and the token numbers the
/// provider stated.
///
/// Numbers are only filled for [`ErrorCategory::ContextOverflow`] and
/// [`ErrorCategory::OutputLimit`], and only from phrases that state them;
/// other numbers in the text (HTTP statuses, model names, dates, rate-limit
/// counters) are never taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ErrorInfo {
    /// What kind of failure this is.
    pub category: ErrorCategory,
    /// The model's maximum: context window for an overflow, maximum output
    /// tokens for an output limit.
    pub limit: Option<i64>,
    /// What the request had: prompt tokens, or prompt plus requested
    /// completion when the provider counts both against the window (then it
    /// is the total the provider reports); requested output for an output
    /// limit.
    pub actual: Option<i64>,
    /// How far over the limit the request was. When both `limit` and
    /// `actual` are known this is always `actual - limit` (and `None` if that
    /// is not positive); otherwise it is the excess the message states
    /// directly, if any.
    pub excess: Option<i64>,
}

/// Classify an error body or message returned by an LLM provider. Never panics.
///
/// Only the first 256 KiB of `text` are looked at (error bodies are far
/// smaller), so the cost is bounded and linear whatever the input size.
pub fn classify(text: &str) -> ErrorInfo {
    let folded = normalize::normalize(text);
    let category = category::categorize(&folded);
    let counts = match category {
        ErrorCategory::ContextOverflow => extract::context_overflow(&folded),
        ErrorCategory::OutputLimit => extract::output_limit(&folded),
        _ => extract::Counts::default(),
    };
    ErrorInfo { category, limit: counts.limit, actual: counts.actual, excess: counts.excess }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_blank_are_other() {
        assert_eq!(classify(""), ErrorInfo::default());
        assert_eq!(classify("   \n\t "), ErrorInfo::default());
    }

    #[test]
    fn discriminants_are_stable() {
        assert_eq!(ErrorCategory::Other as i32, 0);
        assert_eq!(ErrorCategory::ContextOverflow as i32, 1);
        assert_eq!(ErrorCategory::OutputLimit as i32, 2);
        assert_eq!(ErrorCategory::RateLimit as i32, 3);
        assert_eq!(ErrorCategory::Quota as i32, 4);
        assert_eq!(ErrorCategory::InvalidHistory as i32, 5);
        assert_eq!(ErrorCategory::default(), ErrorCategory::Other);
        for category in ErrorCategory::ALL {
            assert_eq!(ErrorCategory::from_code(category as i32), Some(category));
        }
        assert_eq!(ErrorCategory::from_code(6), None);
        assert_eq!(ErrorCategory::from_code(-1), None);
    }

    #[test]
    fn numbers_only_for_sized_categories() {
        let info = classify(
            "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): \
             Limit 30000, Used 29000, Requested 5000.",
        );
        assert_eq!(info.category, ErrorCategory::RateLimit);
        assert_eq!((info.limit, info.actual, info.excess), (None, None, None));
    }

    #[test]
    fn openai_overflow_end_to_end() {
        let info = classify(
            "This model's maximum context length is 128000 tokens. However, your messages \
             resulted in 130512 tokens. Please reduce the length of the messages.",
        );
        assert_eq!(
            info,
            ErrorInfo {
                category: ErrorCategory::ContextOverflow,
                limit: Some(128_000),
                actual: Some(130_512),
                excess: Some(2_512),
            }
        );
    }
}
