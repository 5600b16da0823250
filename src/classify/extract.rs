//! Reading the limit / actual / excess token counts out of a normalized
//! overflow or output-limit message.
//!
//! Every rule is anchored on the provider's own phrase around the number,
//! so numbers elsewhere in the text (HTTP status 400, `gpt-4-32k`, dates,
//! request ids, byte sizes) are never taken. Rules are tried in order and
//! the first rule that states a field wins; a rule may state only some
//! fields, letting a later rule fill the rest.

use super::numbers::{count, parse_count};
use super::pattern::Pattern;

/// The counts read from one message; see `ErrorInfo` for their meaning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Counts {
    /// The model's maximum.
    pub(super) limit: Option<i64>,
    /// What the request had.
    pub(super) actual: Option<i64>,
    /// `actual - limit`, or the excess the message states.
    pub(super) excess: Option<i64>,
}

/// What one capture group of a rule means.
#[derive(Clone, Copy)]
enum Role {
    /// The maximum.
    Limit,
    /// An exclusive upper bound: the maximum is one less.
    LimitExclusive,
    /// The request's total.
    Actual,
    /// One addend of the request's total (e.g. input + `max_tokens`).
    ActualPart,
    /// The amount over the limit, stated directly.
    Excess,
    /// A number the rule must match but that means nothing here.
    Skip,
}

/// One phrase with numbers in it, and what each number means.
struct Rule {
    pattern: Pattern,
    roles: &'static [Role],
}

impl Rule {
    const fn new(fragment: &'static [&'static str], roles: &'static [Role]) -> Self {
        Self { pattern: Pattern::any_of(fragment), roles }
    }
}

use Role::{Actual, ActualPart, Excess, Limit, LimitExclusive, Skip};

/// Context-overflow phrases, most specific first.
static OVERFLOW_RULES: [Rule; 23] = [
    // vLLM (recent): max_tokens + input exceed the window.
    Rule::new(
        &[concat!(
            r"is too large: ",
            count!(),
            r"\W{0,3}this model'?s maximum context length is ",
            count!(),
            " tokens and your request has ",
            count!(),
            " input tokens"
        )],
        &[ActualPart, Limit, ActualPart],
    ),
    // OpenAI, Azure, DeepSeek, vLLM, OpenRouter, Together, Bedrock Llama.
    Rule::new(&[concat!("max(?:imum)? context length (?:is|of) ", count!())], &[Limit]),
    // OpenAI GPT-5 family: the input limit (272,000) below the context window.
    Rule::new(&[concat!("input tokens exceed the configured limit of ", count!(), " tokens")], &[Limit]),
    Rule::new(&[concat!("(?:messages|prompt|input) resulted in ", count!(), " tokens")], &[Actual]),
    Rule::new(&[concat!("you requested (?:about )?", count!(), " tokens")], &[Actual]),
    // Anthropic (also through Bedrock and Vertex).
    Rule::new(&[concat!("prompt is too long: ", count!(), " tokens > ", count!(), "(?: tokens)? maximum")], &[Actual, Limit]),
    Rule::new(
        &[concat!(r"exceed context limit: ", count!(), r" \+ ", count!(), " > ", count!())],
        &[ActualPart, ActualPart, Limit],
    ),
    // Gemini API and Vertex AI.
    Rule::new(
        &[concat!(r"input token count \(", count!(), r"\) exceeds the maximum number of tokens allowed \(", count!())],
        &[Actual, Limit],
    ),
    Rule::new(
        &[concat!("input token count is ", count!(), " but (?:the )?model only supports up to ", count!())],
        &[Actual, Limit],
    ),
    // Mistral.
    Rule::new(
        &[concat!(
            "prompt contains ",
            count!(),
            " tokens(?: and ",
            count!(),
            " draft tokens)?,? too large for model with ",
            count!(),
            " maximum context length"
        )],
        &[ActualPart, ActualPart, Limit],
    ),
    // xAI.
    Rule::new(
        &[concat!("maximum prompt length is ", count!(), " but the request contains ", count!(), " tokens")],
        &[Limit, Actual],
    ),
    // llama.cpp server: message wording and the JSON fields of its body.
    Rule::new(
        &[concat!(r"request \(", count!(), r" tokens\) exceeds the available context size \(", count!(), " tokens")],
        &[Actual, Limit],
    ),
    Rule::new(&[concat!(r"n_prompt_tokens\W{0,3}", count!())], &[Actual]),
    Rule::new(&[concat!(r"n_ctx\W{0,3}", count!())], &[Limit]),
    // vLLM.
    Rule::new(
        &[concat!(
            r"prompt (?:\(length ",
            count!(),
            r"\)|length of ",
            count!(),
            ") is longer than the maximum model length of ",
            count!()
        )],
        &[Actual, Actual, Limit],
    ),
    Rule::new(
        &[concat!(r"prompt \(total length ", count!(), r"\) is too long to fit into the model \(context length ", count!())],
        &[Actual, Limit],
    ),
    // Ollama: API error and server log line.
    Rule::new(&[concat!("exceeded (?:the )?max(?:imum)? context length by ", count!(), " tokens")], &[Excess]),
    Rule::new(&[concat!(r"input exceeds context length\W{0,3} prompt=", count!(), " limit=", count!())], &[Actual, Limit]),
    // Cohere.
    Rule::new(&[concat!("cannot exceed ", count!(), " - received ", count!())], &[Limit, Actual]),
    Rule::new(&[concat!("size limit exceeded by ", count!(), " tokens")], &[Excess]),
    // Hugging Face TGI (Together, HF endpoints).
    Rule::new(
        &[concat!(
            r"inputs tokens \+ max_new_tokens must be <= ",
            count!(),
            r"\W{0,3}given: ",
            count!(),
            " inputs tokens and ",
            count!(),
            " max_new_tokens"
        )],
        &[Limit, ActualPart, ActualPart],
    ),
    Rule::new(&[concat!(r"inputs must have less than ", count!(), r" tokens\W{0,3}given: ", count!())], &[Limit, Actual]),
    // Cerebras, llama-cpp-python.
    Rule::new(
        &[concat!(
            "(?:current length is ",
            count!(),
            " while limit is ",
            count!(),
            r"|requested tokens \(",
            count!(),
            r"\) exceed context window of ",
            count!(),
            ")"
        )],
        &[Actual, Limit, Actual, Limit],
    ),
];

/// Output-limit phrases, most specific first.
static OUTPUT_RULES: [Rule; 8] = [
    // Anthropic.
    Rule::new(
        &[concat!(r"max_tokens\W{0,3}", count!(), " > ", count!(), ",? which is the maximum allowed number of output tokens")],
        &[Actual, Limit],
    ),
    // OpenAI, Azure.
    Rule::new(&[concat!(r"max_(?:completion_|output_)?tokens\W{0,3}is too large: ", count!())], &[Actual]),
    Rule::new(&[concat!("supports at most ", count!(), " completion tokens")], &[Limit]),
    // Hugging Face TGI.
    Rule::new(&[concat!(r"max_new_tokens must be <= ", count!(), r"\W{0,3}given: ", count!())], &[Limit, Actual]),
    // Groq.
    Rule::new(
        &[concat!(r"max_(?:completion_)?tokens\W{0,3}(?:for \S+ )?must be (?:less than or equal to|<=)\W{0,3}", count!())],
        &[Limit],
    ),
    // DeepSeek, Alibaba and other OpenAI-compatible servers.
    Rule::new(&[concat!(r"range of max_tokens (?:is|should be) \[", count!(), ", ?", count!(), r"\]")], &[Skip, Limit]),
    // Vertex AI.
    Rule::new(
        &[concat!(
            "maxoutputtokens value of ",
            count!(),
            " but the supported range is from ",
            count!(),
            r" \(inclusive\) to ",
            count!(),
            r" \(exclusive\)"
        )],
        &[Actual, Skip, LimitExclusive],
    ),
    // Bedrock.
    Rule::new(&[concat!("maximum tokens you requested exceeds the model limit of ", count!())], &[Limit]),
];

/// Counts stated by a context-overflow message (normalized text).
pub(super) fn context_overflow(text: &str) -> Counts {
    apply(&OVERFLOW_RULES, text)
}

/// Counts stated by an output-limit message (normalized text).
pub(super) fn output_limit(text: &str) -> Counts {
    apply(&OUTPUT_RULES, text)
}

/// Run `rules` over `text` and combine what they state.
///
/// A field is `Some(None)` once a rule has stated it with a number that
/// does not fit in `i64`: it then stays unknown rather than being taken
/// from a less specific rule.
fn apply(rules: &[Rule], text: &str) -> Counts {
    let mut limit: Option<Option<i64>> = None;
    let mut actual: Option<Option<i64>> = None;
    let mut excess: Option<Option<i64>> = None;
    for rule in rules {
        let Some(caps) = rule.pattern.captures(text) else {
            continue;
        };
        let mut parts: Option<Option<i64>> = None;
        for (role, group) in rule.roles.iter().zip(caps.iter().skip(1)) {
            let Some(group) = group else {
                continue;
            };
            let value = parse_count(group.as_str());
            match role {
                Limit => {
                    limit.get_or_insert(value);
                }
                LimitExclusive => {
                    limit.get_or_insert(value.and_then(|v| v.checked_sub(1)));
                }
                Actual => {
                    actual.get_or_insert(value);
                }
                ActualPart => {
                    let sum = match parts {
                        None => value,
                        Some(acc) => acc.zip(value).and_then(|(a, b)| a.checked_add(b)),
                    };
                    parts = Some(sum);
                }
                Excess => {
                    excess.get_or_insert(value);
                }
                Skip => {}
            }
        }
        if let Some(sum) = parts {
            actual.get_or_insert(sum);
        }
    }
    let limit = limit.flatten();
    let actual = actual.flatten();
    let excess = match (limit, actual) {
        (Some(l), Some(a)) => a.checked_sub(l).filter(|e| *e > 0),
        _ => excess.flatten(),
    };
    Counts { limit, actual, excess }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(limit: Option<i64>, actual: Option<i64>, excess: Option<i64>) -> Counts {
        Counts { limit, actual, excess }
    }

    #[test]
    fn every_rule_compiles() {
        for (i, rule) in OVERFLOW_RULES.iter().chain(OUTPUT_RULES.iter()).enumerate() {
            assert!(rule.pattern.compiles(), "rule #{i}");
        }
    }

    #[test]
    fn sums_parts_and_computes_excess() {
        let t = "input length and max_tokens exceed context limit: 197000 + 8192 > 200000, decrease input length";
        assert_eq!(context_overflow(t), counts(Some(200_000), Some(205_192), Some(5_192)));
    }

    #[test]
    fn missing_optional_part_is_ignored() {
        let t = "prompt contains 40000 tokens, too large for model with 32768 maximum context length";
        assert_eq!(context_overflow(t), counts(Some(32_768), Some(40_000), Some(7_232)));
    }

    #[test]
    fn unparseable_number_stays_unknown() {
        let t = "prompt is too long: 99999999999999999999999 tokens > 200,000 maximum";
        assert_eq!(context_overflow(t), counts(Some(200_000), None, None));
        let t = "exceed context limit: 9223372036854775807 + 1 > 200000";
        assert_eq!(context_overflow(t), counts(Some(200_000), None, None));
    }

    #[test]
    fn stated_excess_is_used_only_without_both_counts() {
        let t = "prompt too long; exceeded max context length by 1024 tokens";
        assert_eq!(context_overflow(t), counts(None, None, Some(1024)));
    }

    #[test]
    fn no_excess_when_actual_is_not_above_limit() {
        let t = "prompt length of 2048 is longer than the maximum model length of 2048.";
        assert_eq!(context_overflow(t), counts(Some(2048), Some(2048), None));
    }

    #[test]
    fn exclusive_bound_and_skipped_numbers() {
        let t = "maxoutputtokens value of 100000 but the supported range is from 1 (inclusive) to 65537 (exclusive).";
        assert_eq!(output_limit(t), counts(Some(65_536), Some(100_000), Some(34_464)));
        let t = "invalid max_tokens value, the valid range of max_tokens is [1, 8192]";
        assert_eq!(output_limit(t), counts(Some(8192), None, None));
    }

    #[test]
    fn unanchored_numbers_are_ignored() {
        let t = "error code: 400 - model gpt-4-32k on 2024-05-01 failed with 32768";
        assert_eq!(context_overflow(t), Counts::default());
        assert_eq!(output_limit(t), Counts::default());
    }
}
