//! Anthropic Messages: `role` user/assistant, `content` as a string or an array of blocks
//! (text, image, document, tool_use, tool_result, thinking, redacted_thinking, server tool
//! blocks, compaction). Blocks are the content array's elements (a string content is
//! block 0). Server tool blocks (`server_tool_use`, `web_search_tool_result`, ...) are
//! content of their assistant message (counted as opaque data), so a message holding them
//! beside a client `tool_use` renders as the one message the API returned.
//!
//! A `compaction` block (`{"type":"compaction","content":"<summary>"}`, from the compaction
//! context management) means Anthropic drops every block before it: it becomes a USER
//! message of its own (it starts a turn) flagged as a compaction, and the window archives
//! the turns before it.
//!
//! A user message's tool_result blocks become TOOL_RESULT messages and its text and images a
//! USER message, which starts a new turn: the results close the previous turn.

use super::UNNAMED;
use super::image::{ImageRule, base64_dimensions};
use super::parts::{
    FieldError, Part, PartsBuilder, compact, index, join, object, opaque, optional_str, required_str, retain_blocks,
};
use super::steps::Entry;
use crate::message::{Kind, Message};
use serde_json::{Map, Value, json};

/// The parts of one Anthropic message.
pub fn parts(message: &Map<String, Value>) -> Result<Vec<Part>, FieldError> {
    let kind = match required_str(message, "role", "")? {
        "user" => Kind::User,
        "assistant" => Kind::Assistant,
        other => {
            return Err(FieldError::new("role", format!("unknown role '{other}' (expected user or assistant)")));
        }
    };
    let mut parts = PartsBuilder::new(kind);
    match message.get("content") {
        Some(Value::String(text)) => parts.text(kind, 0, text),
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                add_block(&mut parts, i, block, &index("content", i))?;
            }
        }
        None => return Err(FieldError::new("content", "is missing")),
        Some(_) => return Err(FieldError::new("content", "must be a string or an array of blocks")),
    }
    Ok(parts.finish())
}

fn add_block(parts: &mut PartsBuilder, i: usize, value: &Value, path: &str) -> Result<(), FieldError> {
    let kind = parts.kind();
    let block = object(value, path)?;
    match required_str(block, "type", path)? {
        "text" => match required_str(block, "text", path)? {
            text if blank(text) => parts.blank_text(kind, i, text),
            text => parts.text(kind, i, text),
        },
        "thinking" => parts.text(Kind::Thinking, i, required_str(block, "thinking", path)?),
        "redacted_thinking" => parts.media(Kind::Thinking, i, opaque(value)),
        "image" => parts.media(kind, i, image_tokens(block, path)?),
        "tool_use" => {
            let id = required_str(block, "id", path)?;
            let name = required_str(block, "name", path)?;
            // Required by the API in every request (the model's calls always carry it).
            let input = match block.get("input") {
                Some(input @ Value::Object(_)) => compact(input),
                Some(_) => return Err(FieldError::new(join(path, "input"), "must be an object")),
                None => return Err(FieldError::new(join(path, "input"), "is missing")),
            };
            parts.call(Kind::ToolCall, i, (Some(id), Some(name)), (vec![input], None));
        }
        "tool_result" => {
            let id = required_str(block, "tool_use_id", path)?;
            let mut result = PartsBuilder::new(Kind::ToolResult);
            match block.get("content") {
                None | Some(Value::Null) => {}
                Some(Value::String(text)) => result.text(Kind::ToolResult, 0, text),
                Some(Value::Array(inner)) => {
                    for (j, inner_block) in inner.iter().enumerate() {
                        add_block(&mut result, j, inner_block, &index(&join(path, "content"), j))?;
                    }
                }
                Some(_) => return Err(FieldError::new(join(path, "content"), "must be a string or an array of blocks")),
            }
            parts.call(Kind::ToolResult, i, (Some(id), None), result.flatten());
        }
        // Anthropic's compaction: the provider drops every block before it. A null content
        // is a failed compaction, which the provider ignores: carried as opaque content.
        "compaction" => match block.get("content") {
            Some(Value::String(summary)) if !summary.is_empty() => {
                let encrypted = block.get("encrypted_content").filter(|value| !value.is_null()).map(opaque);
                parts.compaction(i, Some(summary), encrypted);
            }
            None | Some(Value::Null) => parts.media(kind, i, opaque(value)),
            Some(_) => {
                return Err(FieldError::new(
                    join(path, "content"),
                    "must be a non-empty string (the summary) or null (a failed compaction)",
                ));
            }
        },
        // A server tool's use and result (`server_tool_use`, `web_search_tool_result`,
        // `mcp_tool_use`, ...) are content of the assistant message Anthropic ran them in, not
        // calls the agent answers: they stay in that message, beside its thinking, text and
        // client calls, as the API returned them.
        _ => parts.media(kind, i, opaque(value)),
    }
    Ok(())
}

/// An image block's tokens: width * height / 750 when the base64 header gives the size.
fn image_tokens(block: &Map<String, Value>, path: &str) -> Result<crate::tokens::Count, FieldError> {
    let source_path = join(path, "source");
    let source = object(block.get("source").ok_or_else(|| FieldError::new(&source_path, "is missing"))?, &source_path)?;
    let dimensions = optional_str(source, "data", &source_path)?.and_then(base64_dimensions);
    Ok(ImageRule::Anthropic.tokens(dimensions))
}

/// Keeps only the content blocks `keep` accepts.
pub fn select(message: &mut Map<String, Value>, keep: &dyn Fn(usize) -> bool) {
    if retain_blocks(message, "content", 0, keep) == 0 {
        message.insert("content".to_owned(), Value::Array(Vec::new()));
    }
}

/// True for a text Anthropic refuses as a text block: empty or whitespace only ("text content
/// blocks must contain non-whitespace text").
fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// True for a ledger message pushed as Anthropic JSON that holds only [`blank`] text: a
/// user or assistant text part of empty or whitespace-only text blocks, no image or other
/// content. Anthropic answers with such blocks (a lone `"\n\n"` before a tool call, say) but
/// refuses them sent back, and an agent that stores the answer as it came would fail every
/// later request: renders leave it out.
pub fn says_nothing(message: &Message) -> bool {
    matches!(message.kind(), Kind::User | Kind::Assistant)
        && !message.is_compaction()
        && message.extras().is_none_or(|extras| extras.media.is_none())
        && message.text().is_some_and(blank)
}

/// An Anthropic message for an entry that has no wire JSON of its own. SYSTEM goes in the
/// request's top-level `system` field, and thinking needs its signature, so neither has a
/// form here; a [`blank`] text makes no message, and a blank tool result is sent without
/// content. A call's arguments that are not a JSON object are sent as `{}`.
pub fn synthesize(entry: &Entry<'_>) -> Option<Value> {
    let text = entry.text();
    Some(match entry.kind() {
        Kind::User | Kind::Assistant if blank(text) => return None,
        Kind::User => json!({"role": "user", "content": text}),
        Kind::Assistant => json!({"role": "assistant", "content": text}),
        Kind::ToolCall => {
            let input = crate::strict_json::parse(text).ok().filter(Value::is_object).unwrap_or_else(|| json!({}));
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": entry.call_id, "name": entry.name.unwrap_or(UNNAMED), "input": input}
            ]})
        }
        Kind::ToolResult => {
            let mut result = json!({"type": "tool_result", "tool_use_id": entry.call_id});
            if !blank(text) {
                result["content"] = json!(text);
            }
            json!({"role": "user", "content": [result]})
        }
        Kind::System | Kind::Thinking => return None,
    })
}

/// The system prompt's blocks for the request's `system` field ([`blank`] texts left out).
pub fn system_blocks(texts: &[&str]) -> Vec<Value> {
    texts.iter().filter(|text| !blank(text)).map(|text| json!({"type": "text", "text": text})).collect()
}

/// Merges consecutive messages of one role into one: the first message's fields and every
/// message's content blocks (a [`blank`] string content adds none), a user message's
/// `tool_result` blocks first (Anthropic wants
/// the answers to a step before anything else the user says).
pub fn merge(messages: Vec<Map<String, Value>>) -> Map<String, Value> {
    let mut blocks = Vec::new();
    let mut merged: Option<Map<String, Value>> = None;
    for mut message in messages {
        match message.remove("content") {
            Some(Value::Array(more)) => blocks.extend(more),
            Some(Value::String(text)) if !blank(&text) => blocks.push(json!({"type": "text", "text": text})),
            _ => {}
        }
        merged.get_or_insert(message);
    }
    let mut merged = merged.unwrap_or_default();
    let is_result = |block: &Value| block.get("type").and_then(Value::as_str) == Some("tool_result");
    let (mut ordered, rest): (Vec<Value>, Vec<Value>) = blocks.into_iter().partition(is_result);
    ordered.extend(rest);
    merged.insert("content".to_owned(), Value::Array(ordered));
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
    fn tool_results_then_text_split_into_results_and_a_user_message() {
        let parts = parse(
            r#"{"role":"user","content":[
                {"type":"tool_result","tool_use_id":"t1","content":"42 files"},
                {"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"ok"}]},
                {"type":"text","text":"Now summarise."}]}"#,
        )
        .unwrap();
        let kinds: Vec<Kind> = parts.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [Kind::ToolResult, Kind::ToolResult, Kind::User]);
        assert_eq!(parts[1].text(), "ok");
        assert_eq!(parts[1].call_id.as_deref(), Some("t2"));
        assert_eq!(parts[2].blocks, 2..3);
    }

    #[test]
    fn assistant_thinking_text_and_tool_use() {
        let parts = parse(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},
                {"type":"redacted_thinking","data":"abcd"},{"type":"text","text":"Checking."},
                {"type":"tool_use","id":"t1","name":"ls","input":{"dir":"src"}}]}"#,
        )
        .unwrap();
        let kinds: Vec<Kind> = parts.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [Kind::Thinking, Kind::Assistant, Kind::ToolCall]);
        assert_eq!(parts[0].blocks, 0..2);
        assert!(parts[0].media.is_some());
        assert_eq!((parts[2].name.as_deref(), parts[2].text().as_str()), (Some("ls"), "{\"dir\":\"src\"}"));
    }

    #[test]
    fn server_tool_blocks_are_content_of_their_message() {
        let parts = parse(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},
                {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},
                {"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
                {"type":"text","text":"Found."},{"type":"tool_use","id":"t1","name":"ls","input":{}}]}"#,
        )
        .unwrap();
        let kinds: Vec<Kind> = parts.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [Kind::Thinking, Kind::Assistant, Kind::ToolCall]);
        assert_eq!((parts[1].blocks.clone(), parts[1].media.is_some()), (1..4, true));
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"role":"system","content":"x"}"#, "role"),
            (r#"{"role":"user"}"#, "content"),
            (r#"{"role":"user","content":[{"type":"tool_result"}]}"#, "content[0].tool_use_id"),
            (r#"{"role":"user","content":[{"type":"image"}]}"#, "content[0].source"),
            (
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"text":"x"}]}]}"#,
                "content[0].content[0].type",
            ),
            // The API refuses a request whose tool_use has no object input.
            (r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls"}]}"#, "content[0].input"),
            (r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":"a"}]}"#, "content[0].input"),
        ];
        assert_error_fields(parts, &cases);
    }
}
