//! Hugging Face `tokenizer.json` files with a BPE model: byte-level ones (GPT-2 style:
//! Llama 3, Qwen 2.5 / 3, DeepSeek) and character-level ones with byte fallback
//! (SentencePiece-style BPE: Gemma 3). Anything else the file asks for is refused with the
//! feature named, so a count is never silently wrong.

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::byte_alphabet::ByteAlphabet;
use super::merge::Merges;
use super::model::{Bpe, Units};
use super::normalize::Normalize;
use super::split::{Behavior, GPT2_PATTERN, Pattern, Step, compile};
use super::{Failure, Parts, parse_failure, unsupported};

/// Reads a `tokenizer.json` document.
pub(super) fn read(json: &Value) -> Result<Parts, Failure> {
    let model = json.get("model").filter(|m| m.is_object()).ok_or_else(|| parse_failure("tokenizer.json: \"model\" is not an object"))?;
    let kind = model.get("type").and_then(Value::as_str).unwrap_or("BPE");
    if kind != "BPE" {
        let what = match kind {
            "Unigram" => "a SentencePiece unigram model",
            "WordPiece" => "a WordPiece model",
            "WordLevel" => "a word-level model",
            _ => "an unknown model",
        };
        return Err(unsupported(format!("tokenizer.json: \"model.type\" is {kind:?} ({what}); only BPE models are counted")));
    }
    if model.get("dropout").and_then(Value::as_f64).is_some_and(|d| d > 0.0) {
        return Err(unsupported("tokenizer.json: \"model.dropout\" makes the counts random"));
    }
    for key in ["continuing_subword_prefix", "end_of_word_suffix"] {
        if model.get(key).and_then(Value::as_str).is_some_and(|s| !s.is_empty()) {
            return Err(unsupported(format!("tokenizer.json: \"model.{key}\" is not supported")));
        }
    }
    let normalizers = normalizers(json.get("normalizer").unwrap_or(&Value::Null), "normalizer")?;
    let mut steps = Vec::new();
    pre_tokenizers(json.get("pre_tokenizer").unwrap_or(&Value::Null), "pre_tokenizer", &mut steps)?;
    let byte_level = steps.iter().any(|s| matches!(s, Step::ByteLevel { .. }));
    let bpe = bpe(model, byte_level)?;
    let (raw_added, normalized_added) = added_tokens(json.get("added_tokens").unwrap_or(&Value::Null))?;
    Ok(Parts { normalizers, steps, bpe, raw_added, normalized_added })
}

fn flag(object: &Value, key: &str) -> bool {
    object.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn type_of<'a>(object: &'a Value, path: &str) -> Result<&'a str, Failure> {
    object.get("type").and_then(Value::as_str).ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.type\" is not a string")))
}

fn normalizers(value: &Value, path: &str) -> Result<Vec<Normalize>, Failure> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let step = match type_of(value, path)? {
        "Sequence" => {
            let list = value.get("normalizers").and_then(Value::as_array).ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.normalizers\" is not an array")))?;
            let mut chain = Vec::new();
            for (i, item) in list.iter().enumerate() {
                chain.extend(normalizers(item, &format!("{path}.normalizers[{i}]"))?);
            }
            return Ok(chain);
        }
        "NFC" => Normalize::Nfc,
        "NFD" => Normalize::Nfd,
        "NFKC" => Normalize::Nfkc,
        "NFKD" => Normalize::Nfkd,
        "Lowercase" => Normalize::Lowercase,
        "Prepend" => Normalize::Prepend(string(value, "prepend", path)?.to_owned()),
        "Replace" => {
            let pattern = value.get("pattern").ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.pattern\" is missing")))?;
            let Some(from) = pattern.get("String").and_then(Value::as_str) else {
                return Err(unsupported(format!("tokenizer.json: \"{path}\" replaces a regex; only literal replacements are supported")));
            };
            Normalize::Replace { from: from.to_owned(), to: string(value, "content", path)?.to_owned() }
        }
        other => return Err(unsupported(format!("tokenizer.json: the normalizer {other:?} at \"{path}\" is not supported"))),
    };
    Ok(vec![step])
}

fn string<'a>(object: &'a Value, key: &str, path: &str) -> Result<&'a str, Failure> {
    object.get(key).and_then(Value::as_str).ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.{key}\" is not a string")))
}

fn pre_tokenizers(value: &Value, path: &str, steps: &mut Vec<Step>) -> Result<(), Failure> {
    if value.is_null() {
        return Ok(());
    }
    match type_of(value, path)? {
        "Sequence" => {
            let list = value.get("pretokenizers").and_then(Value::as_array).ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.pretokenizers\" is not an array")))?;
            for (i, item) in list.iter().enumerate() {
                pre_tokenizers(item, &format!("{path}.pretokenizers[{i}]"), steps)?;
            }
        }
        "Split" => {
            let pattern = value.get("pattern").ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.pattern\" is missing")))?;
            let pattern = if let Some(regex) = pattern.get("Regex").and_then(Value::as_str) {
                Pattern::Regex(compile(regex).map_err(|e| unsupported(format!("tokenizer.json: \"{path}.pattern\": {e}")))?)
            } else if let Some(literal) = pattern.get("String").and_then(Value::as_str) {
                Pattern::Literal(literal.to_owned())
            } else {
                return Err(parse_failure(format!("tokenizer.json: \"{path}.pattern\" is neither {{\"Regex\"}} nor {{\"String\"}}")));
            };
            let behavior = match string(value, "behavior", path)? {
                "Removed" => Behavior::Removed,
                "Isolated" => Behavior::Isolated,
                "MergedWithPrevious" => Behavior::MergedWithPrevious,
                "MergedWithNext" => Behavior::MergedWithNext,
                "Contiguous" => Behavior::Contiguous,
                other => return Err(parse_failure(format!("tokenizer.json: \"{path}.behavior\" {other:?} is unknown"))),
            };
            steps.push(Step::Split { pattern, behavior, invert: flag(value, "invert") });
        }
        "ByteLevel" => {
            let use_regex = value.get("use_regex").and_then(Value::as_bool).unwrap_or(true);
            let regex = if use_regex {
                Some(Pattern::Regex(compile(GPT2_PATTERN).map_err(unsupported)?))
            } else {
                None
            };
            steps.push(Step::ByteLevel { add_prefix_space: flag(value, "add_prefix_space"), regex });
        }
        other => return Err(unsupported(format!("tokenizer.json: the pre-tokenizer {other:?} at \"{path}\" is not supported"))),
    }
    Ok(())
}

/// The vocabulary and merges; byte-level strings are turned into the bytes they stand for.
fn bpe(model: &Value, byte_level: bool) -> Result<Bpe, Failure> {
    let vocab_json = model.get("vocab").and_then(Value::as_object).ok_or_else(|| parse_failure("tokenizer.json: \"model.vocab\" is not an object"))?;
    let alphabet = ByteAlphabet::new();
    // Token string to id, for the merges, and token bytes to id, for counting.
    let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
    ids.reserve(vocab_json.len());
    let mut vocab: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
    vocab.reserve(vocab_json.len());
    for (token, id) in vocab_json {
        let id = id
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .filter(|&id| id < 1 << 31)
            .ok_or_else(|| parse_failure(format!("tokenizer.json: \"model.vocab\": the id of {token:?} is not a token id")))?;
        ids.insert(token.as_str(), id);
        let bytes = if byte_level {
            match alphabet.decode(token) {
                Some(bytes) => bytes,
                None => continue, // not in the byte alphabet: no byte text produces it
            }
        } else {
            token.as_bytes().to_vec()
        };
        vocab.insert(bytes.into_boxed_slice(), id);
    }
    let merges_json = model.get("merges").and_then(Value::as_array).ok_or_else(|| parse_failure("tokenizer.json: \"model.merges\" is not an array"))?;
    let mut merges = Merges::default();
    let mut joined_buf = String::new();
    for (i, merge) in merges_json.iter().enumerate() {
        let (left, right) = match merge {
            Value::String(line) => {
                let mut halves = line.split(' ');
                match (halves.next(), halves.next(), halves.next()) {
                    (Some(left), Some(right), None) => (left, right),
                    _ => return Err(parse_failure(format!("tokenizer.json: \"model.merges[{i}]\" is not two tokens separated by a space"))),
                }
            }
            Value::Array(pair) => match pair.as_slice() {
                [Value::String(left), Value::String(right)] => (left.as_str(), right.as_str()),
                _ => return Err(parse_failure(format!("tokenizer.json: \"model.merges[{i}]\" is not a pair of strings"))),
            },
            _ => return Err(parse_failure(format!("tokenizer.json: \"model.merges[{i}]\" is not a merge"))),
        };
        joined_buf.clear();
        joined_buf.push_str(left);
        joined_buf.push_str(right);
        let lookup = |token: &str| {
            ids.get(token)
                .copied()
                .ok_or_else(|| parse_failure(format!("tokenizer.json: \"model.merges[{i}]\": {token:?} is not in \"model.vocab\"")))
        };
        merges.insert(lookup(left)?, lookup(right)?, i as u32, lookup(&joined_buf)?);
    }
    let units = if byte_level {
        let mut bytes = [0u32; 256];
        for (byte, slot) in bytes.iter_mut().enumerate() {
            *slot = *vocab.get(&[byte as u8][..]).ok_or_else(|| {
                parse_failure(format!("tokenizer.json: \"model.vocab\" has no token for the byte 0x{byte:02X} (a byte-level vocabulary has all 256)"))
            })?;
        }
        Units::Bytes(bytes)
    } else {
        let byte_fallback = if flag(model, "byte_fallback") {
            let mut bytes = Box::new([0u32; 256]);
            for (byte, slot) in bytes.iter_mut().enumerate() {
                *slot = *ids.get(format!("<0x{byte:02X}>").as_str()).ok_or_else(|| {
                    unsupported(format!("tokenizer.json: \"model.byte_fallback\" is on but \"model.vocab\" lacks <0x{byte:02X}>"))
                })?;
            }
            Some(bytes)
        } else {
            None
        };
        let unk = match model.get("unk_token").and_then(Value::as_str) {
            Some(unk) => Some((
                *ids.get(unk).ok_or_else(|| parse_failure(format!("tokenizer.json: \"model.unk_token\" {unk:?} is not in \"model.vocab\"")))?,
                flag(model, "fuse_unk"),
            )),
            None => None,
        };
        Units::Chars { byte_fallback, unk }
    };
    Ok(Bpe { vocab, merges, whole_piece: flag(model, "ignore_merges"), units })
}

/// The added tokens to look for in the raw text and in the normalized text.
fn added_tokens(value: &Value) -> Result<(Vec<String>, Vec<String>), Failure> {
    let (mut raw, mut normalized) = (Vec::new(), Vec::new());
    let Some(list) = value.as_array() else {
        return if value.is_null() { Ok((raw, normalized)) } else { Err(parse_failure("tokenizer.json: \"added_tokens\" is not an array")) };
    };
    for (i, token) in list.iter().enumerate() {
        let content = string(token, "content", &format!("added_tokens[{i}]"))?;
        for key in ["single_word", "lstrip", "rstrip"] {
            if flag(token, key) {
                return Err(unsupported(format!("tokenizer.json: \"added_tokens[{i}]\" ({content:?}) sets \"{key}\", which is not supported")));
            }
        }
        // Hugging Face's default: special tokens are matched on the raw text.
        let is_normalized = token.get("normalized").and_then(Value::as_bool).unwrap_or(!flag(token, "special"));
        if is_normalized { &mut normalized } else { &mut raw }.push(content.to_owned());
    }
    Ok((raw, normalized))
}
