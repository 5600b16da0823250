//! Pre-tokenizer of r50k_base and p50k_base:
//!
//! ```text
//! '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
//! ```

use super::super::layout::{CLASS_LETTER_OTHER, CLASS_LOWER, CLASS_NUMBER, CLASS_UPPER};
use super::super::unicode::{LETTERS, NUMBERS, PUNCTUATION, WHITESPACE, class_at, is_in};
use super::contraction::case_sensitive_len;
use super::{Pretokenizer, WhitespaceRun, run_end};

/// The r50k / p50k splitting regex.
pub(in super::super) struct R50k;

impl Pretokenizer for R50k {
    /// No: `\s+(?!\S)` splits a white-space run before a newline differently when
    /// the text ends after the newline.
    const LINES: bool = false;

    #[inline]
    fn piece_end(text: &[u8], start: usize) -> usize {
        let contraction = case_sensitive_len(text, start);
        if contraction > 0 {
            return start + contraction;
        }
        let (class, _) = class_at(text, start);
        match class {
            CLASS_UPPER | CLASS_LOWER | CLASS_LETTER_OTHER => run_end(text, start, LETTERS),
            CLASS_NUMBER => run_end(text, start, NUMBERS),
            _ if is_in(WHITESPACE, class) => {
                // ` ?` before a letter, number or punctuation run.
                if text[start] == b' ' {
                    let next_class = class_at(text, start + 1).0;
                    for set in [LETTERS, NUMBERS, PUNCTUATION] {
                        if is_in(set, next_class) {
                            return run_end(text, start + 1, set);
                        }
                    }
                }
                // `\s++$` and `\s+(?!\S)|\s` agree: whole run at the end.
                WhitespaceRun::scan(text, start).lookahead_split(text, start)
            }
            _ => run_end(text, start, PUNCTUATION),
        }
    }
}
