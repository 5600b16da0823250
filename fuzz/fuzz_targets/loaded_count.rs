//! Counting with a loaded tokenizer against tiktoken-rs, its in-process reference: OpenAI's
//! ranks files read as tiktoken-format files (cl100k with the `llama3` pattern, o200k with
//! `llama4`'s, the same patterns), and the same ranks written as `tokenizer.json` files
//! (listed merges, whole characters), must count any UTF-8 input exactly as tiktoken-rs does.
#![no_main]
use std::sync::OnceLock;

use ctxwin::tokens::{Encoding, Tokenizer};
use libfuzzer_sys::fuzz_target;
#[path = "../../tests/support/loaded_ranks.rs"]
mod loaded_ranks;
#[path = "../../tests/support/ranks_as_json.rs"]
mod ranks_as_json;
#[path = "../../tests/support/reference.rs"]
mod reference;

fn loaded() -> &'static [(Encoding, Tokenizer)] {
    static LOADED: OnceLock<Vec<(Encoding, Tokenizer)>> = OnceLock::new();
    LOADED.get_or_init(|| loaded_ranks::loaded().into_iter().chain(ranks_as_json::loaded_json()).collect())
}

// The tokenizers and the references are built before fuzzing starts, so that `-timeout`
// bounds the inputs only (built on the first input, writing and loading the tokenizer files
// timed the first input out on a busy machine).
fuzz_target!(init: {
    for (encoding, _) in loaded() {
        reference::reference(*encoding);
    }
}, |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Also as lines repeated past the memo of lines' shortest chunk, counted twice (the
    // second time answered from the memo).
    let mut lines = String::new();
    while !text.is_empty() && lines.len() < 3000 {
        lines.push_str(text);
        lines.push('\n');
    }
    for text in [text, &lines, &lines] {
        for (encoding, tokenizer) in loaded() {
            let expected = reference::reference(*encoding).encode_ordinary(text).len();
            assert_eq!(tokenizer.count(text).unwrap(), expected, "{} on {text:?}", encoding.name());
        }
    }
});
