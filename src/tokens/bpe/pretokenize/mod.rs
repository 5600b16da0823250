//! Pre-tokenizers: hand-written equivalents of tiktoken's splitting regexes.
//!
//! Each one returns, for a position in the text, where the regex match that
//! `find_iter` yields at that position ends. The regexes are leftmost-first
//! backtracking patterns (fancy-regex); every alternative is emulated in order
//! with its exact greedy / possessive / look-ahead behaviour, and every
//! character starts a match of some alternative, so nothing is ever skipped.

mod cl100k;
mod contraction;
mod o200k;
mod r50k;

pub(super) use cl100k::Cl100k;
pub(super) use o200k::O200k;
pub(super) use r50k::R50k;

use super::layout::CLASS_NEWLINE;
use super::unicode::{ClassSet, WHITESPACE, class_at, is_in};

/// Splits text into the pieces of one encoding's regex.
pub(super) trait Pretokenizer {
    /// End of the piece that starts at `start` (a character boundary before the
    /// end of `text`, which is valid UTF-8). Always greater than `start`.
    fn piece_end(text: &[u8], start: usize) -> usize;
}

/// End of the longest run of characters of `set` starting at `i`.
#[inline(always)]
fn run_end(text: &[u8], mut i: usize, set: ClassSet) -> usize {
    loop {
        let (class, len) = class_at(text, i);
        if !is_in(set, class) {
            return i;
        }
        i += len;
    }
}

/// End of the run of ASCII bytes `in_run` accepts, starting at `i`: the fast path
/// of English and code, where a run of a class is mostly such letters. The
/// caller continues with [`run_end`] from there.
#[inline(always)]
fn ascii_run_end(text: &[u8], mut i: usize, in_run: impl Fn(&u8) -> bool) -> usize {
    while text.get(i).is_some_and(&in_run) {
        i += 1;
    }
    i
}

/// End of the run of ASCII lower-case letters starting at `i`: eight bytes at a
/// time while eight remain (English words), then byte by byte.
#[inline(always)]
fn ascii_lower_run_end(text: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    while let Some(&chunk) = text.get(i..).and_then(|rest| rest.first_chunk::<8>()) {
        let word = u64::from_le_bytes(chunk);
        // Per byte, without carries between bytes: the high bit of `from_a` is set when
        // the byte's low seven bits are at least `a`, that of `to_z` when they are at
        // most `z`, and `!word` keeps the ASCII bytes.
        let from_a = (word | HIGH) - ONES * u64::from(b'a');
        let to_z = ONES * u64::from(b'z' | 0x80) - (word & !HIGH);
        let outside = !(from_a & to_z & !word) & HIGH;
        if outside != 0 {
            return i + (outside.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    ascii_run_end(text, i, u8::is_ascii_lowercase)
}

/// End of the longest run of at most `max` characters of `set` starting at `i`.
#[inline(always)]
fn bounded_run_end(text: &[u8], mut i: usize, set: ClassSet, max: usize) -> usize {
    for _ in 0..max {
        let (class, len) = class_at(text, i);
        if !is_in(set, class) {
            break;
        }
        i += len;
    }
    i
}

/// A maximal run of white space, as the whitespace alternatives see it.
struct WhitespaceRun {
    /// End of the run.
    end: usize,
    /// Start of the run's last character.
    last_char_start: usize,
    /// End of the run's last `\r` or `\n`, if it has one.
    last_newline_end: Option<usize>,
}

impl WhitespaceRun {
    /// Scans the run starting at `start` (which must be white space).
    #[inline]
    fn scan(text: &[u8], start: usize) -> Self {
        let mut run = WhitespaceRun { end: start, last_char_start: start, last_newline_end: None };
        loop {
            let (class, len) = class_at(text, run.end);
            if !is_in(WHITESPACE, class) {
                return run;
            }
            run.last_char_start = run.end;
            run.end += len;
            if class == CLASS_NEWLINE {
                run.last_newline_end = Some(run.end);
            }
        }
    }

    /// `\s+(?!\S)` falling back to `\s+` (or `\s`, the same then): the whole
    /// run if it ends the text or is one character, else all but its last
    /// character, which then prefixes the next piece.
    #[inline]
    fn lookahead_split(&self, text: &[u8], start: usize) -> usize {
        if self.end == text.len() || self.last_char_start == start { self.end } else { self.last_char_start }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-bytes-at-a-time run ends where the byte-by-byte one does: every byte
    /// value at every position of a run of lower-case letters, from several starts.
    #[test]
    fn lower_run_in_words_ends_like_byte_by_byte() {
        for byte in 0..=u8::MAX {
            for position in 0..20 {
                let mut text = b"abcdefghijklmnopqrstuvwxyz".to_vec();
                text[position] = byte;
                for len in [position + 1, text.len()] {
                    for start in 0..=position.min(3) {
                        assert_eq!(
                            ascii_lower_run_end(&text[..len], start),
                            ascii_run_end(&text[..len], start, u8::is_ascii_lowercase),
                            "byte {byte:#04x} at {position}, start {start}, length {len}"
                        );
                    }
                }
            }
        }
    }
}
