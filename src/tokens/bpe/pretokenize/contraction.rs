//! The English contraction suffixes `'s 't 're 've 'm 'll 'd` of the regexes.

use super::super::unicode::folded_contraction_letter;

/// Length of the suffix matched at `i` by `(?i:'s|'t|'re|'ve|'m|'ll|'d)`
/// (o200k) or `'(?i:[sdmt]|ll|ve|re)` (cl100k), `0` if none.
#[inline]
pub(super) fn case_insensitive_len(text: &[u8], i: usize) -> usize {
    suffix_len(text, i, folded_contraction_letter)
}

/// Length of the suffix matched at `i` by `'(?:[sdmt]|ll|ve|re)` (r50k, p50k),
/// `0` if none.
#[inline]
pub(super) fn case_sensitive_len(text: &[u8], i: usize) -> usize {
    suffix_len(text, i, |text, i| match text.get(i) {
        Some(&byte) if byte.is_ascii_lowercase() => (byte, 1),
        _ => (0, 0),
    })
}

/// Shared matcher; `letter` says which ASCII lower-case letter the character
/// at a position counts as, and its length.
#[inline(always)]
fn suffix_len(text: &[u8], i: usize, letter: impl Fn(&[u8], usize) -> (u8, usize)) -> usize {
    if text.get(i) != Some(&b'\'') {
        return 0;
    }
    let (first, first_len) = letter(text, i + 1);
    let second = |expected: u8| {
        let (found, len) = letter(text, i + 1 + first_len);
        if found == expected { 1 + first_len + len } else { 0 }
    };
    match first {
        b's' | b'd' | b'm' | b't' => 1 + first_len,
        b'l' => second(b'l'),
        b'v' | b'r' => second(b'e'),
        _ => 0,
    }
}
