//! Reading a transcript file, as the `ctxwin` program does: a JSON array of messages, a
//! request body that holds one, or JSON Lines. Errors say which line of the file is wrong.
//! In the library (not the program) so that tests and the fuzzer reach it without a process.

use crate::error::{Error, ErrorKind, Result};
use crate::json;
use crate::message::Kind;
use crate::window::Window;
use serde_json::Value;
use serde_json::value::RawValue;

/// What a transcript holds besides its messages.
#[derive(Debug, Default)]
pub struct Extras {
    /// The request's system prompt (Anthropic `system`, Gemini `systemInstruction`,
    /// Responses `instructions`).
    pub system: String,
    /// The request's tool definitions, as JSON.
    pub tools: Option<String>,
}

/// What to do with a request body's system prompt and tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyExtras {
    /// Return them ([`Extras`]), as the `ctxwin` program does.
    Return,
    /// Put them in the window: the system prompt becomes a pinned SYSTEM message before the
    /// conversation and the tools' count the tools overhead, as `push_json` does.
    Apply,
}

/// Pushes the messages of `text` (the contents of `name`) into `window`, and returns the
/// request's system prompt and tool definitions when `text` is a request body. All or
/// nothing: on an error nothing is pushed, and the message starts with `name` and names the
/// file's line.
pub fn load(window: &mut Window, name: &str, text: &str) -> std::result::Result<Extras, String> {
    read(window, text, BodyExtras::Return).map_err(|e| format!("{name}: {e}"))
}

/// Pushes the messages of `text` into `window`: a JSON array of messages, one message, a
/// request body that holds an array under `messages`, `input` or `contents`, or JSON Lines
/// (one message per line, blank lines skipped). All or nothing; errors keep their kind and
/// name the line. A body's system prompt and tools are returned or applied per `extras`.
pub fn read(window: &mut Window, text: &str, extras: BodyExtras) -> Result<Extras> {
    match serde_json::from_str::<&RawValue>(text) {
        Ok(raw) if raw.get().starts_with('[') => {
            json::push_messages(window, text)?;
            Ok(Extras::default())
        }
        Ok(raw) if is_request_body(raw) => {
            let mut trial = window.clone();
            let found = request_body(&mut trial, text, extras)?;
            *window = trial;
            Ok(found)
        }
        Ok(_) => {
            json::push_messages(window, text)?;
            Ok(Extras::default())
        }
        Err(e) if e.to_string().starts_with("trailing characters") => json_lines(window, text),
        Err(e) => Err(Error::new(ErrorKind::Parse, format!("invalid JSON: {e}"))),
    }
}

const MESSAGE_KEYS: [&str; 3] = ["messages", "input", "contents"];

fn is_request_body(raw: &RawValue) -> bool {
    crate::strict_json::members(raw.get())
        .is_ok_and(|body| body.iter().any(|(key, raw)| MESSAGE_KEYS.contains(&key.as_str()) && raw.get().starts_with('[')))
}

/// A request body: its system prompt and tools (applied first, or returned), then its
/// message array, pushed with everything else blanked out so the library's line numbers are
/// the file's.
fn request_body(window: &mut Window, text: &str, extras: BodyExtras) -> Result<Extras> {
    let body: std::collections::HashMap<String, &RawValue> = crate::strict_json::members(text)
        .map_err(|e| Error::new(ErrorKind::Parse, format!("invalid JSON: {e}")))?
        .into_iter()
        .collect();
    // The first key holding an array, as is_request_body found (`{"messages": 1, "input": [...]}`
    // is a Responses body).
    let messages = MESSAGE_KEYS
        .iter()
        .find_map(|key| body.get(*key).filter(|raw| raw.get().starts_with('[')))
        .ok_or_else(|| Error::new(ErrorKind::Parse, "invalid JSON: no message array"))?;
    let value = |key: &str| body.get(key).and_then(|raw| crate::strict_json::parse(raw.get()).ok());
    let found = Extras {
        system: ["system", "systemInstruction", "system_instruction", "instructions"]
            .iter()
            .filter_map(|key| value(key))
            .map(|v| texts_of(&v))
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        tools: body.get("tools").map(|raw| raw.get().to_owned()),
    };
    if extras == BodyExtras::Apply {
        if let Some(tools) = &found.tools {
            let count =
                json::count_tools(window.model(), tools).map_err(|e| Error::new(e.kind(), format!("body, key 'tools': {e}")))?;
            let tokens = i32::try_from(count.tokens).unwrap_or(i32::MAX);
            let system = i32::try_from(window.overhead().system).unwrap_or(i32::MAX);
            window.set_overhead(system, tokens)?;
        }
        if !found.system.is_empty() {
            window.push(Kind::System, &found.system)?;
        }
    }
    json::push_messages(window, &blank_outside(text, messages.get()))?;
    Ok(found)
}

/// `text` with every character outside `part` (a slice of it) replaced by a space, newlines kept.
fn blank_outside(text: &str, part: &str) -> String {
    let start = part.as_ptr() as usize - text.as_ptr() as usize;
    let end = start + part.len();
    let blank = |s: &str| s.chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect::<String>();
    format!("{}{}{}", blank(&text[..start]), part, blank(&text[end..]))
}

/// Every `text` string inside a system prompt value (a string, blocks, or Gemini parts).
fn texts_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(texts_of).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n"),
        Value::Object(object) => match (object.get("text"), object.get("parts")) {
            (Some(text), _) => texts_of(text),
            (None, Some(parts)) => texts_of(parts),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// One message per line; blank lines are skipped. All or nothing, like push_json.
fn json_lines(window: &mut Window, text: &str) -> Result<Extras> {
    let mut messages = Vec::new();
    for (number, line) in text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
        serde_json::from_str::<&RawValue>(line)
            .map_err(|e| Error::new(ErrorKind::Parse, format!("line {}: invalid JSON: {e}", number + 1)))?;
        messages.push((number + 1, line));
    }
    let mut trial = window.clone();
    for (number, line) in messages {
        json::push_messages(&mut trial, line).map_err(|e| Error::new(e.kind(), format!("line {number}: {e}")))?;
    }
    *window = trial;
    Ok(Extras::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_point_at_the_file_line() {
        let mut window = Window::new("gpt-4o");
        let body = "{\n \"model\": \"x\",\n \"messages\": [\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": \"wizard\", \"content\": \"x\"}\n ]\n}";
        let err = load(&mut window, "t.json", body).unwrap_err();
        assert!(err.contains("line 5") && err.contains("'role'"), "{err}");
        let lines = "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"user\",\"content\":7}\n";
        let err = load(&mut window, "t.jsonl", lines).unwrap_err();
        assert!(err.starts_with("t.jsonl: line 3:") && err.contains("content"), "{err}");
        let err = load(&mut window, "t.json", "[\n{\"role\":\n").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        assert_eq!(window.message_count(), 0);
    }

    #[test]
    fn a_request_body_gives_its_system_prompt_and_tools() {
        let mut window = Window::new("gpt-4o");
        let body = r#"{"system":[{"type":"text","text":"Be brief."}],"tools":[{"name":"ls","input_schema":{}}],
            "messages":[{"role":"user","content":"hi"}]}"#;
        let extras = load(&mut window, "t.json", body).unwrap();
        assert_eq!(extras.system, "Be brief.");
        assert!(extras.tools.unwrap().contains("ls"));
        assert_eq!(window.message_count(), 1);
    }

    #[test]
    fn the_message_array_is_the_key_that_holds_an_array() {
        let mut window = Window::new("gpt-4o");
        let body = r#"{"messages": 1, "input": [{"type":"message","role":"user","content":"hi"}]}"#;
        load(&mut window, "t.json", body).unwrap();
        assert_eq!(window.message_count(), 1);
    }
}
