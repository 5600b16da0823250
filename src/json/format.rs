//! The provider formats, sets of them, and how a wire message's shape narrows the set.

use crate::tokens::{Family, Model};
use serde_json::{Map, Value};
use std::fmt;

/// A provider's message format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// OpenAI Chat Completions `messages`.
    OpenAiChat,
    /// Anthropic Messages `messages`.
    Anthropic,
    /// OpenAI Responses `input` items.
    OpenAiResponses,
    /// Gemini `contents`.
    Gemini,
}

impl Format {
    /// Every format, in order of preference when a message fits several.
    pub const ALL: [Format; 4] = [Format::OpenAiChat, Format::Anthropic, Format::OpenAiResponses, Format::Gemini];

    /// The format's name as the CLI and error messages spell it.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAiChat => "OpenAI Chat Completions",
            Format::Anthropic => "Anthropic Messages",
            Format::OpenAiResponses => "OpenAI Responses",
            Format::Gemini => "Gemini",
        }
    }

    /// The format's value for the configuration key `format`.
    pub fn key(self) -> &'static str {
        match self {
            Format::OpenAiChat => "openai_chat",
            Format::Anthropic => "anthropic",
            Format::OpenAiResponses => "openai_responses",
            Format::Gemini => "gemini",
        }
    }

    /// The format whose [`Format::key`] is `key`.
    pub fn from_key(key: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.key() == key)
    }

    /// The API of `model`'s family: Anthropic for Claude, Gemini for Gemini and Gemma, OpenAI
    /// Chat Completions for every other model.
    pub fn of_model(model: &Model) -> Format {
        match model.family() {
            Family::Anthropic => Format::Anthropic,
            Family::Google => Format::Gemini,
            _ => Format::OpenAiChat,
        }
    }

    /// True when a tool call's arguments are a JSON object on the wire (Anthropic `input`,
    /// Gemini `args`), not a string.
    pub fn needs_object_arguments(self) -> bool {
        matches!(self, Format::Anthropic | Format::Gemini)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// The formats a message (or a whole window) is still compatible with. Plain messages such as
/// `{"role":"user","content":"hi"}` fit several; one distinctive message narrows the set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FormatSet(u8);

impl FormatSet {
    /// Every format: nothing is known yet.
    pub const ANY: FormatSet = FormatSet(0b1111);

    /// The empty set: incompatible shapes.
    pub const NONE: FormatSet = FormatSet(0);

    /// The set of the given formats.
    pub fn of(formats: &[Format]) -> FormatSet {
        FormatSet(formats.iter().fold(0, |bits, f| bits | f.bit()))
    }

    /// The formats in both sets.
    pub fn and(self, other: FormatSet) -> FormatSet {
        FormatSet(self.0 & other.0)
    }

    /// True when `format` is in the set.
    pub fn contains(self, format: Format) -> bool {
        self.0 & format.bit() != 0
    }

    /// True for the empty set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The set as bits (one per format, in [`Format::ALL`] order), for saving.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The set saved as `bits`; `None` for bits no format has.
    pub fn from_bits(bits: u64) -> Option<FormatSet> {
        u8::try_from(bits).ok().filter(|&b| b & !FormatSet::ANY.0 == 0).map(FormatSet)
    }

    /// The set's only format, if it holds exactly one.
    pub fn single(self) -> Option<Format> {
        Format::ALL.into_iter().find(|&f| FormatSet::of(&[f]) == self)
    }

    /// The most preferred format in the set (`None` for the empty set).
    pub fn preferred(self) -> Option<Format> {
        Format::ALL.into_iter().find(|&f| self.contains(f))
    }
}

impl fmt::Display for FormatSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Format::ALL.into_iter().filter(|&x| self.contains(x)).map(Format::name).collect();
        if names.is_empty() { f.write_str("no known format") } else { f.write_str(&names.join(" or ")) }
    }
}

/// The formats a wire message's shape allows, from its distinctive fields and block types.
pub fn candidates(message: &Map<String, Value>) -> FormatSet {
    use Format::*;
    if message.contains_key("parts") || role(message) == Some("model") {
        return FormatSet::of(&[Gemini]);
    }
    match message.get("type").and_then(Value::as_str) {
        // Anthropic's API answers with "type":"message" objects too; decide by the content.
        Some("message") | None => {}
        Some(_) => return FormatSet::of(&[OpenAiResponses]),
    }
    if message.contains_key("tool_calls") || message.contains_key("tool_call_id") {
        return FormatSet::of(&[OpenAiChat]);
    }
    let by_role = match role(message) {
        Some("tool" | "function") => FormatSet::of(&[OpenAiChat]),
        Some("system" | "developer") => FormatSet::of(&[OpenAiChat, OpenAiResponses]),
        _ => FormatSet::of(&[OpenAiChat, Anthropic, OpenAiResponses]),
    };
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().fold(by_role, |set, block| set.and(block_formats(block))),
        Some(Value::Null) => by_role.and(FormatSet::of(&[OpenAiChat])),
        _ => by_role,
    }
}

/// The formats a content block's `type` belongs to; unknown types narrow nothing.
fn block_formats(block: &Value) -> FormatSet {
    use Format::*;
    match block.get("type").and_then(Value::as_str) {
        Some("text") => FormatSet::of(&[OpenAiChat, Anthropic]),
        Some("image_url" | "input_audio" | "file") => FormatSet::of(&[OpenAiChat]),
        Some("refusal") => FormatSet::of(&[OpenAiChat, OpenAiResponses]),
        Some(
            "image" | "document" | "tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "server_tool_use"
            | "web_search_tool_result" | "search_result",
        ) => FormatSet::of(&[Anthropic]),
        Some("input_text" | "output_text" | "input_image" | "input_file") => FormatSet::of(&[OpenAiResponses]),
        _ => FormatSet::ANY,
    }
}

fn role(message: &Map<String, Value>) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(json: &str) -> FormatSet {
        candidates(serde_json::from_str::<Value>(json).unwrap().as_object().unwrap())
    }

    #[test]
    fn distinctive_shapes_decide_the_format() {
        use Format::*;
        assert_eq!(of(r#"{"role":"user","content":"hi"}"#), FormatSet::of(&[OpenAiChat, Anthropic, OpenAiResponses]));
        assert_eq!(of(r#"{"role":"assistant","content":null,"tool_calls":[]}"#), FormatSet::of(&[OpenAiChat]));
        assert_eq!(of(r#"{"role":"tool","tool_call_id":"a","content":"x"}"#), FormatSet::of(&[OpenAiChat]));
        assert_eq!(of(r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}"#), FormatSet::of(&[Anthropic]));
        assert_eq!(of(r#"{"type":"function_call","call_id":"a"}"#), FormatSet::of(&[OpenAiResponses]));
        assert_eq!(of(r#"{"role":"user","content":[{"type":"input_text","text":"x"}]}"#), FormatSet::of(&[OpenAiResponses]));
        assert_eq!(of(r#"{"role":"model","parts":[]}"#), FormatSet::of(&[Gemini]));
        assert_eq!(of(r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}"#), FormatSet::of(&[OpenAiChat]));
        assert!(of(r#"{"role":"user","content":[{"type":"image_url"},{"type":"tool_use"}]}"#).is_empty());
    }
}
