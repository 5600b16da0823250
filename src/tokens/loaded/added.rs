//! Added tokens of a `tokenizer.json` (`<|im_start|>`, `<start_of_turn>`, ...): Hugging Face
//! finds them in the text before anything else, and each one found is one token. Tokens
//! marked `normalized` are looked for in the normalized text, the others in the raw text;
//! both searches take the leftmost longest match, as Hugging Face's do.

use aho_corasick::{AhoCorasick, MatchKind};

/// One search: a set of token strings.
#[derive(Debug)]
pub(super) struct AddedTokens {
    automaton: Option<AhoCorasick>,
}

impl AddedTokens {
    /// A search for `tokens` (none: nothing is ever found).
    pub(super) fn new(tokens: &[String]) -> Result<AddedTokens, String> {
        let tokens: Vec<&String> = tokens.iter().filter(|t| !t.is_empty()).collect();
        if tokens.is_empty() {
            return Ok(AddedTokens { automaton: None });
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(tokens)
            .map_err(|e| format!("added tokens: {e}"))?;
        Ok(AddedTokens { automaton: Some(automaton) })
    }

    /// Calls `between` with each stretch of `text` between the tokens found (in order, empty
    /// ones skipped) and returns how many tokens were found.
    pub(super) fn split<E>(&self, text: &str, between: &mut dyn FnMut(&str) -> Result<(), E>) -> Result<usize, E> {
        let Some(automaton) = &self.automaton else {
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
}
