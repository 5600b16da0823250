//! A provider's whole (not streamed) response object pushed as it came: an OpenAI Chat
//! completion, an OpenAI Responses `response`, an Anthropic `Message` or a Gemini
//! `GenerateContentResponse`. Each is told from a message by fields no request message has,
//! and is read as the message(s) it holds, which is what a request sends back:
//! `choices[0].message`, the items of `output`, the `role` and `content` of the `Message`,
//! `candidates[0].content`. Each is kept verbatim (the Anthropic message rebuilt from the
//! `role` and `content` exactly as they came); nothing else of the response is kept. A
//! response that holds no message to push, or several to choose from, is refused naming what
//! to push; so is a streamed chunk or event (but Gemini's, which are response objects), which
//! holds a piece of an answer.

use crate::strict_json;
use crate::wire::Format;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The message(s) a response object holds.
pub struct Held<'a> {
    /// The response's format: its messages are read in it, and the window must speak it.
    pub format: Format,
    /// Each message: its JSON (a slice of the response, but for Anthropic's), its object, and
    /// where it sits in the response, for errors (`choices[0].message`).
    pub messages: Vec<(Cow<'a, str>, Map<String, Value>, String)>,
}

/// What a pushed JSON object is.
pub enum Pushed<'a> {
    /// A message, to read as it is.
    Message(Map<String, Value>),
    /// A response object, and the message(s) it holds.
    Response(Held<'a>),
}

/// The kinds of response object, by the fields that tell them from messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    ChatCompletion,
    /// A piece of a streamed answer (what it is, and what to push instead).
    Streamed(&'static str, &'static str),
    Responses,
    Anthropic,
    Gemini,
}

/// The kind of response `object` is, if it is one.
fn kind(object: &Map<String, Value>) -> Option<Kind> {
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    if text("object") == Some("chat.completion.chunk") {
        return Some(Kind::Streamed(
            "a Chat stream chunk (\"object\": \"chat.completion.chunk\")",
            "build one message from the deltas of every chunk",
        ));
    }
    const ANTHROPIC_EVENTS: [&str; 7] = [
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    ];
    match text("type") {
        Some(event) if ANTHROPIC_EVENTS.contains(&event) => {
            return Some(Kind::Streamed("an Anthropic stream event", "build one message from the events' blocks"));
        }
        Some(event) if event.starts_with("response.") => {
            return Some(Kind::Streamed(
                "a Responses stream event",
                "push the item of every response.output_item.done event, or the output of response.completed",
            ));
        }
        _ => {}
    }
    if object.contains_key("choices") || text("object") == Some("chat.completion") {
        return Some(Kind::ChatCompletion);
    }
    // A `function_call_output` item's `output` may be an array too; a response has no type.
    let untyped_output = object.get("output").is_some_and(Value::is_array) && !object.contains_key("type");
    if text("object") == Some("response") || (untyped_output && !object.contains_key("role")) {
        return Some(Kind::Responses);
    }
    // Only Anthropic's `Message` carries these beside its role and content; a Responses
    // message item (also "type": "message") has none of them.
    const MESSAGE_ONLY: [&str; 4] = ["model", "stop_reason", "stop_sequence", "usage"];
    if text("type") == Some("message") && MESSAGE_ONLY.iter().any(|key| object.contains_key(*key)) {
        return Some(Kind::Anthropic);
    }
    if object.contains_key("candidates") {
        return Some(Kind::Gemini);
    }
    None
}

/// What `object` (parsed from `raw`) is: a message, or a response object and the messages it
/// holds. Errors say what is wrong and what to push.
pub fn read(mut object: Map<String, Value>, raw: &str) -> Result<Pushed<'_>, String> {
    let Some(kind) = kind(&object) else { return Ok(Pushed::Message(object)) };
    let members = strict_json::members(raw).map_err(|e| format!("invalid JSON: {e}"))?;
    let member = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, raw)| raw.get());
    let held = match kind {
        Kind::Streamed(what, instead) => {
            return Err(format!("is {what}, a piece of an answer: {instead} and push that (docs/pushing-responses.md)"));
        }
        Kind::ChatCompletion => {
            let (mut choice, raw_choice) =
                only_element(&mut object, member("choices"), "choices", "a Chat completion", "message")?;
            let message = taken_object(&mut choice, "message", "choices[0]")?;
            let raw_message = member_of(raw_choice, "message")?;
            Held {
                format: Format::OpenAiChat,
                messages: vec![(Cow::Borrowed(raw_message), message, "choices[0].message".into())],
            }
        }
        Kind::Gemini => {
            let (mut candidate, raw_candidate) =
                only_element(&mut object, member("candidates"), "candidates", "a Gemini response", "content")?;
            if !candidate.contains_key("content") {
                let reason = candidate.get("finishReason").and_then(Value::as_str).unwrap_or("none given");
                return Err(format!("candidates[0] has no content (finishReason {reason}): there is no message to push"));
            }
            let content = taken_object(&mut candidate, "content", "candidates[0]")?;
            let raw_content = member_of(raw_candidate, "content")?;
            Held { format: Format::Gemini, messages: vec![(Cow::Borrowed(raw_content), content, "candidates[0].content".into())] }
        }
        Kind::Responses => {
            let items = match object.remove("output") {
                Some(Value::Array(items)) => items,
                _ => return Err("is a Responses response without an 'output' array: push the items of its output".into()),
            };
            if items.is_empty() {
                let status = object.get("status").and_then(Value::as_str).unwrap_or("none given");
                return Err(format!(
                    "is a Responses response whose 'output' is empty (status {status}): there is no item to push"
                ));
            }
            let raws: Vec<&RawValue> = serde_json::from_str(member("output").unwrap_or("[]")).map_err(|e| e.to_string())?;
            let mut messages = Vec::with_capacity(items.len());
            for (i, (item, raw_item)) in items.into_iter().zip(raws).enumerate() {
                match item {
                    Value::Object(item) => messages.push((Cow::Borrowed(raw_item.get()), item, format!("output[{i}]"))),
                    _ => return Err(format!("output[{i}] must be a JSON object (an item)")),
                }
            }
            Held { format: Format::OpenAiResponses, messages }
        }
        Kind::Anthropic => {
            let mut message = Map::new();
            let mut json = String::from("{");
            for key in ["role", "content"] {
                let (Some(value), Some(raw_value)) = (object.remove(key), member(key)) else {
                    return Err(format!("is an Anthropic Message without '{key}': push {{\"role\", \"content\"}} of the answer"));
                };
                if json.len() > 1 {
                    json.push(',');
                }
                json.push_str(&format!("\"{key}\":{raw_value}"));
                message.insert(key.to_owned(), value);
            }
            json.push('}');
            Held { format: Format::Anthropic, messages: vec![(Cow::Owned(json), message, "the role and content".into())] }
        }
    };
    Ok(Pushed::Response(held))
}

/// The only element of the array `key` of `object` (whose raw text is `raw`), as an object,
/// with its raw text; an error naming `what` and the `inner` field to push when there is
/// none or more than one.
fn only_element<'a>(
    object: &mut Map<String, Value>,
    raw: Option<&'a str>,
    key: &str,
    what: &str,
    inner: &str,
) -> Result<(Map<String, Value>, &'a str), String> {
    let (Some(Value::Array(mut elements)), Some(raw)) = (object.remove(key), raw) else {
        return Err(format!("is {what} whose '{key}' is not an array: push {key}[0].{inner}"));
    };
    match elements.len() {
        1 => {}
        0 => return Err(format!("is {what} with no {key}: there is no message to push")),
        n => {
            return Err(format!("is {what} with {n} {key}: push the one the conversation goes on with, {key}[i].{inner}"));
        }
    }
    let raws: Vec<&RawValue> = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    match elements.pop() {
        Some(Value::Object(element)) => Ok((element, raws[0].get())),
        _ => Err(format!("{key}[0] must be a JSON object")),
    }
}

/// The object under `key` of `parent` (at `path`), taken out of it.
fn taken_object(parent: &mut Map<String, Value>, key: &str, path: &str) -> Result<Map<String, Value>, String> {
    match parent.remove(key) {
        Some(Value::Object(object)) => Ok(object),
        None => Err(format!("{path} has no '{key}': there is no message to push")),
        Some(_) => Err(format!("{path}.{key} must be a JSON object (a message)")),
    }
}

/// The raw text of member `key` of the JSON object `raw` (known to hold it).
fn member_of<'a>(raw: &'a str, key: &str) -> Result<&'a str, String> {
    let members = strict_json::members(raw).map_err(|e| e.to_string())?;
    members.into_iter().find(|(k, _)| k == key).map(|(_, raw)| raw.get()).ok_or_else(|| format!("'{key}' is missing"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response's format and the raw messages it holds, with their paths.
    type Held = Option<(Format, Vec<(String, String)>)>;

    fn held(json: &str) -> Result<Held, String> {
        let object = strict_json::parse(json).unwrap().as_object().unwrap().clone();
        Ok(match read(object, json)? {
            Pushed::Message(_) => None,
            Pushed::Response(h) => {
                Some((h.format, h.messages.into_iter().map(|(raw, _, path)| (raw.into_owned(), path)).collect()))
            }
        })
    }

    #[test]
    fn each_response_gives_the_message_it_holds_verbatim() {
        let chat = r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"h\u00e9","refusal":null},"finish_reason":"stop"}],"usage":{}}"#;
        assert_eq!(
            held(chat).unwrap(),
            Some((
                Format::OpenAiChat,
                vec![(r#"{"role":"assistant","content":"h\u00e9","refusal":null}"#.into(), "choices[0].message".into())]
            ))
        );
        let responses = r#"{"id":"r","object":"response","output":[{"type":"reasoning","summary":[]}, {"type":"message","role":"assistant","content":[]}]}"#;
        let (format, items) = held(responses).unwrap().unwrap();
        assert_eq!(format, Format::OpenAiResponses);
        assert_eq!(items[1], (r#"{"type":"message","role":"assistant","content":[]}"#.into(), "output[1]".into()));
        let anthropic = r#"{"id":"m","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"x"}],"stop_reason":"end_turn","usage":{}}"#;
        assert_eq!(held(anthropic).unwrap().unwrap().1[0].0, r#"{"role":"assistant","content":[{"type":"text","text":"x"}]}"#);
        let gemini =
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"finishReason":"STOP"}],"usageMetadata":{}}"#;
        assert_eq!(held(gemini).unwrap().unwrap().1[0].0, r#"{"role":"model","parts":[{"text":"x"}]}"#);
    }

    #[test]
    fn messages_and_items_are_not_responses() {
        for message in [
            r#"{"role":"assistant","content":"x"}"#,
            r#"{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[]}"#,
            r#"{"type":"function_call_output","call_id":"a","output":[{"type":"input_text","text":"x"}]}"#,
            r#"{"role":"model","parts":[]}"#,
        ] {
            assert_eq!(held(message).unwrap(), None, "{message}");
        }
    }

    #[test]
    fn ambiguous_or_empty_responses_say_what_to_push() {
        let two =
            r#"{"choices":[{"message":{"role":"assistant","content":"a"}},{"message":{"role":"assistant","content":"b"}}]}"#;
        assert!(held(two).unwrap_err().contains("2 choices: push the one the conversation goes on with, choices[i].message"));
        let none = r#"{"candidates":[],"promptFeedback":{"blockReason":"SAFETY"}}"#;
        assert!(held(none).unwrap_err().contains("no candidates"));
        let blocked = r#"{"candidates":[{"finishReason":"SAFETY"}]}"#;
        assert!(held(blocked).unwrap_err().contains("no content (finishReason SAFETY)"));
        let empty = r#"{"object":"response","status":"failed","output":[]}"#;
        assert!(held(empty).unwrap_err().contains("'output' is empty (status failed)"));
        let chunk = r#"{"object":"chat.completion.chunk","choices":[{"delta":{"content":"x"}}]}"#;
        assert!(held(chunk).unwrap_err().contains("deltas"));
        let event = r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#;
        assert!(held(event).unwrap_err().contains("an Anthropic stream event"));
        let event = r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message"}}"#;
        assert!(held(event).unwrap_err().contains("response.output_item.done"));
    }
}
