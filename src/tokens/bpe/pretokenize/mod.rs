//! Pre-tokenizers: hand-written equivalents of tiktoken's splitting regexes.
//!
//! Each one returns, for a position in the text, where the regex match that
//! `find_iter` yields at that position ends. The regexes are leftmost-first
//! backtracking patterns (fancy-regex); every alternative is emulated in order
//! with its exact greedy / possessive / look-ahead behaviour, and every
//! character starts a match of some alternative, so nothing is ever skipped.
//!
//! On ASCII text, o200k's and cl100k's also find every piece start of 64
//! bytes at once (`ascii_window.rs`): the bytes' classes as bit masks, the
//! regex's alternatives as bit operations on them. The splitting loop takes
//! the pieces of a window up to the last one that bytes past it cannot
//! change, and goes on piece by piece only where a window is not worth it
//! (text beyond ASCII, a piece longer than a window).

mod ascii_window;
mod cl100k;
mod contraction;
mod o200k;
mod r50k;

pub(super) use cl100k::Cl100k;
pub(super) use o200k::O200k;
pub(super) use r50k::R50k;

pub(super) use ascii_window::AsciiWindow;

use super::layout::CLASS_NEWLINE;
use super::unicode::{ClassSet, WHITESPACE, class_at, is_in};

/// Splits text into the pieces of one encoding's regex.
pub(super) trait Pretokenizer {
    /// Whether the chunk ends of the memo of lines (`lines::chunk_end`) are piece ends
    /// of this pattern, where a chunk splits on its own as in the whole text.
    const LINES: bool;

    /// End of the piece that starts at `start` (a character boundary before the
    /// end of `text`, which is valid UTF-8). Always greater than `start`.
    fn piece_end(text: &[u8], start: usize) -> usize;

    /// Whether [`Pretokenizer::window_starts`] finds the pieces of ASCII text.
    const WINDOWS: bool = false;

    /// The piece starts in `window` (of `text`, from `from`, a piece start),
    /// bit `i` for byte `from + i`, up to the first whose next piece might
    /// depend on bytes past the window: bit 0, and every bit the pieces
    /// after it start at, exactly as [`Pretokenizer::piece_end`] would find
    /// them from `from`. All of them when the window ends the text.
    /// Only called when [`Pretokenizer::WINDOWS`].
    fn window_starts(window: &AsciiWindow, text: &[u8], from: usize) -> u64 {
        let _ = (window, text, from);
        1
    }
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

/// Per byte of a word of eight text bytes: the high bit set where the byte is
/// ASCII and `first..=last` (both ASCII). Without carries between bytes: the
/// high bit of `from_first` is set when the byte's low seven bits are at
/// least `first`, that of `to_last` when they are at most `last`, and
/// `!word` keeps the ASCII bytes.
#[inline(always)]
const fn ascii_in_range(word: u64, first: u8, last: u8) -> u64 {
    let from_first = (word | HIGH) - ONES * first as u64;
    let to_last = ONES * (last | 0x80) as u64 - (word & !HIGH);
    from_first & to_last & !word & HIGH
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = ONES * 0x80;

/// [`ascii_in_range`] of the ASCII lower-case letters.
#[inline(always)]
fn ascii_lower(word: u64) -> u64 {
    ascii_in_range(word, b'a', b'z')
}

/// [`ascii_in_range`] of the ASCII letters, either case: setting bit 5 of
/// each byte folds `A-Z` onto `a-z` and nothing else onto them (nor any
/// byte from 0x80 up below 0x80).
#[inline(always)]
fn ascii_letters(word: u64) -> u64 {
    ascii_lower(word | (ONES * 0x20))
}

/// End of the run of ASCII bytes `in_run` marks (the high bit of each byte
/// of a word of eight text bytes that belongs to the run, see
/// [`ascii_in_range`]) starting at `i`: eight bytes at a time, so that a
/// run's end is found without a branch per byte (the branch that ends a
/// byte-by-byte loop is mispredicted about once a word). The caller
/// continues with [`run_end`] from there when the run may go on with
/// characters that are not ASCII.
#[inline(always)]
fn ascii_run_end_where(text: &[u8], mut i: usize, in_run: impl Fn(u64) -> u64) -> usize {
    loop {
        let rest = text.get(i..).unwrap_or_default();
        let (word, in_text) = match rest.first_chunk::<8>() {
            Some(&chunk) => (u64::from_le_bytes(chunk), HIGH),
            None if rest.is_empty() => return i,
            // The text's last bytes, zero-padded; the padding ends the run.
            None => {
                let mut chunk = [0u8; 8];
                chunk[..rest.len()].copy_from_slice(rest);
                (u64::from_le_bytes(chunk), HIGH >> (8 * (8 - rest.len())))
            }
        };
        let outside = !in_run(word) & HIGH | !in_text & HIGH;
        if outside != 0 {
            return i + (outside.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
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

    /// The eight-bytes-at-a-time runs end where the byte-by-byte ones do: every
    /// byte value at every position of a run of letters (lower-case, and
    /// mixed case), from several starts, with the text ending at the byte or
    /// at any point after it (the last bytes of a text are read zero-padded).
    #[test]
    fn ascii_runs_end_like_byte_by_byte() {
        type Run = (&'static [u8], fn(u64) -> u64, fn(&u8) -> bool);
        let runs: [Run; 2] = [
            (b"abcdefghijklmnopqrstuvwxyz", ascii_lower, u8::is_ascii_lowercase),
            (b"aBcDeFgHiJkLmNoPqRsTuVwXyZ", ascii_letters, u8::is_ascii_alphabetic),
        ];
        for (letters, in_run, is_in_run) in runs {
            for byte in 0..=u8::MAX {
                for position in 0..20 {
                    let mut text = letters.to_vec();
                    text[position] = byte;
                    for len in position..=text.len() {
                        for start in 0..=position.min(3) {
                            assert_eq!(
                                ascii_run_end_where(&text[..len], start, in_run),
                                ascii_run_end(&text[..len], start, is_in_run),
                                "byte {byte:#04x} at {position}, start {start}, length {len}"
                            );
                        }
                    }
                }
            }
        }
    }
}
