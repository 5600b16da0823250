//! Pre-tokenizer of o200k_base / o200k_harmony:
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |\p{N}{1,3}
//! | ?[^\s\p{L}\p{N}]+[\r\n/]*
//! |\s*[\r\n]+
//! |\s+(?!\S)
//! |\s+
//! ```
//!
//! Nothing here is possessive: the two word alternatives backtrack over their
//! optional prefix and over the overlap between the "upper" and "lower"
//! classes (`\p{Lm}`, `\p{Lo}`, `\p{M}` are in both), which [`lower_word`]
//! and [`upper_word`] reproduce.

use super::super::layout::{CLASS_LETTER_OTHER, CLASS_LOWER, CLASS_MARK, CLASS_NUMBER, CLASS_OTHER, CLASS_SPACE, CLASS_UPPER};
use super::super::unicode::{LOWER_LIKE, NUMBERS, PUNCTUATION, UPPER_AND_LOWER_LIKE, UPPER_LIKE, class_at, is_in};
use super::ascii_window::after;
use super::contraction::case_insensitive_len;
use super::{
    AsciiWindow, Pretokenizer, WhitespaceRun, ascii_lower, ascii_run_end, ascii_run_end_where, bounded_run_end, run_end,
};

/// The o200k splitting regex.
pub(in super::super) struct O200k;

impl Pretokenizer for O200k {
    const LINES: bool = true;

    #[inline(always)]
    fn piece_end(text: &[u8], start: usize) -> usize {
        let (class, len) = class_at(text, start);
        let after_prefix = start + len;
        match class {
            CLASS_UPPER | CLASS_LOWER | CLASS_LETTER_OTHER => word(text, start).unwrap_or(after_prefix),
            CLASS_NUMBER => bounded_run_end(text, start, NUMBERS, 3),
            // A mark may be the optional prefix and also a word character.
            CLASS_MARK => lower_word(text, after_prefix)
                .or_else(|| lower_word(text, start))
                .or_else(|| upper_word(text, after_prefix))
                .or_else(|| upper_word(text, start))
                .unwrap_or_else(|| punctuation(text, start)),
            CLASS_OTHER => word_after_prefix(text, after_prefix).unwrap_or_else(|| punctuation(text, start)),
            CLASS_SPACE => word_after_prefix(text, after_prefix).unwrap_or_else(|| {
                if text[start] == b' ' && is_in(PUNCTUATION, class_at(text, after_prefix).0) {
                    punctuation(text, after_prefix)
                } else {
                    whitespace(text, start)
                }
            }),
            _ => whitespace(text, start),
        }
    }

    const WINDOWS: bool = true;

    /// [`SharedStarts`](super::ascii_window::SharedStarts), punctuation
    /// taking newlines and slashes (`[\r\n/]*`), and: a lower-case letter followed by a
    /// capital ends a word (`[A-Z]*[a-z]+`, then `[A-Z]+[a-z]*`); a word takes
    /// a contraction right after it, and letters after the contraction start
    /// a piece (`(?i:'s|'t|'re|'ve|'m|'ll|'d)?`).
    #[inline(always)]
    fn window_starts(window: &AsciiWindow, text: &[u8], from: usize) -> u64 {
        let shared = window.shared_starts(window.newlines | window.slashes);
        let lookahead_splits = shared.lookahead_splits;
        let mut starts = shared.starts | lookahead_splits | window.uppers & after(window.lowers);
        let mut apostrophes = window.apostrophes & after(window.letters);
        // End of the last contraction: an apostrophe right after one follows
        // no word (the contraction's letters are not one).
        let mut contraction_end = None;
        while apostrophes != 0 {
            let at = apostrophes.trailing_zeros();
            let len = case_insensitive_len(text, from + at as usize) as u32;
            if len > 0 && contraction_end != Some(at) {
                starts &= !(((1u64 << len) - 1) << at);
                if at + len < 64 {
                    starts |= window.letters & 1 << (at + len);
                }
                contraction_end = Some(at + len);
            }
            apostrophes &= apostrophes - 1;
        }
        let trailing_whitespace = window.trailing_whitespace();
        if window.ends_text {
            // A run ending the text keeps its last byte (`\s+(?!\S)` matches
            // up to the end).
            return starts & !(lookahead_splits & trailing_whitespace);
        }
        window.trusted(starts, trailing_whitespace)
    }
}

/// The two word alternatives after a one-character prefix (which is neither a letter nor
/// a mark), matched at `i`: none unless a word character follows the prefix.
#[inline(always)]
fn word_after_prefix(text: &[u8], i: usize) -> Option<usize> {
    if is_in(UPPER_LIKE | LOWER_LIKE, class_at(text, i).0) { word(text, i) } else { None }
}

/// The two word alternatives ([`lower_word`], then [`upper_word`]) matched at `i`.
#[inline(always)]
fn word(text: &[u8], i: usize) -> Option<usize> {
    ascii_word(text, i).or_else(|| lower_word(text, i).or_else(|| upper_word(text, i)))
}

/// The common case of the word alternatives, decided from ASCII alone: ASCII capitals
/// then ASCII lower-case letters (at least one letter in all), followed by the end of
/// the text or by an ASCII byte. `None` when that is not the case; the general matchers
/// decide then.
///
/// Exact because the ASCII classes are disjoint: `[A-Z]` is only upper-like, `[a-z]`
/// only lower-like, and no other ASCII byte is either. With lower-case letters the
/// first alternative matches the capitals and the lower-case letters and stops at the
/// byte after them (a capital there starts the next word, as in `camelCase`); with
/// none, the first alternative fails and the second matches the capitals. Either way
/// the contraction may follow.
#[inline(always)]
fn ascii_word(text: &[u8], i: usize) -> Option<usize> {
    let capitals_end = ascii_run_end(text, i, u8::is_ascii_uppercase);
    let end = ascii_run_end_where(text, capitals_end, ascii_lower);
    match text.get(end) {
        _ if end == i => None,
        Some(&byte) if !byte.is_ascii() => None,
        _ => Some(end + case_insensitive_len(text, end)),
    }
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` + contraction,
/// matched at `i`. The greedy upper run backs off until a lower-like character
/// follows: either the character after the run is lower-case, or the lower
/// part is the run's last upper-and-lower-like character alone.
#[inline]
fn lower_word(text: &[u8], i: usize) -> Option<usize> {
    // ASCII capitals are upper-like only, so skipping them first changes nothing.
    let mut end = ascii_run_end(text, i, u8::is_ascii_uppercase);
    let mut last_both_end = None;
    let (mut class, mut len) = class_at(text, end);
    while is_in(UPPER_LIKE, class) {
        end += len;
        if is_in(UPPER_AND_LOWER_LIKE, class) {
            last_both_end = Some(end);
        }
        (class, len) = class_at(text, end);
    }
    let word_end = if class == CLASS_LOWER {
        // The ASCII lower-case letters first, then any lower-like character.
        run_end(text, ascii_run_end(text, end, u8::is_ascii_lowercase), LOWER_LIKE)
    } else {
        last_both_end?
    };
    Some(word_end + case_insensitive_len(text, word_end))
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` + contraction,
/// matched at `i`.
#[inline]
fn upper_word(text: &[u8], i: usize) -> Option<usize> {
    if !is_in(UPPER_LIKE, class_at(text, i).0) {
        return None;
    }
    let word_end = run_end(text, run_end(text, i, UPPER_LIKE), LOWER_LIKE);
    Some(word_end + case_insensitive_len(text, word_end))
}

/// `[^\s\p{L}\p{N}]+[\r\n/]*` matched at `i`.
#[inline]
fn punctuation(text: &[u8], i: usize) -> usize {
    let mut end = run_end(text, i, PUNCTUATION);
    while matches!(text.get(end), Some(b'\r' | b'\n' | b'/')) {
        end += 1;
    }
    end
}

/// `\s*[\r\n]+`, then `\s+(?!\S)`, then `\s+`, matched at `start`.
#[inline]
fn whitespace(text: &[u8], start: usize) -> usize {
    let run = WhitespaceRun::scan(text, start);
    // `\s*[\r\n]+` backs off to the run's last newline.
    run.last_newline_end.unwrap_or_else(|| run.lookahead_split(text, start))
}
