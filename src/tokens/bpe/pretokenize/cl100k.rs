//! Pre-tokenizer of cl100k_base:
//!
//! ```text
//! '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
//! |\s++$|\s*[\r\n]|\s+(?!\S)|\s
//! ```

use super::super::layout::{CLASS_LETTER_OTHER, CLASS_LOWER, CLASS_NEWLINE, CLASS_NUMBER, CLASS_UPPER};
use super::super::unicode::{LETTERS, NUMBERS, PUNCTUATION, class_at, is_in};
use super::contraction::case_insensitive_len;
use super::{AsciiWindow, Pretokenizer, WhitespaceRun, ascii_letters, ascii_run_end_where, bounded_run_end, run_end};

/// The cl100k splitting regex.
pub(in super::super) struct Cl100k;

impl Pretokenizer for Cl100k {
    const LINES: bool = true;

    #[inline(always)]
    fn piece_end(text: &[u8], start: usize) -> usize {
        let contraction = case_insensitive_len(text, start);
        if contraction > 0 {
            return start + contraction;
        }
        let (class, len) = class_at(text, start);
        match class {
            CLASS_UPPER | CLASS_LOWER | CLASS_LETTER_OTHER => letters_end(text, start),
            CLASS_NUMBER => bounded_run_end(text, start, NUMBERS, 3),
            CLASS_NEWLINE => whitespace(text, start),
            // Other, mark or non-newline space: a possessive one-character
            // prefix of a letter run, else punctuation or white space.
            _ => {
                let next = start + len;
                let next_class = class_at(text, next).0;
                if is_in(LETTERS, next_class) {
                    letters_end(text, next)
                } else if is_in(PUNCTUATION, class) {
                    punctuation(text, start)
                } else if text[start] == b' ' && is_in(PUNCTUATION, next_class) {
                    punctuation(text, next)
                } else {
                    whitespace(text, start)
                }
            }
        }
    }

    const WINDOWS: bool = true;

    /// [`SharedStarts`](super::ascii_window::SharedStarts), punctuation
    /// taking newlines (`[\r\n]*+`), and: an apostrophe starting a piece
    /// starts a contraction if its letters follow, and the letters after
    /// those start a piece (`'(?i:[sdmt]|ll|ve|re)`); a run of white space
    /// that ends the text is one piece (`\s++$`).
    #[inline(always)]
    fn window_starts(window: &AsciiWindow, text: &[u8], from: usize) -> u64 {
        let shared = window.shared_starts(window.newlines);
        let mut starts = shared.starts | shared.lookahead_splits;
        let mut apostrophes = window.apostrophes & shared.punctuation & (window.letters >> 1);
        while apostrophes != 0 {
            let at = apostrophes.trailing_zeros();
            let end = at + case_insensitive_len(text, from + at as usize) as u32;
            if end > at && end < 64 {
                starts |= window.letters & 1 << end;
            }
            apostrophes &= apostrophes - 1;
        }
        let trailing_whitespace = window.trailing_whitespace();
        if window.ends_text {
            // The run ending the text is one piece, from its first start.
            let in_run = starts & trailing_whitespace;
            return starts & !trailing_whitespace | in_run & in_run.wrapping_neg();
        }
        window.trusted(starts, trailing_whitespace)
    }
}

/// `\p{L}+` matched at `i`: its ASCII letters first, eight bytes at a time.
#[inline(always)]
fn letters_end(text: &[u8], i: usize) -> usize {
    run_end(text, ascii_run_end_where(text, i, ascii_letters), LETTERS)
}

/// `[^\s\p{L}\p{N}]++[\r\n]*+` matched at `i`.
#[inline]
fn punctuation(text: &[u8], i: usize) -> usize {
    let mut end = run_end(text, i, PUNCTUATION);
    while matches!(text.get(end), Some(b'\r' | b'\n')) {
        end += 1;
    }
    end
}

/// `\s++$`, then `\s*[\r\n]`, then `\s+(?!\S)`, then `\s`, matched at `start`.
#[inline]
fn whitespace(text: &[u8], start: usize) -> usize {
    let run = WhitespaceRun::scan(text, start);
    if run.end == text.len() {
        return run.end;
    }
    run.last_newline_end.unwrap_or_else(|| run.lookahead_split(text, start))
}
