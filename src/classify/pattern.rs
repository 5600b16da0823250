//! A regular expression compiled once, on first use, that can never make
//! the classifier panic.

use regex::{Captures, Regex};
use std::sync::OnceLock;

/// A lazily compiled alternation of regex fragments.
///
/// The fragments are constants checked by the tests; should one ever fail
/// to compile, the pattern simply matches nothing instead of panicking
/// (panics must not cross the C ABI).
pub(super) struct Pattern {
    fragments: &'static [&'static str],
    compiled: OnceLock<Option<Regex>>,
}

impl Pattern {
    /// A pattern matching any one of `fragments` (joined with `|`).
    pub(super) const fn any_of(fragments: &'static [&'static str]) -> Self {
        Self { fragments, compiled: OnceLock::new() }
    }

    /// The compiled regex, or `None` if the fragments are invalid.
    fn regex(&self) -> Option<&Regex> {
        self.compiled.get_or_init(|| Regex::new(&self.fragments.join("|")).ok()).as_ref()
    }

    /// Whether the pattern occurs anywhere in `text`.
    pub(super) fn is_match(&self, text: &str) -> bool {
        self.regex().is_some_and(|re| re.is_match(text))
    }

    /// The capture groups of the first occurrence in `text`, if any.
    pub(super) fn captures<'t>(&self, text: &'t str) -> Option<Captures<'t>> {
        self.regex()?.captures(text)
    }

    /// Whether the fragments compile (used by tests of every rule table).
    #[cfg(test)]
    pub(super) fn compiles(&self) -> bool {
        self.regex().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternation_matches_any_fragment() {
        static P: Pattern = Pattern::any_of(&["foo", "ba[rz]"]);
        assert!(P.compiles());
        assert!(P.is_match("xx baz"));
        assert!(!P.is_match("qux"));
    }

    #[test]
    fn invalid_fragments_match_nothing() {
        static BAD: Pattern = Pattern::any_of(&["(unclosed"]);
        assert!(!BAD.compiles());
        assert!(!BAD.is_match("(unclosed"));
        assert!(BAD.captures("(unclosed").is_none());
    }
}
