//! The model registry: from a model name as users write it to the counter that applies and
//! the model's context limit.

use std::sync::Arc;

use super::estimate::{Family, base_estimate, estimate_features};
use super::openai_models;
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
    /// The family of the name, resolved once (asked on every push of a tool call).
    family: Family,
    counter: Counter,
    context_limit: Option<u32>,
    /// The name is a real model of a family with an estimate fit ([`is_family_model`]).
    family_model: bool,
}

impl Model {
    /// Refuses an empty model name (or one of white space only) with INVALID_ARG: a window
    /// is for a model, and an empty name is a host's missing setting, not a model.
    pub fn check_name(name: &str) -> crate::error::Result<()> {
        match name.trim().is_empty() {
            true => Err(crate::error::Error::invalid_arg(
                "model: the name is empty (give the model the window is for, e.g. \"gpt-4o\"; an unknown name is counted with estimates)",
            )),
            false => Ok(()),
        }
    }

    /// Resolves `name`.
    pub fn resolve(name: &str) -> Model {
        let base = base_name(name);
        let counter = exact_encoding(&base).map_or_else(|| Counter::Estimate(Family::of(&base)), Counter::Exact);
        Model::named(name, &base, counter)
    }

    /// `name` counted with `tokenizer` (exactly), with the context limit `name` has.
    pub fn with_tokenizer(name: &str, tokenizer: Arc<Tokenizer>) -> Model {
        Model::named(name, &base_name(name), Counter::Loaded(tokenizer))
    }

    /// `name`, whose bare name is `base`, counted by `counter`.
    fn named(name: &str, base: &str, counter: Counter) -> Model {
        let family_model = is_family_model(base);
        Model {
            name: name.to_owned(),
            family: Family::of(base),
            counter,
            context_limit: context_limit(base, family_model),
            family_model,
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

    /// True when the registry recognises the name: an OpenAI model or encoding (exact
    /// counts), a model whose context limit it knows, or a family it has an estimate fit
    /// for (Claude, Gemini, Gemma, Llama, Mistral, DeepSeek, Qwen). A misspelled name (`gpt4o`) is unknown:
    /// it is counted with the generic estimate and has no context limit.
    ///
    /// A family's name must also be spelled as its provider names models: `claude-4-sonnet`
    /// is unknown (Claude 4's models are `claude-sonnet-4…`), counted with Claude's estimate
    /// but without a context limit.
    pub fn is_known(&self) -> bool {
        self.is_exact() || self.context_limit.is_some() || self.family_model
    }

    /// The model's family, from its name (OpenAI's models are [`Family::Other`]).
    pub fn family(&self) -> Family {
        self.family
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
                Err(_) => Count::estimate(saturate_u32(estimate(text, self.family))),
            },
            Counter::Estimate(family) => Count::estimate(saturate_u32(estimate(text, *family))),
        }
    }
}

/// Estimated tokens of `text` for a model of `family`: the family's fit applied to o200k's
/// exact count when the library has o200k built in, to the one-pass base estimate otherwise.
fn estimate(text: &str, family: Family) -> u64 {
    let base = if Encoding::O200kBase.is_built_in() { Encoding::O200kBase.count(text) as f64 } else { base_estimate(text) };
    family.fit().apply(estimate_features(base, text), text.len())
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

/// The exact encoding of an OpenAI model (or of an encoding named directly), if the
/// library was built with it (cargo features): otherwise the model's counts are estimates.
fn exact_encoding(base: &str) -> Option<Encoding> {
    encoding_of(base).filter(|encoding| encoding.is_built_in())
}

/// The encoding of an OpenAI model (or of an encoding named directly).
fn encoding_of(base: &str) -> Option<Encoding> {
    if let Some(encoding) = Encoding::ALL.into_iter().find(|e| e.name() == base) {
        return Some(encoding);
    }
    openai_models::encoding_of_model(base)
}

/// Context limits of the Anthropic and Google families (OpenAI's: [`openai_models`]). First
/// matching prefix wins.
const FAMILY_LIMITS: &[(&str, u32)] = &[
    ("claude-", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.0-pro", 32_760),
    ("gemini-pro", 32_760),
    ("gemini-", 1_048_576),
];

/// The context limit of an OpenAI model, or of a Claude or Gemini model spelled as its
/// provider names them (`family_model`: [`is_family_model`] of `base`).
fn context_limit(base: &str, family_model: bool) -> Option<u32> {
    if let Some(limit) = openai_models::context_limit_of_model(base) {
        return Some(limit);
    }
    if !family_model {
        return None;
    }
    FAMILY_LIMITS.iter().find(|(prefix, _)| base.starts_with(prefix)).map(|&(_, limit)| limit)
}

/// True when `base` (after [`base_name`]) names a real model of a family with an estimate
/// fit, as its provider spells them, up to a separator (`-_:@.`) or the end: a name with a
/// family's prefix that matches none of these (`claude-4-sonnet`, `gemini-ultra-max-9`) is
/// not a model of it. Digits are ASCII digits. A version's digits run to the separator or the
/// end (`gemini-2.5-pro` is `gemini-2` then `.`). Plain matching rather than a regex set: the
/// set took the first count of every process 1 to 2 ms to compile (the tests keep it as the
/// reference).
fn is_family_model(base: &str) -> bool {
    const CLAUDE_TIERS: &[&str] = &["haiku", "sonnet", "opus"];
    // claude-2.1, claude-instant-1.2; claude-3-5-sonnet-20241022; claude-sonnet-4-5, claude-opus-4-1
    let claude = |rest: &str| {
        let old = rest.strip_prefix("instant-").unwrap_or(rest);
        let three = |rest: &str| {
            let rest = rest.strip_prefix("-5").or_else(|| rest.strip_prefix("-7")).unwrap_or(rest);
            rest.strip_prefix('-').is_some_and(|tier| after_one_of(tier, CLAUDE_TIERS, ends))
        };
        one_then_end(old, |b| b == b'1' || b == b'2')
            || rest.strip_prefix('3').is_some_and(three)
            || after_one_of(rest, CLAUDE_TIERS, |rest| {
                rest.strip_prefix('-').is_some_and(|major| one_then_end(major, |b| (b'4'..=b'9').contains(&b)))
            })
    };
    // gemini-2.5-pro, gemini-1.5-flash-002, gemini-pro, gemini-exp-1206
    let gemini = |rest: &str| version(rest) || after_one_of(rest, &["pro", "flash", "ultra", "exp"], ends);
    // gemma-3-27b-it, gemma2-9b-it; llama-3.3-70b, meta-llama-3.1-8b-instruct, llama3.2:3b
    let dashed_version = |rest: &str| version(rest.strip_prefix('-').unwrap_or(rest));
    // deepseek-chat, deepseek-reasoner, deepseek-v3, deepseek-r1, deepseek-coder-v2
    let deepseek = |rest: &str| {
        after_one_of(rest, &["chat", "reasoner", "coder", "llm", "math", "prover", "vl"], ends)
            || rest.strip_prefix('v').is_some_and(version)
            || rest.strip_prefix('r').is_some_and(|rest| one_then_end(rest, |b| b.is_ascii_digit()))
            || rest.strip_prefix("vl").is_some_and(|rest| one_then_end(rest, |b| b.is_ascii_digit()))
    };
    // qwen-max, qwen2.5-72b-instruct, qwen3-coder, qwq-32b
    let qwen = |rest: &str| ends(rest) || version(rest);
    base.strip_prefix("claude-").is_some_and(claude)
        || base.strip_prefix("gemini-").is_some_and(gemini)
        || base.strip_prefix("gemma").is_some_and(dashed_version)
        || base.strip_prefix("meta-").unwrap_or(base).strip_prefix("llama").is_some_and(dashed_version)
        // mistral-large-latest, mixtral-8x7b, codestral-2501, devstral-small, ministral-8b
        || after_one_of(base, &["mistral", "mixtral", "codestral", "devstral", "magistral", "ministral", "pixtral"], ends)
        || base.strip_prefix("deepseek-").is_some_and(deepseek)
        || base.strip_prefix("qwen").is_some_and(qwen)
        || after_one_of(base, &["qwq"], ends)
}

/// Whether `rest` ends a model's family part: nothing left, or a separator.
fn ends(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with(['-', '_', ':', '@', '.'])
}

/// Whether `name` starts with one of `words` and `then` accepts what follows it.
fn after_one_of(name: &str, words: &[&str], then: impl Fn(&str) -> bool) -> bool {
    words.iter().any(|word| name.strip_prefix(word).is_some_and(&then))
}

/// Whether `rest` is one ASCII byte that `accept` takes, then the end of the family part.
fn one_then_end(rest: &str, accept: impl Fn(u8) -> bool) -> bool {
    rest.as_bytes().first().is_some_and(|&b| b.is_ascii() && accept(b)) && ends(&rest[1..])
}

/// Whether `rest` is a version number (ASCII digits, at least one), then the end of the
/// family part.
fn version(rest: &str) -> bool {
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && ends(&rest[digits..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counter of a model of `encoding`: exact when the library has it built in.
    fn counter_of(encoding: Encoding) -> Counter {
        if encoding.is_built_in() { Counter::Exact(encoding) } else { Counter::Estimate(Family::Other) }
    }

    #[test]
    fn names_are_matched_as_users_write_them() {
        for name in ["gpt-4o", "GPT-4o", "openai/gpt-4o", "ft:gpt-4o-2024-08-06:acme::x1", " gpt-4o-mini "] {
            let model = Model::resolve(name);
            assert_eq!(model.counter, counter_of(Encoding::O200kBase), "{name}");
            assert_eq!(model.context_limit(), Some(128_000), "{name}");
        }
        assert_eq!(Model::resolve("gpt-4").counter, counter_of(Encoding::Cl100kBase));
        assert_eq!(Model::resolve("gpt-oss-120b").counter, counter_of(Encoding::O200kHarmony));
        assert_eq!(Model::resolve("cl100k_base").counter, counter_of(Encoding::Cl100kBase));
    }

    /// Each encoding family is a cargo feature; a model whose encoding was left out of the
    /// build keeps its context limit, and its counts are flagged estimates.
    #[test]
    fn a_model_whose_encoding_is_left_out_counts_as_an_estimate() {
        let families = [
            (Encoding::O200kBase, cfg!(feature = "o200k"), "gpt-4o"),
            (Encoding::O200kHarmony, cfg!(feature = "o200k"), "gpt-oss-20b"),
            (Encoding::Cl100kBase, cfg!(feature = "cl100k"), "gpt-4"),
            (Encoding::P50kBase, cfg!(feature = "p50k"), "text-davinci-003"),
            (Encoding::R50kBase, cfg!(feature = "p50k"), "davinci"),
        ];
        let text = "Counting is exact only with the encoding's tables built in.";
        for (encoding, feature, name) in families {
            assert_eq!(encoding.is_built_in(), feature, "{encoding:?}");
            assert_eq!(encoding.table_bytes() > 0, feature, "{encoding:?}");
            let model = Model::resolve(name);
            assert_eq!(model.is_exact(), feature, "{name}");
            let count = model.count(text);
            assert_eq!(count.exact, feature, "{name}");
            assert!(count.tokens > 5 && count.tokens < 30, "{name}: {count:?}");
            assert!(model.context_limit().is_some(), "{name}");
        }
    }

    #[test]
    fn other_families_are_estimated_with_known_limits() {
        for name in ["claude-sonnet-4-5", "anthropic/claude-3-5-haiku-latest", "us.anthropic.claude-3-7-sonnet-20250219-v1:0"] {
            let model = Model::resolve(name);
            assert!(!model.is_exact(), "{name}");
            assert_eq!(model.context_limit(), Some(200_000), "{name}");
        }
        assert_eq!(Model::resolve("models/gemini-2.5-pro").context_limit(), Some(1_048_576));
        assert_eq!(Model::resolve("gemini-1.5-pro-002").context_limit(), Some(2_097_152));
        assert!(Model::resolve("llama-3.1-70b").is_known());
        for known in ["gpt-4o", "o200k_base", "claude-sonnet-4-5", "models/gemini-2.5-pro", "mistral-large"] {
            assert!(Model::resolve(known).is_known(), "{known}");
        }
        for unknown in ["gpt4o", "my-local-llama", "", "claud-sonnet"] {
            assert!(!Model::resolve(unknown).is_known(), "{unknown}");
        }
    }

    /// A family's prefix is not enough: the name must be spelled as the provider names its
    /// models. `claude-4-sonnet` was known, with Claude's 200,000-token limit.
    #[test]
    fn only_names_spelled_as_the_families_spell_them_are_known() {
        let known = [
            "claude-2.1",
            "claude-instant-1.2",
            "claude-3-haiku-20240307",
            "claude-3-5-sonnet-20241022",
            "claude-3-7-sonnet-latest",
            "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
            "claude-sonnet-4-20250514",
            "claude-opus-4-1",
            "claude-sonnet-4-5",
            "claude-haiku-4-5@20251001",
            "gemini-2.5-pro",
            "models/gemini-1.5-flash-002",
            "gemini-pro",
            "gemini-exp-1206",
            "gemma-3-27b-it",
            "gemma2-9b-it",
            "llama-3.3-70b-versatile",
            "meta-llama/Meta-Llama-3.1-8B-Instruct",
            "llama3.2:3b",
            "mistral-large-latest",
            "mixtral-8x7b-32768",
            "codestral-2501",
            "deepseek-chat",
            "deepseek-reasoner",
            "deepseek-ai/deepseek-v3",
            "qwen-max",
            "qwen2.5-72b-instruct",
            "qwq-32b",
        ];
        for name in known {
            assert!(Model::resolve(name).is_known(), "{name}");
        }
        for name in
            ["claude-4-sonnet", "claude-sonnet", "claude-3-sonet", "gemini-ultra9", "gemma-it", "llama-guard", "deepseek-foo"]
        {
            let model = Model::resolve(name);
            assert!(!model.is_known(), "{name}");
            assert_eq!(model.context_limit(), None, "{name}");
        }
        // Still counted with the family's estimate.
        assert_eq!(Model::resolve("claude-4-sonnet").family(), Family::Anthropic);
        let unknown = Model::resolve("my-local-llama");
        assert!(!unknown.is_exact());
        assert_eq!(unknown.context_limit(), None);
        assert!(!unknown.count("abcde").exact);
    }

    /// How each family spells its models, as the regexes `is_family_model` replaced (digits
    /// ASCII): the reference it is checked against.
    const FAMILY_MODELS: &[&str] = &[
        r"claude-(instant-)?[12](\.\d)?",
        r"claude-3(-[57])?-(haiku|sonnet|opus)",
        r"claude-(haiku|sonnet|opus)-[4-9]",
        r"gemini-(\d+(\.\d+)?|pro|flash|ultra|exp)",
        r"gemma-?\d+(\.\d+)?",
        r"(meta-)?llama-?\d+(\.\d+)?",
        r"(mistral|mixtral|codestral|devstral|magistral|ministral|pixtral)",
        r"deepseek-(chat|reasoner|coder|v\d+(\.\d+)?|r\d|llm|math|vl\d?|prover)",
        r"(qwen(\d+(\.\d+)?)?|qwq)",
    ];

    /// Names near the families' spellings: each a real spelling of every alternative, or a
    /// name built from their pieces, changed by up to three edits (a piece inserted, a byte
    /// removed, the name cut short) and given a suffix. `is_family_model` answers as the
    /// reference regexes do for each of 200,000 names, known and unknown in good numbers.
    #[test]
    fn family_models_are_spelled_as_the_reference_regexes_say() {
        let reference =
            regex::RegexSet::new(FAMILY_MODELS.iter().map(|model| format!("(?-u)^(?:{model})(?:[-_:@.]|$)"))).unwrap();
        let spellings: Vec<&str> = "claude-2 claude-1.3 claude-instant-1.2 claude-3-haiku claude-3-5-sonnet \
             claude-3-7-opus claude-sonnet-4 claude-opus-9 gemini-2.5 gemini-pro gemini-flash gemini-ultra gemini-exp \
             gemma3 gemma-2.1 llama3.2 llama-3 meta-llama-3.1 mistral mixtral codestral devstral magistral ministral \
             pixtral deepseek-chat deepseek-reasoner deepseek-coder deepseek-v3.1 deepseek-r1 deepseek-llm \
             deepseek-math deepseek-vl deepseek-vl2 deepseek-prover qwen qwen2.5 qwq gpt-4o"
            .split_whitespace()
            .collect();
        let pieces: Vec<&str> = "claude-|instant-|3|-5|-7|-|haiku|sonnet|opus|gemini-|pro|flash|ultra|exp|gemma|meta-|\
             llama|mistral|deepseek-|chat|v|r|vl|qwen|qwq|0|1|2|4|8|9|12|2.5|.|_|:|@|x| |é|٣"
            .split('|')
            .collect();
        let suffixes = ["", "-x", ".5", "12", "_a", ":3b", "@1", "x", "-", "0"];
        let mut rng = crate::test_rng::XorShift(0x2545_F491_4F6C_DD1D);
        let mut next = |below: usize| rng.below(below);
        let (mut known, mut unknown) = (0, 0);
        for _ in 0..200_000 {
            let mut name = match next(2) {
                0 => spellings[next(spellings.len())].to_owned(),
                _ => (0..1 + next(4)).map(|_| pieces[next(pieces.len())]).collect(),
            };
            for _ in 0..next(4) {
                let at = next(name.len() + 1);
                if !name.is_char_boundary(at) {
                    continue;
                }
                match next(3) {
                    0 => name.insert_str(at, pieces[next(pieces.len())]),
                    1 if at < name.len() && name.is_char_boundary(at + 1) => drop(name.remove(at)),
                    _ => name.truncate(at),
                }
            }
            name.push_str(suffixes[next(suffixes.len())]);
            let expected = reference.is_match(&name);
            assert_eq!(is_family_model(&name), expected, "{name:?}");
            if expected { known += 1 } else { unknown += 1 }
        }
        assert!(known > 20_000 && unknown > 20_000, "known {known}, unknown {unknown}");
    }
}
