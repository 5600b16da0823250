//! Property tests: `classify` never panics, keeps its numeric invariants on
//! any input, and is insensitive to the ways real logs mangle a body
//! (re-wrapping, escaping into another JSON string, surrounding noise).

use ctxwin::classify::{ErrorCategory, ErrorInfo, classify};
use proptest::prelude::*;
use serde_json::Value;

fn sample_texts() -> Vec<String> {
    let rows: Vec<Value> = serde_json::from_str(include_str!("error_samples.json")).expect("valid JSON");
    rows.iter().map(|r| r["text"].as_str().expect("text").to_owned()).collect()
}

/// The invariants every result must satisfy, whatever the input.
fn assert_invariants(info: &ErrorInfo) {
    let sized = matches!(info.category, ErrorCategory::ContextOverflow | ErrorCategory::OutputLimit);
    if !sized {
        assert_eq!((info.limit, info.actual, info.excess), (None, None, None), "{info:?}");
    }
    for n in [info.limit, info.actual].into_iter().flatten() {
        assert!(n >= 0, "{info:?}");
    }
    if let Some(excess) = info.excess {
        assert!(excess > 0, "{info:?}");
    }
    if let (Some(limit), Some(actual)) = (info.limit, info.actual) {
        let computed = Some(actual - limit).filter(|e| *e > 0);
        assert_eq!(info.excess, computed, "{info:?}");
    }
}

/// Largest char boundary of `s` not above `at`.
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A random edit of a sample text.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Insert(usize, String),
    Delete(usize, usize),
    Duplicate(usize, usize),
    HugeNumber(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<String>()).prop_map(|(at, s)| Mutation::Insert(at, s)),
        (any::<usize>(), 0usize..64).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (any::<usize>(), 0usize..64).prop_map(|(at, n)| Mutation::Duplicate(at, n)),
        (any::<usize>(), 1usize..40).prop_map(|(at, n)| Mutation::HugeNumber(at, n)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let len = text.len().max(1);
    match m {
        Mutation::Truncate(at) => text[..floor_boundary(text, at % len)].to_owned(),
        Mutation::Insert(at, s) => {
            let at = floor_boundary(text, at % len);
            format!("{}{}{}", &text[..at], s, &text[at..])
        }
        Mutation::Delete(at, n) => {
            let start = floor_boundary(text, at % len);
            let end = floor_boundary(text, start + n);
            format!("{}{}", &text[..start], &text[end..])
        }
        Mutation::Duplicate(at, n) => {
            let start = floor_boundary(text, at % len);
            let end = floor_boundary(text, start + n);
            format!("{}{}", &text[..end], &text[start..])
        }
        Mutation::HugeNumber(at, n) => {
            let at = floor_boundary(text, at % len);
            format!("{}{}{}", &text[..at], "9".repeat(n * 3), &text[at..])
        }
    }
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_strings(text in any::<String>()) {
        assert_invariants(&classify(&text));
    }

    #[test]
    fn never_panics_on_error_like_strings(
        text in r#"[a-z0-9 ,.:()<>+\-_'"`\\{}\[\]]{0,200}"#
    ) {
        assert_invariants(&classify(&text));
    }

    #[test]
    fn never_panics_on_mutated_samples(
        index in any::<prop::sample::Index>(),
        edits in prop::collection::vec(mutation(), 1..4),
    ) {
        let texts = sample_texts();
        let mut text = index.get(&texts).clone();
        for edit in &edits {
            text = apply(&text, edit);
        }
        assert_invariants(&classify(&text));
    }
}

#[test]
fn rewrapping_lines_does_not_change_the_result() {
    for text in sample_texts() {
        let wrapped = text.replace(' ', "\n    ");
        assert_eq!(classify(&wrapped), classify(&text), "{text}");
    }
}

#[test]
fn embedding_in_escaped_json_does_not_change_the_result() {
    for text in sample_texts() {
        let once = serde_json::to_string(&serde_json::json!({ "error": { "message": text } })).unwrap();
        let twice = serde_json::to_string(&serde_json::json!({ "detail": once })).unwrap();
        let expected = classify(&text);
        assert_eq!(classify(&once), expected, "{once}");
        assert_eq!(classify(&twice), expected, "{twice}");
    }
}

#[test]
fn surrounding_log_noise_does_not_change_the_result() {
    for text in sample_texts() {
        let logged = format!("[2025-06-01T10:20:30.456Z] ERROR agent::llm (pid 4242): upstream failed: {text} (attempt 3/5)");
        assert_eq!(classify(&logged), classify(&text), "{logged}");
    }
}

#[test]
fn huge_inputs_are_bounded() {
    let overflow = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.";
    let filler = "lorem ipsum 12345 \\\" é 上 ".repeat(200_000); // ~5 MB
    let cases = [
        (format!("{overflow} {filler}"), ErrorCategory::ContextOverflow),
        (format!("{filler} {overflow}"), ErrorCategory::Other), // beyond the scanned prefix
        ("9".repeat(5_000_000), ErrorCategory::Other),
        ("\\".repeat(5_000_000), ErrorCategory::Other),
    ];
    for (text, category) in cases {
        let info = classify(&text);
        assert_eq!(info.category, category);
        assert_invariants(&info);
    }
}

#[test]
fn overflowing_counts_become_unknown() {
    let info =
        classify("This model's maximum context length is 128000 tokens. However, you requested 99999999999999999999 tokens.");
    assert_eq!(info.category, ErrorCategory::ContextOverflow);
    assert_eq!((info.limit, info.actual, info.excess), (Some(128_000), None, None));
}
