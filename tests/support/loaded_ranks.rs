//! OpenAI's ranks files loaded as tiktoken-format files: with Meta's Llama 3 pattern,
//! cl100k_base is exactly cl100k (the same pattern), and with Llama 4's, o200k_base is
//! exactly o200k. tiktoken-rs, running in process, is then the reference of the ranks
//! loader, the pattern splitting and the merging. Included with `#[path]` by the test and
//! the fuzz target that compare them.

use std::path::PathBuf;

use ctxwin::tokens::{Encoding, Tokenizer};

/// The ranks files tiktoken-rs 0.12.1 ships, in the cargo registry.
pub fn assets() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"));
    let registries = home.join("registry/src");
    std::fs::read_dir(&registries)
        .expect("the cargo registry")
        .filter_map(|entry| Some(entry.ok()?.path().join("tiktoken-rs-0.12.1/assets")))
        .find(|path| path.exists())
        .expect("tiktoken-rs 0.12.1's assets in the cargo registry")
}

/// The encodings loaded from their ranks files, with the family naming their pattern.
pub fn loaded() -> Vec<(Encoding, Tokenizer)> {
    let dir = assets();
    [
        (Encoding::Cl100kBase, "cl100k_base.tiktoken", r#"{"pre_tokenizer":"llama3"}"#),
        (Encoding::O200kBase, "o200k_base.tiktoken", r#"{"pre_tokenizer":"llama4"}"#),
    ]
    .into_iter()
    .map(|(encoding, file, options)| (encoding, Tokenizer::load(&dir.join(file), options).expect("load")))
    .collect()
}
