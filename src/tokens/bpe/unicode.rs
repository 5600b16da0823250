//! Character classes of the pre-tokenizer regexes, looked up per code point.
//!
//! The tables are generated at build time from `regex-syntax`, the crate that
//! decides what `\p{L}`, `\p{N}`, `\s`... mean for tiktoken's regexes, so both
//! sides follow the same Unicode version.

use super::layout::{
    CLASS_LETTER_OTHER, CLASS_LOWER, CLASS_MARK, CLASS_NEWLINE, CLASS_NUMBER, CLASS_OTHER, CLASS_PAGE_SIZE, CLASS_SPACE,
    CLASS_UPPER,
};

static CLASS_INDEX: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bpe_class_index.bin"));
static CLASS_PAGES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bpe_class_pages.bin"));

/// Pseudo-class of the position just past the end of the text; in no set.
pub(super) const END: u8 = 8;

/// A set of classes, one bit per class code.
pub(super) type ClassSet = u16;

const fn bit(class: u8) -> ClassSet {
    1 << class
}

/// `\p{L}`: any letter.
pub(super) const LETTERS: ClassSet = bit(CLASS_UPPER) | bit(CLASS_LOWER) | bit(CLASS_LETTER_OTHER);
/// `\p{N}`.
pub(super) const NUMBERS: ClassSet = bit(CLASS_NUMBER);
/// `\s`.
pub(super) const WHITESPACE: ClassSet = bit(CLASS_SPACE) | bit(CLASS_NEWLINE);
/// `[^\s\p{L}\p{N}]`: everything that is neither white space, letter nor number.
pub(super) const PUNCTUATION: ClassSet = bit(CLASS_OTHER) | bit(CLASS_MARK);
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` of the o200k regex.
pub(super) const UPPER_LIKE: ClassSet = bit(CLASS_UPPER) | bit(CLASS_LETTER_OTHER) | bit(CLASS_MARK);
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` of the o200k regex.
pub(super) const LOWER_LIKE: ClassSet = bit(CLASS_LOWER) | bit(CLASS_LETTER_OTHER) | bit(CLASS_MARK);
/// Classes in both [`UPPER_LIKE`] and [`LOWER_LIKE`].
pub(super) const UPPER_AND_LOWER_LIKE: ClassSet = UPPER_LIKE & LOWER_LIKE;

/// Whether `class` belongs to `set`.
#[inline(always)]
pub(super) fn is_in(set: ClassSet, class: u8) -> bool {
    (set >> class) & 1 != 0
}

/// Class and UTF-8 length of the character starting at byte `i` of `text`, or
/// `(END, 0)` when `i` is past the end. `i` must be a character boundary.
#[inline(always)]
pub(super) fn class_at(text: &[u8], i: usize) -> (u8, usize) {
    match text.get(i) {
        None => (END, 0),
        Some(&byte) if byte < 0x80 => (ascii_class(byte), 1),
        Some(&lead) => {
            let (code_point, len) = decode_multibyte(text, i, lead);
            (class_of(code_point), len)
        }
    }
}

/// Class of an ASCII byte (page 0 of the table starts at U+0000).
#[inline(always)]
fn ascii_class(byte: u8) -> u8 {
    CLASS_PAGES.get(byte as usize).copied().unwrap_or(CLASS_OTHER)
}

/// Class of any code point.
#[inline]
fn class_of(code_point: u32) -> u8 {
    let block = (code_point as usize) / CLASS_PAGE_SIZE;
    let page = CLASS_INDEX.get(block).copied().unwrap_or(0) as usize;
    CLASS_PAGES.get(page * CLASS_PAGE_SIZE + code_point as usize % CLASS_PAGE_SIZE).copied().unwrap_or(CLASS_OTHER)
}

/// Decodes the multi-byte UTF-8 sequence led by `lead` at `text[i]`.
#[inline(always)]
fn decode_multibyte(text: &[u8], i: usize, lead: u8) -> (u32, usize) {
    let cont = |k: usize| (text.get(i + k).copied().unwrap_or(0x80) & 0x3F) as u32;
    if lead < 0xE0 {
        (((lead as u32 & 0x1F) << 6) | cont(1), 2)
    } else if lead < 0xF0 {
        (((lead as u32 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (((lead as u32 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4)
    }
}

/// The ASCII lower-case letter that the character at `text[i]` matches under the
/// regex engine's case-insensitive (simple case folding) rules, with the
/// character's length; `(0, 0)` if it is no letter of a contraction suffix.
///
/// Besides ASCII letters, only U+017F LATIN SMALL LETTER LONG S folds onto a
/// letter used in `'s|'t|'re|'ve|'m|'ll|'d`.
#[inline]
pub(super) fn folded_contraction_letter(text: &[u8], i: usize) -> (u8, usize) {
    match text.get(i) {
        Some(&byte) if byte.is_ascii_alphabetic() => (byte.to_ascii_lowercase(), 1),
        Some(0xC5) if text.get(i + 1) == Some(&0xBF) => (b's', 2),
        _ => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class_of_char(c: char) -> u8 {
        let mut buf = [0u8; 4];
        class_at(c.encode_utf8(&mut buf).as_bytes(), 0).0
    }

    /// Every code point is classified exactly as the `regex` crate (the engine
    /// under tiktoken) matches the classes of the pre-tokenizer patterns.
    #[test]
    fn classes_agree_with_regex_crate() {
        let patterns = [
            (r"^\p{L}$", LETTERS),
            (r"^\p{N}$", NUMBERS),
            (r"^\s$", WHITESPACE),
            (r"^[^\s\p{L}\p{N}]$", PUNCTUATION),
            (r"^[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]$", UPPER_LIKE),
            (r"^[\p{Ll}\p{Lm}\p{Lo}\p{M}]$", LOWER_LIKE),
            (r"^[\r\n]$", bit(CLASS_NEWLINE)),
        ];
        let regexes: Vec<_> =
            patterns.iter().map(|(pattern, set)| (regex::Regex::new(pattern).unwrap(), *set, *pattern)).collect();
        let mut buf = [0u8; 4];
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let text = c.encode_utf8(&mut buf);
            let class = class_of_char(c);
            for (regex, set, pattern) in &regexes {
                assert_eq!(regex.is_match(text), is_in(*set, class), "U+{:04X} vs {pattern}", c as u32);
            }
        }
    }

    /// Case-insensitive contraction letters fold exactly like the regex crate's.
    #[test]
    fn contraction_folding_agrees_with_regex_crate() {
        let mut buf = [0u8; 4];
        for letter in ['s', 't', 'r', 'e', 'v', 'm', 'l', 'd'] {
            let regex = regex::Regex::new(&format!("^(?i:{letter})$")).unwrap();
            for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
                let text = c.encode_utf8(&mut buf);
                let ours = folded_contraction_letter(text.as_bytes(), 0).0 == letter as u8;
                assert_eq!(regex.is_match(text), ours, "U+{:04X} vs (?i:{letter})", c as u32);
            }
        }
    }
}
