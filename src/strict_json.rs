//! JSON text as the library reads it from a host or a file: one rule for every reader.
//!
//! - **A key given twice in an object is refused**, naming the key. `serde_json` keeps the
//!   last value silently and other parsers keep the first, so a host and the library could
//!   read one document two ways.
//! - **Nesting is at most [`MAX_NESTING`] levels**, checked by a scan that does not recurse
//!   before anything is built. Reading, rendering and dropping a JSON value recurse once per
//!   level; the bound keeps every call within the smallest thread stack the library supports
//!   (`CTXWIN_MIN_THREAD_STACK`, measured by the C test `small_stacks_are_enough`).
//!
//! Errors are `serde_json`'s, so each reader keeps its own wording around them; they give the
//! line and column, or the byte offset.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::fmt;

use crate::error::echo;

/// The deepest nesting of arrays and objects accepted in any JSON the library reads: far
/// deeper than any provider's message, usage object or tool schema, shallow enough that a
/// thread of `CTXWIN_MIN_THREAD_STACK` bytes reads, renders and frees it.
pub const MAX_NESTING: usize = 64;

/// Parses `text` as one JSON value, refusing duplicate keys and nesting deeper than
/// [`MAX_NESTING`].
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    check_nesting(text.as_bytes())?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Strict.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// The members of the JSON object `text`, in order, each value left as its text; refuses a
/// key given twice and nesting deeper than [`MAX_NESTING`], as [`parse`] does.
pub fn members(text: &str) -> Result<Vec<(String, &RawValue)>, serde_json::Error> {
    check_nesting(text.as_bytes())?;
    let members: Vec<(String, &RawValue)> = serde_json::from_str::<Members>(text)?.0;
    Ok(members)
}

/// An object's members, keys checked to be distinct.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> de::Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members<'a>, D::Error> {
        struct Of<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Of<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'a>, A::Error> {
                let mut members: Vec<(String, &'a RawValue)> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(twice(&key));
                    }
                    members.push((key, map.next_value()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Of(std::marker::PhantomData))
    }
}

/// The error of a key given twice.
fn twice<E: de::Error>(key: &str) -> E {
    E::custom(format_args!("the key \"{}\" is given twice in one object (JSON readers disagree on which counts)", echo(key)))
}

/// Refuses `text` whose arrays and objects nest deeper than [`MAX_NESTING`] (a scan that
/// does not recurse; malformed JSON is left to the parser).
pub fn check_nesting(text: &[u8]) -> Result<(), serde_json::Error> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (at, &byte) in text.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(de::Error::custom(format!(
                        "arrays and objects nest deeper than {MAX_NESTING} levels (at byte {at}), the most the library reads"
                    )));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Builds a [`Value`] as `serde_json` does, refusing an object that gives a key twice.
struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(twice(&key));
            }
            let value = map.next_value_seed(Strict)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            r#"{"a": [1, -2, 2.5, 1e300, true, false, null, "x\"y\u00e9"], "b": {"c": {}}, "d": []}"#,
            "18446744073709551615",
            r#"  "just a string"  "#,
            r#"{"order": 1, "kept": 2, "as": 3, "given": 4}"#,
        ] {
            let expected: Value = serde_json::from_str(text).unwrap();
            let got = parse(text).unwrap();
            assert_eq!(got, expected, "{text}");
            assert_eq!(got.to_string(), expected.to_string(), "key order: {text}");
        }
        for bad in ["", "{", "[1,]", r#"{"a":1} x"#, "nul"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_key_given_twice_is_refused_naming_it() {
        for text in [r#"{"role":"user","role":"assistant"}"#, r#"[{"x":{"role":1,"role":2}}]"#] {
            let message = parse(text).unwrap_err().to_string();
            assert!(message.contains("the key \"role\" is given twice"), "{message}");
            assert!(message.contains("line 1 column"), "{message}");
        }
        // The same key in two objects is fine.
        assert!(parse(r#"[{"role":1},{"role":2}]"#).is_ok());
        // A huge key is echoed capped.
        let key = "k".repeat(1 << 20);
        let message = parse(&format!(r#"{{"{key}":1,"{key}":2}}"#)).unwrap_err().to_string();
        assert!(message.len() < 1000 && message.contains("1048576 bytes"), "{}", message.len());
    }

    #[test]
    fn members_are_read_in_order_and_a_key_given_twice_is_refused() {
        let members = members(r#"{"model": "m", "messages": [{"a": 1}], "n": 2}"#).unwrap();
        let read: Vec<(&str, &str)> = members.iter().map(|(k, v)| (k.as_str(), v.get())).collect();
        assert_eq!(read, [("model", r#""m""#), ("messages", r#"[{"a": 1}]"#), ("n", "2")]);
        let message = super::members(r#"{"model": "a", "messages": [], "model": "b"}"#).unwrap_err().to_string();
        assert!(message.contains("the key \"model\" is given twice"), "{message}");
        assert!(super::members("[1]").is_err());
    }

    #[test]
    fn nesting_is_bounded_without_recursion() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(parse(&nested(MAX_NESTING)).is_ok());
        let message = parse(&nested(MAX_NESTING + 1)).unwrap_err().to_string();
        assert!(message.contains("deeper than 64 levels (at byte 64)"), "{message}");
        // Brackets inside strings, escaped quotes included, are not nesting.
        let in_strings = format!(r#"["{}\"{}"]"#, "[".repeat(1000), "{".repeat(1000));
        assert!(parse(&in_strings).is_ok());
        // Ten million levels: refused by the scan, the stack never sees them.
        assert!(check_nesting(nested(10_000_000).as_bytes()).is_err());
        let objects = format!("{}1{}", r#"{"a":"#.repeat(MAX_NESTING + 1), "}".repeat(MAX_NESTING + 1));
        assert!(parse(&objects).is_err());
    }
}
