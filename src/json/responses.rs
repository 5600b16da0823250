//! OpenAI Responses input items: messages (`role` with string or typed content), and the
//! `function_call`, `function_call_output`, `reasoning` items (plus the other tool call and
//! output items, counted as opaque data). Every item is one ledger message, block 0.
//!
//! A `compaction` item (`{"type":"compaction","id":...,"encrypted_content":...}`) stands for
//! every item before it: it becomes a USER message (it starts a turn) flagged as a
//! compaction, counted as opaque data, and the window archives the turns before it.

use super::UNNAMED;
use super::image::{ImageRule, base64_dimensions};
use super::parts::{FieldError, Part, PartsBuilder, index, object, opaque, optional_array, optional_str, required_str};
use super::steps::Entry;
use crate::message::Kind;
use crate::pairing::CallForm;
use crate::tokens::Count;
use crate::view::text::CANCELLED_RESULT;
use serde_json::{Map, Value, json};

/// The parts of one Responses input item.
pub fn parts(item: &Map<String, Value>) -> Result<Vec<Part>, FieldError> {
    let item_type = optional_str(item, "type", "")?.unwrap_or("message");
    let mut parts = PartsBuilder::new(Kind::User);
    match item_type {
        "message" => {
            let kind = match required_str(item, "role", "")? {
                "user" => Kind::User,
                "assistant" => Kind::Assistant,
                "system" | "developer" => Kind::System,
                other => {
                    return Err(FieldError::new(
                        "role",
                        format!("unknown role '{other}' (expected user, assistant, system or developer)"),
                    ));
                }
            };
            parts = PartsBuilder::new(kind);
            content(item, "content", kind, &mut parts)?;
        }
        "function_call" | "custom_tool_call" => {
            let call_id = required_str(item, "call_id", "")?;
            let name = required_str(item, "name", "")?;
            let arguments_key = if item_type == "function_call" { "arguments" } else { "input" };
            let arguments = optional_str(item, arguments_key, "")?.unwrap_or_default();
            parts.call(Kind::ToolCall, 0, (Some(call_id), Some(name)), (vec![arguments.to_owned()], None));
        }
        "function_call_output" | "custom_tool_call_output" => {
            let call_id = required_str(item, "call_id", "")?;
            let mut result = PartsBuilder::new(Kind::ToolResult);
            content(item, "output", Kind::ToolResult, &mut result)?;
            parts.call(Kind::ToolResult, 0, (Some(call_id), None), result.flatten());
        }
        // A compaction item (from `/responses/compact` or server-side compaction) carries the
        // conversation before it, encrypted: a USER message of its own, flagged.
        "compaction" => {
            let encrypted = required_str(item, "encrypted_content", "")?;
            if encrypted.is_empty() {
                return Err(FieldError::new("encrypted_content", "must not be empty"));
            }
            parts.compaction(0, None, Some(opaque(&Value::String(encrypted.to_owned()))));
        }
        "reasoning" => {
            for (i, summary) in optional_array(item, "summary", "")?.iter().enumerate() {
                let path = index("summary", i);
                parts.text(Kind::Thinking, 0, required_str(object(summary, &path)?, "text", &path)?);
            }
            if let Some(encrypted) = item.get("encrypted_content").filter(|v| !v.is_null()) {
                parts.media(Kind::Thinking, 0, encrypted_reasoning(encrypted));
            }
            if has_no_reasoning(item) {
                parts.text(Kind::Thinking, 0, "");
            }
        }
        output if output.ends_with("_output") => {
            let call_id = optional_str(item, "call_id", "")?;
            parts.call(Kind::ToolResult, 0, (call_id, None), (Vec::new(), Some(opaque(&Value::Object(item.clone())))));
        }
        call if call.ends_with("_call") => {
            let call_id = match optional_str(item, "call_id", "")? {
                Some(id) => Some(id),
                None => optional_str(item, "id", "")?,
            };
            parts.call(Kind::ToolCall, 0, (call_id, None), (Vec::new(), Some(opaque(&Value::Object(item.clone())))));
        }
        other => {
            return Err(FieldError::new(
                "type",
                format!(
                    "unsupported item type '{other}' (expected message, function_call, function_call_output, reasoning, compaction or another *_call / *_output item)"
                ),
            ));
        }
    }
    Ok(parts.finish())
}

/// True when a reasoning item carries neither summary text nor encrypted content.
fn has_no_reasoning(item: &Map<String, Value>) -> bool {
    let no_summary = item.get("summary").and_then(Value::as_array).is_none_or(Vec::is_empty);
    no_summary && item.get("encrypted_content").is_none_or(Value::is_null)
}

/// Adds the field `key` (a string or an array of typed content) as `kind`, all in block 0.
fn content(item: &Map<String, Value>, key: &str, kind: Kind, parts: &mut PartsBuilder) -> Result<(), FieldError> {
    match item.get(key) {
        Some(Value::String(text)) => parts.text(kind, 0, text),
        Some(Value::Array(blocks)) => {
            for (i, value) in blocks.iter().enumerate() {
                let path = index(key, i);
                let block = object(value, &path)?;
                match required_str(block, "type", &path)? {
                    "input_text" | "output_text" | "text" => parts.text(kind, 0, required_str(block, "text", &path)?),
                    "refusal" => parts.text(kind, 0, required_str(block, "refusal", &path)?),
                    "input_image" => {
                        let low_detail = optional_str(block, "detail", &path)? == Some("low");
                        let url = optional_str(block, "image_url", &path)?;
                        parts.media(kind, 0, ImageRule::OpenAi { low_detail }.tokens(url.and_then(base64_dimensions)));
                    }
                    _ => parts.media(kind, 0, opaque(value)),
                }
            }
        }
        None => return Err(FieldError::new(key, "is missing")),
        Some(_) => return Err(FieldError::new(key, "must be a string or an array of content")),
    }
    Ok(())
}

/// A Responses item for an entry that has no wire JSON of its own. Reasoning items need
/// their ids and encrypted content, so THINKING has no form here; an empty text makes no
/// item.
pub fn synthesize(entry: &Entry<'_>) -> Option<Value> {
    let text = entry.text();
    Some(match entry.kind() {
        Kind::System | Kind::User | Kind::Assistant if text.is_empty() => return None,
        Kind::System => json!({"role": "system", "content": text}),
        Kind::User => json!({"role": "user", "content": text}),
        Kind::Assistant => json!({"role": "assistant", "content": text}),
        Kind::ToolCall => {
            json!({"type": "function_call", "call_id": entry.call_id, "name": entry.name.unwrap_or(UNNAMED), "arguments": text})
        }
        Kind::ToolResult => match entry.answers {
            Some(CallForm::Custom) => json!({"type": "custom_tool_call_output", "call_id": entry.call_id, "output": text}),
            Some(CallForm::ApplyPatch) => {
                let status = if text == CANCELLED_RESULT { "failed" } else { "completed" };
                json!({"type": "apply_patch_call_output", "call_id": entry.call_id, "status": status, "output": text})
            }
            _ => json!({"type": "function_call_output", "call_id": entry.call_id, "output": text}),
        },
        Kind::Thinking => return None,
    })
}

/// Bytes of an `encrypted_content` that carry no reasoning (the envelope around it): what a
/// reasoning item of no reasoning tokens holds.
const REASONING_ENVELOPE_BYTES: usize = 1200;

/// Bytes of `encrypted_content` per reasoning token beyond the envelope, in hundredths.
const REASONING_BYTES_PER_TOKEN_X100: usize = 580;

/// The tokens of a reasoning item's `encrypted_content` (base64 of the encrypted reasoning):
/// the reasoning tokens it holds, estimated from its length. Measured on a public Codex CLI
/// rollout (147 responses holding reasoning, each with the provider's
/// `reasoning_output_tokens`): the text is about 1,200 bytes plus 5.8 bytes per reasoning
/// token, where a plain four-bytes-a-token estimate counted 1.45 times the tokens and 300
/// for an item of none.
fn encrypted_reasoning(encrypted: &Value) -> Count {
    let bytes = encrypted.as_str().map_or_else(|| encrypted.to_string().len(), str::len);
    let tokens = bytes.saturating_sub(REASONING_ENVELOPE_BYTES) * 100 / REASONING_BYTES_PER_TOKEN_X100;
    Count::estimate(u32::try_from(tokens).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parts::testing::assert_error_fields;

    fn parse(json: &str) -> Result<Vec<Part>, FieldError> {
        crate::json::parts::testing::parse(parts, json)
    }

    #[test]
    fn items_map_to_kinds() {
        let cases = [
            (r#"{"role":"developer","content":"be brief"}"#, Kind::System, "be brief"),
            (r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#, Kind::User, "hi"),
            (r#"{"type":"function_call","call_id":"c1","name":"ls","arguments":"{}"}"#, Kind::ToolCall, "{}"),
            (r#"{"type":"function_call_output","call_id":"c1","output":"a b"}"#, Kind::ToolResult, "a b"),
            (r#"{"type":"reasoning","id":"r1","summary":[{"type":"summary_text","text":"plan"}]}"#, Kind::Thinking, "plan"),
        ];
        for (json, kind, text) in cases {
            let parts = parse(json).unwrap();
            assert_eq!(parts.len(), 1, "{json}");
            assert_eq!((parts[0].kind, parts[0].text().as_str()), (kind, text), "{json}");
        }
        assert!(parse(r#"{"type":"web_search_call","id":"w1","status":"completed"}"#).unwrap()[0].media.is_some());
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"type":"function_call","name":"x"}"#, "call_id"),
            (r#"{"type":"function_call_output","call_id":"c"}"#, "output"),
            (r#"{"type":"item_reference","id":"x"}"#, "type"),
            (r#"{"role":"user","content":[{"type":"input_text"}]}"#, "content[0].text"),
            (r#"{"role":"tool","content":"x"}"#, "role"),
        ];
        assert_error_fields(parts, &cases);
    }

    #[test]
    fn encrypted_reasoning_counts_the_reasoning_tokens_it_carries() {
        for (bytes, tokens) in [(0, 0), (900, 0), (1200, 0), (1200 + 580, 100), (1200 + 5800 * 4, 4000)] {
            let item = json!({"type": "reasoning", "summary": [], "encrypted_content": "A".repeat(bytes)}).to_string();
            let media: u32 = parse(&item).unwrap().iter().map(|part| part.media.map_or(0, |count| count.tokens)).sum();
            assert_eq!(media, tokens, "{bytes} bytes");
        }
    }
}
