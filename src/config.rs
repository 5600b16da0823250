//! Window settings and the JSON object `ctxwin_window_configure` takes.

use crate::error::{Error, ErrorKind, Result};
use serde_json::Value;

/// The default history budget: the source design's `DEFAULT_HISTORY_TOKEN_LIMIT`.
pub const DEFAULT_HISTORY_BUDGET: u32 = 100_000;

/// The compaction strategy a window enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyName {
    /// Drop the oldest whole turns while live history exceeds the budget.
    Sliding,
    /// Drop the oldest whole turns while any threshold (tokens, messages, turns) is exceeded.
    DropOldest,
    /// Truncate long tool outputs, then summarize old turns, then drop the middle.
    Tiered,
    /// Strip old turns to their user message and final answer.
    Monologue,
}

/// Defaults of the compaction keys.
pub mod defaults {
    /// Messages at the start of the history that tiered compaction keeps (whole turns).
    pub const KEEP_FIRST: u32 = 1;
    /// Messages at the end of the history that tiered compaction keeps (whole turns).
    pub const KEEP_RECENT: u32 = 10;
    /// Newest turns monologue compaction keeps whole.
    pub const KEEP_RECENT_TURNS: u32 = 2;
    /// Lines of a tool output tiered compaction keeps (head and tail).
    pub const TOOL_OUTPUT_MAX_LINES: u32 = 40;
}

/// Strategy names the design fixes that this version does not provide yet.
const PLANNED_STRATEGIES: [&str; 1] = ["summary"];

/// Configuration keys the design fixes that this version does not accept yet.
const PLANNED_KEYS: [&str; 3] = ["summary_budget", "context_limit", "threshold"];

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
    /// History tokens above which `drop_oldest`, `tiered` and `monologue` fire (the budget
    /// when unset; the budget still caps the view).
    pub token_threshold: Option<u32>,
    /// History messages in the view above which `drop_oldest` fires.
    pub message_threshold: Option<u32>,
    /// Live turns above which `drop_oldest` fires.
    pub turn_threshold: Option<u32>,
    /// Messages at the start of the history `tiered` keeps, rounded up to whole turns.
    pub keep_first: u32,
    /// Messages at the end of the history `tiered` keeps, rounded up to whole turns.
    pub keep_recent: u32,
    /// Newest turns `monologue` keeps whole.
    pub keep_recent_turns: u32,
    /// Tool outputs longer than this many lines are cut to head and tail by `tiered`.
    pub tool_output_max_lines: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            strategy: StrategyName::Sliding,
            history_budget: DEFAULT_HISTORY_BUDGET,
            retain_text: true,
            budget_includes_overhead: false,
            token_threshold: None,
            message_threshold: None,
            turn_threshold: None,
            keep_first: defaults::KEEP_FIRST,
            keep_recent: defaults::KEEP_RECENT,
            keep_recent_turns: defaults::KEEP_RECENT_TURNS,
            tool_output_max_lines: defaults::TOOL_OUTPUT_MAX_LINES,
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
        next.check_consistent()?;
        Ok(next)
    }

    /// Rejects combinations no conversation can satisfy.
    fn check_consistent(&self) -> Result<()> {
        if let Some(threshold) = self.message_threshold {
            let kept = u64::from(self.keep_first) + u64::from(self.keep_recent);
            if self.strategy == StrategyName::Tiered && kept > u64::from(threshold) {
                return Err(Error::invalid_arg(format!(
                    "configuration keys 'keep_first' + 'keep_recent' ({kept}) exceed 'message_threshold' ({threshold}): \
                     tiered compaction could never keep what they ask for"
                )));
            }
        }
        Ok(())
    }

    fn apply(&mut self, key: &str, value: &Value) -> Result<()> {
        match key {
            "strategy" => self.strategy = parse_strategy(value)?,
            "history_budget" => self.history_budget = parse_tokens(key, value)?,
            "retain_text" => self.retain_text = parse_bool(key, value)?,
            "budget_includes_overhead" => self.budget_includes_overhead = parse_bool(key, value)?,
            "token_threshold" => self.token_threshold = parse_threshold(key, value)?,
            "message_threshold" => self.message_threshold = parse_threshold(key, value)?,
            "turn_threshold" => self.turn_threshold = parse_threshold(key, value)?,
            "keep_first" => self.keep_first = parse_tokens(key, value)?,
            "keep_recent" => self.keep_recent = parse_tokens(key, value)?,
            "keep_recent_turns" => self.keep_recent_turns = parse_tokens(key, value)?,
            "tool_output_max_lines" => self.tool_output_max_lines = parse_positive(key, value)?,
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
        "drop_oldest" => Ok(StrategyName::DropOldest),
        "tiered" => Ok(StrategyName::Tiered),
        "monologue" => Ok(StrategyName::Monologue),
        planned if PLANNED_STRATEGIES.contains(&planned) => Err(Error::new(
            ErrorKind::Unsupported,
            format!("strategy '{planned}' is not supported by this version"),
        )),
        other => Err(Error::invalid_arg(format!(
            "configuration key 'strategy': unknown strategy '{other}' (expected sliding, drop_oldest, tiered, monologue or summary)"
        ))),
    }
}

/// A threshold: `null` (none) or a whole number from 1 to `i32::MAX`.
fn parse_threshold(key: &str, value: &Value) -> Result<Option<u32>> {
    if value.is_null() {
        return Ok(None);
    }
    parse_positive(key, value).map(Some)
}

/// A whole number from 1 to `i32::MAX`.
fn parse_positive(key: &str, value: &Value) -> Result<u32> {
    match parse_tokens(key, value)? {
        0 => Err(Error::invalid_arg(format!("configuration key '{key}' must be at least 1 (got 0)"))),
        n => Ok(n),
    }
}

/// A whole number from 0 to `i32::MAX` (the C API's token range).
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
        let settings = Settings::default()
            .with_json(
                r#"{"strategy":"tiered","token_threshold":900,"message_threshold":30,"turn_threshold":null,
                    "keep_first":2,"keep_recent":6,"keep_recent_turns":3,"tool_output_max_lines":12}"#,
            )
            .unwrap();
        assert_eq!(settings.strategy, StrategyName::Tiered);
        assert_eq!(settings.token_threshold, Some(900));
        assert_eq!(settings.message_threshold, Some(30));
        assert_eq!(settings.turn_threshold, None);
        assert_eq!((settings.keep_first, settings.keep_recent), (2, 6));
        assert_eq!((settings.keep_recent_turns, settings.tool_output_max_lines), (3, 12));
        for (name, strategy) in [("drop_oldest", StrategyName::DropOldest), ("monologue", StrategyName::Monologue)] {
            let json = format!(r#"{{"strategy":"{name}"}}"#);
            assert_eq!(Settings::default().with_json(&json).unwrap().strategy, strategy);
        }
    }

    #[test]
    fn errors_name_the_key_and_change_nothing() {
        let cases = [
            (r#"{"history_budget":-1}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"history_budget":1.5}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"history_budget":3000000000}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"retain_text":"yes"}"#, ErrorKind::InvalidArg, "retain_text"),
            (r#"{"strategy":"lru"}"#, ErrorKind::InvalidArg, "lru"),
            (r#"{"strategy":"summary"}"#, ErrorKind::Unsupported, "summary"),
            (r#"{"threshold":0.8}"#, ErrorKind::Unsupported, "threshold"),
            (r#"{"keep_first":-2}"#, ErrorKind::InvalidArg, "keep_first"),
            (r#"{"token_threshold":-1}"#, ErrorKind::InvalidArg, "token_threshold"),
            (r#"{"message_threshold":0}"#, ErrorKind::InvalidArg, "message_threshold"),
            (r#"{"turn_threshold":"3"}"#, ErrorKind::InvalidArg, "turn_threshold"),
            (r#"{"tool_output_max_lines":0}"#, ErrorKind::InvalidArg, "tool_output_max_lines"),
            (
                r#"{"strategy":"tiered","keep_first":4,"keep_recent":8,"message_threshold":10}"#,
                ErrorKind::InvalidArg,
                "keep_recent",
            ),
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
