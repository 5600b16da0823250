//! OpenAI's model names: which encoding each model counts with, and its context window.
//!
//! The encoding table follows OpenAI's `tiktoken/model.py` (0.14.0): an exact name first,
//! then the first matching prefix. The context limits follow OpenAI's model list, the first
//! matching prefix winning. Both are a few hundred bytes here, where linking the tiktoken-rs
//! crate for them would bring its embedded vocabularies into a static link; the tests compare
//! them with tiktoken-rs (a dev-dependency) on every name listed and on generated names.

use super::Encoding;

/// Models named exactly (`model.py`'s `MODEL_TO_ENCODING`).
const EXACT: &[(&str, Encoding)] = &[
    ("o1", Encoding::O200kBase),
    ("o3", Encoding::O200kBase),
    ("o4-mini", Encoding::O200kBase),
    ("gpt-5", Encoding::O200kBase),
    ("gpt-4.1", Encoding::O200kBase),
    ("gpt-4o", Encoding::O200kBase),
    ("gpt-4", Encoding::Cl100kBase),
    ("gpt-3.5-turbo", Encoding::Cl100kBase),
    ("gpt-3.5", Encoding::Cl100kBase),
    ("gpt-35-turbo", Encoding::Cl100kBase),
    ("davinci-002", Encoding::Cl100kBase),
    ("babbage-002", Encoding::Cl100kBase),
    ("text-embedding-ada-002", Encoding::Cl100kBase),
    ("text-embedding-3-small", Encoding::Cl100kBase),
    ("text-embedding-3-large", Encoding::Cl100kBase),
    ("text-davinci-003", Encoding::P50kBase),
    ("text-davinci-002", Encoding::P50kBase),
    ("text-davinci-001", Encoding::R50kBase),
    ("text-curie-001", Encoding::R50kBase),
    ("text-babbage-001", Encoding::R50kBase),
    ("text-ada-001", Encoding::R50kBase),
    ("davinci", Encoding::R50kBase),
    ("curie", Encoding::R50kBase),
    ("babbage", Encoding::R50kBase),
    ("ada", Encoding::R50kBase),
    ("code-davinci-002", Encoding::P50kBase),
    ("code-davinci-001", Encoding::P50kBase),
    ("code-cushman-002", Encoding::P50kBase),
    ("code-cushman-001", Encoding::P50kBase),
    ("davinci-codex", Encoding::P50kBase),
    ("cushman-codex", Encoding::P50kBase),
    // p50k_edit: p50k_base's mergeable tokens (only its special tokens differ).
    ("text-davinci-edit-001", Encoding::P50kBase),
    ("code-davinci-edit-001", Encoding::P50kBase),
    ("text-similarity-davinci-001", Encoding::R50kBase),
    ("text-similarity-curie-001", Encoding::R50kBase),
    ("text-similarity-babbage-001", Encoding::R50kBase),
    ("text-similarity-ada-001", Encoding::R50kBase),
    ("text-search-davinci-doc-001", Encoding::R50kBase),
    ("text-search-curie-doc-001", Encoding::R50kBase),
    ("text-search-babbage-doc-001", Encoding::R50kBase),
    ("text-search-ada-doc-001", Encoding::R50kBase),
    ("code-search-babbage-code-001", Encoding::R50kBase),
    ("code-search-ada-code-001", Encoding::R50kBase),
    // gpt2 is r50k_base's mergeable tokens.
    ("gpt2", Encoding::R50kBase),
    ("gpt-2", Encoding::R50kBase),
];

/// Model families by prefix, first match wins (`model.py`'s `MODEL_PREFIX_TO_ENCODING`,
/// then tiktoken-rs's `codex-mini`).
const PREFIXES: &[(&str, Encoding)] = &[
    ("o1-", Encoding::O200kBase),
    ("o3-", Encoding::O200kBase),
    ("o4-mini-", Encoding::O200kBase),
    ("gpt-5", Encoding::O200kBase),
    ("gpt-4.5-", Encoding::O200kBase),
    ("gpt-4.1-", Encoding::O200kBase),
    ("chatgpt-4o-", Encoding::O200kBase),
    ("gpt-4o-", Encoding::O200kBase),
    ("gpt-4-", Encoding::Cl100kBase),
    ("gpt-3.5-turbo-", Encoding::Cl100kBase),
    ("gpt-35-turbo-", Encoding::Cl100kBase),
    ("gpt-oss-", Encoding::O200kHarmony),
    ("codex-mini", Encoding::O200kBase),
];

/// Context windows in tokens by prefix, first match wins.
const CONTEXT_LIMITS: &[(&str, u32)] = &[
    ("gpt-6", 1_050_000),
    ("gpt-5.4-mini", 400_000),
    ("gpt-5.4-nano", 400_000),
    ("gpt-5.4", 1_050_000),
    ("gpt-5.3-codex-spark", 128_000),
    ("gpt-5", 400_000),
    ("codex-mini", 200_000),
    ("gpt-oss", 131_072),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gpt-4.1", 1_047_576),
    ("chatgpt-4o", 128_000),
    ("gpt-4o", 128_000),
    ("gpt-4.5", 128_000),
    ("gpt-4-turbo-", 128_000),
    ("gpt-4-0125", 128_000),
    ("gpt-4-1106", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-3.5", 16_385),
    ("gpt-35-turbo", 16_385),
    ("text-davinci-002", 4_097),
    ("text-davinci-003", 4_097),
    ("ada", 2_049),
    ("babbage", 2_049),
    ("curie", 2_049),
    ("code-cushman-001", 2_048),
    ("code-davinci-002", 8_001),
    ("davinci", 2_049),
    ("text-ada-001", 2_049),
    ("text-babbage-001", 2_049),
    ("text-curie-001", 2_049),
    ("text-embedding-ada-002", 8_192),
];

/// The encoding an OpenAI model counts with (`model`: lower case, without provider prefix,
/// a fine-tune's base model).
pub(super) fn encoding_of_model(model: &str) -> Option<Encoding> {
    EXACT
        .iter()
        .find(|(name, _)| *name == model)
        .or_else(|| PREFIXES.iter().find(|(prefix, _)| model.starts_with(prefix)))
        .map(|&(_, encoding)| encoding)
}

/// The context window of an OpenAI model in tokens (`model` as for [`encoding_of_model`]).
pub(super) fn context_limit_of_model(model: &str) -> Option<u32> {
    CONTEXT_LIMITS.iter().find(|(prefix, _)| model.starts_with(prefix)).map(|&(_, limit)| limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// tiktoken-rs's answer for `model`, in our terms.
    fn reference_encoding(model: &str) -> Option<Encoding> {
        use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};
        Some(match get_tokenizer(model)? {
            Tokenizer::O200kHarmony => Encoding::O200kHarmony,
            Tokenizer::O200kBase => Encoding::O200kBase,
            Tokenizer::Cl100kBase => Encoding::Cl100kBase,
            Tokenizer::P50kBase | Tokenizer::P50kEdit => Encoding::P50kBase,
            Tokenizer::R50kBase | Tokenizer::Gpt2 => Encoding::R50kBase,
        })
    }

    fn reference_limit(model: &str) -> Option<u32> {
        tiktoken_rs::model::get_context_size(model).map(|limit| u32::try_from(limit).expect("limits fit u32"))
    }

    fn assert_agrees(model: &str) {
        assert_eq!(encoding_of_model(model), reference_encoding(model), "encoding of {model:?}");
        assert_eq!(context_limit_of_model(model), reference_limit(model), "context limit of {model:?}");
    }

    /// Every name and prefix of the tables, alone, cut short by one character, and extended
    /// with the suffixes model names carry. (Fine-tune names are reduced to their base
    /// model before: `models.rs`.)
    #[test]
    fn every_listed_name_agrees_with_tiktoken_rs() {
        let names = EXACT.iter().map(|(name, _)| *name);
        let prefixes = PREFIXES.iter().map(|(prefix, _)| *prefix);
        let limits = CONTEXT_LIMITS.iter().map(|(prefix, _)| *prefix);
        let mut checked = 0;
        for stem in names.chain(prefixes).chain(limits) {
            let short = &stem[..stem.len() - 1];
            for suffix in ["", "-", "-mini", "-2024-08-06", ".1", "x", "-32k", "-0125-preview", "-edit-001"] {
                for name in [format!("{stem}{suffix}"), format!("{short}{suffix}")] {
                    assert_agrees(&name);
                    checked += 1;
                }
            }
        }
        assert!(checked > 1_000, "{checked}");
        assert_eq!(encoding_of_model("gpt-4o-mini"), Some(Encoding::O200kBase));
        assert_eq!(context_limit_of_model("gpt-4.1-nano"), Some(1_047_576));
        assert_eq!(encoding_of_model("llama-3"), None);
    }

    /// Names put together from the pieces model names are made of.
    fn model_name() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "gpt",
            "-",
            "4",
            "o",
            "5",
            ".",
            "1",
            "3",
            "35",
            "oss",
            "mini",
            "nano",
            "turbo",
            "preview",
            "0125",
            "1106",
            "32k",
            "16k",
            "codex",
            "spark",
            "chat",
            "text",
            "code",
            "davinci",
            "curie",
            "babbage",
            "ada",
            "embedding",
            "search",
            "similarity",
            "edit",
            "001",
            "002",
            "003",
            "2",
            "6",
            "pro",
            "cushman",
            "x",
        ]);
        prop::collection::vec(pieces, 1..7).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn generated_names_agree_with_tiktoken_rs(name in model_name()) {
            assert_agrees(&name);
        }
    }
}
