//! A streaming reader for the large JSON tokenizer files (a `tokenizer.json` is 6 to 35 MB,
//! nearly all of it the vocabulary and the merges).
//!
//! Building a `serde_json::Value` tree of such a file costs more than everything else the
//! load does: an allocation per token, a map per entry. This reader walks the bytes once
//! instead, handing strings out borrowed from the file (or decoded into one reused buffer
//! when they have escapes), so the vocabulary goes straight into its table. It checks the
//! whole document against the JSON grammar (RFC 8259: strings, escapes, surrogate pairs,
//! numbers, nesting), so a file `serde_json` refuses is refused here too, with the byte
//! offset. Small sections (normalizers, pre-tokenizers, added tokens) are handed back as
//! their raw text, for `serde_json` to read into values.

use super::{Failure, parse_failure};

/// Deepest nesting accepted (`serde_json`'s own limit).
const MAX_DEPTH: usize = 128;

/// A position in a JSON document.
pub(super) struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    depth: usize,
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

    fn utf8_error(at: usize) -> Failure {
        parse_failure(format!("the tokenizer file is not valid JSON at byte {at}: a string is not valid UTF-8"))
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

    /// Reads an object, calling `member` with each key; `member` must read the value.
    pub(super) fn object(&mut self, member: &mut dyn FnMut(&mut Reader<'a>, &str) -> Result<(), Failure>) -> Result<(), Failure> {
        self.enter()?;
        self.expect(b'{')?;
        let mut key = String::new();
        if self.peek() == Some(b'}') {
            self.at += 1;
        } else {
            loop {
                let name = self.string(&mut key)?;
                self.expect(b':')?;
                member(self, name)?;
                match self.peek() {
                    Some(b',') => self.at += 1,
                    Some(b'}') => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err(self.error("expected ',' or '}'")),
                }
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Reads an array, calling `item` with each index; `item` must read the value.
    pub(super) fn array(&mut self, item: &mut dyn FnMut(&mut Reader<'a>, usize) -> Result<(), Failure>) -> Result<(), Failure> {
        self.enter()?;
        self.expect(b'[')?;
        if self.peek() == Some(b']') {
            self.at += 1;
        } else {
            let mut index = 0;
            loop {
                item(self, index)?;
                index += 1;
                match self.peek() {
                    Some(b',') => self.at += 1,
                    Some(b']') => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err(self.error("expected ',' or ']'")),
                }
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Reads a string: borrowed from the document when it has no escapes, else decoded
    /// into `buffer`.
    pub(super) fn string<'s>(&mut self, buffer: &'s mut String) -> Result<&'s str, Failure>
    where
        'a: 's,
    {
        self.expect(b'"')?;
        let start = self.at;
        loop {
            let Some(&b) = self.data.get(self.at) else {
                return Err(self.error("unterminated string"));
            };
            match b {
                b'"' => break,
                b'\\' => return self.escaped_string(start, buffer),
                0..=0x1F => return Err(self.error("control character in a string")),
                _ => self.at += 1,
            }
        }
        let bytes = &self.data[start..self.at];
        self.at += 1;
        std::str::from_utf8(bytes).map_err(|e| Reader::utf8_error(start + e.valid_up_to()))
    }

    /// The rest of a string that has escapes, from `start` (just after the quote).
    fn escaped_string<'s>(&mut self, start: usize, buffer: &'s mut String) -> Result<&'s str, Failure> {
        buffer.clear();
        let mut run = start;
        loop {
            let Some(&b) = self.data.get(self.at) else {
                return Err(self.error("unterminated string"));
            };
            match b {
                b'"' | b'\\' => {
                    let text =
                        std::str::from_utf8(&self.data[run..self.at]).map_err(|e| Reader::utf8_error(run + e.valid_up_to()))?;
                    buffer.push_str(text);
                    self.at += 1;
                    if b == b'"' {
                        return Ok(buffer);
                    }
                    let c = self.escape()?;
                    buffer.push(c);
                    run = self.at;
                }
                0..=0x1F => return Err(self.error("control character in a string")),
                _ => self.at += 1,
            }
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
    pub(super) fn raw(&mut self) -> Result<&'a str, Failure> {
        self.skip_space();
        let start = self.at;
        self.skip()?;
        let text = &self.data[start..self.at];
        // The value was checked: its strings are UTF-8 and the rest is ASCII.
        std::str::from_utf8(text).map_err(|_| self.error("invalid UTF-8"))
    }

    /// Reads any value, checking it, without keeping it.
    pub(super) fn skip(&mut self) -> Result<(), Failure> {
        let mut scratch = String::new();
        self.skip_with(&mut scratch)
    }

    fn skip_with(&mut self, scratch: &mut String) -> Result<(), Failure> {
        match self.peek() {
            Some(b'{') => self.object(&mut |reader, _| reader.skip_with(&mut String::new())),
            Some(b'[') => self.array(&mut |reader, _| reader.skip_with(&mut String::new())),
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
                    map.insert(key.to_owned(), v);
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
            Some(b'"') => Value::String(reader.string(&mut String::new())?.to_owned()),
            _ => serde_json::from_str(reader.raw()?).map_err(|e| parse_failure(e.to_string()))?,
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
            r#"  ["▁x", "Ġy", {}, [], "", 0, 18446744073709551615, 18446744073709551616 ]  "#,
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
        ];
        for document in documents {
            assert!(serde_json::from_slice::<serde_json::Value>(document).is_err(), "{document:?}");
            assert!(read(document).is_err(), "{:?}", String::from_utf8_lossy(document));
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(read(deep.as_bytes()).is_err());
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
