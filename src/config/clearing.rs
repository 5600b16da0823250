//! The clearing stage's settings (`stages`, `keep_tool_results`, `clear_tool_inputs`,
//! `exclude_tools`, `clear_at_least`, `clear_low_water`, `clear_placeholder`, `supersede`):
//! which old tool results a view replaces by a short placeholder before any strategy drops
//! or summarises.

use super::Fraction;
use crate::error::{Error, Result, echo};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Newest tool results the clearing stage never clears, unless configured
/// (`keep_tool_results`). Chosen with `CTXWIN_CACHE_BENCH=policies cargo bench --bench
/// cache` (docs/strategies.md): on its sessions keeping 4 bills less and shows more of the
/// conversation than keeping 8 or 16 (a clearing then frees more, so it comes less often).
pub const DEFAULT_KEEP_TOOL_RESULTS: u32 = 4;

/// Tokens a clearing must save at least, unless configured (`clear_at_least`): a clearing
/// changes the prompt from the first result it clears on, so the provider's cached prefix is
/// lost from there, and a small saving does not pay for it.
pub const DEFAULT_CLEAR_AT_LEAST: u32 = 2_000;

/// Longest placeholder template `clear_placeholder` takes, in bytes.
pub const MAX_PLACEHOLDER_BYTES: usize = 1_024;

/// How the clearing stage treats old tool results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clearing {
    /// True when the policy's stages start with `"clear"`.
    pub enabled: bool,
    /// Newest tool results never cleared.
    pub keep_tool_results: u32,
    /// True when a cleared result's call is sent with empty arguments too.
    pub clear_tool_inputs: bool,
    /// Tools whose results are never cleared, as given.
    pub exclude_tools: Vec<Box<str>>,
    /// Tokens a clearing must save at least, or it does not happen.
    pub clear_at_least: u32,
    /// How far a clearing goes once the view is over: until the view is within this fraction
    /// of the limit (`clear_low_water`); `None`: the policy's `low_water`.
    pub low_water: Option<Fraction>,
    /// The placeholder template (`{tool}`, `{call_id}`, `{host_id}`, `{tokens}`), or `None`
    /// for the built-in text.
    pub placeholder: Option<Box<str>>,
    /// Per tool, the argument whose value identifies what a call of it read (`{"read_file":
    /// "path"}`): a result of the tool is superseded by a later answered call of the same
    /// tool with the same value of that argument.
    pub supersede: BTreeMap<Box<str>, Box<str>>,
    /// The newest steps whose thinking is sent (`keep_thinking`); older thinking is left
    /// out where the provider allows it. `None`: all is sent.
    pub keep_thinking: Option<u32>,
}

impl Default for Clearing {
    fn default() -> Clearing {
        Clearing {
            enabled: false,
            keep_tool_results: DEFAULT_KEEP_TOOL_RESULTS,
            clear_tool_inputs: false,
            exclude_tools: Vec::new(),
            clear_at_least: DEFAULT_CLEAR_AT_LEAST,
            low_water: None,
            placeholder: None,
            supersede: BTreeMap::new(),
            keep_thinking: None,
        }
    }
}

/// The keys this module reads.
pub const KEYS: [&str; 8] = [
    "keep_tool_results",
    "clear_tool_inputs",
    "exclude_tools",
    "clear_at_least",
    "clear_low_water",
    "clear_placeholder",
    "supersede",
    "keep_thinking",
];

impl Clearing {
    /// Applies the configuration key `key` (one of [`KEYS`]).
    pub fn apply(&mut self, key: &str, value: &Value) -> Result<()> {
        match key {
            "keep_tool_results" => self.keep_tool_results = whole_number(key, value)?,
            "clear_tool_inputs" => {
                self.clear_tool_inputs = value
                    .as_bool()
                    .ok_or_else(|| Error::invalid_arg(format!("configuration key '{key}' must be true or false")))?
            }
            "exclude_tools" => self.exclude_tools = tool_names(value)?,
            "clear_at_least" => self.clear_at_least = whole_number(key, value)?,
            "clear_low_water" => {
                self.low_water = match value {
                    Value::Null => None,
                    _ => Some(value.as_f64().and_then(Fraction::new).ok_or_else(|| {
                        Error::invalid_arg(format!(
                            "configuration key '{key}' must be null (the policy's low_water) or a number above 0 and \
                             at most 1 (got {})",
                            echo(&value.to_string())
                        ))
                    })?),
                }
            }
            "clear_placeholder" => self.placeholder = placeholder(value)?,
            "supersede" => self.supersede = supersede_rules(value)?,
            "keep_thinking" => {
                self.keep_thinking = value.as_null().map_or_else(|| whole_number(key, value).map(Some), |()| Ok(None))?
            }
            _ => unreachable!("Clearing::apply is called with its own keys"),
        }
        Ok(())
    }

    /// The keys as a configuration object's entries.
    pub fn to_entries(&self, into: &mut Map<String, Value>) {
        into.insert("keep_tool_results".into(), self.keep_tool_results.into());
        into.insert("clear_tool_inputs".into(), self.clear_tool_inputs.into());
        into.insert("exclude_tools".into(), self.exclude_tools.iter().map(|tool| Value::from(&**tool)).collect());
        into.insert("clear_at_least".into(), self.clear_at_least.into());
        into.insert("clear_low_water".into(), self.low_water.map_or(Value::Null, |low| low.get().into()));
        into.insert("clear_placeholder".into(), self.placeholder.as_deref().map_or(Value::Null, Value::from));
        let rules: Map<String, Value> =
            self.supersede.iter().map(|(tool, argument)| (tool.to_string(), Value::from(&**argument))).collect();
        into.insert("supersede".into(), rules.into());
        into.insert("keep_thinking".into(), self.keep_thinking.map_or(Value::Null, Value::from));
    }

    /// True when results of `tool` may be cleared.
    pub fn clears(&self, tool: Option<&str>) -> bool {
        tool.is_none_or(|tool| !self.exclude_tools.iter().any(|excluded| &**excluded == tool))
    }

    /// The argument whose value identifies what a call of `tool` read, if a `supersede` rule
    /// names one.
    pub fn superseding_argument(&self, tool: &str) -> Option<&str> {
        self.supersede.get(tool).map(|argument| &**argument)
    }
}

fn whole_number(key: &str, value: &Value) -> Result<u32> {
    value.as_u64().filter(|&n| n <= i32::MAX as u64).map(|n| n as u32).ok_or_else(|| {
        Error::invalid_arg(format!(
            "configuration key '{key}' must be a whole number from 0 to {} (got {})",
            i32::MAX,
            echo(&value.to_string())
        ))
    })
}

fn tool_names(value: &Value) -> Result<Vec<Box<str>>> {
    let refuse = || Error::invalid_arg("configuration key 'exclude_tools' must be a list of tool names (strings)");
    let Value::Array(names) = value else {
        return Err(refuse());
    };
    names.iter().map(|name| name.as_str().filter(|name| !name.is_empty()).map(Box::from).ok_or_else(refuse)).collect()
}

fn placeholder(value: &Value) -> Result<Option<Box<str>>> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) if !text.trim().is_empty() && text.len() <= MAX_PLACEHOLDER_BYTES => Ok(Some(text.as_str().into())),
        _ => Err(Error::invalid_arg(format!(
            "configuration key 'clear_placeholder' must be null (the built-in text) or a text of 1 to {MAX_PLACEHOLDER_BYTES} \
             bytes that is not blank; {{tool}}, {{call_id}}, {{host_id}} and {{tokens}} in it are filled in"
        ))),
    }
}

/// Most rules `supersede` takes.
pub const MAX_SUPERSEDE_RULES: usize = 256;

fn supersede_rules(value: &Value) -> Result<BTreeMap<Box<str>, Box<str>>> {
    let Value::Object(rules) = value else {
        return Err(Error::invalid_arg(format!(
            "configuration key 'supersede' must be an object naming, per tool, the argument that identifies what it \
             read (e.g. {{\"read_file\": \"path\"}}), not {}",
            echo(&value.to_string())
        )));
    };
    if rules.len() > MAX_SUPERSEDE_RULES {
        return Err(Error::invalid_arg(format!(
            "configuration key 'supersede' names {} tools; at most {MAX_SUPERSEDE_RULES} are taken",
            rules.len()
        )));
    }
    rules
        .iter()
        .map(|(tool, argument)| match argument.as_str() {
            Some(argument) if !argument.is_empty() && !tool.is_empty() => Ok((tool.as_str().into(), argument.into())),
            _ => Err(Error::invalid_arg(format!(
                "configuration key 'supersede': the rule for tool '{}' must name an argument (a non-empty string, \
                 e.g. \"path\"), not {}",
                echo(tool),
                echo(&argument.to_string())
            ))),
        })
        .collect()
}

/// The note that stands for a superseded result: the tool, the argument that identifies what
/// it read, and the later call (its id, and the host id where there is one) whose result
/// holds it again.
pub fn superseded_text(tool: &str, argument: &str, call_id: Option<&str>, host_id: Option<i64>) -> String {
    let call = call_id.map(|id| format!(" (call {id})")).unwrap_or_default();
    let host = host_id.map(|id| format!(", host id {id}")).unwrap_or_default();
    format!("[Superseded: {tool} was called again later with the same {argument}{call}{host}; its newer result follows.]")
}

/// The placeholder that stands for the images (and other non-text content) of an old USER
/// message, cleared: the tokens they took. The message's text is sent before it.
pub fn media_placeholder_text(tokens: u32) -> String {
    format!("[Image cleared to save context: {tokens} tokens of images or attachments of this message.]")
}

/// The placeholder that stands for a cleared result: `template` (or the built-in text) with
/// `{tool}`, `{call_id}`, `{host_id}` and `{tokens}` filled in. The built-in text names the
/// host id only where there is one.
pub fn placeholder_text(
    template: Option<&str>,
    tool: Option<&str>,
    call_id: Option<&str>,
    host_id: Option<i64>,
    tokens: u32,
) -> String {
    let tool = tool.unwrap_or("tool");
    let call_id = call_id.unwrap_or("");
    match template {
        Some(template) => template
            .replace("{tool}", tool)
            .replace("{call_id}", call_id)
            .replace("{host_id}", &host_id.map(|id| id.to_string()).unwrap_or_default())
            .replace("{tokens}", &tokens.to_string()),
        None => {
            let call = if call_id.is_empty() { String::new() } else { format!(" (call {call_id})") };
            let host = host_id.map(|id| format!(", host id {id}")).unwrap_or_default();
            format!(
                "[Old tool result cleared to save context: {tool}{call}{host}, {tokens} tokens. Call the tool again if you need it.]"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(key: &str, json: &str) -> Result<Clearing> {
        let mut clearing = Clearing::default();
        clearing.apply(key, &serde_json::from_str(json).unwrap()).map(|()| clearing)
    }

    #[test]
    fn reads_every_key() {
        assert_eq!(applied("keep_tool_results", "0").unwrap().keep_tool_results, 0);
        assert!(applied("clear_tool_inputs", "true").unwrap().clear_tool_inputs);
        let excluded = applied("exclude_tools", r#"["memory","todo"]"#).unwrap();
        assert!(!excluded.clears(Some("memory")) && excluded.clears(Some("read_file")) && excluded.clears(None));
        assert_eq!(applied("clear_at_least", "5000").unwrap().clear_at_least, 5000);
        assert_eq!(applied("clear_low_water", "0.25").unwrap().low_water, Fraction::new(0.25));
        assert_eq!(applied("clear_low_water", "null").unwrap().low_water, None);
        assert_eq!(applied("clear_placeholder", r#""gone: {tool}""#).unwrap().placeholder.as_deref(), Some("gone: {tool}"));
        assert_eq!(applied("clear_placeholder", "null").unwrap().placeholder, None);
        let rules = applied("supersede", r#"{"read_file":"path","grep":"pattern"}"#).unwrap();
        assert_eq!(rules.superseding_argument("read_file"), Some("path"));
        assert_eq!(rules.superseding_argument("grep"), Some("pattern"));
        assert_eq!(rules.superseding_argument("run"), None);
        assert!(applied("supersede", "{}").unwrap().supersede.is_empty());
        assert_eq!(applied("keep_thinking", "3").unwrap().keep_thinking, Some(3));
        assert_eq!(applied("keep_thinking", "null").unwrap().keep_thinking, None);
    }

    #[test]
    fn refusals_name_the_key() {
        for (key, json) in [
            ("keep_tool_results", "-1"),
            ("keep_tool_results", "2.5"),
            ("keep_tool_results", r#""3""#),
            ("clear_tool_inputs", "1"),
            ("exclude_tools", r#""read_file""#),
            ("exclude_tools", r#"["read_file", 3]"#),
            ("exclude_tools", r#"[""]"#),
            ("clear_at_least", "-5"),
            ("clear_low_water", "0"),
            ("clear_low_water", "1.5"),
            ("clear_low_water", r#""low""#),
            ("clear_placeholder", r#""  ""#),
            ("clear_placeholder", "7"),
            ("supersede", r#"{"read_file":""}"#),
            ("supersede", r#"{"read_file":3}"#),
            ("supersede", r#"{"read_file":null}"#),
            ("supersede", r#"{"":"path"}"#),
            ("supersede", r#"["read_file","path"]"#),
            ("supersede", r#""path""#),
            ("keep_thinking", "-1"),
            ("keep_thinking", r#""all""#),
            ("keep_thinking", "1.5"),
        ] {
            let error = applied(key, json).unwrap_err();
            assert!(error.message().contains(key), "{key} = {json}: {}", error.message());
        }
        let long = format!("\"{}\"", "x".repeat(MAX_PLACEHOLDER_BYTES + 1));
        assert!(applied("clear_placeholder", &long).is_err());
    }

    #[test]
    fn placeholders_name_the_tool_the_call_and_the_tokens() {
        let text = placeholder_text(None, Some("read_file"), Some("call_7"), None, 1234);
        assert!(text.contains("read_file") && text.contains("call_7") && text.contains("1234"), "{text}");
        assert!(!text.contains("host id"), "{text}");
        assert!(placeholder_text(None, Some("grep"), None, Some(42), 9).contains("host id 42"));
        assert_eq!(
            placeholder_text(Some("{tool}/{call_id}/{host_id}/{tokens} (recall it)"), Some("ls"), Some("c1"), Some(5), 77),
            "ls/c1/5/77 (recall it)"
        );
        assert_eq!(placeholder_text(Some("{host_id}|"), None, None, None, 0), "|");
    }
}
