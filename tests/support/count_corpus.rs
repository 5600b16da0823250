//! Counts every string of a JSON-lines corpus (as written by `gen_corpus`)
//! with `ctxwin::tokens::Encoding::count`, printing one count per line.
//!
//! ```text
//! cargo run --release --example count_corpus -- <encoding> <corpus.jsonl>
//! ```
//!
//! `<encoding>` is a tiktoken name: o200k_base, o200k_harmony, cl100k_base,
//! p50k_base or r50k_base.

use std::io::{BufRead, BufReader, BufWriter, Write};

use ctxwin::tokens::Encoding;

const ENCODINGS: [Encoding; 5] = [
    Encoding::O200kBase,
    Encoding::O200kHarmony,
    Encoding::Cl100kBase,
    Encoding::P50kBase,
    Encoding::R50kBase,
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, path] = args.as_slice() else {
        return Err("usage: count_corpus <encoding> <corpus.jsonl>".into());
    };
    let encoding = ENCODINGS
        .into_iter()
        .find(|encoding| encoding.name() == name)
        .ok_or_else(|| format!("unknown encoding {name}"))?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in BufReader::new(std::fs::File::open(path)?).lines() {
        let text: String = serde_json::from_str(&line?)?;
        writeln!(out, "{}", encoding.count(&text))?;
    }
    out.flush()?;
    Ok(())
}
