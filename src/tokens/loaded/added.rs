//! Added tokens of a `tokenizer.json` (`<|im_start|>`, `<start_of_turn>`, ...): Hugging Face
//! finds them in the text before anything else, and each one found is one token. Tokens
//! marked `normalized` are looked for in the normalized text, the others in the raw text;
//! both searches take the leftmost longest match, as Hugging Face's do.

use aho_corasick::{AhoCorasick, MatchKind};
use memchr::memmem::Finder;

/// One search: a set of token strings.
#[derive(Debug)]
pub(super) struct AddedTokens {
    automaton: Option<AhoCorasick>,
    /// The bytes every token starts with, if at least two: a text without them has none
    /// of the tokens, which a substring search says several times faster than the
    /// automaton, whose own prefilter stops at every first byte (`<` in source code).
    prefix: Option<Finder<'static>>,
}

impl AddedTokens {
    /// A search for `tokens` (none: nothing is ever found).
    pub(super) fn new(tokens: &[String]) -> Result<AddedTokens, String> {
        let tokens: Vec<&String> = tokens.iter().filter(|t| !t.is_empty()).collect();
        if tokens.is_empty() {
            return Ok(AddedTokens { automaton: None, prefix: None });
        }
        let prefix = tokens.iter().skip(1).fold(tokens[0].as_bytes(), |prefix, token| {
            let shared = prefix.iter().zip(token.as_bytes()).take_while(|(a, b)| a == b).count();
            &prefix[..shared]
        });
        let prefix = (prefix.len() >= 2).then(|| Finder::new(prefix).into_owned());
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(tokens)
            .map_err(|e| format!("added tokens: {e}"))?;
        Ok(AddedTokens { automaton: Some(automaton), prefix })
    }

    /// Whether `text` lacks the prefix every token starts with, so holds none of them.
    fn ruled_out(&self, text: &str) -> bool {
        self.prefix.as_ref().is_some_and(|prefix| prefix.find(text.as_bytes()).is_none())
    }

    /// Calls `between` with each stretch of `text` between the tokens found (in order, empty
    /// ones skipped) and returns how many tokens were found.
    pub(super) fn split<E>(&self, text: &str, between: &mut dyn FnMut(&str) -> Result<(), E>) -> Result<usize, E> {
        let Some(automaton) = self.automaton.as_ref().filter(|_| !self.ruled_out(text)) else {
            if !text.is_empty() {
                between(text)?;
            }
            return Ok(0);
        };
        let mut found = 0;
        let mut last = 0;
        for m in automaton.find_iter(text) {
            if last < m.start() {
                between(&text[last..m.start()])?;
            }
            found += 1;
            last = m.end();
        }
        if last < text.len() {
            between(&text[last..])?;
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftmost_longest_tokens_are_cut_out() {
        let tokens = AddedTokens::new(&["<a>".into(), "<a><b>".into(), "<b>".into()]).unwrap();
        let mut seen = Vec::new();
        let found = tokens
            .split::<()>("x<a><b>y<b><a>", &mut |s| {
                seen.push(s.to_owned());
                Ok(())
            })
            .unwrap();
        assert_eq!(found, 3);
        assert_eq!(seen, ["x", "y"]);
    }

    /// Tokens sharing a prefix of two bytes or more are found as the automaton alone finds
    /// them: in texts with the prefix and a token, with the prefix but no token, with
    /// neither; and tokens sharing less are looked for by the automaton alone.
    #[test]
    fn a_shared_prefix_rules_out_texts_without_it() {
        let split = |tokens: &AddedTokens, text: &str| {
            let mut seen = Vec::new();
            let found = tokens
                .split::<()>(text, &mut |s| {
                    seen.push(s.to_owned());
                    Ok(())
                })
                .unwrap();
            (found, seen)
        };
        let shared = AddedTokens::new(&["<|im_start|>".into(), "<|im_end|>".into(), "<|endoftext|>".into()]).unwrap();
        assert!(shared.prefix.is_some());
        assert_eq!(split(&shared, "a<|im_end|>b<|im_start|>"), (2, vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(split(&shared, "if a <|x| b {}"), (0, vec!["if a <|x| b {}".to_owned()]));
        assert_eq!(split(&shared, "Vec<u8> < 3"), (0, vec!["Vec<u8> < 3".to_owned()]));
        assert_eq!(split(&shared, "<|endoftext|>"), (1, vec![]));
        let apart = AddedTokens::new(&["<think>".into(), "<|im_end|>".into()]).unwrap();
        assert!(apart.prefix.is_none());
        assert_eq!(split(&apart, "a<think>b<|im_end|>"), (2, vec!["a".to_owned(), "b".to_owned()]));
    }
}
