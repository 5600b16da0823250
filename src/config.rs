//! Window settings and the JSON object `ctxwin_window_configure` takes.

use crate::error::{Error, ErrorKind, Result};
use crate::limits::MessageLimit;
use serde_json::Value;

/// The default history budget: the source design's `DEFAULT_HISTORY_TOKEN_LIMIT`.
pub const DEFAULT_HISTORY_BUDGET: u32 = 100_000;

/// The compaction strategy a window enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyName {
    /// Drop the oldest whole turns while live history exceeds the budget.
    Sliding,
}

/// Strategy names the design fixes that this version does not provide yet.
const PLANNED_STRATEGIES: [&str; 4] = ["drop_oldest", "tiered", "monologue", "summary"];

/// Configuration keys the design fixes that this version does not accept yet.
const PLANNED_KEYS: [&str; 10] = [
    "summary_budget",
    "context_limit",
    "threshold",
    "token_threshold",
    "message_threshold",
    "turn_threshold",
    "keep_first",
    "keep_recent",
    "keep_recent_turns",
    "tool_output_max_lines",
];

/// A window's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The strategy enforced at `end_turn`.
    pub strategy: StrategyName,
    /// Tokens live history may use (or the whole prompt, see `budget_includes_overhead`).
    pub history_budget: u32,
    /// Keep message texts (true) or counts only (false).
    pub retain_text: bool,
    /// When true the budget caps overhead + pinned messages + history, not history alone.
    pub budget_includes_overhead: bool,
    /// The largest message text `push` accepts (`max_message_bytes`; 0 = no limit).
    pub max_message_bytes: MessageLimit,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            strategy: StrategyName::Sliding,
            history_budget: DEFAULT_HISTORY_BUDGET,
            retain_text: true,
            budget_includes_overhead: false,
            max_message_bytes: MessageLimit::default(),
        }
    }
}

impl Settings {
    /// These settings with the keys of the JSON object `json` applied. Nothing is applied
    /// unless every key is valid; errors name the offending key.
    pub fn with_json(&self, json: &str) -> Result<Settings> {
        let value: Value = serde_json::from_str(json)
            .map_err(|e| Error::new(ErrorKind::Parse, format!("configuration is not valid JSON: {e}")))?;
        let Value::Object(object) = value else {
            return Err(Error::invalid_arg("configuration must be a JSON object"));
        };
        let mut next = self.clone();
        for (key, value) in &object {
            next.apply(key, value)?;
        }
        Ok(next)
    }

    fn apply(&mut self, key: &str, value: &Value) -> Result<()> {
        match key {
            "strategy" => self.strategy = parse_strategy(value)?,
            "history_budget" => self.history_budget = parse_tokens(key, value)?,
            "retain_text" => self.retain_text = parse_bool(key, value)?,
            "budget_includes_overhead" => self.budget_includes_overhead = parse_bool(key, value)?,
            "max_message_bytes" => self.max_message_bytes = MessageLimit::from_bytes(parse_bytes(key, value)?),
            planned if PLANNED_KEYS.contains(&planned) => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("configuration key '{planned}' is not supported by this version"),
                ));
            }
            unknown => return Err(Error::invalid_arg(format!("unknown configuration key '{unknown}'"))),
        }
        Ok(())
    }
}

fn parse_strategy(value: &Value) -> Result<StrategyName> {
    let name = value
        .as_str()
        .ok_or_else(|| Error::invalid_arg("configuration key 'strategy' must be a string"))?;
    match name {
        "sliding" => Ok(StrategyName::Sliding),
        planned if PLANNED_STRATEGIES.contains(&planned) => Err(Error::new(
            ErrorKind::Unsupported,
            format!("strategy '{planned}' is not supported by this version"),
        )),
        other => Err(Error::invalid_arg(format!(
            "configuration key 'strategy': unknown strategy '{other}' (expected sliding, drop_oldest, tiered, monologue or summary)"
        ))),
    }
}

/// A token amount: a whole number from 0 to `i32::MAX` (the C API's token range).
fn parse_tokens(key: &str, value: &Value) -> Result<u32> {
    value
        .as_u64()
        .filter(|&n| n <= i32::MAX as u64)
        .map(|n| n as u32)
        .ok_or_else(|| {
            Error::invalid_arg(format!(
                "configuration key '{key}' must be a whole number from 0 to {}",
                i32::MAX
            ))
        })
}

/// A size in bytes: a whole number from 0 up.
fn parse_bytes(key: &str, value: &Value) -> Result<u64> {
    value
        .as_u64()
        .ok_or_else(|| Error::invalid_arg(format!("configuration key '{key}' must be a whole number of bytes (0 = no limit)")))
}

fn parse_bool(key: &str, value: &Value) -> Result<bool> {
    value
        .as_bool()
        .ok_or_else(|| Error::invalid_arg(format!("configuration key '{key}' must be true or false")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_every_valid_key() {
        let settings = Settings::default()
            .with_json(r#"{"strategy":"sliding","history_budget":5000,"retain_text":false,"budget_includes_overhead":true}"#)
            .unwrap();
        assert_eq!(settings.history_budget, 5000);
        assert!(!settings.retain_text);
        assert!(settings.budget_includes_overhead);
        let limited = Settings::default().with_json(r#"{"max_message_bytes":1024}"#).unwrap();
        assert_eq!(limited.max_message_bytes, MessageLimit::Bytes(1024));
        let unlimited = limited.with_json(r#"{"max_message_bytes":0}"#).unwrap();
        assert_eq!(unlimited.max_message_bytes, MessageLimit::Unlimited);
    }

    #[test]
    fn errors_name_the_key_and_change_nothing() {
        let cases = [
            (r#"{"history_budget":-1}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"history_budget":1.5}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"history_budget":3000000000}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"max_message_bytes":-1}"#, ErrorKind::InvalidArg, "max_message_bytes"),
            (r#"{"max_message_bytes":"64M"}"#, ErrorKind::InvalidArg, "max_message_bytes"),
            (r#"{"retain_text":"yes"}"#, ErrorKind::InvalidArg, "retain_text"),
            (r#"{"strategy":"lru"}"#, ErrorKind::InvalidArg, "lru"),
            (r#"{"strategy":"tiered"}"#, ErrorKind::Unsupported, "tiered"),
            (r#"{"keep_first":2}"#, ErrorKind::Unsupported, "keep_first"),
            (r#"{"history_budget":10,"bogus":1}"#, ErrorKind::InvalidArg, "bogus"),
            (r#"[1,2]"#, ErrorKind::InvalidArg, "object"),
            (r#"{"history_budget":"#, ErrorKind::Parse, "JSON"),
        ];
        for (json, kind, needle) in cases {
            let err = Settings::default().with_json(json).unwrap_err();
            assert_eq!(err.kind(), kind, "{json}");
            assert!(err.message().contains(needle), "{json}: {}", err.message());
        }
    }
}
