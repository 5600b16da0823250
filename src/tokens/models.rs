//! The model registry: from a model name as users write it to the counter that applies and
//! the model's context limit.

use std::sync::Arc;

use super::estimate::{Family, estimate};
use super::{Count, Encoding, Tokenizer, saturate_u32};

/// How a model's tokens are counted.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Counter {
    /// The model's public encoding: counts are exact.
    Exact(Encoding),
    /// A tokenizer loaded from the family's file: counts are exact.
    Loaded(Arc<Tokenizer>),
    /// No public tokenizer: counts are estimates for the model's family.
    Estimate(Family),
}

/// A model resolved once from its name: which counter applies and its context limit.
///
/// Names are matched the way users write them: case is ignored, provider prefixes
/// (`openai/gpt-4o`, `openrouter/anthropic/claude-sonnet-4`, `models/gemini-2.5-pro`) and
/// Bedrock region and vendor prefixes (`us.anthropic.claude-…`) are stripped, fine-tune names
/// (`ft:gpt-4o-mini:org::id`) resolve to their base model, and an encoding name
/// (`o200k_base`) selects that encoding directly. An unknown model is not an error: its
/// counts are estimates and its context limit is unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    name: String,
    counter: Counter,
    context_limit: Option<u32>,
}

impl Model {
    /// Resolves `name`.
    pub fn resolve(name: &str) -> Model {
        let base = base_name(name);
        let counter = exact_encoding(&base).map_or_else(|| Counter::Estimate(Family::of(&base)), Counter::Exact);
        Model {
            name: name.to_owned(),
            counter,
            context_limit: context_limit(&base),
        }
    }

    /// `name` counted with `tokenizer` (exactly), with the context limit `name` has.
    pub fn with_tokenizer(name: &str, tokenizer: Arc<Tokenizer>) -> Model {
        Model {
            name: name.to_owned(),
            counter: Counter::Loaded(tokenizer),
            context_limit: context_limit(&base_name(name)),
        }
    }

    /// The loaded tokenizer this model counts with, if any.
    pub fn tokenizer(&self) -> Option<&Arc<Tokenizer>> {
        match &self.counter {
            Counter::Loaded(tokenizer) => Some(tokenizer),
            _ => None,
        }
    }

    /// The name as the caller gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// True when this model's counts are exact.
    pub fn is_exact(&self) -> bool {
        matches!(self.counter, Counter::Exact(_) | Counter::Loaded(_))
    }

    /// The model's family, from its name (OpenAI's models are [`Family::Other`]).
    pub fn family(&self) -> Family {
        Family::of(&base_name(&self.name))
    }

    /// The model's context window in tokens, when known.
    pub fn context_limit(&self) -> Option<u32> {
        self.context_limit
    }

    /// Counts `text` for this model.
    pub fn count(&self, text: &str) -> Count {
        match &self.counter {
            Counter::Exact(encoding) => Count::exact(saturate_u32(encoding.count(text) as u64)),
            Counter::Loaded(tokenizer) => match tokenizer.count(text) {
                Ok(tokens) => Count::exact(saturate_u32(tokens as u64)),
                // Only a pathological split pattern gives up: an estimate, flagged as one.
                Err(_) => Count::estimate(saturate_u32(estimate(text, Family::of(&base_name(&self.name))))),
            },
            Counter::Estimate(family) => Count::estimate(saturate_u32(estimate(text, *family))),
        }
    }
}

/// The bare model name: lower case, without provider, region or vendor prefixes, and a
/// fine-tune's base model.
fn base_name(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    let mut base = lower.rsplit('/').next().unwrap_or_default();
    if let Some(rest) = base.strip_prefix("ft:") {
        base = rest.split(':').next().unwrap_or_default();
    }
    // Bedrock ids: "anthropic.claude-3-5-sonnet-20240620-v1:0", "us.anthropic.claude-…".
    for vendor in ["anthropic.", "openai.", "google."] {
        if let Some(pos) = base.find(vendor) {
            base = &base[pos + vendor.len()..];
        }
    }
    base.to_owned()
}

/// The exact encoding of an OpenAI model (or of an encoding named directly).
fn exact_encoding(base: &str) -> Option<Encoding> {
    if let Some(encoding) = Encoding::ALL.into_iter().find(|e| e.name() == base) {
        return Some(encoding);
    }
    use tiktoken_rs::tokenizer::Tokenizer;
    match tiktoken_rs::tokenizer::get_tokenizer(base)? {
        Tokenizer::O200kHarmony => Some(Encoding::O200kHarmony),
        Tokenizer::O200kBase => Some(Encoding::O200kBase),
        Tokenizer::Cl100kBase => Some(Encoding::Cl100kBase),
        Tokenizer::P50kBase | Tokenizer::P50kEdit => Some(Encoding::P50kBase),
        Tokenizer::R50kBase | Tokenizer::Gpt2 => Some(Encoding::R50kBase),
    }
}

/// Context limits of the Anthropic and Google families; OpenAI's come from tiktoken-rs's
/// table, which tracks OpenAI's model list. First matching prefix wins.
const FAMILY_LIMITS: &[(&str, u32)] = &[
    ("claude-", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.0-pro", 32_760),
    ("gemini-pro", 32_760),
    ("gemini-", 1_048_576),
];

fn context_limit(base: &str) -> Option<u32> {
    if let Some(limit) = tiktoken_rs::model::get_context_size(base) {
        return u32::try_from(limit).ok();
    }
    FAMILY_LIMITS
        .iter()
        .find(|(prefix, _)| base.starts_with(prefix))
        .map(|&(_, limit)| limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_as_users_write_them() {
        for name in ["gpt-4o", "GPT-4o", "openai/gpt-4o", "ft:gpt-4o-2024-08-06:acme::x1", " gpt-4o-mini "] {
            let model = Model::resolve(name);
            assert_eq!(model.counter, Counter::Exact(Encoding::O200kBase), "{name}");
            assert_eq!(model.context_limit(), Some(128_000), "{name}");
        }
        assert_eq!(Model::resolve("gpt-4").counter, Counter::Exact(Encoding::Cl100kBase));
        assert_eq!(Model::resolve("gpt-oss-120b").counter, Counter::Exact(Encoding::O200kHarmony));
        assert_eq!(Model::resolve("cl100k_base").counter, Counter::Exact(Encoding::Cl100kBase));
    }

    #[test]
    fn other_families_are_estimated_with_known_limits() {
        for name in [
            "claude-sonnet-4-5",
            "anthropic/claude-3-5-haiku-latest",
            "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        ] {
            let model = Model::resolve(name);
            assert!(!model.is_exact(), "{name}");
            assert_eq!(model.context_limit(), Some(200_000), "{name}");
        }
        assert_eq!(Model::resolve("models/gemini-2.5-pro").context_limit(), Some(1_048_576));
        assert_eq!(Model::resolve("gemini-1.5-pro-002").context_limit(), Some(2_097_152));
        let unknown = Model::resolve("my-local-llama");
        assert!(!unknown.is_exact());
        assert_eq!(unknown.context_limit(), None);
        assert!(!unknown.count("abcde").exact);
    }
}
