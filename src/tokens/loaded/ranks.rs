//! tiktoken-format ranks files (`tokenizer.model` of Llama 3 / 4, `qwen.tiktoken`) and
//! Mistral's `tekken.json`: byte-level vocabularies where a token's rank is both its id and
//! its merge priority, split by one pattern.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::json::Reader;
use super::model::{Bpe, Merging};
use super::normalize::Normalize;
use super::vocab::{Tokens, Vocab};
use super::whole_chars::{RankMerges, WholeChars};
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

/// A tiktoken ranks file: `base64-token rank` per line. The ranks must run from 0 without
/// gaps; each token is decoded straight into the vocabulary's buffer.
pub(super) fn read_ranks(data: &[u8]) -> Result<Vocab, Failure> {
    let mut tokens = Tokens::with_capacity(data.len() / 12, data.len() / 2);
    let mut seen: Vec<bool> = Vec::with_capacity(data.len() / 12);
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let field = |what: &str| {
            // A file cut short ends in a line without its newline, whose rank or token may
            // have lost digits: say so, or "rank 3 appears twice" is all the caller sees.
            let cut = !data.ends_with(b"\n") && data.split(|&b| b == b'\n').count() == i + 1;
            let cut = if cut { " (the file ends in this line, without a newline: truncated?)" } else { "" };
            parse_failure(format!("ranks file line {}: {what}{cut}", i + 1))
        };
        let space = line.iter().position(|&b| b == b' ').ok_or_else(|| field("expected `base64-token rank`"))?;
        let (token, rank) = (&line[..space], &line[space + 1..]);
        let rank: usize = std::str::from_utf8(rank.trim_ascii_end())
            .ok()
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| field("the rank is not a whole number"))?;
        if rank >= 1 << 24 {
            return Err(field("the rank is above 16,777,215"));
        }
        if seen.len() <= rank {
            seen.resize(rank + 1, false);
        }
        if std::mem::replace(&mut seen[rank], true) {
            return Err(field(&format!("rank {rank} appears twice")));
        }
        if token.is_empty() {
            return Err(field(&format!("rank {rank} is an empty token")));
        }
        tokens
            .push_with(rank as u32, |bytes| STANDARD.decode_vec(token, bytes))
            .map_err(|e| field(&format!("the token is not base64: {e}")))?;
    }
    if let Some(missing) = seen.iter().position(|&seen| !seen) {
        return Err(parse_failure(format!("ranks file: rank {missing} is missing (ranks must run from 0 without gaps)")));
    }
    tokens.index().map_err(|duplicate| parse_failure(format!("ranks file: {}", duplicate.describe("rank"))))
}

/// The `"vocab"` array of a `tekken.json` (the reader is at its `[`): every entry's
/// `"token_bytes"`, decoded. An entry that is not `{"rank": its index, "token_bytes":
/// base64}` is remembered, and is an error if it is within the vocabulary the config
/// selects (mistral-common reads no further).
pub(super) fn read_tekken_vocab(reader: &mut Reader<'_>) -> Result<TekkenVocab, Failure> {
    let mut vocab = TekkenVocab { bytes: Vec::new(), ends: Vec::new(), first_error: None };
    let mut buffer = Vec::new();
    reader.array(&mut |reader, i| {
        let (mut rank, mut token_bytes) = (None, None);
        let start = vocab.bytes.len();
        let mut problem = None;
        if reader.peek() != Some(b'{') {
            reader.skip()?;
            problem = Some("not an object".to_owned());
        } else {
            reader.object(&mut |reader, key| {
                match key {
                    b"rank" => rank = reader.number()?,
                    b"token_bytes" if reader.peek() == Some(b'"') => {
                        let text = reader.string(&mut buffer)?;
                        vocab.bytes.truncate(start);
                        match STANDARD.decode_vec(text, &mut vocab.bytes) {
                            Ok(()) => token_bytes = Some(()),
                            Err(e) => problem = Some(format!("\"token_bytes\" is not base64: {e}")),
                        }
                    }
                    _ => reader.skip()?,
                }
                Ok(())
            })?;
        }
        if problem.is_none() && rank != Some(i as u64) {
            problem = Some(format!("\"rank\" is not {i}"));
        }
        if problem.is_none() && token_bytes.is_none() {
            problem = Some("\"token_bytes\" is not a string".to_owned());
        }
        if let Some(problem) = problem {
            vocab.bytes.truncate(start);
            vocab.first_error.get_or_insert((i, problem));
        }
        vocab.ends.push(vocab.bytes.len());
        Ok(())
    })?;
    Ok(vocab)
}

/// The entries of a `tekken.json`'s `"vocab"`, decoded.
pub(super) struct TekkenVocab {
    bytes: Vec<u8>,
    /// Where each entry's bytes end.
    ends: Vec<usize>,
    /// The first entry that is not a token, and why.
    first_error: Option<(usize, String)>,
}

/// The vocabulary of a `tekken.json`: the ranks below `config.default_vocab_size -
/// config.default_num_special_tokens`, as mistral-common loads them; and its pattern.
pub(super) fn tekken(config: Option<&Value>, entries: TekkenVocab) -> Result<(String, Vocab), Failure> {
    let config = config.filter(|c| c.is_object()).ok_or_else(|| parse_failure("tekken.json: \"config\" is not an object"))?;
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
    let inner = size
        .checked_sub(special)
        .filter(|&inner| inner <= entries.ends.len() as u64)
        .ok_or_else(|| {
            parse_failure(format!(
                "tekken.json: \"config.default_vocab_size\" {size} less \"default_num_special_tokens\" {special} does not fit the {} tokens of \"vocab\"",
                entries.ends.len()
            ))
        })? as usize;
    if let Some((i, problem)) = entries.first_error.filter(|(i, _)| *i < inner) {
        return Err(parse_failure(format!("tekken.json: \"vocab[{i}]\": {problem}")));
    }
    let mut tokens = Tokens::with_capacity(inner, entries.ends.get(inner.wrapping_sub(1)).copied().unwrap_or(0));
    let mut start = 0;
    for (rank, &end) in entries.ends[..inner].iter().enumerate() {
        let token = &entries.bytes[start..end];
        start = end;
        if token.is_empty() {
            return Err(parse_failure(format!("tekken.json \"vocab\": rank {rank} is an empty token")));
        }
        tokens.push(token, rank as u32);
    }
    let vocab =
        tokens.index().map_err(|duplicate| parse_failure(format!("tekken.json \"vocab\": {}", duplicate.describe("rank"))))?;
    Ok((pattern.to_owned(), vocab))
}

/// The BPE model of tokens listed by rank: any two adjacent tokens whose bytes join into a
/// token merge into it, with that token's rank as priority (looked up while counting, as
/// tiktoken does: no table of pairs is built), starting from whole characters where
/// [`WholeChars`] allows.
pub(super) fn bpe_of_ranks(vocab: Vocab, what: &str) -> Result<Bpe, Failure> {
    // Merging starts from the piece's bytes: each must be a token.
    if let Some(byte) = (0..=255u8).find(|&byte| vocab.get(&[byte]).is_none()) {
        return Err(parse_failure(format!(
            "{what}: no token is the single byte 0x{byte:02X} (a byte-level vocabulary has all 256)"
        )));
    }
    let bytes: [u32; 256] = std::array::from_fn(|byte| vocab.get(&[byte as u8]).unwrap_or(u32::MAX));
    let two_bytes = vocab.two_byte_ids();
    let whole = WholeChars::new(&vocab, &RankMerges { two_bytes: &two_bytes }, &bytes);
    Ok(Bpe { merging: Merging::Ranks { two_bytes, whole }, vocab, whole_piece: true, words: None })
}

/// The parts of a ranks-based tokenizer split by `pattern`.
pub(super) fn parts(bpe: Bpe, pattern: &str, nfc: bool) -> Result<Parts, Failure> {
    Ok(Parts {
        normalizers: if nfc { vec![Normalize::Nfc] } else { Vec::new() },
        steps: vec![super::split::Step::Split {
            pattern: super::split::Pattern::Regex(super::split::compile_tiktoken(pattern).map_err(parse_failure)?),
            // tiktoken encodes the matches only: text the pattern skips counts nothing.
            behavior: super::split::Behavior::Removed,
            invert: true,
        }],
        bpe,
        raw_added: Vec::new(),
        normalized_added: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks 0 to 11 written as tiktoken writes them: `base64(token) rank`, one a line.
    fn ranks_file() -> String {
        (0..12u8).map(|rank| format!("{} {rank}\n", STANDARD.encode([b'a' + rank]))).collect()
    }

    #[test]
    fn a_file_cut_in_its_last_line_is_called_truncated() {
        let whole = ranks_file();
        assert!(read_ranks(whole.as_bytes()).is_ok());
        // Cut inside the last rank ("11" becomes "1"), inside the last token, and after it.
        for cut in [whole.len() - 2, whole.len() - 5, whole.len() - 3] {
            let message = read_ranks(&whole.as_bytes()[..cut]).unwrap_err().message().to_owned();
            assert!(message.contains("line 12") && message.contains("truncated?"), "{message}");
        }
        // The same fault in a file that ends with its newline is not a truncation.
        let duplicate = whole.replace(" 11\n", " 1\n");
        let message = read_ranks(duplicate.as_bytes()).unwrap_err().message().to_owned();
        assert!(message.contains("rank 1 appears twice") && !message.contains("truncated"), "{message}");
    }
}
