//! The exact counter against tiktoken-rs, its reference, in every encoding: on the input
//! itself when it is UTF-8, and on text whose characters the input picks (two bytes each)
//! from the characters that are single tokens, ASCII letters, a space and a combining mark.
//! That second text is where merging starts from whole characters, so it is where a wrong
//! character table would show. The input's text is also counted as lines, repeated past the
//! memo of lines' shortest chunk, twice (the second time answered from the memo).
#![no_main]
use std::sync::OnceLock;

use ctxwin::tokens::Encoding;
use libfuzzer_sys::fuzz_target;
#[path = "../../tests/support/reference.rs"]
mod reference;
use reference::reference;

/// Characters of the Basic Multilingual Plane beyond ASCII that are one token in o200k_base
/// or cl100k_base, then ASCII letters, a space and U+0301.
fn pool() -> &'static [char] {
    static POOL: OnceLock<Vec<char>> = OnceLock::new();
    POOL.get_or_init(|| {
        let single = |c: &char, encoding| reference(encoding).encode_ordinary(&c.to_string()).len() == 1;
        let mut pool: Vec<char> = (0x80..0x1_0000u32)
            .filter_map(char::from_u32)
            .filter(|c| single(c, Encoding::O200kBase) || single(c, Encoding::Cl100kBase))
            .collect();
        pool.extend(('a'..='z').chain('A'..='Z').chain([' ', '\u{0301}']));
        pool
    })
}

fn check(text: &str) {
    for encoding in Encoding::ALL {
        let expected = reference(encoding).encode_ordinary(text).len();
        assert_eq!(encoding.count(text), expected, "{} on {text:?}", encoding.name());
    }
}

// The pool and the references are built before fuzzing starts, so that `-timeout` bounds the
// inputs only (built on the first input, their set-up timed the first input out on a busy
// machine).
fuzz_target!(init: {
    pool();
    for encoding in Encoding::ALL {
        reference(encoding);
    }
}, |data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check(text);
        if !text.is_empty() {
            let mut lines = String::new();
            while lines.len() < 3000 {
                lines.push_str(text);
                lines.push('\n');
            }
            check(&lines);
            check(&lines);
        }
    }
    let pool = pool();
    let picked: String = data
        .chunks(2)
        .map(|pair| {
            let index = u16::from_le_bytes([pair[0], pair.get(1).copied().unwrap_or(0)]);
            pool[usize::from(index) % pool.len()]
        })
        .collect();
    check(&picked);
});
