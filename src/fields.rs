//! Reading a JSON object field by field, with errors that name the field's path
//! (`messages[3].kind: …`) so a damaged file says where it is damaged.

use crate::error::{Error, ErrorKind, Result};
use serde_json::{Map, Value};

/// A JSON object being read, and its path in the document.
pub struct Fields<'a> {
    object: &'a Map<String, Value>,
    path: String,
}

impl<'a> Fields<'a> {
    /// Reads `value`, found at `path`, as an object.
    pub fn of(value: &'a Value, path: impl Into<String>) -> Result<Fields<'a>> {
        let path = path.into();
        match value {
            Value::Object(object) => Ok(Fields { object, path }),
            _ => Err(parse_error(&path, "expected a JSON object")),
        }
    }

    /// The field `name`; an error when it is missing.
    pub fn value(&self, name: &str) -> Result<&'a Value> {
        self.object.get(name).ok_or_else(|| parse_error(&self.path_of(name), "missing"))
    }

    /// The field `name`, or `None` when it is missing or null.
    pub fn optional(&self, name: &str) -> Option<&'a Value> {
        self.object.get(name).filter(|value| !value.is_null())
    }

    /// The path of the field `name`, for error messages.
    pub fn path_of(&self, name: &str) -> String {
        if self.path.is_empty() { name.to_owned() } else { format!("{}.{name}", self.path) }
    }

    /// The whole number field `name`, at most `max`.
    pub fn whole(&self, name: &str, max: u64) -> Result<u64> {
        let value = self.value(name)?;
        whole_number(value, max).ok_or_else(|| self.wrong(name, &format!("a whole number from 0 to {max}")))
    }

    /// The optional whole number field `name`, at most `max`.
    pub fn optional_whole(&self, name: &str, max: u64) -> Result<Option<u64>> {
        self.optional(name)
            .map(|value| whole_number(value, max).ok_or_else(|| self.wrong(name, &format!("a whole number from 0 to {max}"))))
            .transpose()
    }

    /// The index field `name`.
    pub fn index(&self, name: &str) -> Result<usize> {
        Ok(self.whole(name, usize::MAX as u64)? as usize)
    }

    /// The number field `name`.
    pub fn number(&self, name: &str) -> Result<f64> {
        self.value(name)?.as_f64().ok_or_else(|| self.wrong(name, "a number"))
    }

    /// The token amount field `name` (0 to `i32::MAX`, the C API's range).
    pub fn tokens(&self, name: &str) -> Result<u32> {
        Ok(self.whole(name, i32::MAX as u64)? as u32)
    }

    /// The boolean field `name`.
    pub fn boolean(&self, name: &str) -> Result<bool> {
        self.value(name)?.as_bool().ok_or_else(|| self.wrong(name, "true or false"))
    }

    /// The string field `name`.
    pub fn string(&self, name: &str) -> Result<&'a str> {
        self.value(name)?.as_str().ok_or_else(|| self.wrong(name, "a string"))
    }

    /// The optional string field `name`.
    pub fn optional_string(&self, name: &str) -> Result<Option<&'a str>> {
        self.optional(name).map(|value| value.as_str().ok_or_else(|| self.wrong(name, "a string"))).transpose()
    }

    /// The optional integer field `name` (any `i64`).
    pub fn optional_i64(&self, name: &str) -> Result<Option<i64>> {
        self.optional(name).map(|value| value.as_i64().ok_or_else(|| self.wrong(name, "a 64-bit integer"))).transpose()
    }

    /// The array field `name`.
    pub fn array(&self, name: &str) -> Result<&'a [Value]> {
        match self.value(name)? {
            Value::Array(items) => Ok(items),
            _ => Err(self.wrong(name, "an array")),
        }
    }

    /// An error saying field `name` should have been `expected`.
    pub fn wrong(&self, name: &str, expected: &str) -> Error {
        parse_error(&self.path_of(name), &format!("expected {expected}"))
    }
}

fn whole_number(value: &Value, max: u64) -> Option<u64> {
    value.as_u64().filter(|&n| n <= max)
}

/// A PARSE error about the field at `path`.
pub fn parse_error(path: &str, problem: &str) -> Error {
    Error::new(ErrorKind::Parse, format!("{path}: {problem}"))
}
