//! Table-driven check of `classify` against real-world-shaped provider
//! error texts kept as data in `error_samples.json` (reusable from C tests).

use ctxwin::classify::{ErrorCategory, ErrorInfo, classify};
use serde_json::Value;

/// One row of `error_samples.json`.
struct Sample {
    id: String,
    text: String,
    expected: ErrorInfo,
}

fn category_named(name: &str) -> ErrorCategory {
    match name {
        "Other" => ErrorCategory::Other,
        "ContextOverflow" => ErrorCategory::ContextOverflow,
        "OutputLimit" => ErrorCategory::OutputLimit,
        "RateLimit" => ErrorCategory::RateLimit,
        "Quota" => ErrorCategory::Quota,
        "InvalidHistory" => ErrorCategory::InvalidHistory,
        other => panic!("unknown category {other:?}"),
    }
}

fn samples() -> Vec<Sample> {
    let rows: Vec<Value> = serde_json::from_str(include_str!("error_samples.json")).expect("valid JSON");
    rows.iter()
        .map(|row| {
            let field = |name: &str| row[name].as_i64();
            Sample {
                id: row["id"].as_str().expect("id").to_owned(),
                text: row["text"].as_str().expect("text").to_owned(),
                expected: ErrorInfo {
                    category: category_named(row["category"].as_str().expect("category")),
                    limit: field("limit"),
                    actual: field("actual"),
                    excess: field("excess"),
                },
            }
        })
        .collect()
}

#[test]
fn every_sample_classifies_as_expected() {
    let samples = samples();
    assert!(samples.len() >= 60, "only {} samples", samples.len());
    let failures: Vec<String> = samples
        .iter()
        .filter_map(|s| {
            let got = classify(&s.text);
            (got != s.expected).then(|| format!("{}: expected {:?}, got {:?}", s.id, s.expected, got))
        })
        .collect();
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn table_covers_every_category_and_the_required_providers() {
    let rows: Vec<Value> = serde_json::from_str(include_str!("error_samples.json")).unwrap();
    for category in ["Other", "ContextOverflow", "OutputLimit", "RateLimit", "Quota", "InvalidHistory"] {
        assert!(rows.iter().any(|r| r["category"] == category), "{category}");
    }
    let required = [
        "openai",
        "openai-responses",
        "azure-openai",
        "anthropic",
        "gemini",
        "vertex-ai",
        "bedrock",
        "mistral",
        "openrouter",
        "llama.cpp",
        "vllm",
        "ollama",
        "deepseek",
        "groq",
        "together",
        "xai",
        "cohere",
    ];
    for provider in required {
        assert!(rows.iter().any(|r| r["provider"] == provider), "{provider}");
    }
}

#[test]
fn sample_expectations_are_self_consistent() {
    for s in samples() {
        let e = s.expected;
        if let (Some(limit), Some(actual)) = (e.limit, e.actual) {
            let computed = Some(actual - limit).filter(|x| *x > 0);
            assert_eq!(e.excess, computed, "{}", s.id);
        }
        if !matches!(e.category, ErrorCategory::ContextOverflow | ErrorCategory::OutputLimit) {
            assert_eq!((e.limit, e.actual, e.excess), (None, None, None), "{}", s.id);
        }
    }
}

/// Rate-limit and quota bodies that talk about tokens, limits and prompt
/// length must never be read as overflows, and must carry no numbers.
#[test]
fn token_talk_in_rate_and_quota_bodies_is_not_an_overflow() {
    let cases = [
        (
            "Rate limit reached for gpt-4 in organization org-1 on tokens per min (TPM): Limit 10000, Used 9000, \
             Requested 4000. Please try again in 18s.",
            ErrorCategory::RateLimit,
        ),
        (
            "This request would exceed the rate limit for your organization of 40,000 input tokens per minute. \
             Please reduce the prompt length or the maximum tokens requested, or try again later.",
            ErrorCategory::RateLimit,
        ),
        ("ThrottlingException: Too many tokens, please wait before trying again.", ErrorCategory::RateLimit),
        (
            "You exceeded your current quota. Quota exceeded for metric: \
             generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000",
            ErrorCategory::Quota,
        ),
        (
            "This request requires more credits, or fewer max_tokens. You requested up to 64000 tokens, but can \
             only afford 1200.",
            ErrorCategory::Quota,
        ),
    ];
    for (text, category) in cases {
        let info = classify(text);
        assert_eq!(info, ErrorInfo { category, ..ErrorInfo::default() }, "{text}");
    }
}

/// Numbers that are not the stated limit or count are never captured.
#[test]
fn unrelated_numbers_are_not_captured() {
    let info = classify(
        "2024-05-01T12:00:00Z HTTP 400 model=gpt-4-32k request_id=req_123456: The input token count (40000) \
         exceeds the maximum number of tokens allowed (32768).",
    );
    assert_eq!((info.limit, info.actual, info.excess), (Some(32_768), Some(40_000), Some(7_232)));
    let info = classify("Error code: 400 - Input is too long for requested model gpt-4-32k (2024-06-01).");
    assert_eq!(info, ErrorInfo { category: ErrorCategory::ContextOverflow, ..ErrorInfo::default() });
}
