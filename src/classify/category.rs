//! Choosing the [`ErrorCategory`] of a normalized error text.
//!
//! All patterns run on the output of `normalize` (lowercase, one space
//! between words, no backticks, escapes undone). The decision goes in three
//! stages, the first that matches wins:
//!
//! 1. Machine codes (JSON `code`/`type` values, exception class names):
//!    overflow codes, then quota codes, then rate-limit codes. These are the
//!    strongest signal: they are what providers document as stable.
//! 2. Wording, in an order chosen so that the frequent false friends lose:
//!    quota and rate-limit wording come before overflow wording because
//!    rate-limit bodies talk about tokens, limits and "reduce the prompt
//!    length"; overflow comes before output-limit because several overflow
//!    messages name `max_tokens`.
//! 3. A bare HTTP status (429, 402) stated as such, for bodies with no text.

use super::ErrorCategory;
use super::pattern::Pattern;

/// Codes that mean the context window was exceeded, whatever the message.
static OVERFLOW_CODE: Pattern =
    Pattern::any_of(&["context_length_exceeded", "context_window_exceeded", "contextwindowexceeded", "exceed_context_size"]);

/// Codes that mean quota or billing exhaustion.
static QUOTA_CODE: Pattern =
    Pattern::any_of(&["insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "servicequotaexceeded"]);

/// Codes that mean a transient rate limit.
static RATE_CODE: Pattern =
    Pattern::any_of(&["rate_limit_exceeded", "rate_limit_error", "ratelimiterror", "throttlingexception", "too_many_requests"]);

/// Wording that always means quota, billing or credits are exhausted.
static HARD_QUOTA: Pattern = Pattern::any_of(&[
    "exceeded your current quota",
    "out of quota",
    "credit balance",
    "insufficient (?:credit|balance|funds)",
    "requires more credits",
    "(?:out of|not enough) credits",
    "billing details",
    "billing is not active",
    "payment required",
    "usage limits?",
    "spend(?:ing)? limit",
]);

/// Generic quota wording: quota unless it is a per-minute quota, which is a
/// rate limit under another name (Vertex AI "Quota exceeded for
/// ..._per_minute_...").
static SOFT_QUOTA: Pattern = Pattern::any_of(&["quota[ _]exceeded", "exceeded (?:the |your )?quota"]);

/// Marks a quota as a per-minute one.
static PER_MINUTE: Pattern = Pattern::any_of(&["per[ _-]?minute", "perminute", "per min(?:[^a-z]|$)", r"\((?:tpm|rpm)\)"]);

/// Rate-limit wording (also Gemini's generic RESOURCE_EXHAUSTED text).
static RATE: Pattern = Pattern::any_of(&[
    "rate[ _-]?limit",
    "ratelimit",
    "too many requests",
    "throttl",
    "resource has been exhausted",
    "resource exhausted",
    "resource_exhausted",
    "(?:tokens|requests) per (?:min|day)",
    "please wait before trying again",
]);

/// Context-window overflow wording across providers.
static OVERFLOW: Pattern = Pattern::any_of(&[
    // OpenAI, Azure, DeepSeek, vLLM, OpenRouter, Together, Groq, Bedrock Llama.
    "max(?:imum)? context length",
    "reduce the length of the messages",
    // OpenAI Responses, llama.cpp, Ollama, llama-cpp-python, Anthropic 2-part.
    "exceed(?:s|ed)? (?:the )?(?:available |maximum |max |model'?s? )?context (?:length|size|window|limit)",
    "context (?:length|window|size) (?:exceeded|(?:is )?full)",
    // Anthropic and Bedrock.
    "prompt is too long",
    "prompt too long",
    "input is too long",
    "too many (?:input )?tokens",
    "input tokens? (?:count )?exceed",
    "number of input tokens exceeds",
    // Gemini and Vertex AI.
    "input token count",
    "exceeds the maximum number of tokens allowed",
    // xAI, Mistral, vLLM.
    "maximum prompt length",
    "too large for model with",
    "longer than the maximum model length",
    "too long to fit into the model",
    // Hugging Face TGI (Together, HF endpoints), llama-cpp-python.
    r"inputs tokens \+ max_new_tokens must be",
    "inputs must have less than",
    "exceeds n_ctx",
]);

/// Requested output larger than the model allows, or output cut at the limit.
static OUTPUT: Pattern = Pattern::any_of(&[
    r"max_(?:completion_|output_|new_)?tokens\W{0,3}(?:or \W?max_completion_tokens\W{0,3})?is too large",
    "maximum allowed number of output tokens",
    "supports at most [0-9,]+ completion tokens",
    r"max_(?:completion_|new_)?tokens\W{0,3}(?:for \S+ )?must be (?:less than or equal to|<=)",
    "range of max_tokens",
    "maxoutputtokens value",
    "maximum tokens you requested exceeds",
    "length limit was reached",
]);

/// The provider rejected the message sequence itself.
static HISTORY: Pattern = Pattern::any_of(&[
    // Anthropic tool pairing, ordering and thinking blocks.
    "tool_use ids were found without tool_result",
    "unexpected tool_use_id found in tool_result",
    "tool_(?:use|result) block must have a corresponding",
    "roles must alternate",
    "must alternate between",
    "first message must",
    "must start with a thinking block",
    "expected thinking or redacted_thinking",
    // OpenAI Chat and Responses, DeepSeek, Groq, Azure.
    "must be a response to a prece",
    "must be followed by tool messages",
    "did not have response messages",
    r"tool_call_id\W.{0,120}not found",
    "no tool (?:call|output) found for function call",
    "without its required following item",
    "successive user or assistant messages",
    "interleave the user/assistant",
    r"last message of \S+ must be",
    // Gemini.
    "function (?:call|response) turn comes immediately after",
    "number of function response parts",
    "alternate between user and",
    // Bedrock Converse.
    "conversation must (?:start with|alternate)",
    "toolresult blocks",
    "tooluse blocks",
    // Mistral.
    r"unexpected role \S+ after role",
    "not the same number of function calls and responses",
    "expected last role",
    r"tool call id was \S+ but must be",
]);

/// An HTTP 429 stated as a status, for bodies without wording.
static STATUS_429: Pattern = Pattern::any_of(&["(?:status|http|code|error)[^a-z0-9]{0,12}429(?:[^0-9]|$)"]);

/// An HTTP 402 stated as a status, for bodies without wording.
static STATUS_402: Pattern = Pattern::any_of(&["(?:status|http|code|error)[^a-z0-9]{0,12}402(?:[^0-9]|$)"]);

/// Pick the category of `text`, which must already be normalized.
pub(super) fn categorize(text: &str) -> ErrorCategory {
    if text.is_empty() {
        return ErrorCategory::Other;
    }
    if OVERFLOW_CODE.is_match(text) {
        return ErrorCategory::ContextOverflow;
    }
    if QUOTA_CODE.is_match(text) {
        return ErrorCategory::Quota;
    }
    if RATE_CODE.is_match(text) {
        return ErrorCategory::RateLimit;
    }
    if HARD_QUOTA.is_match(text) {
        return ErrorCategory::Quota;
    }
    if SOFT_QUOTA.is_match(text) {
        return if PER_MINUTE.is_match(text) { ErrorCategory::RateLimit } else { ErrorCategory::Quota };
    }
    let by_wording = [
        (&RATE, ErrorCategory::RateLimit),
        (&OVERFLOW, ErrorCategory::ContextOverflow),
        (&OUTPUT, ErrorCategory::OutputLimit),
        (&HISTORY, ErrorCategory::InvalidHistory),
        (&STATUS_402, ErrorCategory::Quota),
        (&STATUS_429, ErrorCategory::RateLimit),
    ];
    by_wording.into_iter().find(|(pattern, _)| pattern.is_match(text)).map_or(ErrorCategory::Other, |(_, category)| category)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_table_compiles() {
        for p in [
            &OVERFLOW_CODE,
            &QUOTA_CODE,
            &RATE_CODE,
            &HARD_QUOTA,
            &SOFT_QUOTA,
            &PER_MINUTE,
            &RATE,
            &OVERFLOW,
            &OUTPUT,
            &HISTORY,
            &STATUS_429,
            &STATUS_402,
        ]
        .into_iter()
        .enumerate()
        {
            assert!(p.1.compiles(), "rule table #{}", p.0);
        }
    }

    #[test]
    fn codes_beat_wording() {
        // A rate-limit code wins over overflow-looking wording in the message.
        let text = r#"{"error":{"message":"request too large: reduce the prompt length","code":"rate_limit_exceeded"}}"#;
        assert_eq!(categorize(text), ErrorCategory::RateLimit);
        // An overflow code wins over a generic message.
        let text = r#"{"error":{"message":"bad request","code":"context_length_exceeded"}}"#;
        assert_eq!(categorize(text), ErrorCategory::ContextOverflow);
    }

    #[test]
    fn per_minute_quota_is_a_rate_limit() {
        let t = "quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model";
        assert_eq!(categorize(t), ErrorCategory::RateLimit);
        let t = "quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_day";
        assert_eq!(categorize(t), ErrorCategory::Quota);
    }

    #[test]
    fn bare_status_lines() {
        assert_eq!(categorize("http 429"), ErrorCategory::RateLimit);
        assert_eq!(categorize("error code: 402"), ErrorCategory::Quota);
        assert_eq!(categorize("status 4290"), ErrorCategory::Other);
        assert_eq!(categorize("error code: 400"), ErrorCategory::Other);
    }

    #[test]
    fn bare_max_tokens_is_not_an_output_limit() {
        assert_eq!(categorize(r#""stop_reason":"max_tokens""#), ErrorCategory::Other);
        assert_eq!(categorize("max_tokens: field required"), ErrorCategory::Other);
    }
}
