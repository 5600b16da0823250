//! Counts every string of a JSON-lines corpus (as written by `gen_corpus`), printing one
//! count per line: with a built-in encoding (`ctxwin::tokens::Encoding::count`) or with a
//! tokenizer loaded from a file (`ctxwin::tokens::Tokenizer::count`).
//!
//! ```text
//! cargo run --release --example count_corpus -- <encoding> <corpus.jsonl>
//! cargo run --release --example count_corpus -- --tokenizer <file> <options-json> <corpus.jsonl>
//! ```
//!
//! `<encoding>` is a tiktoken name: o200k_base, o200k_harmony, cl100k_base,
//! p50k_base or r50k_base. `<options-json>` is the load options (`""` for none).

use std::io::{BufRead, BufReader, BufWriter, Write};

use ctxwin::tokens::{Encoding, Tokenizer};

const ENCODINGS: [Encoding; 5] =
    [Encoding::O200kBase, Encoding::O200kHarmony, Encoding::Cl100kBase, Encoding::P50kBase, Encoding::R50kBase];

/// Counts one text, or says why it cannot.
type Counter = Box<dyn Fn(&str) -> Result<usize, String>>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (count, path): (Counter, &String) = match args.as_slice() {
        [flag, file, options, path] if flag == "--tokenizer" => {
            let tokenizer = Tokenizer::load(std::path::Path::new(file), options)?;
            (Box::new(move |text| tokenizer.count(text).map_err(|e| e.to_string())), path)
        }
        [name, path] => {
            let encoding = ENCODINGS
                .into_iter()
                .find(|encoding| encoding.name() == name)
                .ok_or_else(|| format!("unknown encoding {name}"))?;
            (Box::new(move |text| Ok(encoding.count(text))), path)
        }
        _ => {
            return Err(
                "usage: count_corpus <encoding> <corpus.jsonl> | count_corpus --tokenizer <file> <options> <corpus.jsonl>".into(),
            );
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in BufReader::new(std::fs::File::open(path)?).lines() {
        let text: String = serde_json::from_str(&line?)?;
        writeln!(out, "{}", count(&text)?)?;
    }
    out.flush()?;
    Ok(())
}
