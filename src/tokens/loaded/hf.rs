//! Hugging Face `tokenizer.json` files with a BPE model: byte-level ones (GPT-2 style:
//! Llama 3, Qwen 2.5 / 3, DeepSeek) and character-level ones with byte fallback
//! (SentencePiece-style BPE: Gemma 3). Anything else the file asks for is refused with the
//! feature named, so a count is never silently wrong.

use serde_json::{Map, Value};

use super::byte_alphabet::ByteAlphabet;
use super::json::{Reader, section};
use super::merge::{Merge, Merges};
use super::model::{Bpe, Merging, Units};
use super::normalize::Normalize;
use super::short_ids::{ShortIds, short_bytes, short_key};
use super::split::{Behavior, GPT2_PATTERN, Pattern, Step, check_length, compile};
use super::vocab::{Duplicate, Tokens, Vocab};
use super::whole_chars::WholeChars;
use super::words::{Crossings, SPACE};
use super::{Failure, Parts, parse_failure, unsupported};
use crate::error::echo;

/// The parts of a `tokenizer.json` document's `"model"` read while streaming through it.
pub(super) struct ModelJson {
    /// The small members (`type`, `byte_fallback`, ...).
    fields: Map<String, Value>,
    /// The pre-tokenizer maps bytes to the byte-level alphabet.
    byte_level: bool,
    /// `model.vocab`: keyed by the bytes the strings stand for when byte-level (the strings
    /// outside the alphabet apart, keyed as written: added tokens written into the
    /// vocabulary, which no text produces), else by the strings as written.
    vocab: Option<(Vocab, Vocab)>,
    /// The ids of the vocabulary's short tokens, while the merges are to be read.
    short: Option<ShortIds>,
    merges: Option<(Merges, Crossings)>,
}

/// Whether the `pre_tokenizer` section (see [`pre_tokenizers`]) has a `ByteLevel` step.
pub(super) fn byte_level(value: &Value) -> bool {
    match value.get("type").and_then(Value::as_str) {
        Some("ByteLevel") => true,
        Some("Sequence") => value.get("pretokenizers").and_then(Value::as_array).is_some_and(|list| list.iter().any(byte_level)),
        _ => false,
    }
}

/// Reads the `"model"` object of a `tokenizer.json` (the reader is at its `{`): the
/// vocabulary and the merges straight into their tables, the rest into values.
/// `byte_level`: the pre-tokenizer maps bytes to the byte-level alphabet.
pub(super) fn read_model(reader: &mut Reader<'_>, byte_level: bool) -> Result<ModelJson, Failure> {
    let mut model = ModelJson { fields: Map::new(), byte_level, vocab: None, short: None, merges: None };
    let alphabet = ByteAlphabet::new();
    let alphabet = byte_level.then_some(&alphabet);
    let mut pending_merges = None;
    reader.object(&mut |reader, key| {
        let not_bpe = model.fields.get("type").and_then(Value::as_str).is_some_and(|t| t != "BPE");
        match key {
            b"vocab" if !not_bpe && reader.peek() == Some(b'{') => {
                let (vocab, short) = read_vocab(reader, alphabet)?;
                model.vocab = Some(vocab);
                model.short = Some(short);
            }
            b"merges" if !not_bpe && reader.peek() == Some(b'[') => match (&model.vocab, &model.short) {
                (Some(vocab), Some(short)) => model.merges = Some(read_merges(reader, vocab, short, alphabet)?),
                _ => pending_merges = Some(reader.raw()?),
            },
            b"vocab" | b"merges" => {
                // Not what a BPE model has: kept for the messages below.
                let kind = match reader.peek() {
                    Some(b'[') => Value::Array(Vec::new()),
                    _ => Value::Null,
                };
                reader.skip()?;
                model.fields.insert(text(key), kind);
            }
            _ => {
                let value =
                    section(reader.raw()?).map_err(|e| parse_failure(format!("tokenizer.json: \"model.{}\": {e}", text(key))))?;
                model.fields.insert(text(key), value);
            }
        }
        Ok(())
    })?;
    if let (Some(raw), Some(vocab), Some(short)) = (pending_merges, &model.vocab, &model.short) {
        model.merges = Some(read_merges(&mut Reader::new(raw), vocab, short, alphabet)?);
    }
    model.short = None;
    Ok(model)
}

/// `model.vocab`: token string to id; with `alphabet`, the bytes each string stands for, and
/// apart the strings outside the alphabet (see [`ModelJson::vocab`]); and the ids of the short
/// tokens, for reading the merges.
fn read_vocab(reader: &mut Reader<'_>, alphabet: Option<&ByteAlphabet>) -> Result<((Vocab, Vocab), ShortIds), Failure> {
    let mut tokens = Tokens::with_capacity(1 << 17, 1 << 20);
    let mut outside = Tokens::with_capacity(0, 0);
    reader.map(&mut |reader, token| {
        let id = reader.number()?.and_then(|id| u32::try_from(id).ok()).filter(|&id| id < 1 << 31).ok_or_else(|| {
            parse_failure(format!("tokenizer.json: \"model.vocab\": the id of {:?} is not a token id", text(token)))
        })?;
        match alphabet {
            Some(alphabet) => {
                if tokens.push_with(id, |bytes| if alphabet.decode_into(token, bytes) { Ok(()) } else { Err(()) }).is_err() {
                    outside.push(token, id);
                }
            }
            None => tokens.push(token, id),
        }
        Ok(())
    })?;
    let twice = |duplicate: Duplicate| parse_failure(format!("tokenizer.json: \"model.vocab\": {}", duplicate.describe("id")));
    let short = ShortIds::new(tokens.iter());
    Ok(((tokens.index().map_err(twice)?, outside.index().map_err(twice)?), short))
}

/// `model.merges`: `"left right"` strings or `["left", "right"]` pairs, in priority order.
/// `short` has the ids of the vocabulary's short tokens (see [`ShortIds`]).
fn read_merges(
    reader: &mut Reader<'_>,
    vocab: &(Vocab, Vocab),
    short: &ShortIds,
    alphabet: Option<&ByteAlphabet>,
) -> Result<(Merges, Crossings), Failure> {
    let (vocab, outside) = vocab;
    let mut batch = MergeBatch::default();
    let mut merges = Vec::with_capacity(vocab.len() * 2);
    let mut crossings = Crossings::default();
    let (mut first, mut second) = (Vec::new(), Vec::new());
    let (mut left_bytes, mut right_bytes) = (Vec::new(), Vec::new());
    reader.array(&mut |reader, i| {
        let not_a_merge = || parse_failure(format!("tokenizer.json: \"model.merges[{i}]\" is not a merge"));
        let (left, right) = match reader.plain_pair() {
            Some(pair) => pair,
            None => match reader.peek() {
                // Without escapes, not checked to be UTF-8 (as a plain pair): each half must be
                // found among the vocabulary's tokens, which were, or decode from the byte-level
                // alphabet, which only UTF-8 does.
                Some(b'"') => {
                    let line = match reader.plain_text() {
                        Some(line) => line,
                        None => reader.string(&mut first)?,
                    };
                    let mut halves = line.split(|&b| b == b' ');
                    match (halves.next(), halves.next(), halves.next()) {
                        (Some(left), Some(right), None) => (left, right),
                        _ => {
                            return Err(parse_failure(format!(
                                "tokenizer.json: \"model.merges[{i}]\" is not two tokens separated by a space"
                            )));
                        }
                    }
                }
                Some(b'[') => {
                    let (mut left, mut right) = (None, None);
                    let mut extra = false;
                    // Each string of the pair goes to its own buffer (when it has escapes).
                    let (first, second) = (&mut first, &mut second);
                    let mut buffers = [Some(first), Some(second)];
                    reader.array(&mut |reader, j| {
                        if j < 2 && reader.peek() == Some(b'"') {
                            let buffer = buffers[j].take().ok_or_else(not_a_merge)?;
                            let text = reader.string(buffer)?;
                            if j == 0 {
                                left = Some(text)
                            } else {
                                right = Some(text)
                            }
                            Ok(())
                        } else {
                            extra = true;
                            reader.skip()
                        }
                    })?;
                    match (left, right, extra) {
                        (Some(left), Some(right), false) => (left, right),
                        _ => {
                            return Err(parse_failure(format!("tokenizer.json: \"model.merges[{i}]\" is not a pair of strings")));
                        }
                    }
                }
                _ => return Err(not_a_merge()),
            },
        };
        crossings.note(left, right);
        let (left, right) = match alphabet {
            Some(alphabet) => {
                left_bytes.clear();
                right_bytes.clear();
                if !(alphabet.decode_into(left, &mut left_bytes) && alphabet.decode_into(right, &mut right_bytes)) {
                    // Earlier merges' failures first.
                    batch.resolve(vocab, short, &mut merges)?;
                    return check_outside(i, left, right, vocab, outside, alphabet);
                }
                (left_bytes.as_slice(), right_bytes.as_slice())
            }
            None => (left, right),
        };
        batch.push(i, left, right, vocab, short, &mut merges)?;
        if batch.len() >= MergeBatch::SIZE {
            batch.resolve(vocab, short, &mut merges)?;
        }
        Ok(())
    })?;
    batch.resolve(vocab, short, &mut merges)?;
    Ok((Merges::new(merges), crossings))
}

fn not_in_vocab(i: usize, token: &[u8]) -> Failure {
    parse_failure(format!("tokenizer.json: \"model.merges[{i}]\": {:?} is not in \"model.vocab\"", text(token)))
}

/// Merge `i` of a byte-level vocabulary joins a token outside the alphabet: it never applies
/// (no text produces that token), but its tokens must be in the vocabulary, as Hugging Face
/// requires.
fn check_outside(
    i: usize,
    left: &[u8],
    right: &[u8],
    vocab: &Vocab,
    outside: &Vocab,
    alphabet: &ByteAlphabet,
) -> Result<(), Failure> {
    let joined = [left, right].concat();
    for token in [left, right, &joined] {
        let mut bytes = Vec::new();
        let found = if alphabet.decode_into(token, &mut bytes) { vocab.get(&bytes) } else { outside.get(token) };
        found.ok_or_else(|| not_in_vocab(i, token))?;
    }
    Ok(())
}

/// The halves of merges read but not looked up yet, looked up together (see
/// [`ShortIds::get_batch`] and [`Vocab::get_batch`]). Each is known by where its id goes:
/// twice the merge's position in the list of merges, plus one for the right half.
#[derive(Default)]
struct MergeBatch {
    /// The words of the short halves (see [`short_key`]) and where each goes.
    short: Vec<u64>,
    short_at: Vec<u32>,
    /// The long halves' bytes end to end, where each ends, and where each goes.
    long: Vec<u8>,
    long_ends: Vec<usize>,
    long_at: Vec<u32>,
    ids: Vec<Option<u32>>,
    /// The joined token of the last merge.
    last_joined: u32,
    joined: Vec<u8>,
}

impl MergeBatch {
    /// Halves at which the batch is looked up.
    const SIZE: usize = 256;

    fn len(&self) -> usize {
        self.short.len() + self.long_at.len()
    }

    /// Appends merge `i` of `left` then `right` (token bytes) to `merges`, its joined token
    /// looked up now and its halves later (in [`MergeBatch::resolve`]).
    fn push(
        &mut self,
        i: usize,
        left: &[u8],
        right: &[u8],
        vocab: &Vocab,
        short: &ShortIds,
        merges: &mut Vec<Merge>,
    ) -> Result<(), Failure> {
        let at = merges.len() as u32 * 2;
        for (side, half) in [left, right].into_iter().enumerate() {
            match short_key(half) {
                Some(key) => {
                    self.short.push(key);
                    self.short_at.push(at + side as u32);
                }
                None => {
                    self.long.extend_from_slice(half);
                    self.long_ends.push(self.long.len());
                    self.long_at.push(at + side as u32);
                }
            }
        }
        // Files list merges by their joined token, whose id is then the last one's or the
        // next (checked in the list of ids, in order).
        let listed =
            [self.last_joined, self.last_joined.wrapping_add(1)].into_iter().find(|&id| vocab.is_joined(id, left, right));
        let joined = listed.or_else(|| {
            self.joined.clear();
            self.joined.extend_from_slice(left);
            self.joined.extend_from_slice(right);
            vocab.get(&self.joined)
        });
        merges.push(Merge { left: 0, right: 0, priority: i as u32, joined: joined.unwrap_or(0) });
        let Some(joined) = joined else {
            let missing = not_in_vocab(i, &self.joined);
            // The halves' failures first, this merge's included.
            self.resolve(vocab, short, merges)?;
            return Err(missing);
        };
        self.last_joined = joined;
        Ok(())
    }

    /// Looks the halves up, writes their ids into `merges` and empties the batch; fails
    /// naming the first half (in the list) that is not in the vocabulary.
    fn resolve(&mut self, vocab: &Vocab, short: &ShortIds, merges: &mut [Merge]) -> Result<(), Failure> {
        let mut missing: Option<(u32, Vec<u8>)> = None;
        let mut place = |at: u32, id: Option<u32>, bytes: &dyn Fn() -> Vec<u8>| match id {
            Some(id) => {
                let merge = &mut merges[at as usize / 2];
                if at % 2 == 0 { merge.left = id } else { merge.right = id }
            }
            None if missing.as_ref().is_none_or(|(first, _)| at < *first) => missing = Some((at, bytes())),
            None => {}
        };
        short.get_batch(&self.short, &mut self.ids);
        for ((&key, &at), &id) in self.short.iter().zip(&self.short_at).zip(&self.ids) {
            place(at, id, &|| short_bytes(key));
        }
        let mut start = 0;
        let long: Vec<&[u8]> = self
            .long_ends
            .iter()
            .map(|&end| {
                let string = &self.long[start..end];
                start = end;
                string
            })
            .collect();
        vocab.get_batch(&long, &mut self.ids);
        for ((string, &at), &id) in long.iter().zip(&self.long_at).zip(&self.ids) {
            place(at, id, &|| string.to_vec());
        }
        self.short.clear();
        self.short_at.clear();
        self.long.clear();
        self.long_ends.clear();
        self.long_at.clear();
        match missing {
            Some((at, token)) => Err(not_in_vocab(merges[at as usize / 2].priority as usize, &token)),
            None => Ok(()),
        }
    }
}

/// A string of the file (UTF-8, checked by the reader) as text, for messages and values.
pub(super) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Assembles the parts of a `tokenizer.json` from its top-level sections.
pub(super) fn parts(model: ModelJson, sections: &Map<String, Value>, added: Option<AddedSection>) -> Result<Parts, Failure> {
    let fields = &model.fields;
    let kind = fields.get("type").and_then(Value::as_str).unwrap_or("BPE");
    if kind != "BPE" {
        let what = match kind {
            "Unigram" => "a SentencePiece unigram model",
            "WordPiece" => "a WordPiece model",
            "WordLevel" => "a word-level model",
            _ => "an unknown model",
        };
        return Err(unsupported(format!("tokenizer.json: \"model.type\" is {kind:?} ({what}); only BPE models are counted")));
    }
    if fields.get("dropout").and_then(Value::as_f64).is_some_and(|d| d > 0.0) {
        return Err(unsupported("tokenizer.json: \"model.dropout\" makes the counts random"));
    }
    for key in ["continuing_subword_prefix", "end_of_word_suffix"] {
        if fields.get(key).and_then(Value::as_str).is_some_and(|s| !s.is_empty()) {
            return Err(unsupported(format!("tokenizer.json: \"model.{key}\" is not supported")));
        }
    }
    let section = |key: &str| sections.get(key).unwrap_or(&Value::Null);
    let normalizers = normalizers(section("normalizer"), "normalizer")?;
    let mut steps = Vec::new();
    pre_tokenizers(section("pre_tokenizer"), "pre_tokenizer", &mut steps)?;
    let bpe = bpe(model)?;
    let (raw_added, normalized_added) = added_tokens(added)?;
    Ok(Parts { normalizers, steps, bpe, raw_added, normalized_added })
}

fn flag(object: &Value, key: &str) -> bool {
    object.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn flag_of(object: &Map<String, Value>, key: &str) -> bool {
    object.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn type_of<'a>(object: &'a Value, path: &str) -> Result<&'a str, Failure> {
    object
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.type\" is not a string")))
}

fn normalizers(value: &Value, path: &str) -> Result<Vec<Normalize>, Failure> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let step = match type_of(value, path)? {
        "Sequence" => {
            let list = value
                .get("normalizers")
                .and_then(Value::as_array)
                .ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.normalizers\" is not an array")))?;
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
            let pattern =
                value.get("pattern").ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.pattern\" is missing")))?;
            let Some(from) = pattern.get("String").and_then(Value::as_str) else {
                return Err(unsupported(format!(
                    "tokenizer.json: \"{path}\" replaces a regex; only literal replacements are supported"
                )));
            };
            Normalize::Replace { from: from.to_owned(), to: string(value, "content", path)?.to_owned() }
        }
        other => {
            return Err(unsupported(format!(
                "tokenizer.json: the normalizer \"{}\" at \"{path}\" is not supported",
                echo(other)
            )));
        }
    };
    Ok(vec![step])
}

fn string<'a>(object: &'a Value, key: &str, path: &str) -> Result<&'a str, Failure> {
    object
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.{key}\" is not a string")))
}

fn pre_tokenizers(value: &Value, path: &str, steps: &mut Vec<Step>) -> Result<(), Failure> {
    if value.is_null() {
        return Ok(());
    }
    match type_of(value, path)? {
        "Sequence" => {
            let list = value
                .get("pretokenizers")
                .and_then(Value::as_array)
                .ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.pretokenizers\" is not an array")))?;
            for (i, item) in list.iter().enumerate() {
                pre_tokenizers(item, &format!("{path}.pretokenizers[{i}]"), steps)?;
            }
        }
        "Split" => {
            let pattern =
                value.get("pattern").ok_or_else(|| parse_failure(format!("tokenizer.json: \"{path}.pattern\" is missing")))?;
            let pattern = if let Some(regex) = pattern.get("Regex").and_then(Value::as_str) {
                check_length(regex).map_err(|e| parse_failure(format!("tokenizer.json: \"{path}.pattern\": {e}")))?;
                Pattern::Regex(compile(regex).map_err(|e| unsupported(format!("tokenizer.json: \"{path}.pattern\": {e}")))?)
            } else if let Some(literal) = pattern.get("String").and_then(Value::as_str) {
                Pattern::Literal(literal.to_owned())
            } else {
                return Err(parse_failure(format!(
                    "tokenizer.json: \"{path}.pattern\" is neither {{\"Regex\"}} nor {{\"String\"}}"
                )));
            };
            let behavior = match string(value, "behavior", path)? {
                "Removed" => Behavior::Removed,
                "Isolated" => Behavior::Isolated,
                "MergedWithPrevious" => Behavior::MergedWithPrevious,
                "MergedWithNext" => Behavior::MergedWithNext,
                "Contiguous" => Behavior::Contiguous,
                other => {
                    return Err(parse_failure(format!("tokenizer.json: \"{path}.behavior\" \"{}\" is unknown", echo(other))));
                }
            };
            steps.push(Step::Split { pattern, behavior, invert: flag(value, "invert") });
        }
        "ByteLevel" => {
            let use_regex = value.get("use_regex").and_then(Value::as_bool).unwrap_or(true);
            let regex = if use_regex { Some(Pattern::Regex(compile(GPT2_PATTERN).map_err(unsupported)?)) } else { None };
            steps.push(Step::ByteLevel { add_prefix_space: flag(value, "add_prefix_space"), regex });
        }
        other => {
            return Err(unsupported(format!(
                "tokenizer.json: the pre-tokenizer \"{}\" at \"{path}\" is not supported",
                echo(other)
            )));
        }
    }
    Ok(())
}

/// The vocabulary and merges; byte-level strings are turned into the bytes they stand for.
fn bpe(model: ModelJson) -> Result<Bpe, Failure> {
    let fields = &model.fields;
    let (ids, _) = model.vocab.ok_or_else(|| parse_failure("tokenizer.json: \"model.vocab\" is not an object"))?;
    let (merges, crossings) = model.merges.ok_or_else(|| parse_failure("tokenizer.json: \"model.merges\" is not an array"))?;
    let whole_piece = flag_of(fields, "ignore_merges");
    if model.byte_level {
        // Keyed by token bytes already (see `read_vocab`).
        let vocab = ids;
        let mut bytes = [0u32; 256];
        for (byte, slot) in bytes.iter_mut().enumerate() {
            *slot = vocab.get(&[byte as u8]).ok_or_else(|| {
                parse_failure(format!(
                    "tokenizer.json: \"model.vocab\" has no token for the byte 0x{byte:02X} (a byte-level vocabulary has all 256)"
                ))
            })?;
        }
        let whole = WholeChars::new(&vocab, &merges, &bytes);
        return Ok(Bpe {
            vocab,
            merging: Merging::Listed { merges, units: Units::Bytes { tokens: Box::new(bytes), whole } },
            whole_piece,
            words: None,
        });
    }
    let byte_fallback = if flag_of(fields, "byte_fallback") {
        let mut bytes = Box::new([0u32; 256]);
        for (byte, slot) in bytes.iter_mut().enumerate() {
            *slot = ids.get(format!("<0x{byte:02X}>").as_bytes()).ok_or_else(|| {
                unsupported(format!("tokenizer.json: \"model.byte_fallback\" is on but \"model.vocab\" lacks <0x{byte:02X}>"))
            })?;
        }
        Some(bytes)
    } else {
        None
    };
    let unk = match fields.get("unk_token").and_then(Value::as_str) {
        Some(unk) => Some((
            ids.get(unk.as_bytes())
                .ok_or_else(|| parse_failure(format!("tokenizer.json: \"model.unk_token\" {unk:?} is not in \"model.vocab\"")))?,
            flag_of(fields, "fuse_unk"),
        )),
        None => None,
    };
    // Cutting into words would change what a whole-piece lookup sees.
    let words = if whole_piece { None } else { crossings.boundary(ids.get(SPACE.encode_utf8(&mut [0; 4]).as_bytes()).is_some()) };
    Ok(Bpe { vocab: ids, merging: Merging::Listed { merges, units: Units::Chars { byte_fallback, unk } }, whole_piece, words })
}

/// The `added_tokens` section as read (see [`read_added_tokens`]), checked later by
/// [`added_tokens`].
pub(super) enum AddedSection {
    /// An array (`null`: an empty one).
    Tokens(Vec<AddedToken>),
    /// Some other value.
    NotAnArray,
}

/// An item of `added_tokens`: what the count needs of it (for a member written twice, the
/// last; a flag that is not a boolean is off).
#[derive(Default)]
pub(super) struct AddedToken {
    /// `content` when it is a string.
    content: Option<String>,
    /// `single_word`, `lstrip` and `rstrip`, which are not supported.
    unsupported: [bool; 3],
    /// `normalized`, when a boolean.
    normalized: Option<bool>,
    special: bool,
}

const UNSUPPORTED_FLAGS: [&str; 3] = ["single_word", "lstrip", "rstrip"];

/// Reads the `added_tokens` section (the reader is at its value) in one pass.
pub(super) fn read_added_tokens(reader: &mut Reader<'_>) -> Result<AddedSection, Failure> {
    let mut buffer = Vec::new();
    let boolean = |reader: &mut Reader<'_>| match reader.peek() {
        Some(b't') => reader.literal("true").map(|()| Some(true)),
        Some(b'f') => reader.literal("false").map(|()| Some(false)),
        _ => reader.skip().map(|()| None),
    };
    match reader.peek() {
        Some(b'[') => {}
        Some(b'n') => {
            reader.literal("null")?;
            return Ok(AddedSection::Tokens(Vec::new()));
        }
        _ => {
            reader.skip()?;
            return Ok(AddedSection::NotAnArray);
        }
    }
    let mut tokens = Vec::new();
    reader.array(&mut |reader, _| {
        let mut token = AddedToken::default();
        if reader.peek() != Some(b'{') {
            tokens.push(token);
            return reader.skip();
        }
        reader.object(&mut |reader, key| {
            match key {
                b"content" if reader.peek() == Some(b'"') => token.content = Some(text(reader.string(&mut buffer)?)),
                b"content" => {
                    token.content = None;
                    reader.skip()?;
                }
                b"normalized" => token.normalized = boolean(reader)?,
                b"special" => token.special = boolean(reader)?.unwrap_or(false),
                _ => match UNSUPPORTED_FLAGS.iter().position(|flag| flag.as_bytes() == key) {
                    Some(k) => token.unsupported[k] = boolean(reader)?.unwrap_or(false),
                    None => reader.skip()?,
                },
            }
            Ok(())
        })?;
        tokens.push(token);
        Ok(())
    })?;
    Ok(AddedSection::Tokens(tokens))
}

/// The added tokens to look for in the raw text and in the normalized text.
fn added_tokens(section: Option<AddedSection>) -> Result<(Vec<String>, Vec<String>), Failure> {
    let (mut raw, mut normalized) = (Vec::new(), Vec::new());
    let list = match section {
        None => return Ok((raw, normalized)),
        Some(AddedSection::NotAnArray) => return Err(parse_failure("tokenizer.json: \"added_tokens\" is not an array")),
        Some(AddedSection::Tokens(list)) => list,
    };
    for (i, token) in list.into_iter().enumerate() {
        let content = token
            .content
            .ok_or_else(|| parse_failure(format!("tokenizer.json: \"added_tokens[{i}].content\" is not a string")))?;
        if let Some(k) = token.unsupported.iter().position(|&on| on) {
            return Err(unsupported(format!(
                "tokenizer.json: \"added_tokens[{i}]\" ({content:?}) sets \"{}\", which is not supported",
                UNSUPPORTED_FLAGS[k]
            )));
        }
        // Hugging Face's default: special tokens are matched on the raw text.
        let is_normalized = token.normalized.unwrap_or(!token.special);
        if is_normalized { &mut normalized } else { &mut raw }.push(content);
    }
    Ok((raw, normalized))
}

#[cfg(test)]
mod tests {
    use super::super::Tokenizer;
    use super::super::byte_alphabet::byte_chars;
    use crate::error::ErrorKind;

    /// A byte-level `tokenizer.json`: every byte, the merges `Ġ t`, `Ġt h`, `Ġth e` and
    /// `extra_merges`, an added token written into the vocabulary (`<|x|>`, outside the
    /// alphabet) and `extra_vocab`; the model before or after the pre-tokenizer.
    fn file(model_first: bool, extra_vocab: &str, extra_merges: &str) -> String {
        let mut vocab: Vec<String> =
            byte_chars().iter().enumerate().map(|(id, c)| format!("{:?}: {id}", c.to_string())).collect();
        vocab.extend(["\"Ġt\": 256", "\"Ġth\": 257", "\"Ġthe\": 258", "\"<|x|>\": 259"].map(String::from));
        let model = format!(
            r#""model": {{"type": "BPE", "vocab": {{{}{extra_vocab}}}, "merges": ["Ġ t", "Ġt h", "Ġth e"{extra_merges}]}}"#,
            vocab.join(", ")
        );
        let pre_tokenizer = r#""pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}"#;
        if model_first { format!("{{{model}, {pre_tokenizer}}}") } else { format!("{{{pre_tokenizer}, {model}}}") }
    }

    #[test]
    fn byte_level_vocabularies_are_read_as_bytes_in_either_order() {
        for model_first in [false, true] {
            let tokenizer = Tokenizer::from_bytes(file(model_first, "", "").as_bytes(), "").unwrap();
            // " the" merges to one token; " thy": "Ġth" and "y"; "<|x|>" is five bytes.
            assert_eq!(tokenizer.count(" the").unwrap(), 1, "model first: {model_first}");
            assert_eq!(tokenizer.count(" thy").unwrap(), 2);
            assert_eq!(tokenizer.count("<|x|>").unwrap(), 5);
            // A merge with the token outside the alphabet loads (it never applies) when its
            // tokens are in the vocabulary, and is refused when one is not.
            let outside = file(model_first, r#", "<|x|>a": 260"#, r#", "<|x|> a""#);
            assert_eq!(Tokenizer::from_bytes(outside.as_bytes(), "").unwrap().count("<|x|>a").unwrap(), 6);
            let missing = Tokenizer::from_bytes(file(model_first, "", r#", "<|x|> a""#).as_bytes(), "").unwrap_err();
            assert_eq!(missing.kind(), ErrorKind::Parse);
            assert!(missing.message().contains("model.merges[3]"), "{}", missing.message());
            let missing = Tokenizer::from_bytes(file(model_first, "", r#", "Ġthe y""#).as_bytes(), "").unwrap_err();
            assert!(missing.message().contains("model.merges[3]"), "{}", missing.message());
            // A token given twice: the vocabulary refuses it, or, when the model is read
            // before the pre-tokenizer (kept as text first), the JSON reader.
            let twice = Tokenizer::from_bytes(file(model_first, r#", "Ġt": 261"#, "").as_bytes(), "").unwrap_err();
            let expected = if model_first { "the key \"Ġt\" is given twice" } else { "appears twice" };
            assert!(twice.message().contains(expected), "{}", twice.message());
            // Two tokens with one id: Hugging Face loads it (and decodes one of them as the
            // other); the vocabulary is inconsistent, so it is refused naming both.
            let shared = Tokenizer::from_bytes(file(model_first, r#", "zz": 3"#, "").as_bytes(), "").unwrap_err();
            assert_eq!(shared.kind(), ErrorKind::Parse);
            assert!(shared.message().contains(r#""model.vocab": id 3 is given to two tokens"#), "{}", shared.message());
        }
    }

    /// A character-level file with `added_tokens` and `merges` as given (JSON text) and a
    /// lowercasing normalizer (the model after the pre-tokenizer: read in one pass).
    fn chars_file(added: &str, merges: &str) -> String {
        let vocab = r#"{"a": 0, "b": 1, "ab": 2, "aaaaaaaaaa": 3, "aaaaaaaaaab": 4, "aaaaaaaaaaa": 5}"#;
        format!(
            r#"{{"added_tokens": {added}, "normalizer": {{"type": "Lowercase"}}, "pre_tokenizer": null, "model": {{"type": "BPE", "vocab": {vocab}, "merges": {merges}}}}}"#
        )
    }

    #[test]
    fn added_tokens_are_read_as_hugging_face_reads_them() {
        // Special tokens are found in the raw text, others in the normalized text; a flag
        // that is not a boolean is off.
        let added = r#"[{"content": "<X>", "special": true}, {"content": "<Y>", "special": false},
            {"content": "<Z>", "special": true, "normalized": "yes"},
            {"content": "<W>", "lstrip": "no", "rstrip": null, "id": 7, "extra": [{"a": []}]},
            {"content": "<V>", "normalized": true}]"#;
        let tokenizer = Tokenizer::from_bytes(chars_file(added, r#"[["a", "b"]]"#).as_bytes(), "").unwrap();
        assert_eq!(tokenizer.vocab_size(), 11);
        for (text, count) in [("<X>", 1), ("<x>", 0), ("<Y>", 1), ("<y>", 1), ("<Z>", 1), ("<z>", 0), ("<W>", 1), ("<v>", 1)] {
            assert_eq!(tokenizer.count(text).unwrap(), count, "{text}");
        }
        assert_eq!(tokenizer.count("ab<X>aB").unwrap(), 3);
        for (added, kind, part) in [
            (r#"[{"content": "<q>", "lstrip": true}]"#, ErrorKind::Unsupported, "\"lstrip\""),
            (r#"[{"content": "<q>"}, {"id": 1}]"#, ErrorKind::Parse, "added_tokens[1].content"),
            (r#"["<q>"]"#, ErrorKind::Parse, "added_tokens[0].content"),
            // A member given twice (Hugging Face keeps the last one, other readers the first).
            (r#"[{"content": "<q>", "content": 1}]"#, ErrorKind::Parse, "the key \"content\" is given twice"),
            (r#"[{"content": "<q>", "special": true, "special": false}]"#, ErrorKind::Parse, "\"special\" is given twice"),
            (r#"{"content": "<q>"}"#, ErrorKind::Parse, "\"added_tokens\" is not an array"),
            (r#"[{"content": "<q>", "special": tru}]"#, ErrorKind::Parse, "expected true"),
        ] {
            let error = Tokenizer::from_bytes(chars_file(added, r#"[["a", "b"]]"#).as_bytes(), "").unwrap_err();
            assert_eq!(error.kind(), kind, "{added}: {}", error.message());
            assert!(error.message().contains(part), "{added}: {}", error.message());
        }
        let none = Tokenizer::from_bytes(chars_file("null", r#"["a b"]"#).as_bytes(), "").unwrap();
        assert_eq!((none.vocab_size(), none.count("aB").unwrap()), (6, 1));
    }

    #[test]
    fn merges_name_the_first_token_missing_from_the_vocabulary() {
        // Short halves, long halves and joined tokens are looked up in different ways; the
        // first missing one in the list is named, a merge's left half before its right one
        // and its halves before the token they join into.
        for (merges, named) in [
            (r#"[["a", "b"], ["a", "aaaaaaaaaa"], ["b", "zzzzzzzzzz"], ["q", "b"]]"#, r#"merges[2]": "zzzzzzzzzz""#),
            (r#"[["a", "b"], ["b", "a"], ["q", "b"]]"#, r#"merges[1]": "ba""#),
            (r#"[["a", "b"], ["aaaaaaaaaa", "b"], ["a", "q"], ["b", "a"]]"#, r#"merges[2]": "q""#),
            (r#"[["q", "zzzzzzzzzz"]]"#, r#"merges[0]": "q""#),
            (r#"[["zzzzzzzzzz", "q"]]"#, r#"merges[0]": "zzzzzzzzzz""#),
            (r#"["a b", "a\u0000 b"]"#, r#"merges[1]": "a\0""#),
        ] {
            let error = Tokenizer::from_bytes(chars_file("[]", merges).as_bytes(), "").unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Parse);
            assert!(error.message().contains(named), "{merges}: {}", error.message());
        }
        // Escaped strings and both ways of writing a merge, over many batches of lookups.
        let mut many = vec![r#"["a", "\u0062"]"#.to_owned(), r#""aaaaaaaaaa b""#.to_owned()];
        many.extend((0..2000).map(|i| [r#"["aaaaaaaaaa", "b"]"#, r#"["a", "aaaaaaaaaa"]"#][i % 2].to_owned()));
        many.push(r#"["b", "q"]"#.to_owned());
        let error = Tokenizer::from_bytes(chars_file("[]", &format!("[{}]", many.join(", "))).as_bytes(), "").unwrap_err();
        assert!(error.message().contains(r#"merges[2002]": "q""#), "{}", error.message());
        let tokenizer =
            Tokenizer::from_bytes(chars_file("[]", &format!("[{}]", many[..2002].join(", "))).as_bytes(), "").unwrap();
        assert_eq!((tokenizer.count("ab").unwrap(), tokenizer.count("ba").unwrap()), (1, 2));
    }

    #[test]
    fn merges_that_are_not_utf8_are_refused() {
        // Merges are read without a UTF-8 check (see `Reader::plain_pair` and
        // `Reader::plain_text`): each half must be found among the vocabulary's tokens, which
        // were checked. `QQ` stands for bytes; both ways of writing a merge.
        let load = |file: String, bytes: &[u8]| {
            let at = file.find("QQ").unwrap();
            let file = [&file.as_bytes()[..at], bytes, &file.as_bytes()[at + 2..]].concat();
            Tokenizer::from_bytes(&file, "")
        };
        let refused = |result: Result<Tokenizer, crate::error::Error>, merge: &str| {
            let error = result.unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Parse);
            assert!(error.message().contains(merge), "{}", error.message());
        };
        for bad in [&b"\xFF"[..], b"\xC4", b"\xE2\x96", b"\xED\xA0\x80"] {
            refused(load(chars_file("[]", r#"[["a", "b"], ["a", "bQQ"]]"#), bad), "model.merges[1]");
            refused(load(chars_file("[]", r#"["a b", "a bQQ"]"#), bad), "model.merges[1]");
            refused(load(chars_file("[]", r#"["a b", "QQ b"]"#), bad), "model.merges[1]");
        }
        // Byte-level: "\xC4A" would read as 'ā' (the byte 0x01) if its second byte were taken
        // for a continuation byte. (A model before the pre-tokenizer is checked whole first.)
        for (model_first, message) in [(false, "model.merges[3]"), (true, "not valid UTF-8")] {
            for merge in [r#", ["Ġt", "QQ"]"#, r#", "Ġt QQ""#] {
                let file = file(model_first, r#", "Ġtā": 260"#, merge);
                assert_eq!(load(file.clone(), "ā".as_bytes()).unwrap().count("\u{1}").unwrap(), 1);
                refused(load(file, b"\xC4A"), message);
            }
        }
    }
}
