//! Loaded tokenizers against tiktoken-rs in process: OpenAI's ranks files read as
//! tiktoken-format files (cl100k with the `llama3` pattern, o200k with `llama4`'s), and
//! written as `tokenizer.json` files (merges derived from the ranks), count exactly as
//! tiktoken-rs, on random text of every script, whitespace runs and long words;
//! the same tokenizer is shared by threads; a file's fingerprint follows its content; a
//! pattern given in the options splits as tiktoken given that pattern splits.

use base64::Engine;
use ctxwin::ErrorKind;
use ctxwin::tokens::Tokenizer;
use std::sync::Arc;

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/loaded_ranks.rs"]
mod loaded_ranks;
#[path = "support/ranks_as_json.rs"]
mod ranks_as_json;
#[path = "support/reference.rs"]
mod reference;

/// Random text of every script, long white-space runs and words, and long runs of CJK and
/// Cyrillic characters (one piece each, which the `tokenizer.json` path starts merging
/// from whole characters where it may).
fn texts() -> Vec<String> {
    let mut rng = corpus::Rng::new(0x10AD);
    let mut texts: Vec<String> = (0..3000).map(|_| corpus::sample(&mut rng)).collect();
    texts.push(" ".repeat(100_000) + "x");
    texts.push("a".repeat(50_000));
    texts.push("\n\n \t\u{3000}\u{85}x\r\n  \u{a0}".repeat(200));
    // Many lines, counted in chunks through the memo of lines, and each twice (below).
    texts.extend((0..12).map(|_| corpus::lines(&mut rng, 12_000)));
    let scripts: [std::ops::Range<u32>; 5] = [0x4E00..0x9FA6, 0x3041..0x3097, 0xAC00..0xD7A4, 0x0400..0x0460, 0x0080..0x0800];
    for _ in 0..300 {
        let runs = rng.between(1, 4);
        let text: String = (0..runs)
            .flat_map(|_| {
                let script = scripts[rng.below(scripts.len())].clone();
                (0..rng.between(1, 120))
                    .map(|_| char::from_u32(script.start + rng.below((script.end - script.start) as usize) as u32))
                    .collect::<Vec<_>>()
            })
            .flatten()
            .collect();
        texts.push(text);
    }
    texts
}

fn count_like_tiktoken(loaded: &[(ctxwin::tokens::Encoding, Tokenizer)]) {
    for (encoding, tokenizer) in loaded {
        for text in &texts() {
            let expected = reference::reference(*encoding).encode_ordinary(text).len();
            // Twice: the second count answered from the memos.
            for _ in 0..2 {
                assert_eq!(
                    tokenizer.count(text).unwrap(),
                    expected,
                    "{} on {:?}",
                    encoding.name(),
                    text.chars().take(40).collect::<String>()
                );
            }
        }
    }
}

#[test]
fn ranks_files_count_like_tiktoken() {
    count_like_tiktoken(&loaded_ranks::loaded());
}

#[test]
fn tokenizer_json_files_count_like_tiktoken() {
    count_like_tiktoken(&ranks_as_json::loaded_json());
}

#[test]
fn a_tokenizer_is_shared_by_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Tokenizer>();
    let (encoding, tokenizer) = loaded_ranks::loaded().remove(0);
    let tokenizer = Arc::new(tokenizer);
    let handles: Vec<_> = (0..4)
        .map(|seed| {
            let tokenizer = Arc::clone(&tokenizer);
            std::thread::spawn(move || {
                let mut rng = corpus::Rng::new(seed);
                for _ in 0..300 {
                    let text = corpus::sample(&mut rng);
                    assert_eq!(tokenizer.count(&text).unwrap(), encoding.count(&text));
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
}

#[test]
fn the_fingerprint_follows_the_file_and_options() {
    let file = r#"{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}"#;
    let one = Tokenizer::from_bytes(file.as_bytes(), "").unwrap();
    let again = Tokenizer::from_bytes(file.as_bytes(), "").unwrap();
    let other = Tokenizer::from_bytes(file.replace("\"ab\":2", "\"ab\":3").as_bytes(), "").unwrap();
    let broken = Tokenizer::from_bytes(file.replace("a b", "a c").as_bytes(), "").unwrap_err();
    assert_eq!(one.fingerprint(), again.fingerprint());
    assert_ne!(one.fingerprint(), other.fingerprint());
    assert!(one.fingerprint().starts_with("tokenizer.json:"), "{}", one.fingerprint());
    assert!(broken.message().contains("model.merges[0]"), "{}", broken.message());
    assert_eq!(one.count("abab").unwrap(), 2);
    assert_eq!(one.count("abba").unwrap(), 3);
}

/// tiktoken encodes only what the pattern matches: text between matches counts nothing.
/// cl100k's ranks with patterns that skip text, against tiktoken-rs given the same ranks
/// and pattern; a pattern that matches the empty string (tiktoken fails on it) is refused.
#[test]
fn a_pattern_that_skips_text_counts_like_tiktoken() {
    let file = std::fs::read(loaded_ranks::assets().join("cl100k_base.tiktoken")).unwrap();
    let ranks: rustc_hash::FxHashMap<Vec<u8>, u32> = String::from_utf8(file.clone())
        .unwrap()
        .lines()
        .map(|line| {
            let (token, rank) = line.split_once(' ').unwrap();
            (base64::engine::general_purpose::STANDARD.decode(token).unwrap(), rank.parse().unwrap())
        })
        .collect();
    let mut rng = corpus::Rng::new(0x5C1F);
    let mut texts: Vec<String> = (0..300).map(|_| corpus::sample(&mut rng)).collect();
    texts.push("hello world, again! 12345 ok".into());
    for pattern in [r"\p{L}+", r"[a-z]+| ", r"\d", r"\w+\s?"] {
        let options = serde_json::json!({ "pattern": pattern }).to_string();
        let loaded = Tokenizer::from_bytes(&file, &options).unwrap();
        let reference = tiktoken_rs::CoreBPE::new(ranks.clone(), Default::default(), pattern).unwrap();
        for text in &texts {
            let expected = reference.encode_ordinary(text).len();
            assert_eq!(loaded.count(text).unwrap(), expected, "{pattern} on {:?}", &text[..text.len().min(80)]);
        }
    }
    for pattern in ["", "x*", r"\s*|a"] {
        let options = serde_json::json!({ "pattern": pattern }).to_string();
        let refused = Tokenizer::from_bytes(&file, &options).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::InvalidArg, "{pattern}");
        assert!(refused.message().contains("matches the empty string"), "{}", refused.message());
    }
    // Look-around other than the families' final `\s+(?!\S)`, and backreferences, need a
    // backtracking engine whose cost is not bounded by the text (`(?=[^x]*x).` took 137 s on
    // 160 KB): refused, as are anchors.
    for (pattern, named) in
        [(r"\w+(?=\s)", "look-around"), (r"(?=[^x]*x).", "look-around"), (r"(a)\1", "backreference"), (r"^\w+", "anchors")]
    {
        let options = serde_json::json!({ "pattern": pattern }).to_string();
        let refused = Tokenizer::from_bytes(&file, &options).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::InvalidArg, "{pattern}");
        assert!(refused.message().contains(named), "{pattern}: {}", refused.message());
    }
}
