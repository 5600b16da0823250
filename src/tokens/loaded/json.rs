//! A streaming reader for the large JSON tokenizer files (a `tokenizer.json` is 6 to 35 MB,
//! nearly all of it the vocabulary and the merges).
//!
//! Building a `serde_json::Value` tree of such a file costs more than everything else the
//! load does: an allocation per token, a map per entry. This reader walks the text once
//! instead, handing strings out borrowed from the file (or decoded into one reused buffer
//! when they have escapes), so the vocabulary goes straight into its table. Strings are
//! handed out as bytes, checked to be UTF-8 while they are scanned (no second pass over
//! them). The reader checks the whole document against the JSON grammar (RFC 8259:
//! strings, escapes, surrogate pairs, numbers, nesting, UTF-8), so a file `serde_json`
//! refuses is refused here too, with the byte offset. Small sections (normalizers,
//! pre-tokenizers, added tokens) are handed back as their raw text, for `serde_json` to
//! read into values.

use super::{Failure, parse_failure};

/// Deepest nesting accepted (`serde_json`'s own limit).
const MAX_DEPTH: usize = 128;

/// A position in a JSON document.
pub(super) struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    depth: usize,
}

/// Reads an object's member: the reader is at its value, which it must read; the key is
/// UTF-8.
type Member<'f, 'a> = dyn FnMut(&mut Reader<'a>, &[u8]) -> Result<(), Failure> + 'f;

/// Reads an array's item (its index given): the reader is at it.
type Item<'f, 'a> = dyn FnMut(&mut Reader<'a>, usize) -> Result<(), Failure> + 'f;

/// What a byte is inside a string: [`PLAIN`] (taken as it is), [`QUOTE`], [`BACKSLASH`],
/// [`CONTROL`] (refused) or [`NON_ASCII`] (starts a multi-byte character, checked).
const CLASS: [u8; 256] = {
    let mut class = [PLAIN; 256];
    let mut b = 0;
    while b < 256 {
        class[b] = match b as u8 {
            b'"' => QUOTE,
            b'\\' => BACKSLASH,
            0..=0x1F => CONTROL,
            0x80.. => NON_ASCII,
            _ => PLAIN,
        };
        b += 1;
    }
    class
};
const PLAIN: u8 = 0;
const QUOTE: u8 = 1;
const BACKSLASH: u8 = 2;
const CONTROL: u8 = 3;
const NON_ASCII: u8 = 4;

/// Length of the valid UTF-8 character (of two to four bytes) starting `bytes`, if it is one
/// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
#[inline]
fn utf8_char_len(bytes: &[u8]) -> Option<usize> {
    let continuation = |i: usize, range: std::ops::RangeInclusive<u8>| bytes.get(i).is_some_and(|b| range.contains(b));
    let (len, second) = match *bytes.first()? {
        0xC2..=0xDF => (2, 0x80..=0xBF),
        0xE0 => (3, 0xA0..=0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80..=0xBF),
        0xED => (3, 0x80..=0x9F),
        0xF0 => (4, 0x90..=0xBF),
        0xF1..=0xF3 => (4, 0x80..=0xBF),
        0xF4 => (4, 0x80..=0x8F),
        _ => return None,
    };
    (continuation(1, second) && (2..len).all(|i| continuation(i, 0x80..=0xBF))).then_some(len)
}

impl<'a> Reader<'a> {
    pub(super) fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, at: 0, depth: 0 }
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
            // Pretty-printed files indent by runs of spaces: eight at a time.
            if self.data.get(self.at..self.at + 8) == Some(b"        ") {
                self.at += 8;
                continue;
            }
            match self.data.get(self.at) {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.at += 1,
                _ => break,
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
    pub(super) fn object(&mut self, member: &mut Member<'_, 'a>) -> Result<(), Failure> {
        let mut key = Vec::new();
        self.sequence(b'{', b'}', &mut |reader, _| {
            let name = reader.string(&mut key)?;
            reader.expect(b':')?;
            member(reader, name)
        })
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

    /// Moves over the characters of a string up to its next quote or backslash, and returns
    /// which of the two it is; refuses a string that ends early, has a control character or
    /// is not UTF-8.
    #[inline]
    fn scan(&mut self) -> Result<u8, Failure> {
        loop {
            let Some(&b) = self.data.get(self.at) else {
                return Err(self.error("unterminated string"));
            };
            match CLASS[usize::from(b)] {
                PLAIN => self.at += 1,
                NON_ASCII => match utf8_char_len(&self.data[self.at..]) {
                    Some(len) => self.at += len,
                    None => return Err(self.error("a string is not valid UTF-8")),
                },
                CONTROL => return Err(self.error("control character in a string")),
                quote_or_backslash => return Ok(quote_or_backslash),
            }
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

    fn literal(&mut self, word: &str) -> Result<(), Failure> {
        if self.data[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.error(&format!("expected {word}")))
        }
    }
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
            r#"{"k": "a\u0000b", "k": 2}"#,
        ];
        for document in documents {
            let expected: serde_json::Value = serde_json::from_str(document).unwrap();
            assert_eq!(read(document.as_bytes()).unwrap(), expected, "{document}");
        }
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
    fn utf8_characters_are_checked_like_the_standard_library() {
        let check = |bytes: &[u8]| {
            let expected = match std::str::from_utf8(bytes) {
                Ok(text) => text.chars().next().map(char::len_utf8).filter(|&len| len > 1),
                Err(e) => (e.valid_up_to() > 0)
                    .then(|| std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap().chars().next().unwrap().len_utf8())
                    .filter(|&len| len > 1),
            };
            assert_eq!(utf8_char_len(bytes), expected, "{bytes:02X?}");
        };
        for first in 0x80..=0xFFu8 {
            for second in 0..=0xFFu8 {
                check(&[first, second]);
                for third in [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF] {
                    check(&[first, second, third]);
                    for fourth in [0x00, 0x80, 0xBF, 0xC0] {
                        check(&[first, second, third, fourth]);
                    }
                }
            }
            check(&[first]);
        }
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
