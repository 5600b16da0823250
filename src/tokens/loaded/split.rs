//! Pre-tokenizers: how normalized text is cut into the pieces that are merged separately.
//!
//! A chain of steps, each applied to every piece the previous steps made, as Hugging Face's
//! `Sequence` does. A regex step keeps the pattern's exact semantics, look-ahead included.
//! The families' patterns end in `|\s+(?!\S)|\s+`, the one look-ahead they use; such a
//! pattern runs on the `regex` crate's automata as `P|\s+` with that construct emulated
//! exactly (see [`Regex`]). Any other pattern runs on fancy-regex, the backtracking engine
//! tiktoken itself runs them with. A pattern that is o200k's or cl100k's, as GPT-4o's, Llama
//! 3's and Llama 4's files spell them, runs on the built-in encodings' hand-written
//! pre-tokenizers instead, several times faster than either engine (on CJK text above all).

use std::borrow::Cow;

use super::super::bpe::KnownSplit;

/// What becomes of the matches of a split step (Hugging Face's
/// `SplitDelimiterBehavior`; a ranks file's pattern is `Removed` and inverted: its matches
/// are the pieces and the text it does not match is dropped, as tiktoken drops it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Behavior {
    /// Matches are dropped.
    Removed,
    /// Matches and the text between them are separate pieces.
    Isolated,
    /// A match joins the piece before it.
    MergedWithPrevious,
    /// A match joins the piece after it.
    MergedWithNext,
    /// Consecutive matches join into one piece.
    Contiguous,
}

/// What a step splits on.
#[derive(Debug)]
pub(super) enum Pattern {
    Regex(Regex),
    Literal(String),
}

/// One step of the chain.
#[derive(Debug)]
pub(super) enum Step {
    /// Split on a pattern.
    Split {
        pattern: Pattern,
        behavior: Behavior,
        /// The pattern selects the pieces' complement.
        invert: bool,
    },
    /// Hugging Face's `ByteLevel` pre-tokenizer: a space before a piece that does not
    /// start with one (`add_prefix_space`); with `use_regex`, then GPT-2's split.
    ByteLevel { add_prefix_space: bool, regex: Option<Pattern> },
}

/// A compiled split pattern.
#[derive(Debug)]
pub(super) enum Regex {
    /// A pattern the built-in encodings' pre-tokenizers run (o200k's, cl100k's): the same
    /// matches, without a regex engine.
    Known(KnownSplit),
    /// `P|\s+(?!\S)|\s+` where `P` has no look-around or anchors: `full` is `P|\s+` and
    /// `head` is `^(?:P)`. Both patterns match at the same positions (where `P` or `\s+`
    /// does); a match of `full` that `P` does not give is a maximal white-space run, which
    /// the look-ahead alternative ends one character early when two or more characters are
    /// followed by a non-space (the last one then starts the next piece), exactly as the
    /// backtracking engine does.
    Lookahead { full: regex::Regex, head: regex::Regex },
    /// Any other pattern.
    Fancy(fancy_regex::Regex),
}

/// The construct [`Regex::Lookahead`] emulates, at the end of a pattern.
const LOOKAHEAD_TAIL: &str = r"|\s+(?!\S)|\s+";

impl Regex {
    /// Calls `found` with each match's range, left to right.
    fn for_each_match(&self, text: &str, found: &mut dyn FnMut(usize, usize) -> Result<(), String>) -> Result<(), String> {
        match self {
            Regex::Known(known) => known.for_each_match(text, found)?,
            Regex::Fancy(regex) => {
                for m in regex.find_iter(text) {
                    let m = m.map_err(|e| format!("the split pattern failed on this text: {e}"))?;
                    found(m.start(), m.end())?;
                }
            }
            Regex::Lookahead { full, head } => {
                let mut at = 0;
                while let Some(m) = full.find_at(text, at) {
                    let (start, mut end) = (m.start(), m.end());
                    if end < text.len() && m.as_str().chars().all(char::is_whitespace) && !head.is_match(&text[start..]) {
                        // The white-space alternative: `\s+(?!\S)` backs off one character
                        // when that leaves at least one.
                        let last = m.as_str().chars().next_back().map_or(0, char::len_utf8);
                        if end - last > start {
                            end -= last;
                        }
                    }
                    found(start, end)?;
                    at = if end > start { end } else { end + text[end..].chars().next().map_or(1, char::len_utf8) };
                    if at > text.len() {
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

/// GPT-2's pattern, which `ByteLevel` splits with when `use_regex` is on.
pub(super) const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// The engine gives up on a text after this many backtracking steps. The families'
/// patterns take about one step per character of a white-space run, so this covers any
/// text below the message size limit; only a pathological pattern reaches it.
const BACKTRACK_LIMIT: usize = 100_000_000;

/// Compiles a pattern from a file or the options; the error names what failed.
pub(super) fn compile(pattern: &str) -> Result<Regex, String> {
    if let Some(known) = KnownSplit::of_pattern(pattern) {
        return Ok(Regex::Known(known));
    }
    if let Some(regex) = pattern.strip_suffix(LOOKAHEAD_TAIL).and_then(lookahead_free) {
        return Ok(regex);
    }
    let regex = fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .map_err(|e| format!("the pattern {pattern:?} does not compile: {e}"))?;
    Ok(Regex::Fancy(regex))
}

/// Compiles the pattern of a ranks file or a `tekken.json`, which tiktoken runs: it encodes
/// each match and fails on an empty one, so a pattern that matches the empty string is
/// refused (an empty match within a text counts nothing).
pub(super) fn compile_tiktoken(pattern: &str) -> Result<Regex, String> {
    let regex = compile(pattern)?;
    let mut empty = false;
    regex.for_each_match("", &mut |_, _| {
        empty = true;
        Ok(())
    })?;
    match empty {
        true => Err(format!("the pattern {pattern:?} matches the empty string, which tiktoken cannot encode")),
        false => Ok(regex),
    }
}

/// [`Regex::Lookahead`] for the head `P` of a pattern, when `P` has no look-around and no
/// anchors or word boundaries (which would see the text around a piece differently).
fn lookahead_free(head: &str) -> Option<Regex> {
    let hir = regex_syntax::Parser::new().parse(head).ok()?;
    if !hir.properties().look_set().is_empty() {
        return None;
    }
    Some(Regex::Lookahead {
        full: regex::Regex::new(&format!(r"(?:{head})|\s+")).ok()?,
        head: regex::Regex::new(&format!("^(?:{head})")).ok()?,
    })
}

/// Calls `piece` with every piece `chain` cuts `text` into, in order. Fails only when the
/// regex engine gives up (its backtrack limit), with its message.
pub(super) fn for_each_piece(chain: &[Step], text: &str, piece: &mut dyn FnMut(&str)) -> Result<(), String> {
    let Some((step, rest)) = chain.split_first() else {
        if !text.is_empty() {
            piece(text);
        }
        return Ok(());
    };
    match step {
        Step::ByteLevel { add_prefix_space, regex } => {
            let text: Cow<str> = if *add_prefix_space && !text.starts_with(' ') && !text.is_empty() {
                Cow::Owned(format!(" {text}"))
            } else {
                Cow::Borrowed(text)
            };
            match regex {
                Some(pattern) => split(pattern, Behavior::Isolated, false, &text, rest, piece),
                None => for_each_piece(rest, &text, piece),
            }
        }
        Step::Split { pattern, behavior, invert } => split(pattern, *behavior, *invert, text, rest, piece),
    }
}

/// One split step, then the rest of the chain on each piece.
fn split(
    pattern: &Pattern,
    behavior: Behavior,
    invert: bool,
    text: &str,
    rest: &[Step],
    piece: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let emit = |start: usize, end: usize, piece: &mut dyn FnMut(&str)| {
        if start < end { for_each_piece(rest, &text[start..end], piece) } else { Ok(()) }
    };
    match behavior {
        // Every part is a piece: no need to see the next one first.
        Behavior::Isolated => return for_each_part(pattern, text, &mut |start, end, _| emit(start, end, piece)),
        // The parts the pattern (or, inverted, its complement) selects are dropped.
        Behavior::Removed => {
            return for_each_part(pattern, text, &mut |start, end, is_match| match is_match == invert {
                true => emit(start, end, piece),
                false => Ok(()),
            });
        }
        _ => {}
    }
    let mut parts: Vec<(usize, usize, bool)> = Vec::new();
    for_each_part(pattern, text, &mut |start, end, is_match| {
        parts.push((start, end, is_match != invert));
        Ok(())
    })?;
    // Hugging Face's folds (`SplitDelimiterBehavior`), part by part.
    let mut pieces: Vec<(usize, usize)> = Vec::with_capacity(parts.len());
    let mut previous_match = false;
    match behavior {
        Behavior::Isolated | Behavior::Removed => unreachable!("handled above"),
        Behavior::MergedWithPrevious => {
            for &(start, end, is_match) in &parts {
                match pieces.last_mut() {
                    Some(last) if is_match && !previous_match => last.1 = end,
                    _ => pieces.push((start, end)),
                }
                previous_match = is_match;
            }
        }
        Behavior::MergedWithNext => {
            for &(start, end, is_match) in parts.iter().rev() {
                match pieces.last_mut() {
                    Some(last) if is_match && !previous_match => last.0 = start,
                    _ => pieces.push((start, end)),
                }
                previous_match = is_match;
            }
            pieces.reverse();
        }
        Behavior::Contiguous => {
            for &(start, end, is_match) in &parts {
                match pieces.last_mut() {
                    Some(last) if is_match == previous_match => last.1 = end,
                    _ => pieces.push((start, end)),
                }
                previous_match = is_match;
            }
        }
    }
    for (start, end) in pieces {
        emit(start, end, piece)?;
    }
    Ok(())
}

/// Calls `part` with the matches of `pattern` in `text` and the stretches between them, in
/// order, with whether each is a match; empty matches are skipped.
fn for_each_part(
    pattern: &Pattern,
    text: &str,
    part: &mut dyn FnMut(usize, usize, bool) -> Result<(), String>,
) -> Result<(), String> {
    let mut last = 0;
    let mut on_match = |start: usize, end: usize, part: &mut dyn FnMut(usize, usize, bool) -> Result<(), String>| {
        if last < start {
            part(last, start, false)?;
        }
        last = end;
        part(start, end, true)
    };
    match pattern {
        Pattern::Regex(regex) => regex.for_each_match(text, &mut |start, end| {
            if start < end {
                on_match(start, end, part)?;
            }
            Ok(())
        })?,
        Pattern::Literal(literal) if !literal.is_empty() => {
            for (start, _) in text.match_indices(literal.as_str()) {
                on_match(start, start + literal.len(), part)?;
            }
        }
        Pattern::Literal(_) => {}
    }
    if last < text.len() {
        part(last, text.len(), false)?;
    }
    Ok(())
}
