//! How a wire message's shape narrows the set of provider formats it may be in.

use crate::wire::{Format, FormatSet};
use serde_json::{Map, Value};

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
            "image"
            | "document"
            | "tool_use"
            | "tool_result"
            | "thinking"
            | "redacted_thinking"
            | "server_tool_use"
            | "web_search_tool_result"
            | "search_result"
            | "compaction",
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
        assert_eq!(
            of(r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}"#),
            FormatSet::of(&[OpenAiChat])
        );
        assert!(of(r#"{"role":"user","content":[{"type":"image_url"},{"type":"tool_use"}]}"#).is_empty());
    }
}
