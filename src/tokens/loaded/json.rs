//! A streaming reader for the large JSON tokenizer files (a `tokenizer.json` is 6 to 35 MB,
//! nearly all of it the vocabulary and the merges).
//!
//! Building a `serde_json::Value` tree of such a file costs more than everything else the
//! load does: an allocation per token, a map per entry. This reader walks the text once
//! instead, handing strings out borrowed from the file (or decoded into one reused buffer
//! when they have escapes), so the vocabulary goes straight into its table. Strings are
//! handed out as bytes, scanned eight bytes at a time for their end, and checked to be
//! UTF-8 by the standard library only when they have a byte above ASCII; merges written
//! `["left", "right"]` without escapes take a shorter path, which leaves the UTF-8 check to
//! its caller (see [`Reader::plain_pair`]). The reader checks the whole document against the
//! JSON grammar (RFC 8259: strings, escapes, surrogate pairs, numbers, nesting, UTF-8), so a
//! file `serde_json` refuses is refused here too, with the byte offset. Small sections
//! (normalizers, pre-tokenizers) are handed back as their raw text, for `serde_json` to read
//! into values.

use super::{Failure, parse_failure};

/// Deepest nesting accepted: the library's limit for all JSON (the reader recurses once per
/// level, so this bounds its stack).
const MAX_DEPTH: usize = crate::strict_json::MAX_NESTING;

/// An object with more keys than this checks them for duplicates in a hash set rather than
/// one by one.
const FEW_KEYS: usize = 16;

/// A position in a JSON document.
pub(super) struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    depth: usize,
    /// The keys of the objects being read, innermost last, one after another (`key_ends`
    /// says where each ends), to refuse a key given twice without an allocation per object.
    key_bytes: Vec<u8>,
    key_ends: Vec<usize>,
}

/// Reads an object's member: the reader is at its value, which it must read; the key is
/// UTF-8.
type Member<'f, 'a> = dyn FnMut(&mut Reader<'a>, &[u8]) -> Result<(), Failure> + 'f;

/// Reads an array's item (its index given): the reader is at it.
type Item<'f, 'a> = dyn FnMut(&mut Reader<'a>, usize) -> Result<(), Failure> + 'f;

/// What ends a run of string characters: a quote, a backslash (an escape follows), or a
/// control character (refused).
const QUOTE: u8 = b'"';
const BACKSLASH: u8 = b'\\';

/// `byte` in each byte of a word.
const fn repeat(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

/// A word whose lowest set bit is the top bit of the first byte of `word` (little-endian)
/// that is a quote, a backslash or a control character; 0 when there is none. (The classic
/// "has a byte below n" tests: while no lower byte is below n, none borrows, so the lowest
/// flag is exact; flags above it may not be.)
#[inline]
fn run_end(word: u64) -> u64 {
    let below = |w: u64, n: u8| w.wrapping_sub(repeat(n)) & !w;
    (below(word, 0x20) | below(word ^ repeat(QUOTE), 1) | below(word ^ repeat(BACKSLASH), 1)) & repeat(0x80)
}

/// A word with the top bit set in each byte of `word` that is zero, and no other bit (exact:
/// no byte borrows from another).
#[inline]
fn zero_bytes(word: u64) -> u64 {
    !(((word & repeat(0x7F)) + repeat(0x7F)) | word) & repeat(0x80)
}

impl<'a> Reader<'a> {
    pub(super) fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, at: 0, depth: 0, key_bytes: Vec::new(), key_ends: Vec::new() }
    }

    /// The eight bytes from the reader's position (little-endian), if there are eight.
    #[inline]
    fn word(&self) -> Option<u64> {
        let bytes = self.data.get(self.at..self.at + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    fn error(&self, what: &str) -> Failure {
        if self.at >= self.data.len() {
            parse_failure(format!("the tokenizer file is not valid JSON: it ends early (truncated?): {what}"))
        } else {
            parse_failure(format!("the tokenizer file is not valid JSON at byte {}: {what}", self.at))
        }
    }

    #[inline]
    fn skip_space(&mut self) {
        loop {
            match self.data.get(self.at) {
                // Pretty-printed files indent by a line feed and spaces: up to eight at a time.
                Some(b' ' | b'\n') => match self.word() {
                    Some(word) => {
                        let other = !(zero_bytes(word ^ repeat(b' ')) | zero_bytes(word ^ repeat(b'\n'))) & repeat(0x80);
                        self.at += other.trailing_zeros() as usize / 8;
                    }
                    None => self.at += 1,
                },
                Some(b'\r' | b'\t') => self.at += 1,
                _ => return,
            }
        }
    }

    /// The next byte that is not white space (not consumed).
    #[inline]
    pub(super) fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.data.get(self.at).copied()
    }

    #[inline]
    fn expect(&mut self, byte: u8) -> Result<(), Failure> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected '{}'", char::from(byte))))
        }
    }

    /// Nothing but white space is left.
    pub(super) fn end(&mut self) -> Result<(), Failure> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error("trailing characters after the document")),
        }
    }

    fn enter(&mut self) -> Result<(), Failure> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        Ok(())
    }

    /// Reads an object, calling `member` with each key (UTF-8); `member` must read the value.
    /// A key given twice is refused (PARSE, naming it), as every JSON reader of the library
    /// refuses it.
    pub(super) fn object(&mut self, member: &mut Member<'_, 'a>) -> Result<(), Failure> {
        let mut key = Vec::new();
        let first = self.key_ends.len();
        let mut many: Option<std::collections::HashSet<Vec<u8>>> = None;
        let read = self.sequence(b'{', b'}', &mut |reader, _| {
            let at = reader.at;
            let name = reader.string(&mut key)?;
            if !reader.first_time(first, &mut many, name) {
                reader.at = at;
                let name = String::from_utf8_lossy(name);
                return Err(reader.error(&format!(
                    "the key \"{}\" is given twice in one object (JSON readers disagree on which counts)",
                    crate::error::echo(&name)
                )));
            }
            reader.expect(b':')?;
            member(reader, name)
        });
        self.key_ends.truncate(first);
        self.key_bytes.truncate(self.key_ends.last().copied().unwrap_or(0));
        read
    }

    /// Reads an object whose keys the caller checks for duplicates itself (the vocabulary,
    /// whose tokens are its keys, refuses a token given twice), as [`Reader::object`]
    /// otherwise.
    pub(super) fn map(&mut self, member: &mut Member<'_, 'a>) -> Result<(), Failure> {
        let mut key = Vec::new();
        self.sequence(b'{', b'}', &mut |reader, _| {
            let name = reader.string(&mut key)?;
            reader.expect(b':')?;
            member(reader, name)
        })
    }

    /// Records `key` among the keys of the object whose first key is at `first` in
    /// `key_ends` (or in `many`, once it has more than [`FEW_KEYS`]); false when it is there
    /// already.
    fn first_time(&mut self, first: usize, many: &mut Option<std::collections::HashSet<Vec<u8>>>, key: &[u8]) -> bool {
        if let Some(many) = many {
            return many.insert(key.to_vec());
        }
        let mut start = if first == 0 { 0 } else { self.key_ends[first - 1] };
        for &end in &self.key_ends[first..] {
            if &self.key_bytes[start..end] == key {
                return false;
            }
            start = end;
        }
        if self.key_ends.len() - first == FEW_KEYS {
            let base = if first == 0 { 0 } else { self.key_ends[first - 1] };
            let mut set: std::collections::HashSet<Vec<u8>> = std::collections::HashSet::new();
            let mut start = base;
            for &end in &self.key_ends[first..] {
                set.insert(self.key_bytes[start..end].to_vec());
                start = end;
            }
            set.insert(key.to_vec());
            *many = Some(set);
            return true;
        }
        self.key_bytes.extend_from_slice(key);
        self.key_ends.push(self.key_bytes.len());
        true
    }

    /// Reads an array, calling `item` with each index; `item` must read the value.
    pub(super) fn array(&mut self, item: &mut Item<'_, 'a>) -> Result<(), Failure> {
        self.sequence(b'[', b']', item)
    }

    /// Reads `open`, then entries separated by commas (`entry` reads each, given its index),
    /// then `close`.
    fn sequence(&mut self, open: u8, close: u8, entry: &mut Item<'_, 'a>) -> Result<(), Failure> {
        self.enter()?;
        self.expect(open)?;
        if self.peek() == Some(close) {
            self.at += 1;
        } else {
            let mut index = 0;
            loop {
                entry(self, index)?;
                index += 1;
                match self.peek() {
                    Some(b',') => self.at += 1,
                    Some(b) if b == close => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err(self.error(&format!("expected ',' or '{}'", char::from(close)))),
                }
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Reads a string, as its UTF-8 bytes: borrowed from the document when it has no
    /// escapes, else decoded into `buffer`.
    pub(super) fn string<'s>(&mut self, buffer: &'s mut Vec<u8>) -> Result<&'s [u8], Failure>
    where
        'a: 's,
    {
        self.expect(b'"')?;
        let start = self.at;
        if self.scan()? == BACKSLASH {
            return self.escaped_string(start, buffer);
        }
        let bytes = &self.data[start..self.at];
        self.at += 1;
        Ok(bytes)
    }

    /// Reads `["left", "right"]` (a merge, as most files write them) when neither string has
    /// an escape, both borrowed from the document: one pass without the callbacks of
    /// [`Reader::array`]. Anything else is left unread (`None`), for the general readers to
    /// read or to refuse with its error.
    ///
    /// The strings are not checked to be UTF-8: the caller must. (The merges reader does by
    /// finding each among the vocabulary's tokens, which were checked; checking Gemma 3's
    /// merges as well took a twentieth of its load.)
    pub(super) fn plain_pair(&mut self) -> Option<(&'a [u8], &'a [u8])> {
        let start = self.at;
        let pair = (|| {
            if self.depth >= MAX_DEPTH {
                return None;
            }
            self.byte(b'[')?;
            let left = self.plain_string()?;
            self.byte(b',')?;
            let right = self.plain_string()?;
            self.byte(b']')?;
            Some((left, right))
        })();
        if pair.is_none() {
            self.at = start;
        }
        pair
    }

    /// Reads a string without escapes (a merge written `"left right"`, as many files write
    /// them), borrowed from the document and, as with [`Reader::plain_pair`], not checked to
    /// be UTF-8: the caller must. Anything else is left unread (`None`).
    pub(super) fn plain_text(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        let text = self.plain_string();
        if text.is_none() {
            self.at = start;
        }
        text
    }

    /// Consumes the next byte that is not white space if it is `byte`.
    #[inline]
    fn byte(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    /// A string without escapes or control characters, borrowed, not checked to be UTF-8;
    /// `None` for anything else (read partly).
    #[inline]
    fn plain_string(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let start = self.at;
        while let Some(word) = self.word() {
            let end = run_end(word);
            if end != 0 {
                self.at += end.trailing_zeros() as usize / 8;
                break;
            }
            self.at += 8;
        }
        loop {
            match *self.data.get(self.at)? {
                QUOTE => break,
                BACKSLASH | 0..0x20 => return None,
                _ => self.at += 1,
            }
        }
        self.at += 1;
        Some(&self.data[start..self.at - 1])
    }

    /// Moves over the characters of a string up to its next quote or backslash, and returns
    /// which of the two it is; refuses a string that ends early, has a control character or
    /// is not UTF-8. Looks at eight bytes at a time, and checks the UTF-8 of the run with the
    /// standard library when it has a byte above ASCII.
    #[inline]
    fn scan(&mut self) -> Result<u8, Failure> {
        let start = self.at;
        let mut high = 0;
        let end = loop {
            if let Some(word) = self.word() {
                let end = run_end(word);
                // The bytes before the end (all eight when there is none).
                let before = end.wrapping_sub(1) & !end;
                high |= word & before & repeat(0x80);
                if end == 0 {
                    self.at += 8;
                    continue;
                }
                self.at += end.trailing_zeros() as usize / 8;
                break self.data[self.at];
            }
            match self.data.get(self.at) {
                Some(&b) if b == QUOTE || b == BACKSLASH || b < 0x20 => break b,
                Some(&b) => {
                    high |= u64::from(b & 0x80);
                    self.at += 1;
                }
                None => break 0,
            }
        };
        if high != 0 {
            if let Err(e) = std::str::from_utf8(&self.data[start..self.at]) {
                self.at = start + e.valid_up_to();
                return Err(self.error("a string is not valid UTF-8"));
            }
        }
        match end {
            QUOTE | BACKSLASH => Ok(end),
            _ if self.at >= self.data.len() => Err(self.error("unterminated string")),
            _ => Err(self.error("control character in a string")),
        }
    }

    /// The rest of a string that has escapes, from `start` (just after the quote); the
    /// reader is at a backslash.
    fn escaped_string<'s>(&mut self, start: usize, buffer: &'s mut Vec<u8>) -> Result<&'s [u8], Failure> {
        buffer.clear();
        let mut run = start;
        loop {
            buffer.extend_from_slice(&self.data[run..self.at]);
            self.at += 1;
            if self.data[self.at - 1] == b'"' {
                return Ok(buffer);
            }
            let c = self.escape()?;
            buffer.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            run = self.at;
            self.scan()?;
        }
    }

    /// The character of an escape (after its backslash).
    fn escape(&mut self) -> Result<char, Failure> {
        let Some(&b) = self.data.get(self.at) else {
            return Err(self.error("unterminated escape"));
        };
        self.at += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&high) {
                    if self.data.get(self.at..self.at + 2) != Some(b"\\u") {
                        return Err(self.error("a lone surrogate in a \\u escape"));
                    }
                    self.at += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.error("a lone surrogate in a \\u escape"));
                    }
                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    high
                };
                char::from_u32(code).ok_or_else(|| self.error("a lone surrogate in a \\u escape"))?
            }
            _ => {
                self.at -= 1;
                return Err(self.error("invalid escape"));
            }
        })
    }

    fn hex4(&mut self) -> Result<u32, Failure> {
        let digits = self.data.get(self.at..self.at + 4).ok_or_else(|| self.error("short \\u escape"))?;
        let mut value = 0;
        for &d in digits {
            let digit = char::from(d).to_digit(16).ok_or_else(|| self.error("invalid \\u escape"))?;
            value = value * 16 + digit;
        }
        self.at += 4;
        Ok(value)
    }

    /// Reads a number; `Some` when it is a whole number without sign, fraction or exponent
    /// that fits in a `u64`.
    pub(super) fn number(&mut self) -> Result<Option<u64>, Failure> {
        self.skip_space();
        let start = self.at;
        let digits = |reader: &mut Reader| {
            let from = reader.at;
            while reader.data.get(reader.at).is_some_and(u8::is_ascii_digit) {
                reader.at += 1;
            }
            reader.at - from
        };
        let negative = self.data.get(self.at) == Some(&b'-');
        if negative {
            self.at += 1;
        }
        let int_start = self.at;
        let int_len = digits(self);
        if int_len == 0 || (int_len > 1 && self.data[int_start] == b'0') {
            self.at = start;
            return Err(self.error("expected a number"));
        }
        let mut whole = !negative;
        if self.data.get(self.at) == Some(&b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(self.error("a number's fraction has no digits"));
            }
            whole = false;
        }
        if matches!(self.data.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.data.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("a number's exponent has no digits"));
            }
            whole = false;
        }
        if !whole {
            return Ok(None);
        }
        let mut value: u64 = 0;
        for &d in &self.data[int_start..int_start + int_len] {
            match value.checked_mul(10).and_then(|v| v.checked_add(u64::from(d - b'0'))) {
                Some(v) => value = v,
                None => return Ok(None),
            }
        }
        Ok(Some(value))
    }

    /// Reads any value and returns its text (for `serde_json` to read when it is small).
    pub(super) fn raw(&mut self) -> Result<&'a [u8], Failure> {
        self.skip_space();
        let start = self.at;
        self.skip()?;
        Ok(&self.data[start..self.at])
    }

    /// Reads any value, checking it, without keeping it.
    pub(super) fn skip(&mut self) -> Result<(), Failure> {
        let mut scratch = Vec::new();
        self.skip_with(&mut scratch)
    }

    fn skip_with(&mut self, scratch: &mut Vec<u8>) -> Result<(), Failure> {
        match self.peek() {
            Some(b'{') => self.object(&mut |reader, _| reader.skip_with(&mut Vec::new())),
            Some(b'[') => self.array(&mut |reader, _| reader.skip_with(&mut Vec::new())),
            Some(b'"') => self.string(scratch).map(drop),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(_) => self.number().map(drop),
            None => Err(self.error("expected a value")),
        }
    }

    /// Reads the literal `word` (`true`, `false` or `null`).
    pub(super) fn literal(&mut self, word: &str) -> Result<(), Failure> {
        if self.data[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.error(&format!("expected {word}")))
        }
    }
}

/// A small section's text (from [`Reader::raw`]) as a value, read by the library's rule for
/// JSON (`crate::strict_json`).
pub(super) fn section(raw: &[u8]) -> Result<serde_json::Value, String> {
    let text = std::str::from_utf8(raw).map_err(|e| e.to_string())?;
    crate::strict_json::parse(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a whole document into a `serde_json::Value` through the reader.
    fn value(reader: &mut Reader) -> Result<serde_json::Value, Failure> {
        use serde_json::Value;
        Ok(match reader.peek() {
            Some(b'{') => {
                let mut map = serde_json::Map::new();
                reader.object(&mut |r, key| {
                    let v = value(r)?;
                    map.insert(String::from_utf8(key.to_vec()).unwrap(), v);
                    Ok(())
                })?;
                Value::Object(map)
            }
            Some(b'[') => {
                let mut list = Vec::new();
                reader.array(&mut |r, _| {
                    list.push(value(r)?);
                    Ok(())
                })?;
                Value::Array(list)
            }
            Some(b'"') => Value::String(String::from_utf8(reader.string(&mut Vec::new())?.to_vec()).unwrap()),
            _ => serde_json::from_slice(reader.raw()?).map_err(|e| parse_failure(e.to_string()))?,
        })
    }

    fn read(text: &[u8]) -> Result<serde_json::Value, Failure> {
        let mut reader = Reader::new(text);
        let v = value(&mut reader)?;
        reader.end()?;
        Ok(v)
    }

    #[test]
    fn reads_what_serde_json_reads() {
        let documents: &[&str] = &[
            r#"{"a": [1, 2.5, -3, 1e3, true, false, null], "b": {"c": "d\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}}"#,
            r#"  ["▁x", "Ġy", "😀\\n€", {}, [], "", 0, 18446744073709551615, 18446744073709551616 ]  "#,
            r#"{"k": "a\u0000b", "l": 2, "m": [{"k": 1}, {"k": 2}]}"#,
        ];
        for document in documents {
            let expected: serde_json::Value = serde_json::from_str(document).unwrap();
            assert_eq!(read(document.as_bytes()).unwrap(), expected, "{document}");
        }
    }

    /// A key given twice was read as serde_json reads it (the last counts); it is refused,
    /// in small and large objects, written plainly or with escapes, at any depth.
    #[test]
    fn a_key_given_twice_is_refused_naming_it() {
        let many: Vec<String> = (0..40).map(|i| format!(r#""k{i}": {i}"#)).collect();
        for (document, key) in [
            (r#"{"a": 1, "b": 2, "a": 3}"#.to_owned(), "a"),
            (r#"{"a": 1, "\u0061": 2}"#.to_owned(), "a"),
            (r#"[{"x": {"y": 1, "y": 2}}]"#.to_owned(), "y"),
            (format!("{{{}, \"k39\": 0}}", many.join(", ")), "k39"),
            (format!("{{{}, \"k3\": 0}}", many.join(", ")), "k3"),
        ] {
            let message = read(document.as_bytes()).unwrap_err().message().to_owned();
            assert!(message.contains(&format!("the key \"{key}\" is given twice")), "{document}: {message}");
        }
        // The same keys in sibling and nested objects are fine, before and after a large one.
        let fine = format!(
            r#"{{"a": {{"a": 1, "b": {{"a": 2}}}}, "b": [{{"a": 1}}, {{"a": 2}}], "c": {{{}}}, "d": {{"a": 1}}}}"#,
            many.join(", ")
        );
        assert!(read(fine.as_bytes()).is_ok(), "{fine}");
        // The vocabulary's reader leaves duplicates to the vocabulary.
        let mut reader = Reader::new(br#"{"a": 1, "a": 2}"#);
        assert!(reader.map(&mut |r, _| r.skip()).is_ok());
    }

    #[test]
    fn nesting_is_bounded_by_the_library_limit() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(read(nested(crate::strict_json::MAX_NESTING).as_bytes()).is_ok());
        let message = read(nested(crate::strict_json::MAX_NESTING + 1).as_bytes()).unwrap_err().message().to_owned();
        assert!(message.contains("nested too deeply"), "{message}");
        assert!(read(nested(1_000_000).as_bytes()).is_err());
    }

    #[test]
    fn refuses_what_serde_json_refuses() {
        let documents: &[&[u8]] = &[
            b"{",
            b"[1,]",
            b"{\"a\" 1}",
            b"{\"a\":1,}",
            b"[01]",
            b"[1.]",
            b"[1e]",
            b"[-]",
            b"\"\\x\"",
            b"\"\\ud800\"",
            b"\"\\udc00\"",
            b"\"\\ud800\\u0041\"",
            b"\"a\nb\"",
            b"\"\xff\"",
            b"[tru]",
            b"[1] 2",
            b"\"abc",
            b"[\"\\u12\"]",
            b"",
            b"[\"\xC0\x80\"]",
            b"[\"\xED\xA0\x80\"]",
            b"[\"\xE2\x96\"]",
            b"[\"\xF4\x90\x80\x80\"]",
            b"{\"\xE2\x96\":1}",
            b"[\"a\\n\xFF\"]",
            b"[\"\\n\xE2\x96\"]",
        ];
        for document in documents {
            assert!(serde_json::from_slice::<serde_json::Value>(document).is_err(), "{document:?}");
            assert!(read(document).is_err(), "{:?}", String::from_utf8_lossy(document));
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(read(deep.as_bytes()).is_err());
    }

    #[test]
    fn run_end_finds_the_first_quote_backslash_or_control() {
        // Every byte value at every position, after plain bytes and before any bytes.
        let ends = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for position in 0..8 {
            for value in 0..=255u8 {
                for _ in 0..8 {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let mut bytes = state.to_le_bytes();
                    for b in &mut bytes[..position] {
                        *b = if ends(*b) { b'a' } else { *b };
                    }
                    bytes[position] = value;
                    let expected = bytes.iter().position(|&b| ends(b)).map_or(8, |at| at as u32);
                    assert_eq!(run_end(u64::from_le_bytes(bytes)).trailing_zeros() / 8, expected, "{bytes:02X?}");
                }
            }
        }
    }

    #[test]
    fn plain_pairs_are_read_whole_or_left_for_the_general_readers() {
        let pair = |text: &[u8]| {
            let mut reader = Reader::new(text);
            let pair = reader.plain_pair().map(|(l, r)| (l.to_vec(), r.to_vec()));
            (pair, reader.at)
        };
        let text = "[ \"▁a\" ,\n \"bc d\"]  ,".as_bytes();
        assert_eq!(pair(text), (Some(("▁a".into(), "bc d".into())), text.len() - 3));
        let others: [&[u8]; 7] = [
            b"[\"a\\n\", \"b\"]",
            b"[\"a\", \"b\", \"c\"]",
            b"[\"a\"]",
            b"[\"a\", 1]",
            b"\"a b\"",
            b"[\"a\", \"b\n\"]",
            b"[\"a\", \"b",
        ];
        for other in others {
            assert_eq!(pair(other), (None, 0), "{}", String::from_utf8_lossy(other));
        }
        // Bytes that are not UTF-8 are handed out as they are.
        assert_eq!(pair(b"[\"a\", \"b\xff\"]").0, Some((b"a".to_vec(), b"b\xff".to_vec())));
        // A string alone, the same way.
        let plain = |text: &[u8]| {
            let mut reader = Reader::new(text);
            (reader.plain_text().map(<[u8]>::to_vec), reader.at)
        };
        assert_eq!(plain(b" \"a b\xff\" ,"), (Some(b"a b\xff".to_vec()), 7));
        for other in [&b"\"a\\n b\""[..], b"\"a\nb\"", b"\"a b", b"[\"a\", \"b\"]", b"1"] {
            assert_eq!(plain(other), (None, 0), "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn white_space_is_skipped_whatever_its_mix_and_length() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for len in 0..40 {
            for _ in 0..20 {
                let mut text: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        [b' ', b' ', b'\n', b'\r', b'\t'][(state % 5) as usize]
                    })
                    .collect();
                // A value, or a control character that is not white space, then more.
                let next = [b'1', 0x0B, 0x0C, 0][(state >> 8) as usize % 4];
                text.push(next);
                text.extend_from_slice(b"  \n");
                let mut reader = Reader::new(&text);
                assert_eq!((reader.peek(), reader.at), (Some(next), len), "{text:?}");
            }
        }
        assert_eq!(Reader::new(b" \n\t\r").peek(), None);
    }

    #[test]
    fn whole_numbers_are_told_apart() {
        for (text, expected) in
            [("7", Some(7)), ("0", Some(0)), ("-1", None), ("1.0", None), ("2e1", None), ("99999999999999999999", None)]
        {
            assert_eq!(Reader::new(text.as_bytes()).number().unwrap(), expected, "{text}");
        }
    }
}
