//! OpenAI's public byte-pair encodings, counted exactly.

/// One of OpenAI's public encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5 and the o-series.
    O200kBase,
    /// gpt-oss: o200k_base's vocabulary with the harmony special tokens.
    O200kHarmony,
    /// GPT-4, GPT-3.5-turbo and the text-embedding-3 models.
    Cl100kBase,
    /// Codex and text-davinci-002/003.
    P50kBase,
    /// GPT-3 and GPT-2.
    R50kBase,
}

impl Encoding {
    /// Every encoding, for lookups by name.
    pub const ALL: [Encoding; 5] = [
        Encoding::O200kBase,
        Encoding::O200kHarmony,
        Encoding::Cl100kBase,
        Encoding::P50kBase,
        Encoding::R50kBase,
    ];

    /// The encoding's name as tiktoken spells it (`"o200k_base"`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::O200kHarmony => "o200k_harmony",
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::P50kBase => "p50k_base",
            Encoding::R50kBase => "r50k_base",
        }
    }

    /// Exact number of tokens of `text`, special-token strings counted as ordinary text
    /// (tiktoken's `encode_ordinary`). Thread-safe.
    pub fn count(self, text: &str) -> usize {
        let bpe = match self {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::O200kHarmony => tiktoken_rs::o200k_harmony_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::P50kBase => tiktoken_rs::p50k_base_singleton(),
            Encoding::R50kBase => tiktoken_rs::r50k_base_singleton(),
        };
        bpe.count_ordinary(text)
    }
}
