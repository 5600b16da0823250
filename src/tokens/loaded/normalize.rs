//! Normalizers of a `tokenizer.json` (and NFC for ranks files whose family applies it):
//! what the text goes through before it is split.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// One normalization step; a chain runs in order.
#[derive(Debug)]
pub(super) enum Normalize {
    /// Unicode canonical composition.
    Nfc,
    /// Unicode canonical decomposition.
    Nfd,
    /// Unicode compatibility composition.
    Nfkc,
    /// Unicode compatibility decomposition.
    Nfkd,
    /// Lower case, as Rust's `str::to_lowercase`.
    Lowercase,
    /// Every occurrence of a literal string replaced.
    Replace { from: String, to: String },
    /// A string put before a text that is not empty.
    Prepend(String),
}

impl Normalize {
    fn apply<'a>(&self, text: Cow<'a, str>) -> Cow<'a, str> {
        match self {
            Normalize::Nfc => {
                if unicode_normalization::is_nfc_quick(text.chars()) == unicode_normalization::IsNormalized::Yes {
                    text
                } else {
                    Cow::Owned(text.nfc().collect())
                }
            }
            Normalize::Nfd => Cow::Owned(text.nfd().collect()),
            Normalize::Nfkc => Cow::Owned(text.nfkc().collect()),
            Normalize::Nfkd => Cow::Owned(text.nfkd().collect()),
            Normalize::Lowercase => Cow::Owned(text.to_lowercase()),
            Normalize::Replace { from, to } => {
                if !from.is_empty() && text.contains(from.as_str()) {
                    Cow::Owned(text.replace(from.as_str(), to))
                } else {
                    text
                }
            }
            Normalize::Prepend(prefix) => {
                if text.is_empty() {
                    text
                } else {
                    Cow::Owned(format!("{prefix}{text}"))
                }
            }
        }
    }
}

/// `text` after every step of `chain`.
pub(super) fn normalize<'a>(chain: &[Normalize], text: &'a str) -> Cow<'a, str> {
    chain.iter().fold(Cow::Borrowed(text), |text, step| step.apply(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_run_in_order() {
        let chain = [Normalize::Prepend("▁".into()), Normalize::Replace { from: " ".into(), to: "▁".into() }, Normalize::Nfc];
        assert_eq!(normalize(&chain, "e\u{301} a"), "▁\u{e9}▁a");
        assert_eq!(normalize(&chain, ""), "");
        assert!(matches!(normalize(&[Normalize::Nfc], "plain"), Cow::Borrowed(_)));
    }
}
