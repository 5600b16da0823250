//! Searching a split pattern with a bounded amount of work.
//!
//! A pattern from a tokenizer file or the load options is untrusted. Even without
//! look-around or backreferences (refused when compiling, see `split::compile`), finding
//! every match left to right can cost a scan to the end of the text for each match:
//! `\p{L}+x|\p{L}` on a run of letters finds one letter at a time, after scanning the whole
//! run each time, so counting grows with the square of the text. The search here runs the
//! pattern's lazy DFA (the automaton the `regex` crate runs, with the same leftmost-first
//! semantics) byte by byte and counts the bytes it steps over; a count whose searches step
//! over more than [`STEPS_PER_BYTE`] times its text (plus [`BASE_STEPS`]) is refused. The
//! families' patterns step over each byte two or three times.

use regex_automata::hybrid::dfa::DFA;
use regex_automata::hybrid::regex::{Cache, Regex};
use regex_automata::util::pool::Pool;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input};
use std::sync::Arc;

/// Steps allowed per byte of the text a search runs on.
pub(super) const STEPS_PER_BYTE: u64 = 64;

/// Steps allowed on top, so that short texts are never refused.
pub(super) const BASE_STEPS: u64 = 1 << 16;

type CachePool = Pool<Cache, Box<dyn Fn() -> Cache + Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>>;

/// A compiled pattern and the caches its searches use (one per thread searching at once).
pub(super) struct Searcher {
    regex: Arc<Regex>,
    caches: CachePool,
}

impl std::fmt::Debug for Searcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Searcher")
    }
}

/// The work left to a count's searches.
pub(super) struct Budget {
    steps: u64,
}

impl Budget {
    /// The budget of searches over a text of `len` bytes.
    pub(super) fn for_text(len: usize) -> Budget {
        Budget { steps: (len as u64).saturating_mul(STEPS_PER_BYTE).saturating_add(BASE_STEPS) }
    }

    fn spend(&mut self, steps: u64) -> Result<(), String> {
        match self.steps.checked_sub(steps) {
            Some(left) => {
                self.steps = left;
                Ok(())
            }
            None => Err(format!(
                "the split pattern needs more than {STEPS_PER_BYTE} search steps per byte of this text \
                 (its matches overlap in ways that make counting grow faster than the text): refused"
            )),
        }
    }
}

impl Searcher {
    /// Compiles `pattern` (Unicode, UTF-8 matches only, as the `regex` crate does).
    pub(super) fn new(pattern: &str) -> Result<Searcher, String> {
        let regex = Arc::new(
            Regex::builder().syntax(syntax::Config::new().unicode(true).utf8(true)).build(pattern).map_err(|e| e.to_string())?,
        );
        let for_caches = Arc::clone(&regex);
        let caches: CachePool = Pool::new(Box::new(move || for_caches.create_cache()));
        Ok(Searcher { regex, caches })
    }

    /// The leftmost-first match of the pattern in `text` that starts at `at` or later, as
    /// `(start, end)`; with `anchored`, only one starting at `at`, and the first end found
    /// (for a yes-or-no answer).
    pub(super) fn find(
        &self,
        text: &str,
        at: usize,
        anchored: bool,
        budget: &mut Budget,
    ) -> Result<Option<(usize, usize)>, String> {
        let mut cache = self.caches.get();
        let (forward, reverse) = cache.as_parts_mut();
        let bytes = text.as_bytes();
        let input = Input::new(text).range(at..).anchored(if anchored { Anchored::Yes } else { Anchored::No });
        let dfa = self.regex.forward();
        let mut state = dfa.start_state_forward(forward, &input).map_err(|e| e.to_string())?;
        let mut end = None;
        let mut position = at;
        let mut dead = false;
        while position < bytes.len() {
            state = dfa.next_state(forward, state, bytes[position]).map_err(|e| e.to_string())?;
            if state.is_tagged() {
                if state.is_match() {
                    end = Some(position);
                    if anchored {
                        break;
                    }
                } else if state.is_dead() {
                    dead = true;
                    break;
                } else if state.is_quit() {
                    return Err(format!("the split pattern cannot be searched at byte {position}"));
                }
            }
            position += 1;
        }
        budget.spend((position - at) as u64 + 1)?;
        if !(dead || anchored && end.is_some()) {
            state = dfa.next_eoi_state(forward, state).map_err(|e| e.to_string())?;
            if state.is_match() {
                end = Some(bytes.len());
            }
        }
        let Some(end) = end else { return Ok(None) };
        if anchored {
            return Ok(Some((at, end)));
        }
        Ok(Some((self.start_of(reverse, text, at, end, budget)?, end)))
    }

    /// Where the match that ends at `end` starts: the reverse DFA run back from `end`, no
    /// further than `at`, keeping the earliest start.
    fn start_of(
        &self,
        cache: &mut regex_automata::hybrid::dfa::Cache,
        text: &str,
        at: usize,
        end: usize,
        budget: &mut Budget,
    ) -> Result<usize, String> {
        let dfa: &DFA = self.regex.reverse();
        let bytes = text.as_bytes();
        let input = Input::new(text).range(at..end).anchored(Anchored::Yes);
        let mut state = dfa.start_state_reverse(cache, &input).map_err(|e| e.to_string())?;
        let mut start = end;
        let mut position = end;
        let mut dead = false;
        while position > at {
            position -= 1;
            state = dfa.next_state(cache, state, bytes[position]).map_err(|e| e.to_string())?;
            if state.is_tagged() {
                if state.is_match() {
                    start = position + 1;
                } else if state.is_dead() {
                    dead = true;
                    break;
                } else if state.is_quit() {
                    return Err(format!("the split pattern cannot be searched at byte {position}"));
                }
            }
        }
        budget.spend((end - position) as u64 + 1)?;
        if !dead {
            state = match at {
                0 => dfa.next_eoi_state(cache, state),
                _ => dfa.next_state(cache, state, bytes[at - 1]),
            }
            .map_err(|e| e.to_string())?;
            if state.is_match() {
                start = at;
            }
        }
        Ok(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every match, left to right, as the `regex` crate's `find_iter` gives them.
    fn all(searcher: &Searcher, text: &str) -> Vec<(usize, usize)> {
        let mut budget = Budget::for_text(text.len());
        let (mut at, mut found) = (0, Vec::new());
        while at <= text.len() {
            let Some((start, end)) = searcher.find(text, at, false, &mut budget).unwrap() else { break };
            if start < end {
                found.push((start, end));
            }
            at = if end > start { end } else { end + text[end..].chars().next().map_or(1, char::len_utf8) };
        }
        found
    }

    #[test]
    fn finds_what_the_regex_crate_finds() {
        let patterns = [
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+",
            r"\p{N}{1,3}",
            r"[一-龥぀-ゟ゠-ヿ]+",
            r"a+b|a",
            r"x*",
            r"\s+",
        ];
        let texts = [
            "Hello, world! It's 12345 déjà-vu   \n\n  tabs\there 日本語のテキスト 😀😀 end",
            "aaab aaa ab b",
            "",
            "   ",
            "x1234567 ΣΣ",
        ];
        for pattern in patterns {
            let ours = Searcher::new(pattern).unwrap();
            let theirs = regex::Regex::new(pattern).unwrap();
            for text in texts {
                let expected: Vec<(usize, usize)> =
                    theirs.find_iter(text).map(|m| (m.start(), m.end())).filter(|(s, e)| s < e).collect();
                assert_eq!(all(&ours, text), expected, "{pattern} on {text:?}");
            }
        }
    }

    #[test]
    fn an_anchored_search_answers_at_the_first_end() {
        let searcher = Searcher::new(r"\s*[\r\n]+|a").unwrap();
        let mut budget = Budget::for_text(100);
        assert_eq!(searcher.find("  \n x", 0, true, &mut budget).unwrap(), Some((0, 3)));
        assert_eq!(searcher.find("   x", 0, true, &mut budget).unwrap(), None);
        assert_eq!(searcher.find("ba", 0, true, &mut budget).unwrap(), None);
        assert_eq!(searcher.find("ba", 1, true, &mut budget).unwrap(), Some((1, 2)));
    }

    /// `\p{L}+x|\p{L}` on letters scans to the end of the run for every letter: the search
    /// is refused once it has stepped over 64 times the text, instead of growing with its
    /// square.
    #[test]
    fn a_pattern_that_rescans_the_text_is_refused() {
        let searcher = Searcher::new(r"\p{L}+x|\p{L}").unwrap();
        let text = "a".repeat(100_000);
        let mut budget = Budget::for_text(text.len());
        let mut at = 0;
        let error = loop {
            match searcher.find(&text, at, false, &mut budget) {
                Ok(Some((_, end))) => at = end,
                Ok(None) => panic!("refused before the end"),
                Err(e) => break e,
            }
        };
        assert!(error.contains("more than 64 search steps per byte"), "{error}");
        assert!(at < 10_000, "refused after {at} matches");
        // A short text stays within the base allowance.
        assert_eq!(all(&searcher, &"a".repeat(100)).len(), 100);
    }
}
