//! Window settings and the JSON object `ctxwin_window_configure` takes.

use crate::error::{Error, ErrorKind, Result};
use crate::limits::MessageLimit;
use serde_json::Value;

/// The default history budget: the source design's `DEFAULT_HISTORY_TOKEN_LIMIT`.
pub const DEFAULT_HISTORY_BUDGET: u32 = 100_000;

/// The default budget of the summary slot, in tokens.
pub const DEFAULT_SUMMARY_BUDGET: u32 = 2_000;

/// The default trigger of the `summary` strategy: this fraction of the model's context limit.
pub const DEFAULT_THRESHOLD: Fraction = Fraction(0.85);

/// The compaction strategy a window enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyName {
    /// Drop the oldest whole turns while live history exceeds the budget; the pruned turns
    /// feed the summary slot.
    Sliding,
    /// Archive compaction: at `threshold` of the context limit, ask the agent's LLM for a
    /// summary of every turn but the newest; the summary replaces them.
    Summary,
}

impl StrategyName {
    /// The name `configure` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyName::Sliding => "sliding",
            StrategyName::Summary => "summary",
        }
    }
}

/// Strategy names the design fixes that this version does not provide yet.
const PLANNED_STRATEGIES: [&str; 3] = ["drop_oldest", "tiered", "monologue"];

/// Configuration keys the design fixes that this version does not accept yet.
const PLANNED_KEYS: [&str; 7] = [
    "token_threshold",
    "message_threshold",
    "turn_threshold",
    "keep_first",
    "keep_recent",
    "keep_recent_turns",
    "tool_output_max_lines",
];

/// A fraction in (0, 1]: never NaN, so it compares like an integer.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Fraction(f64);

// NaN is excluded on construction, so equality is reflexive.
impl Eq for Fraction {}

impl Fraction {
    /// `value` if it lies in (0, 1].
    pub fn new(value: f64) -> Option<Fraction> {
        (value > 0.0 && value <= 1.0).then_some(Fraction(value))
    }

    /// The fraction as a number.
    pub fn get(self) -> f64 {
        self.0
    }

    /// This fraction of `amount`, rounded up: the token count at which a trigger fires.
    pub fn of(self, amount: u32) -> u64 {
        (self.0 * f64::from(amount)).ceil() as u64
    }
}

/// A window's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The strategy enforced at `end_turn`.
    pub strategy: StrategyName,
    /// Tokens live history may use (or the whole prompt, see `budget_includes_overhead`).
    pub history_budget: u32,
    /// Keep message texts (true) or counts only (false).
    pub retain_text: bool,
    /// When true the budget caps overhead + pinned messages + summary + history, not
    /// history alone.
    pub budget_includes_overhead: bool,
    /// Tokens the summary slot may use: a longer summary is refused.
    pub summary_budget: u32,
    /// The `summary` strategy's trigger, as a fraction of the context limit.
    pub threshold: Fraction,
    /// The model's context window, overriding the model table (which may not know it).
    pub context_limit: Option<u32>,
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
            summary_budget: DEFAULT_SUMMARY_BUDGET,
            threshold: DEFAULT_THRESHOLD,
            context_limit: None,
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
        self.with_value(&value)
    }

    /// These settings with the keys of the JSON object `value` applied, as
    /// [`Settings::with_json`].
    pub fn with_value(&self, value: &Value) -> Result<Settings> {
        let Value::Object(object) = value else {
            return Err(Error::invalid_arg("configuration must be a JSON object"));
        };
        let mut next = self.clone();
        for (key, value) in object {
            next.apply(key, value)?;
        }
        Ok(next)
    }

    /// Every setting as a configuration object: `with_value` on the defaults gives these
    /// settings back.
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "strategy": self.strategy.as_str(),
            "history_budget": self.history_budget,
            "retain_text": self.retain_text,
            "budget_includes_overhead": self.budget_includes_overhead,
            "summary_budget": self.summary_budget,
            "threshold": self.threshold.get(),
            "context_limit": self.context_limit.unwrap_or(0),
            "max_message_bytes": self.max_message_bytes.as_bytes(),
        })
    }

    fn apply(&mut self, key: &str, value: &Value) -> Result<()> {
        match key {
            "strategy" => self.strategy = parse_strategy(value)?,
            "history_budget" => self.history_budget = parse_tokens(key, value)?,
            "retain_text" => self.retain_text = parse_bool(key, value)?,
            "budget_includes_overhead" => self.budget_includes_overhead = parse_bool(key, value)?,
            "summary_budget" => self.summary_budget = parse_tokens(key, value)?,
            "threshold" => self.threshold = parse_fraction(key, value)?,
            "context_limit" => self.context_limit = Some(parse_tokens(key, value)?).filter(|&limit| limit > 0),
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
        "summary" => Ok(StrategyName::Summary),
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

fn parse_fraction(key: &str, value: &Value) -> Result<Fraction> {
    value
        .as_f64()
        .and_then(Fraction::new)
        .ok_or_else(|| Error::invalid_arg(format!("configuration key '{key}' must be a number above 0 and at most 1")))
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
        let summary = Settings::default()
            .with_json(r#"{"strategy":"summary","summary_budget":300,"threshold":0.5,"context_limit":8000}"#)
            .unwrap();
        assert_eq!(summary.strategy, StrategyName::Summary);
        assert_eq!(summary.summary_budget, 300);
        assert_eq!(summary.threshold.get(), 0.5);
        assert_eq!(summary.context_limit, Some(8000));
        let cleared = summary.with_json(r#"{"context_limit":0}"#).unwrap();
        assert_eq!(cleared.context_limit, None, "0 means: use the model table");
    }

    #[test]
    fn to_value_round_trips_through_with_value() {
        for json in [
            r#"{}"#,
            r#"{"strategy":"summary","summary_budget":1,"threshold":0.123456789,"context_limit":9}"#,
            r#"{"retain_text":false,"budget_includes_overhead":true,"history_budget":0,"threshold":1}"#,
            r#"{"max_message_bytes":0}"#,
            r#"{"max_message_bytes":4096}"#,
        ] {
            let settings = Settings::default().with_json(json).unwrap();
            assert_eq!(Settings::default().with_value(&settings.to_value()).unwrap(), settings, "{json}");
        }
    }

    #[test]
    fn message_limit_key() {
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
            (r#"{"threshold":0}"#, ErrorKind::InvalidArg, "threshold"),
            (r#"{"threshold":1.5}"#, ErrorKind::InvalidArg, "threshold"),
            (r#"{"threshold":"high"}"#, ErrorKind::InvalidArg, "threshold"),
            (r#"{"summary_budget":-3}"#, ErrorKind::InvalidArg, "summary_budget"),
            (r#"{"context_limit":true}"#, ErrorKind::InvalidArg, "context_limit"),
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
