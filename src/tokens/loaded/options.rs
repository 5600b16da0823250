//! The `options` of a load: a JSON object carrying what the file lacks.
//!
//! ```text
//! {"pre_tokenizer": "llama3"}            a ranks file split as a known family splits it
//! {"pattern": "…regex…", "nfc": true}   a ranks file split by this pattern (NFC first)
//! ```

use serde_json::Value;

use super::ranks::FAMILIES;
use super::split::compile_tiktoken;
use crate::error::{Error, Result, echo};

/// Parsed options.
#[derive(Debug, Default)]
pub(super) struct Options {
    pre_tokenizer: Option<String>,
    pattern: Option<String>,
    nfc: Option<bool>,
}

impl Options {
    /// Parses `text` (empty: no options).
    pub(super) fn parse(text: &str) -> Result<Options> {
        if text.trim().is_empty() {
            return Ok(Options::default());
        }
        let value: Value =
            crate::strict_json::parse(text).map_err(|e| Error::invalid_arg(format!("options are not valid JSON: {e}")))?;
        let object = value.as_object().ok_or_else(|| Error::invalid_arg("options must be a JSON object"))?;
        let mut options = Options::default();
        for (key, value) in object {
            match key.as_str() {
                "pre_tokenizer" => {
                    let name = value.as_str().ok_or_else(|| Error::invalid_arg("options: \"pre_tokenizer\" must be a string"))?;
                    if !FAMILIES.iter().any(|f| f.name == name) {
                        let known: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
                        return Err(Error::invalid_arg(format!(
                            "options: \"pre_tokenizer\" \"{}\" is not one of {known:?}",
                            echo(name)
                        )));
                    }
                    options.pre_tokenizer = Some(name.to_owned());
                }
                "pattern" => {
                    let pattern = value.as_str().ok_or_else(|| Error::invalid_arg("options: \"pattern\" must be a string"))?;
                    compile_tiktoken(pattern).map_err(|e| Error::invalid_arg(format!("options: \"pattern\": {e}")))?;
                    options.pattern = Some(pattern.to_owned());
                }
                "nfc" => {
                    options.nfc =
                        Some(value.as_bool().ok_or_else(|| Error::invalid_arg("options: \"nfc\" must be true or false"))?)
                }
                other => {
                    return Err(Error::invalid_arg(format!(
                        "options: unknown key \"{}\" (known: \"pre_tokenizer\", \"pattern\", \"nfc\")",
                        echo(other)
                    )));
                }
            }
        }
        if options.pre_tokenizer.is_some() && options.pattern.is_some() {
            return Err(Error::invalid_arg("options: give \"pre_tokenizer\" or \"pattern\", not both"));
        }
        Ok(options)
    }

    /// Fails when any option was given: they do not apply to `what`.
    pub(super) fn refuse_for(&self, what: &str) -> Result<()> {
        if self.pre_tokenizer.is_some() || self.pattern.is_some() || self.nfc.is_some() {
            return Err(Error::invalid_arg(format!("options do not apply to {what}")));
        }
        Ok(())
    }

    /// The pattern and NFC flag a ranks file is split with.
    pub(super) fn pattern_for_ranks(&self) -> Result<(String, bool)> {
        if let Some(name) = &self.pre_tokenizer {
            let family = FAMILIES.iter().find(|f| f.name == name.as_str()).ok_or_else(|| Error::invalid_arg("unknown family"))?;
            return Ok((family.pattern.to_owned(), self.nfc.unwrap_or(family.nfc)));
        }
        match &self.pattern {
            Some(pattern) => Ok((pattern.clone(), self.nfc.unwrap_or(false))),
            None => Err(Error::invalid_arg(
                "a tiktoken ranks file carries no pre-tokenizer: options must name one, e.g. {\"pre_tokenizer\":\"llama3\"} or {\"pattern\":\"…\"}",
            )),
        }
    }

    /// The options in a fixed spelling, for the fingerprint.
    pub(super) fn canonical(&self) -> String {
        format!("{:?}|{:?}|{:?}", self.pre_tokenizer, self.pattern, self.nfc)
    }
}
