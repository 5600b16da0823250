//! The reference of the exact counter: tiktoken-rs's tokenizer for each of our encodings.
//! Included with `#[path]` by the tests and the fuzz target that compare the two.

use ctxwin::tokens::Encoding;
use tiktoken_rs::CoreBPE;

/// tiktoken-rs's (shared, built once) tokenizer of `encoding`.
pub fn reference(encoding: Encoding) -> &'static CoreBPE {
    match encoding {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::O200kHarmony => tiktoken_rs::o200k_harmony_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        Encoding::P50kBase => tiktoken_rs::p50k_base_singleton(),
        Encoding::R50kBase => tiktoken_rs::r50k_base_singleton(),
    }
}
