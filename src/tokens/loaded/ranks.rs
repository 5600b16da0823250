//! tiktoken-format ranks files (`tokenizer.model` of Llama 3 / 4, `qwen.tiktoken`) and
//! Mistral's `tekken.json`: byte-level vocabularies where a token's rank is both its id and
//! its merge priority, split by one pattern.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rustc_hash::FxHashMap;
use serde_json::Value;

use super::merge::Merges;
use super::model::{Bpe, Units};
use super::normalize::Normalize;
use super::{Failure, Parts, parse_failure};

/// A pre-tokenizer known by its family's name, for ranks files (which carry no pattern).
pub(super) struct Family {
    pub(super) name: &'static str,
    pub(super) pattern: &'static str,
    /// The family's own tokenizer composes the text (NFC) before splitting.
    pub(super) nfc: bool,
}

const O200K_LIKE: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The families whose pattern `options` may name.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "llama3",
        pattern: r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        nfc: false,
    },
    Family { name: "llama4", pattern: O200K_LIKE, nfc: false },
    Family {
        name: "tekken",
        pattern: r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        nfc: false,
    },
    Family {
        name: "qwen",
        pattern: r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        nfc: true,
    },
    Family {
        name: "qwen3.5",
        pattern: r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        nfc: true,
    },
];

/// Looks like a ranks file: the first line is `base64 rank`.
pub(super) fn looks_like_ranks(data: &[u8]) -> bool {
    let first = data.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut fields = first.split(|&b| b == b' ');
    matches!(
        (fields.next(), fields.next(), fields.next()),
        (Some(token), Some(rank), None)
            if !token.is_empty()
                && token.iter().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(b))
                && !rank.is_empty()
                && rank.iter().all(|b| b.is_ascii_digit() || *b == b'\r')
    )
}

/// A tiktoken ranks file: `base64-token rank` per line.
pub(super) fn read_ranks(data: &[u8]) -> Result<Vec<Vec<u8>>, Failure> {
    let text = std::str::from_utf8(data).map_err(|e| parse_failure(format!("ranks file: invalid UTF-8 at byte {}", e.valid_up_to())))?;
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let field = |what: &str| parse_failure(format!("ranks file line {}: {what}", i + 1));
        let (token, rank) = line.split_once(' ').ok_or_else(|| field("expected `base64-token rank`"))?;
        let token = STANDARD.decode(token).map_err(|e| field(&format!("the token is not base64: {e}")))?;
        let rank: usize = rank.trim_end().parse().map_err(|_| field("the rank is not a whole number"))?;
        if rank >= 1 << 24 {
            return Err(field("the rank is above 16,777,215"));
        }
        if tokens.len() <= rank {
            tokens.resize(rank + 1, None);
        }
        if tokens[rank].replace(token).is_some() {
            return Err(field(&format!("rank {rank} appears twice")));
        }
    }
    collect_dense(tokens, "ranks file")
}

/// A `tekken.json`: its pattern and the ranks below `default_vocab_size -
/// default_num_special_tokens`, as mistral-common loads them.
pub(super) fn read_tekken(json: &Value) -> Result<(String, Vec<Vec<u8>>), Failure> {
    let config = json.get("config").filter(|c| c.is_object()).ok_or_else(|| parse_failure("tekken.json: \"config\" is not an object"))?;
    let pattern = config
        .get("pattern")
        .and_then(Value::as_str)
        .ok_or_else(|| parse_failure("tekken.json: \"config.pattern\" is not a string"))?;
    let whole = |key: &str| {
        config
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| parse_failure(format!("tekken.json: \"config.{key}\" is not a whole number")))
    };
    let (size, special) = (whole("default_vocab_size")?, whole("default_num_special_tokens")?);
    let vocab = json.get("vocab").and_then(Value::as_array).ok_or_else(|| parse_failure("tekken.json: \"vocab\" is not an array"))?;
    let inner = size
        .checked_sub(special)
        .filter(|&inner| inner <= vocab.len() as u64)
        .ok_or_else(|| {
            parse_failure(format!(
                "tekken.json: \"config.default_vocab_size\" {size} less \"default_num_special_tokens\" {special} does not fit the {} tokens of \"vocab\"",
                vocab.len()
            ))
        })? as usize;
    let mut tokens = Vec::with_capacity(inner);
    for (i, entry) in vocab.iter().take(inner).enumerate() {
        let field = |what: &str| parse_failure(format!("tekken.json: \"vocab[{i}]\": {what}"));
        if entry.get("rank").and_then(Value::as_u64) != Some(i as u64) {
            return Err(field(&format!("\"rank\" is not {i}")));
        }
        let bytes = entry.get("token_bytes").and_then(Value::as_str).ok_or_else(|| field("\"token_bytes\" is not a string"))?;
        tokens.push(STANDARD.decode(bytes).map_err(|e| field(&format!("\"token_bytes\" is not base64: {e}")))?);
    }
    Ok((pattern.to_owned(), tokens))
}

/// Ranks `0..n` all present.
fn collect_dense(tokens: Vec<Option<Vec<u8>>>, what: &str) -> Result<Vec<Vec<u8>>, Failure> {
    tokens
        .into_iter()
        .enumerate()
        .map(|(rank, token)| token.ok_or_else(|| parse_failure(format!("{what}: rank {rank} is missing (ranks must run from 0 without gaps)"))))
        .collect()
}

/// The BPE model of tokens listed by rank: every pair of tokens whose bytes join into a
/// token merges into it, with that token's rank as priority.
pub(super) fn bpe_of_ranks(tokens: Vec<Vec<u8>>, what: &str) -> Result<Bpe, Failure> {
    let mut vocab: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
    vocab.reserve(tokens.len());
    for (rank, token) in tokens.into_iter().enumerate() {
        if token.is_empty() {
            return Err(parse_failure(format!("{what}: rank {rank} is an empty token")));
        }
        if vocab.insert(token.into_boxed_slice(), rank as u32).is_some() {
            return Err(parse_failure(format!("{what}: the token of rank {rank} appears twice")));
        }
    }
    let mut bytes = [0u32; 256];
    for (byte, slot) in bytes.iter_mut().enumerate() {
        *slot = *vocab
            .get(&[byte as u8][..])
            .ok_or_else(|| parse_failure(format!("{what}: no token is the single byte 0x{byte:02X} (a byte-level vocabulary has all 256)")))?;
    }
    let mut merges = Merges::default();
    for (token, &rank) in &vocab {
        for split in 1..token.len() {
            if let (Some(&left), Some(&right)) = (vocab.get(&token[..split]), vocab.get(&token[split..])) {
                merges.insert(left, right, rank, rank);
            }
        }
    }
    Ok(Bpe { vocab, merges, whole_piece: true, units: Units::Bytes(bytes) })
}

/// The parts of a ranks-based tokenizer split by `pattern`.
pub(super) fn parts(bpe: Bpe, pattern: &str, nfc: bool) -> Result<Parts, Failure> {
    Ok(Parts {
        normalizers: if nfc { vec![Normalize::Nfc] } else { Vec::new() },
        steps: vec![super::split::Step::Split {
            pattern: super::split::Pattern::Regex(super::split::compile(pattern).map_err(parse_failure)?),
            behavior: super::split::Behavior::Isolated,
            invert: false,
        }],
        bpe,
        raw_added: Vec::new(),
        normalized_added: Vec::new(),
    })
}
