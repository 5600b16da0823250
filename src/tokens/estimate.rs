//! Estimates for models whose tokenizer is not public.
//!
//! The base estimate walks the text once and prices each run of characters the way modern
//! byte-pair tokenizers (100k-256k vocabularies) split it: a short word is one token, long
//! words and identifiers split every few letters, digits go in groups of three, punctuation
//! pairs up, CJK characters are about a token each, other scripts a token per few letters.
//! A per-family factor then scales it to that family's tokenizer, and a window's calibration
//! (from the provider's reported usage) corrects what is left.

/// A family of models without a public tokenizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Anthropic Claude.
    Anthropic,
    /// Google Gemini and Gemma.
    Google,
    /// Meta Llama.
    Meta,
    /// Mistral and Mixtral.
    Mistral,
    /// Any other model.
    Other,
}

impl Family {
    /// The family a bare, lower-case model name belongs to.
    pub fn of(base_name: &str) -> Family {
        const PREFIXES: &[(&str, Family)] = &[
            ("claude", Family::Anthropic),
            ("gemini", Family::Google),
            ("gemma", Family::Google),
            ("llama", Family::Meta),
            ("meta-llama", Family::Meta),
            ("mistral", Family::Mistral),
            ("mixtral", Family::Mistral),
            ("codestral", Family::Mistral),
            ("devstral", Family::Mistral),
        ];
        PREFIXES
            .iter()
            .find(|(prefix, _)| base_name.starts_with(prefix))
            .map_or(Family::Other, |&(_, family)| family)
    }

    /// Tokens of this family's tokenizer per token of the base estimate: priors from public
    /// comparisons of the tokenizers on English prose and code (Claude's tokenizer splits
    /// finer than OpenAI's o200k; Llama 3's is cl100k-like). Calibration corrects the rest.
    fn factor(self) -> f64 {
        match self {
            Family::Anthropic => 1.15,
            Family::Google => 1.0,
            Family::Meta => 1.05,
            Family::Mistral => 1.1,
            Family::Other => 1.05,
        }
    }
}

/// Estimated tokens of `text` for a model of `family`, rounded up.
pub fn estimate(text: &str, family: Family) -> u64 {
    (base_estimate(text) * family.factor()).ceil() as u64
}

/// What a run of characters is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// ASCII letters (and apostrophes inside words).
    Latin,
    /// Letters of other alphabets (Cyrillic, Greek, Arabic, Devanagari, accented Latin…).
    OtherLetters,
    /// Han, kana, Hangul: about one token per character.
    Ideographic,
    Digit,
    Space,
    Newline,
    Punctuation,
    /// Emoji and other symbols: often several tokens each.
    Symbol,
}

fn class(c: char) -> Class {
    match c {
        'a'..='z' | 'A'..='Z' => Class::Latin,
        '0'..='9' => Class::Digit,
        ' ' | '\t' => Class::Space,
        '\n' | '\r' => Class::Newline,
        _ if c.is_ascii() => Class::Punctuation,
        '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}' => {
            Class::Ideographic
        }
        _ if c.is_alphabetic() => Class::OtherLetters,
        _ if c.is_whitespace() => Class::Space,
        _ if (c as u32) >= 0x2000 => Class::Symbol,
        _ => Class::Punctuation,
    }
}

/// The base estimate: a sum of prices per run of same-class characters.
fn base_estimate(text: &str) -> f64 {
    let mut tokens = 0.0;
    let mut chars = text.chars().peekable();
    while let Some(first) = chars.next() {
        let run_class = class(first);
        let mut len = 1usize;
        while chars.peek().is_some_and(|&c| class(c) == run_class) {
            chars.next();
            len += 1;
        }
        tokens += price(run_class, len);
    }
    tokens
}

/// Tokens for a run of `len` characters of one class.
fn price(class: Class, len: usize) -> f64 {
    let n = len as f64;
    match class {
        // A word up to about six letters is one token; longer ones split every ~4.5 letters.
        Class::Latin => 1.0 + (n - 6.0).max(0.0) / 4.5,
        Class::OtherLetters => (n / 3.2).max(1.0),
        Class::Ideographic => n * 0.85,
        Class::Digit => (n / 3.0).ceil(),
        // A single space rides on the next word; runs (indentation) are about one token.
        Class::Space => {
            if len == 1 {
                0.0
            } else {
                1.0 + n / 24.0
            }
        }
        Class::Newline => 0.5 + n / 8.0,
        Class::Punctuation => 0.3 + n * 0.55,
        Class::Symbol => n * 1.6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_recognised_by_prefix() {
        assert_eq!(Family::of("claude-sonnet-4-5"), Family::Anthropic);
        assert_eq!(Family::of("gemini-2.5-pro"), Family::Google);
        assert_eq!(Family::of("llama-3.1-70b"), Family::Meta);
        assert_eq!(Family::of("mistral-large-latest"), Family::Mistral);
        assert_eq!(Family::of("my-own-model"), Family::Other);
    }

    #[test]
    fn empty_text_is_zero_and_estimates_grow_with_text() {
        assert_eq!(estimate("", Family::Other), 0);
        let word = estimate("hello", Family::Google);
        let sentence = estimate("hello there, how are you today?", Family::Google);
        assert!(word >= 1 && sentence > word);
    }
}
