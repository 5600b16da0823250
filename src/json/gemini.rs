//! Gemini `contents`: `role` user/model (and the legacy `function`) with `parts`: text
//! (`"thought": true` is reasoning), functionCall, functionResponse, inlineData, fileData.
//! Blocks are the parts. A tool call's id is the part's `id`; a call without one (Gemini
//! sends none before Gemini 3) is an id-less call of its function's name, and a
//! `functionResponse` without one answers the oldest unanswered call of its name in the
//! step (Gemini wants a step's responses in the order of its calls), so several calls of
//! one function, in one step or in several, stay distinct calls.

use super::UNNAMED;
use super::image::{ImageRule, base64_dimensions};
use super::parts::{
    FieldError, Part, PartsBuilder, compact, index, join, object, opaque, optional_str, required_str, retain_blocks,
};
use super::steps::Entry;
use crate::message::Kind;
use serde_json::{Map, Value, json};

/// The parts of one Gemini content.
pub fn parts(content: &Map<String, Value>) -> Result<Vec<Part>, FieldError> {
    let kind = match optional_str(content, "role", "")? {
        None | Some("user") => Kind::User,
        Some("model") => Kind::Assistant,
        Some("function") => Kind::ToolResult,
        Some(other) => {
            return Err(FieldError::new("role", format!("unknown role '{other}' (expected user, model or function)")));
        }
    };
    let mut parts = PartsBuilder::new(kind);
    let blocks = match content.get("parts") {
        Some(Value::Array(blocks)) => blocks,
        None => return Err(FieldError::new("parts", "is missing")),
        Some(_) => return Err(FieldError::new("parts", "must be an array")),
    };
    for (i, block) in blocks.iter().enumerate() {
        let path = index("parts", i);
        let part = object(block, &path)?;
        if let Some(text) = optional_str(part, "text", &path)? {
            let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
            parts.text(if thought { Kind::Thinking } else { kind }, i, text);
        } else if let Some(call) = part.get("functionCall") {
            let (id, name, args) = function(call, &join(&path, "functionCall"), "args")?;
            parts.call(Kind::ToolCall, i, (id, Some(name)), (vec![args], None));
        } else if let Some(response) = part.get("functionResponse") {
            let (id, name, body) = function(response, &join(&path, "functionResponse"), "response")?;
            parts.call(Kind::ToolResult, i, (id, Some(name)), (vec![body], None));
        } else if let Some(data) = part.get("inlineData") {
            let data_path = join(&path, "inlineData");
            let data = object(data, &data_path)?;
            let mime = optional_str(data, "mimeType", &data_path)?.unwrap_or_default();
            let payload = required_str(data, "data", &data_path)?;
            let tokens =
                if mime.starts_with("image/") { ImageRule::Gemini.tokens(base64_dimensions(payload)) } else { opaque(block) };
            parts.media(kind, i, tokens);
        } else if part.contains_key("fileData") {
            parts.media(kind, i, ImageRule::Gemini.tokens(None));
        } else {
            parts.media(kind, i, opaque(block));
        }
    }
    Ok(parts.finish())
}

/// A functionCall's or functionResponse's `id` (if it has one), name, and the compact JSON
/// of its `body_key` field.
fn function<'a>(value: &'a Value, path: &str, body_key: &str) -> Result<(Option<&'a str>, &'a str, String), FieldError> {
    let function = object(value, path)?;
    let name = required_str(function, "name", path)?;
    let id = optional_str(function, "id", path)?.filter(|id| !id.is_empty());
    Ok((id, name, function.get(body_key).map(compact).unwrap_or_default()))
}

/// Keeps only the parts `keep` accepts.
pub fn select(content: &mut Map<String, Value>, keep: &dyn Fn(usize) -> bool) {
    if retain_blocks(content, "parts", 0, keep) == 0 {
        content.insert("parts".to_owned(), Value::Array(Vec::new()));
    }
}

/// A Gemini content for an entry that has no wire JSON of its own. SYSTEM goes in the
/// request's `systemInstruction`, so it has no form here; an empty text makes no content.
///
/// A call and its result carry the tool's name (Gemini answers a call by name); a result's
/// `response` is the object it was pushed with (cut inside when tiered cut it), or
/// `{"result": text}` for a result pushed as text; the call's
/// own id, when it has one (and it is not the name, as windows saved by ctxwin 0.2 keyed
/// id-less calls), is sent as `id` on both. A call's arguments
/// that are not a JSON object are sent as `{}`.
pub fn synthesize(entry: &Entry<'_>) -> Option<Value> {
    let text = entry.text();
    let name = entry.name.unwrap_or(UNNAMED);
    let id = entry.own_call_id().filter(|&id| id != name).map(|_| entry.call_id.as_ref());
    let with_id = |mut function: Value| {
        if let Some(id) = id {
            function["id"] = json!(id);
        }
        function
    };
    Some(match entry.kind() {
        Kind::User | Kind::Assistant | Kind::Thinking if text.is_empty() => return None,
        Kind::User => json!({"role": "user", "parts": [{"text": text}]}),
        Kind::Assistant => json!({"role": "model", "parts": [{"text": text}]}),
        Kind::Thinking => json!({"role": "model", "parts": [{"text": text, "thought": true}]}),
        Kind::ToolCall => {
            let args = crate::strict_json::parse(text).ok().filter(Value::is_object).unwrap_or_else(|| json!({}));
            json!({"role": "model", "parts": [{"functionCall": with_id(json!({"name": name, "args": args}))}]})
        }
        Kind::ToolResult => {
            // A result pushed as a functionResponse keeps its response object (a truncated
            // copy is cut inside it: crate::view::text::cut_output); one pushed as text goes
            // under "result".
            let pushed = entry.item.pushed_as_json.then(|| crate::strict_json::parse(text).ok()).flatten();
            let body = pushed.filter(Value::is_object).unwrap_or_else(|| json!({"result": text}));
            let response = json!({"name": name, "response": body});
            json!({"role": "user", "parts": [{"functionResponse": with_id(response)}]})
        }
        Kind::System => return None,
    })
}

/// The request's `systemInstruction` parts.
pub fn system_parts(texts: &[&str]) -> Vec<Value> {
    texts.iter().filter(|text| !text.is_empty()).map(|text| json!({"text": text})).collect()
}

/// Merges consecutive contents of one role into one (Gemini wants user and model contents
/// to alternate): the first content's fields and every content's parts, `functionResponse`
/// parts first (the answers to the model's calls before anything else the user says).
pub fn merge(contents: Vec<Map<String, Value>>) -> Map<String, Value> {
    let mut parts = Vec::new();
    let mut merged: Option<Map<String, Value>> = None;
    for mut content in contents {
        if let Some(Value::Array(more)) = content.remove("parts") {
            parts.extend(more);
        }
        merged.get_or_insert(content);
    }
    let mut merged = merged.unwrap_or_default();
    let (mut ordered, rest): (Vec<Value>, Vec<Value>) =
        parts.into_iter().partition(|part| part.get("functionResponse").is_some());
    ordered.extend(rest);
    merged.insert("parts".to_owned(), Value::Array(ordered));
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
    fn parts_map_to_kinds() {
        let parts = parse(
            r#"{"role":"model","parts":[{"text":"plan","thought":true},{"text":"Looking."},
                {"functionCall":{"name":"ls","args":{"dir":"src"}}}]}"#,
        )
        .unwrap();
        let kinds: Vec<Kind> = parts.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [Kind::Thinking, Kind::Assistant, Kind::ToolCall]);
        assert_eq!((parts[2].call_id.as_deref(), parts[2].name.as_deref()), (None, Some("ls")));
        let results =
            parse(r#"{"role":"user","parts":[{"functionResponse":{"id":"f1","name":"ls","response":{"files":2}}}]}"#).unwrap();
        assert_eq!((results[0].kind, results[0].call_id.as_deref()), (Kind::ToolResult, Some("f1")));
        assert_eq!((results[0].name.as_deref(), results[0].text().as_str()), (Some("ls"), "{\"files\":2}"));
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"role":"assistant","parts":[]}"#, "role"),
            (r#"{"role":"user"}"#, "parts"),
            (r#"{"role":"user","parts":[{"functionCall":{"args":{}}}]}"#, "parts[0].functionCall.name"),
            (r#"{"role":"user","parts":[{"inlineData":{"mimeType":"image/png"}}]}"#, "parts[0].inlineData.data"),
            (r#"{"role":"user","parts":["text"]}"#, "parts[0]"),
        ];
        assert_error_fields(parts, &cases);
    }
}
