//! Tokenizers loaded from the files model families publish: exact counts for the models
//! that are not OpenAI's.
//!
//! [`Tokenizer::from_bytes`] recognises the format from the content: a Hugging Face
//! `tokenizer.json` with a BPE model ([`hf`]), Mistral's `tekken.json` and tiktoken-format
//! ranks files ([`ranks`]). Counting runs what the family's own tokenizer runs, in order:
//! added tokens found in the raw text, normalizers, added tokens found in the normalized
//! text, the pre-tokenizer chain ([`split`]), then byte-pair merging of each piece
//! ([`merge`]), counting tokens without building them.

mod added;
mod byte_alphabet;
mod file_bytes;
mod flight;
mod hf;
mod json;
mod memo;
mod merge;
mod model;
mod normalize;
mod options;
mod ranks;
mod search;
mod short_ids;
mod split;
mod table;
mod vocab;
mod whole_chars;
mod words;

use std::convert::Infallible;
use std::hash::Hasher;
use std::path::Path;

use super::lines::{self, ChunkCounter, Owner};
use crate::error::{Error, ErrorKind, Result, echo};
use added::AddedTokens;
use model::Bpe;
use normalize::{Normalize, normalize};
use options::Options;
use split::Step;

pub(crate) use memo::release as release_memo;

/// A load failure (the crate's error: PARSE, UNSUPPORTED, INVALID_ARG or IO).
type Failure = Error;

fn parse_failure(message: impl Into<String>) -> Failure {
    Error::new(ErrorKind::Parse, message)
}

fn unsupported(message: impl Into<String>) -> Failure {
    Error::new(ErrorKind::Unsupported, message)
}

/// What a format reader produces.
struct Parts {
    normalizers: Vec<Normalize>,
    steps: Vec<Step>,
    bpe: Bpe,
    raw_added: Vec<String>,
    normalized_added: Vec<String>,
}

/// The kinds of file a tokenizer can be loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A Hugging Face `tokenizer.json` with a BPE model.
    TokenizerJson,
    /// Mistral's `tekken.json`.
    Tekken,
    /// A tiktoken-format ranks file (`base64-token rank` per line).
    TiktokenRanks,
}

impl Format {
    /// A short name for messages and the fingerprint.
    pub fn name(self) -> &'static str {
        match self {
            Format::TokenizerJson => "tokenizer.json",
            Format::Tekken => "tekken.json",
            Format::TiktokenRanks => "tiktoken ranks",
        }
    }
}

/// Reads a JSON tokenizer file in one pass: a Hugging Face `tokenizer.json` (it has a
/// `"model"`) or a `tekken.json` (a `"config"` and a `"vocab"` array). The large sections
/// stream into their tables; the small ones are kept as values.
fn read_json(data: &[u8]) -> Result<(Format, Parts)> {
    let mut reader = json::Reader::new(data);
    let mut model = None;
    let mut tekken_vocab = None;
    let mut sections = serde_json::Map::new();
    let mut added = None;
    let mut keys: Vec<String> = Vec::new();
    // A model read before the pre-tokenizer (which tells whether it is byte-level): read last.
    let mut model_first = None;
    reader.object(&mut |reader, key| {
        let key = hf::text(key);
        match key.as_str() {
            "model" if reader.peek() == Some(b'{') => match sections.get("pre_tokenizer") {
                Some(pre_tokenizer) => model = Some(hf::read_model(reader, hf::byte_level(pre_tokenizer))?),
                None => model_first = Some(reader.raw()?),
            },
            "vocab" if reader.peek() == Some(b'[') => tekken_vocab = Some(ranks::read_tekken_vocab(reader)?),
            "added_tokens" => added = Some(hf::read_added_tokens(reader)?),
            "normalizer" | "pre_tokenizer" | "config" => {
                let value = json::section(reader.raw()?).map_err(|e| parse_failure(format!("\"{key}\": {e}")))?;
                sections.insert(key.clone(), value);
            }
            _ => reader.skip()?,
        }
        keys.push(key);
        Ok(())
    })?;
    reader.end()?;
    if let Some(raw) = model_first {
        let byte_level = sections.get("pre_tokenizer").is_some_and(hf::byte_level);
        model = Some(hf::read_model(&mut json::Reader::new(raw), byte_level)?);
    }
    let has = |key: &str| keys.iter().any(|k| k == key);
    if has("model") {
        let model = model.ok_or_else(|| parse_failure("tokenizer.json: \"model\" is not an object"))?;
        return Ok((Format::TokenizerJson, hf::parts(model, &sections, added)?));
    }
    if has("config") && has("vocab") {
        let entries = tekken_vocab.ok_or_else(|| parse_failure("tekken.json: \"vocab\" is not an array"))?;
        let (pattern, vocab) = ranks::tekken(sections.get("config"), entries)?;
        let bpe = ranks::bpe_of_ranks(vocab, "tekken.json \"vocab\"")?;
        let parts = ranks::parts(bpe, &pattern, false)
            .map_err(|e| parse_failure(format!("tekken.json \"config.pattern\": {}", e.message())))?;
        return Ok((Format::Tekken, parts));
    }
    Err(unsupported(
        "a JSON document that is neither a Hugging Face tokenizer.json (no \"model\") nor a tekken.json (no \"config\" and \"vocab\")",
    ))
}

/// A tokenizer loaded from a file: immutable, shareable between threads.
#[derive(Debug)]
pub struct Tokenizer {
    /// Identifies the tokenizer's entries in the per-thread memo.
    id: u64,
    format: Format,
    fingerprint: String,
    vocab_size: usize,
    raw_added: AddedTokens,
    normalizers: Vec<Normalize>,
    normalized_added: AddedTokens,
    steps: Vec<Step>,
    bpe: Bpe,
}

/// Two tokenizers are the same when they were loaded from the same file and options.
impl PartialEq for Tokenizer {
    fn eq(&self, other: &Tokenizer) -> bool {
        self.fingerprint == other.fingerprint
    }
}

impl Eq for Tokenizer {}

impl Tokenizer {
    /// Loads the file at `path`; see [`Tokenizer::from_bytes`]. A file that cannot be read,
    /// is not a regular file (a FIFO, a device) or is above 4 GB is IO, with the path named.
    pub fn load(path: &Path, options: &str) -> Result<Tokenizer> {
        let data = file_bytes::read(path).map_err(|refused| {
            let why = match refused {
                file_bytes::Refused::Io(e) => e.to_string(),
                file_bytes::Refused::NotAFile(why) => why,
            };
            Error::new(ErrorKind::Io, format!("cannot read the tokenizer file '{}': {why}", echo(&path.to_string_lossy())))
        })?;
        Tokenizer::from_bytes(&data, options)
            .map_err(|e| Error::new(e.kind(), format!("'{}': {}", echo(&path.to_string_lossy()), e.message())))
    }

    /// Reads a tokenizer from the bytes of its file, recognising the format from the
    /// content. `options` is a JSON object (or empty) carrying what the file lacks: a ranks
    /// file needs `"pre_tokenizer"` (a family: `"llama3"`, `"llama4"`, `"tekken"`,
    /// `"qwen"`, `"qwen3.5"`) or `"pattern"` (a regex); the JSON formats carry their own and take no
    /// options.
    ///
    /// Errors: UNSUPPORTED for a kind of file or a feature this reader does not cover
    /// (named), PARSE naming the field of an inconsistent or truncated file, INVALID_ARG
    /// for options that are malformed or do not apply.
    pub fn from_bytes(data: &[u8], options: &str) -> Result<Tokenizer> {
        let options = Options::parse(options)?;
        let trimmed = data.trim_ascii_start();
        let trimmed = trimmed.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(trimmed);
        if data.len() > u32::MAX as usize {
            return Err(unsupported("the tokenizer file is larger than 4 GB"));
        }
        let (format, parts) = if trimmed.first() == Some(&b'{') {
            options.refuse_for("a JSON tokenizer file, which carries its own pre-tokenizer")?;
            read_json(trimmed)?
        } else if ranks::looks_like_ranks(trimmed) {
            let (pattern, nfc) = options.pattern_for_ranks()?;
            let bpe = ranks::bpe_of_ranks(ranks::read_ranks(trimmed)?, "ranks file")?;
            (Format::TiktokenRanks, ranks::parts(bpe, &pattern, nfc)?)
        } else if data.first() == Some(&0x0A) {
            // A protobuf starting with field 1 (the pieces): the trimming above took its 0x0A.
            return Err(unsupported(
                "this looks like a SentencePiece model (tokenizer.model, protobuf), which is not supported; load the family's tokenizer.json",
            ));
        } else {
            return Err(unsupported(
                "unknown kind of tokenizer file: not JSON (tokenizer.json, tekken.json) and not a tiktoken ranks file (`base64-token rank` lines)",
            ));
        };
        Tokenizer::assemble(format, parts, data, &options)
    }

    fn assemble(format: Format, parts: Parts, data: &[u8], options: &Options) -> Result<Tokenizer> {
        let normalized_added: Vec<String> =
            parts.normalized_added.iter().map(|token| normalize(&parts.normalizers, token).into_owned()).collect();
        let mut hasher = rustc_hash::FxHasher::default();
        hasher.write(data);
        hasher.write(options.canonical().as_bytes());
        Ok(Tokenizer {
            id: memo::new_id(),
            format,
            fingerprint: format!("{}:{}:{:016x}", format.name(), parts.bpe.vocab.len(), hasher.finish()),
            vocab_size: parts.bpe.vocab.len() + parts.raw_added.len() + parts.normalized_added.len(),
            raw_added: AddedTokens::new(&parts.raw_added).map_err(parse_failure)?,
            normalizers: parts.normalizers,
            normalized_added: AddedTokens::new(&normalized_added).map_err(parse_failure)?,
            steps: parts.steps,
            bpe: parts.bpe,
        })
    }

    /// The format the tokenizer was read from.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Identifies the file and options the tokenizer was loaded from (saved with a window).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Number of tokens in the vocabulary, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// Exact number of tokens the family's own tokenizer produces for `text` without
    /// adding special tokens around it (Hugging Face's `encode(text,
    /// add_special_tokens=False)`, tiktoken's `encode_ordinary`): added tokens that appear
    /// in a `tokenizer.json` tokenizer's text count one each, as they do there.
    ///
    /// Fails only when a split pattern's searches exceed their work budget (a pattern whose
    /// matches make counting grow faster than the text), with PARSE.
    pub fn count(&self, text: &str) -> Result<usize> {
        memo::with_memo(self.id, |memo| {
            let mut symbols = Vec::new();
            let mut total = 0usize;
            let bpe = &self.bpe;
            let memo::Memo { pieces, joins, .. } = memo;
            let mut count = |word: &[u8]| bpe.count(word, &mut symbols, joins);
            // The words merged, counted with several in flight (see `flight`): the pieces
            // of a known split, or those the pre-tokenizer chain makes cut into words.
            let known = split::known_pieces(&self.steps).filter(|_| bpe.words.is_none());
            let mut pieces_of = |segment: &str| -> std::result::Result<(), String> {
                // A known split's pieces never cross a line end that ends a chunk: its
                // segments are counted through the memo of lines.
                if let Some(known) = known {
                    let mut known = KnownPieces { known, segment, pieces, count: &mut count };
                    total += lines::with_lines(|lines| lines.count(Owner::loaded(self.id), segment.as_bytes(), &mut known));
                    return Ok(());
                }
                let mut flight = flight::Flight::default();
                split::for_each_piece(&self.steps, segment, &mut |piece: &str| {
                    bpe.for_each_word(piece, &mut |word| flight.push(word.as_bytes(), pieces, &mut count));
                })?;
                total += flight.finish(pieces, &mut count);
                Ok(())
            };
            let mut added = 0;
            let found = self.raw_added.split(text, &mut |segment: &str| -> std::result::Result<(), String> {
                let normalized = normalize(&self.normalizers, segment);
                added += self.normalized_added.split(&normalized, &mut pieces_of)?;
                Ok(())
            });
            let found = found.map_err(|e| Error::new(ErrorKind::Parse, e))?;
            Ok(total + added + found)
        })
    }
}

/// The pieces of a known split of one segment, counted with several in flight within a
/// chunk of the memo of lines (see `flight`).
struct KnownPieces<'a, F> {
    known: split::Known,
    segment: &'a str,
    pieces: &'a mut memo::Pieces,
    count: &'a mut F,
}

impl<F: FnMut(&[u8]) -> usize> ChunkCounter for KnownPieces<'_, F> {
    fn count_chunk(&mut self, text: &[u8], start: usize, end: usize) -> usize {
        debug_assert!(std::ptr::eq(text, self.segment.as_bytes()), "the segment's own bytes");
        // Chunks end after a newline, before a space or with the text: on character boundaries.
        let chunk_text = &self.segment[..end];
        let mut flight = flight::Flight::default();
        let split = self.known.for_each_match(chunk_text, start, |from, to| {
            flight.push(&chunk_text.as_bytes()[from..to], self.pieces, self.count);
            Ok::<_, Infallible>(())
        });
        let Ok(()) = split;
        flight.finish(self.pieces, self.count)
    }
}
