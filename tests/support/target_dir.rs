//! The directory cargo builds into, where the tests and benches find the files `make`
//! fetched (`tokenizer-files`, `py-tokenizers`) and keep their own: `$CARGO_TARGET_DIR` when
//! it is set (relative to the package root, where `make` and cargo run), as the Makefile
//! reads it, the package's `target/` otherwise. Included with `#[path]`.

use std::path::{Path, PathBuf};

/// `$CARGO_TARGET_DIR`, or the package's `target/`.
pub fn target_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir))
}
