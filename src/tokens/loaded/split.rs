//! Pre-tokenizers: how normalized text is cut into the pieces that are merged separately.
//!
//! A chain of steps, each applied to every piece the previous steps made, as Hugging Face's
//! `Sequence` does. A regex step keeps the pattern's exact semantics, look-ahead included.
//! The families' patterns end in `|\s+(?!\S)|\s+`, the one look-ahead they use; such a
//! pattern runs on the `regex` crate's automata as `P|\s+` with that construct emulated
//! exactly (see [`Regex`]). Other look-around and backreferences are refused: the families
//! do not use them, and a backtracking engine's cost on them is not bounded by the text.

use std::borrow::Cow;

use super::super::bpe::KnownSplit;
use super::search::{Budget, Searcher};
use crate::error::echo;

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

/// A compiled split pattern, searched with a bounded amount of work ([`Searcher`]).
#[derive(Debug)]
pub(super) enum Regex {
    /// A pattern the built-in encodings' pre-tokenizers run.
    Known(Known),
    /// `P|\s+(?!\S)|\s+` where `P` has no look-around or anchors: `full` is `P|\s+` and
    /// `head` is `P`, searched anchored. Both patterns match at the same positions (where `P`
    /// or `\s+` does); a match of `full` that `P` does not give is a maximal white-space run,
    /// which the look-ahead alternative ends one character early when two or more characters
    /// are followed by a non-space (the last one then starts the next piece), exactly as a
    /// backtracking engine does.
    Lookahead { full: Searcher, head: Searcher },
    /// A pattern without look-around or anchors.
    Plain(Searcher),
}

/// A pattern the built-in encodings' pre-tokenizers run (o200k's, cl100k's): the same
/// matches, without a regex engine. `cut_final_run`: the pattern is cl100k's as the
/// `tokenizer.json` files and Llama 3 spell it, whose white space alternatives are
/// `\s*[\r\n]+|\s+(?!\S)|\s+` where tiktoken's cl100k starts with `\s++$`; the two
/// differ only on a white-space run that ends the text, which `\s++$` takes whole and
/// the files' spelling cuts after its last line break (`"x\n  "`: `"\n"` and `"  "`),
/// see [`cut_after_last_line_break`].
#[derive(Clone, Copy, Debug)]
pub(super) struct Known {
    split: KnownSplit,
    cut_final_run: bool,
}

impl Known {
    /// Calls `found` with each match's range from `from` (a match's start) on, left to
    /// right; generic over `found`, so that counting compiles its work on each piece into
    /// the pre-tokenizer's loop.
    #[inline]
    pub(super) fn for_each_match<E>(
        self,
        text: &str,
        from: usize,
        mut found: impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        match self.cut_final_run {
            false => self.split.for_each_match(text, from, found),
            true => self.split.for_each_match(text, from, |start, end| match end == text.len() {
                true => cut_after_last_line_break(text, start, &mut found),
                false => found(start, end),
            }),
        }
    }
}

/// The construct [`Regex::Lookahead`] emulates, at the end of a pattern.
const LOOKAHEAD_TAIL: &str = r"|\s+(?!\S)|\s+";

/// The longest split pattern read from a file or the options. The families' patterns are
/// under 300 bytes; compiling one costs hundreds of bytes of memory per byte of it, so a
/// pattern of megabytes is refused before it is parsed.
pub(super) const MAX_PATTERN_BYTES: usize = 16 << 10;

impl Regex {
    /// Calls `found` with each match's range, left to right. Fails when the searches step
    /// over more than a bounded multiple of the text ([`Budget`]).
    pub(super) fn for_each_match(
        &self,
        text: &str,
        found: &mut dyn FnMut(usize, usize) -> Result<(), String>,
    ) -> Result<(), String> {
        let (searcher, head) = match self {
            Regex::Known(known) => return known.for_each_match(text, 0, found),
            Regex::Plain(searcher) => (searcher, None),
            Regex::Lookahead { full, head } => (full, Some(head)),
        };
        let budget = &mut Budget::for_text(text.len());
        let mut at = 0;
        while let Some((start, mut end)) = searcher.find(text, at, false, budget)? {
            if let Some(head) = head {
                let matched = &text[start..end];
                if end < text.len() && matched.chars().all(char::is_whitespace) && head.find(text, start, true, budget)?.is_none()
                {
                    // The white-space alternative: `\s+(?!\S)` backs off one character
                    // when that leaves at least one.
                    let last = matched.chars().next_back().map_or(0, char::len_utf8);
                    if end - last > start {
                        end -= last;
                    }
                }
            }
            found(start, end)?;
            at = if end > start { end } else { end + text[end..].chars().next().map_or(1, char::len_utf8) };
            if at > text.len() {
                break;
            }
        }
        Ok(())
    }
}

/// The last match `start..` of cl100k's pre-tokenizer, as the pattern spelt without `\s++$`
/// matches there: a white-space run (all of the match is white space) with a character
/// other than a line break after its last line break is two matches, up to that line break
/// (`\s*[\r\n]+` backs off to it) and the rest (`\s+(?!\S)`, at the end of the text);
/// any other last match is the same in both spellings.
fn cut_after_last_line_break<E>(
    text: &str,
    start: usize,
    found: &mut impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<(), E> {
    let run = &text[start..];
    match run.rfind(['\r', '\n']) {
        Some(at) if at + 1 < run.len() && run.chars().all(char::is_whitespace) => {
            found(start, start + at + 1)?;
            found(start + at + 1, text.len())
        }
        _ => found(start, text.len()),
    }
}

/// GPT-2's pattern, which `ByteLevel` splits with when `use_regex` is on.
pub(super) const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// Refuses a pattern above [`MAX_PATTERN_BYTES`], naming its size and the limit.
pub(super) fn check_length(pattern: &str) -> Result<(), String> {
    match pattern.len() > MAX_PATTERN_BYTES {
        true => Err(format!(
            "the pattern is {} bytes, above the limit of {MAX_PATTERN_BYTES} bytes for a split pattern",
            pattern.len()
        )),
        false => Ok(()),
    }
}

/// Compiles a pattern from a file or the options; the error names what failed. Look-around
/// and backreferences are refused, but for the final `\s+(?!\S)` every family's pattern ends
/// with ([`Regex::Lookahead`]): they need a backtracking engine, whose cost can grow with
/// the square of the text or worse; so are anchors and word boundaries, which would see the
/// text around a piece. The library is built without the `regex` crate's tables of the
/// Unicode properties Age, Grapheme_Cluster_Break, Word_Break and Sentence_Break (no
/// tokenizer's pattern uses them; they were 61 KB): a pattern naming one is refused.
pub(super) fn compile(pattern: &str) -> Result<Regex, String> {
    check_length(pattern)?;
    if let Some(split) = KnownSplit::of_pattern(pattern) {
        let cut_final_run = split == KnownSplit::Cl100k && !pattern.contains(r"|\s++$|");
        return Ok(Regex::Known(Known { split, cut_final_run }));
    }
    if let Some(regex) = pattern.strip_suffix(LOOKAHEAD_TAIL).and_then(lookahead_free) {
        return Ok(regex);
    }
    let quoted = format!("\"{}\"", echo(pattern));
    let hir = regex_syntax::Parser::new().parse(pattern).map_err(|e| match e {
        regex_syntax::Error::Parse(e)
            if matches!(
                e.kind(),
                regex_syntax::ast::ErrorKind::UnsupportedLookAround | regex_syntax::ast::ErrorKind::UnsupportedBackreference
            ) =>
        {
            format!(
                "the pattern {quoted} uses look-around or a backreference, which split patterns may not use (their cost can \
                 grow faster than the text); the one look-ahead accepted is a final `|\\s+(?!\\S)|\\s+`, as the families' patterns end"
            )
        }
        regex_syntax::Error::Translate(e)
            if matches!(
                e.kind(),
                regex_syntax::hir::ErrorKind::UnicodePropertyNotFound
                    | regex_syntax::hir::ErrorKind::UnicodePropertyValueNotFound
            ) =>
        {
            format!(
                "the pattern {quoted} names a Unicode property this library does not know: {e}; split patterns may use \
                 general categories (\\p{{L}}, \\p{{Lu}}, \\p{{N}}), scripts (\\p{{Han}}), binary properties \
                 (\\p{{Alphabetic}}) and \\d \\s \\w, not Age or the text-segmentation properties"
            )
        }
        e => format!("the pattern {quoted} does not compile: {e}"),
    })?;
    if !hir.properties().look_set().is_empty() {
        return Err(format!(
            "the pattern {quoted} uses anchors or word boundaries (^, $, \\b, \\B), which split patterns may not use"
        ));
    }
    Searcher::new(pattern).map(Regex::Plain).map_err(|e| format!("the pattern {quoted} does not compile: {e}"))
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
        true => Err(format!("the pattern \"{}\" matches the empty string, which tiktoken cannot encode", echo(pattern))),
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
    Some(Regex::Lookahead { full: Searcher::new(&format!(r"(?:{head})|\s+")).ok()?, head: Searcher::new(head).ok()? })
}

/// Calls `piece` with every piece `chain` cuts `text` into, in order. Fails only when a
/// pattern's searches exceed their work budget ([`Budget`]), with its message.
pub(super) fn for_each_piece(chain: &[Step], text: &str, piece: &mut dyn FnMut(&str)) -> Result<(), String> {
    if let Some(known) = known_pieces(chain) {
        // Through a `dyn` closure, as `Regex::for_each_match` calls it: one copy of the
        // pre-tokenizer's loop serves both (the hot path, counting, has its own).
        let found: &mut dyn FnMut(usize, usize) -> Result<(), String> = &mut |start, end| {
            piece(&text[start..end]);
            Ok(())
        };
        return known.for_each_match(text, 0, found);
    }
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

/// The known split whose matches are exactly the pieces of `chain`, when the chain is a split
/// with a [`Regex::Known`] pattern that keeps its matches as pieces (`Isolated`, or `Removed`
/// inverted: the text between matches dropped), optionally followed by a `ByteLevel` step
/// that neither adds a space nor splits: the chains of GPT-4o's, GPT-3.5's and Llama 3's
/// `tokenizer.json` and of Llama 3's and 4's ranks. The pieces are then the matches as the
/// general path makes them, without its per-piece steps: a known split's matches cover the
/// text (every character starts one), so there is nothing between them to keep or drop, and
/// matches are never empty.
#[inline]
pub(super) fn known_pieces(chain: &[Step]) -> Option<Known> {
    let (Step::Split { pattern: Pattern::Regex(Regex::Known(known)), behavior, invert }, rest) = chain.split_first()? else {
        return None;
    };
    let keeps_matches = matches!((behavior, invert), (Behavior::Isolated, _) | (Behavior::Removed, true));
    let rest_is_identity = matches!(rest, [] | [Step::ByteLevel { add_prefix_space: false, regex: None }]);
    (keeps_matches && rest_is_identity).then_some(*known)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::XorShift;

    /// The patterns the families' files spell that the built-in pre-tokenizers run: GPT-4o's
    /// (o200k) and GPT-3.5's and Llama 3's (cl100k), as written in their `tokenizer.json`.
    const KNOWN_IN_FILES: [&str; 2] = [
        concat!(
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        ),
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    ];

    /// Characters of every class the patterns tell apart: ASCII letters of both cases,
    /// letters of every category (Lu, Ll, Lt, Lm, Lo), marks (Mn, Mc, Me), numbers (Nd, Nl,
    /// No), punctuation and symbols (emoji, a character of four bytes), every kind of white
    /// space (line breaks `\r` `\n` and the others: tab, vertical tab, form feed, U+0085,
    /// no-break and ideographic spaces, the line and paragraph separators), controls and
    /// format characters, the apostrophe and the letters of the contractions in both cases,
    /// with the characters that fold to them (ſ to s, K the Kelvin sign to k).
    const ALPHABET: &[&str] = &[
        "a", "b", "z", "A", "Q", "Z", "s", "S", "t", "T", "d", "D", "m", "M", "l", "L", "r", "R", "v", "V", "e", "E", "ſ",
        "\u{212A}", "é", "É", "ß", "ǅ", "ʰ", "ー", "中", "文", "한", "я", "Ж", "α", "Ω", "\u{301}", "\u{903}", "\u{20DD}", "0",
        "7", "٣", "Ⅻ", "½", "²", "'", "’", ".", ",", "/", "-", "_", "(", "\"", "#", "©", "€", "😀", "𝔘", "𝒶", " ", " ", " ",
        "\t", "\u{b}", "\u{c}", "\r", "\n", "\r\n", "\u{85}", "\u{a0}", "\u{3000}", "\u{2028}", "\u{2029}", "\u{0}", "\u{7f}",
        "\u{200d}", "\u{feff}", "'s", "'S", "'t", "'re", "'RE", "'ve", "'Ve", "'m", "'ll", "'LL", "'d", "'ſ", "Don't", "WE'LL",
        "hello", " world", "  ", "\n\n", " \n ", "123456", "x'", "''",
    ];

    fn pieces(chain: &[Step], text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for_each_piece(chain, text, &mut |piece| {
            let start = piece.as_ptr() as usize - text.as_ptr() as usize;
            out.push((start, start + piece.len()));
        })
        .unwrap();
        out
    }

    /// The built-in pre-tokenizers that run the patterns of GPT-4o's, GPT-3.5's and Llama
    /// 3's files cut text exactly where the patterns themselves do (run on the `regex`
    /// crate with the look-ahead emulated, [`Regex::Lookahead`], the path of every other
    /// family's pattern), in the pre-tokenizer chains those files have (a split keeping
    /// the matches, `Removed` inverted or `Isolated`, then a `ByteLevel` step that does
    /// not split) and alone: on random strings of characters of every class the patterns
    /// use, and on every string of up to three of them. `CTXWIN_SPLIT_CASES` sets the
    /// number of random strings (20,000).
    #[test]
    fn known_splits_cut_where_the_files_patterns_do() {
        let cases = std::env::var("CTXWIN_SPLIT_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(20_000);
        let mut rng = XorShift(0x5117_C0DE);
        let mut texts: Vec<String> = Vec::new();
        for a in ALPHABET {
            for b in ALPHABET {
                for c in ["", "a", " ", "\n", "'", "中", "\u{301}", "7", "."] {
                    texts.push(format!("{a}{b}{c}"));
                }
            }
        }
        for _ in 0..cases {
            let len = rng.below(40);
            texts.push((0..len).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect());
        }
        let chains = |regex: &dyn Fn() -> Regex| {
            let byte_level = || Step::ByteLevel { add_prefix_space: false, regex: None };
            let split = |behavior, invert| Step::Split { pattern: Pattern::Regex(regex()), behavior, invert };
            [
                vec![split(Behavior::Removed, true), byte_level()],
                vec![split(Behavior::Isolated, false), byte_level()],
                vec![split(Behavior::Isolated, true)],
            ]
        };
        for pattern in KNOWN_IN_FILES {
            let known = || compile(pattern).unwrap();
            let regex = || pattern.strip_suffix(LOOKAHEAD_TAIL).and_then(lookahead_free).unwrap();
            assert!(matches!(known(), Regex::Known(_)), "{pattern} is not run by a built-in pre-tokenizer");
            assert!(matches!(regex(), Regex::Lookahead { .. }));
            let (known, regex) = (chains(&known), chains(&regex));
            for (known, regex) in known.iter().zip(&regex) {
                assert!(known_pieces(known).is_some() && known_pieces(regex).is_none());
                for text in &texts {
                    let expected = pieces(regex, text);
                    assert_eq!(expected.iter().map(|p| p.1 - p.0).sum::<usize>(), text.len(), "{text:?}");
                    assert_eq!(pieces(known, text), expected, "{pattern} on {text:?}");
                }
            }
        }
    }
}
