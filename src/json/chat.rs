//! OpenAI Chat Completions messages: `role` system/developer/user/assistant/tool (and the
//! legacy `function`), `content` as a string or an array of parts, assistant `tool_calls`.
//!
//! Blocks are numbered content parts first (a string content is block 0), then tool calls.

use super::UNNAMED;
use super::image::{ImageRule, base64_dimensions};
use super::parts::{
    FieldError, Part, PartsBuilder, block_count, index, join, object, opaque, optional_array, optional_str, required_str,
    retain_blocks,
};
use super::steps::Entry;
use crate::message::Kind;
use serde_json::{Map, Value, json};

/// The parts of one Chat Completions message.
pub fn parts(message: &Map<String, Value>) -> Result<Vec<Part>, FieldError> {
    let kind = match required_str(message, "role", "")? {
        "system" | "developer" => Kind::System,
        "user" => Kind::User,
        "assistant" => Kind::Assistant,
        "tool" | "function" => Kind::ToolResult,
        other => {
            return Err(FieldError::new(
                "role",
                format!("unknown role '{other}' (expected system, developer, user, assistant, tool or function)"),
            ));
        }
    };
    // OpenAI refuses a message without content, but for an assistant message that calls tools.
    let calls = message.get("tool_calls").and_then(Value::as_array).is_some_and(|calls| !calls.is_empty())
        || message.contains_key("function_call");
    if message.get("content").is_none_or(Value::is_null) && !(kind == Kind::Assistant && calls) {
        let problem =
            if kind == Kind::Assistant { "is missing (needed unless the message has tool_calls)" } else { "is missing" };
        return Err(FieldError::new("content", problem));
    }
    let mut parts = PartsBuilder::new(kind);
    if kind == Kind::ToolResult {
        // The legacy role `function` answers by name.
        let name = optional_str(message, "name", "")?;
        let call_id = match optional_str(message, "tool_call_id", "")? {
            Some(id) => Some(id),
            None => name,
        };
        let mut result = PartsBuilder::new(kind);
        content(message, kind, &mut result)?;
        parts.call(kind, 0, (call_id, name), result.flatten()).blocks = 0..block_count(message, "content").max(1);
        return Ok(parts.finish());
    }
    content(message, kind, &mut parts)?;
    let first_call = block_count(message, "content");
    for (i, call) in optional_array(message, "tool_calls", "")?.iter().enumerate() {
        let path = index("tool_calls", i);
        let call = object(call, &path)?;
        let id = required_str(call, "id", &path)?;
        let function_path = join(&path, "function");
        let function =
            object(call.get("function").ok_or_else(|| FieldError::new(&function_path, "is missing"))?, &function_path)?;
        let name = required_str(function, "name", &function_path)?;
        let arguments = optional_str(function, "arguments", &function_path)?.unwrap_or_default();
        parts.call(Kind::ToolCall, first_call + i, (Some(id), Some(name)), (vec![arguments.to_owned()], None));
    }
    Ok(parts.finish())
}

/// Adds the blocks of `content` (a string or an array of parts) as `kind`.
fn content(message: &Map<String, Value>, kind: Kind, parts: &mut PartsBuilder) -> Result<(), FieldError> {
    match message.get("content") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(text)) => {
            parts.text(kind, 0, text);
            Ok(())
        }
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                let path = index("content", i);
                let block = object(block, &path)?;
                match required_str(block, "type", &path)? {
                    "text" => parts.text(kind, i, required_str(block, "text", &path)?),
                    "refusal" => parts.text(kind, i, required_str(block, "refusal", &path)?),
                    "image_url" => {
                        let image_path = join(&path, "image_url");
                        let image = object(
                            block.get("image_url").ok_or_else(|| FieldError::new(&image_path, "is missing"))?,
                            &image_path,
                        )?;
                        let url = required_str(image, "url", &image_path)?;
                        let low_detail = optional_str(image, "detail", &image_path)? == Some("low");
                        parts.media(kind, i, ImageRule::OpenAi { low_detail }.tokens(base64_dimensions(url)));
                    }
                    _ => parts.media(kind, i, opaque(&Value::Object(block.clone()))),
                }
            }
            Ok(())
        }
        Some(_) => Err(FieldError::new("content", "must be a string, an array of parts or null")),
    }
}

/// Keeps only the blocks `keep` accepts; an assistant message left without content gets
/// `"content": null`, as the API expects next to tool calls.
pub fn select(message: &mut Map<String, Value>, keep: &dyn Fn(usize) -> bool) {
    let first_call = block_count(message, "content");
    if retain_blocks(message, "content", 0, keep) == 0 {
        message.insert("content".to_owned(), Value::Null);
    }
    retain_blocks(message, "tool_calls", first_call, keep);
}

/// A Chat message for an entry that has no wire JSON of its own. THINKING has no Chat
/// Completions form, and an empty text makes no message.
pub fn synthesize(entry: &Entry<'_>) -> Option<Value> {
    let text = entry.text();
    Some(match entry.kind() {
        Kind::System | Kind::User | Kind::Assistant if text.is_empty() => return None,
        Kind::System => json!({"role": "system", "content": text}),
        Kind::User => json!({"role": "user", "content": text}),
        Kind::Assistant => json!({"role": "assistant", "content": text}),
        Kind::ToolCall => json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": entry.call_id, "type": "function", "function": {"name": entry.name.unwrap_or(UNNAMED), "arguments": text}}
        ]}),
        Kind::ToolResult => json!({"role": "tool", "tool_call_id": entry.call_id, "content": text}),
        Kind::Thinking => return None,
    })
}

/// Merges the messages of one assistant step into one: the first message's fields, every
/// message's content (one string stays a string; several become text parts) and every
/// message's tool calls.
pub fn merge(messages: Vec<Map<String, Value>>) -> Map<String, Value> {
    let mut contents = Vec::new();
    let mut calls = Vec::new();
    let mut merged: Option<Map<String, Value>> = None;
    for mut message in messages {
        match message.remove("content") {
            Some(Value::Array(parts)) => contents.extend(parts),
            Some(Value::String(text)) => contents.push(json!({"type": "text", "text": text})),
            _ => {}
        }
        if let Some(Value::Array(more)) = message.remove("tool_calls") {
            calls.extend(more);
        }
        merged.get_or_insert(message);
    }
    let mut merged = merged.unwrap_or_default();
    let content = match contents.as_slice() {
        [] => Value::Null,
        [only] if only.get("type").and_then(Value::as_str) == Some("text") => only["text"].clone(),
        _ => Value::Array(contents),
    };
    merged.insert("content".to_owned(), content);
    if !calls.is_empty() {
        merged.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parts::testing::assert_error_fields;

    fn parse(json: &str) -> Result<Vec<Part>, FieldError> {
        crate::json::parts::testing::parse(parts, json)
    }

    #[test]
    fn assistant_text_and_tool_calls_become_one_part_each() {
        let parts = parse(
            r#"{"role":"assistant","content":"Let me look.","tool_calls":[
                {"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"dir\":\"src\"}"}},
                {"id":"c2","type":"function","function":{"name":"cat","arguments":"{}"}}]}"#,
        )
        .unwrap();
        let kinds: Vec<Kind> = parts.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [Kind::Assistant, Kind::ToolCall, Kind::ToolCall]);
        assert_eq!((parts[1].name.as_deref(), parts[1].text().as_str()), (Some("ls"), "{\"dir\":\"src\"}"));
        assert_eq!(parts[2].call_id.as_deref(), Some("c2"));
        assert_eq!((parts[0].blocks.clone(), parts[2].blocks.clone()), (0..1, 2..3));
    }

    #[test]
    fn user_parts_merge_into_one_message_with_image_tokens() {
        let parts = parse(
            r#"{"role":"user","content":[{"type":"text","text":"what is this"},
                {"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}},{"type":"text","text":"?"}]}"#,
        )
        .unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].text(), "what is this\n?");
        assert_eq!(parts[0].media, Some(crate::tokens::Count::exact(85)));
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"role":"robot","content":"x"}"#, "role"),
            (r#"{"content":"x"}"#, "role"),
            (r#"{"role":"user","content":[{"type":"text"}]}"#, "content[0].text"),
            (r#"{"role":"user","content":5}"#, "content"),
            (r#"{"role":"user"}"#, "content"),
            (r#"{"role":"system","content":null}"#, "content"),
            (r#"{"role":"tool","tool_call_id":"c1"}"#, "content"),
            (r#"{"role":"assistant","content":null}"#, "content"),
            (r#"{"role":"assistant","content":null,"tool_calls":[]}"#, "content"),
            (r#"{"role":"assistant","tool_calls":[{"id":"a","function":{"arguments":"{}"}}]}"#, "tool_calls[0].function.name"),
            (r#"{"role":"assistant","tool_calls":[{"function":{"name":"x"}}]}"#, "tool_calls[0].id"),
        ];
        assert_error_fields(parts, &cases);
    }
}
