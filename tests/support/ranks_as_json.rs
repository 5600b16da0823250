//! OpenAI's ranks files written as Hugging Face `tokenizer.json` files, in process: a
//! byte-level BPE whose merges are derived from the ranks (each token of two bytes or more
//! is the merge of the two parts tiktoken's merging of its bytes, with the lower ranks
//! only, ends with; listed in rank order), split by the encoding's pattern. Merging by
//! those listed merges is merging by the ranks, so tiktoken-rs is the reference of the
//! `tokenizer.json` path too (listed merges, the byte-level alphabet, whole characters)
//! without a file fetched. Included with `#[path]` by the test and the fuzz target that
//! compare them, after `loaded_ranks.rs`.

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ctxwin::tokens::{Encoding, Tokenizer};

/// The encodings' split patterns (tiktoken's, as `tokenizer.json` files write them).
const CL100K: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const O200K: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The byte-level alphabet: the character standing for each byte in a `tokenizer.json`
/// (printable Latin-1 bytes stand for themselves, the others for 256 and up, in order).
fn alphabet() -> [char; 256] {
    let printable = |b: u32| (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    let mut next = 256;
    std::array::from_fn(|b| {
        let b = b as u32;
        let code = if printable(b) {
            b
        } else {
            next += 1;
            next - 1
        };
        char::from_u32(code).expect("a character")
    })
}

/// The `tokenizer.json` text of a ranks file's contents split by `pattern`.
pub fn tokenizer_json(ranks_file: &str, pattern: &str) -> String {
    let mut ranks: HashMap<Vec<u8>, u32> = HashMap::new();
    for line in ranks_file.lines().filter(|line| !line.is_empty()) {
        let (token, rank) = line.split_once(' ').expect("`token rank`");
        ranks.insert(STANDARD.decode(token).expect("base64"), rank.parse().expect("a rank"));
    }
    let alphabet = alphabet();
    let text = |bytes: &[u8]| bytes.iter().map(|&b| alphabet[usize::from(b)]).collect::<String>();
    let mut by_rank: Vec<(&Vec<u8>, u32)> = ranks.iter().map(|(token, &rank)| (token, rank)).collect();
    by_rank.sort_by_key(|&(_, rank)| rank);
    let mut merges = Vec::new();
    for &(token, rank) in &by_rank {
        if token.len() < 2 {
            continue;
        }
        // tiktoken's merging of the token's bytes with the ranks below its own.
        let mut parts: Vec<Vec<u8>> = token.iter().map(|&b| vec![b]).collect();
        while parts.len() > 2 {
            let (_, i) = (0..parts.len() - 1)
                .filter_map(|i| {
                    let joined = [parts[i].as_slice(), &parts[i + 1]].concat();
                    ranks.get(&joined).filter(|&&r| r < rank).map(|&r| (r, i))
                })
                .min()
                .expect("a token's bytes merge down to two parts");
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        merges.push(serde_json::Value::from(format!("{} {}", text(&parts[0]), text(&parts[1]))));
    }
    let vocab: serde_json::Map<String, serde_json::Value> =
        by_rank.iter().map(|&(token, rank)| (text(token), serde_json::Value::from(rank))).collect();
    serde_json::json!({
        "version": "1.0",
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Removed", "invert": true},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}
        ]},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
            "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "vocab": vocab, "merges": merges}
    })
    .to_string()
}

/// The encodings loaded from `tokenizer.json` files written from their ranks files.
pub fn loaded_json() -> Vec<(Encoding, Tokenizer)> {
    let dir = super::loaded_ranks::assets();
    [(Encoding::Cl100kBase, "cl100k_base.tiktoken", CL100K), (Encoding::O200kBase, "o200k_base.tiktoken", O200K)]
        .into_iter()
        .map(|(encoding, file, pattern)| {
            let ranks = std::fs::read_to_string(dir.join(file)).expect("the ranks file");
            let json = tokenizer_json(&ranks, pattern);
            (encoding, Tokenizer::from_bytes(json.as_bytes(), "").expect("load the tokenizer.json"))
        })
        .collect()
}
