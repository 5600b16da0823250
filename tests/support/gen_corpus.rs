//! Writes the deterministic test corpus as JSON lines (one JSON string per
//! line) to standard output.
//!
//! ```text
//! cargo run --release --example gen_corpus -- [--seed N] [--count N] > corpus.jsonl
//! ```
//!
//! Defaults: seed 1, 100000 strings.

use std::io::{BufWriter, Write};

#[path = "corpus.rs"]
mod corpus;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut seed = 1u64;
    let mut count = 100_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--seed" => seed = value.parse()?,
            "--count" => count = value.parse()?,
            _ => return Err(format!("unknown argument {flag}; use --seed N --count N").into()),
        }
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    for text in corpus::strings(seed, count) {
        serde_json::to_writer(&mut out, &text)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}
