//! What is sent, in the window's provider format: `render_json`, the conversation array to
//! splice into a request body, and `render_request`, the whole body.

use super::assemble;
use super::send_items::items_to_send;
use super::steps::{self, Conversation};
use super::{anthropic, breakpoints, gemini};
use crate::error::{Error, ErrorKind, Result};
use crate::message::Kind;
use crate::window::Window;
use crate::wire::Format;
use serde_json::{Map, Value};

/// What the view sends, as a compact JSON array in the window's format
/// ([`Window::format`]), ready to be spliced into the request body (`messages`, `input` or
/// `contents`).
///
/// - One assistant step is one message (see [`steps`]): Chat `content` + `tool_calls`
///   followed by one `tool` message per answer; Anthropic one assistant message of blocks
///   followed by one user message whose `tool_result` blocks come first; Gemini one `model`
///   content followed by one `user` content of `functionResponse` parts; Responses items in
///   order, every `function_call_output` after its `function_call`.
/// - A wire message all of whose ledger messages are sent, unchanged and alone, is its
///   original JSON byte for byte, unknown fields included. One only some of whose ledger
///   messages are sent keeps only their blocks; one merged with others (the messages of one
///   step; Anthropic and Gemini also merge consecutive messages of one role, as they want
///   user and assistant to alternate) is re-serialised compactly.
/// - SYSTEM messages come first for the OpenAI formats, and are left out for Anthropic and
///   Gemini (their place is the request's `system` / `systemInstruction`: see
///   [`render_request`]). THINKING pushed as text is left out but for Gemini (a `thought`
///   part): the other formats need the provider's signature or encrypted content.
/// - An Anthropic or Gemini conversation whose view starts with an assistant message starts with the
///   user message [`crate::view::text::CONVERSATION_START`].
/// - With `cache_breakpoints` and the Anthropic format, `cache_control` marks the end of the
///   stable prefix of the last `prepare` and the newest message (those two re-serialised),
///   within Anthropic's four breakpoints ([`render_request`] counts the base's own).
///
/// Fails with [`ErrorKind::Unsupported`] for an item that has to be rebuilt but whose text
/// the window did not keep (`retain_text` false).
pub fn render_json(window: &Window) -> Result<String> {
    let messages = conversation_messages(window, usize::MAX)?;
    window.note_request();
    Ok(format!("[{}]", messages.join(",")))
}

/// The messages [`render_json`] joins, each as JSON text, of the conversation cut before
/// step `shown` (`usize::MAX` for the whole view; cut at a step that is sent, this is a
/// prefix of it): the items [`cut_step`] puts before it.
pub(super) fn conversation_messages(window: &Window, shown: usize) -> Result<Vec<String>> {
    let format = window.format();
    let mut items = items_to_send(window);
    items.retain(|item| cut_step(window, item.message.kind(), item.stands_for).is_none_or(|step| step < shown));
    let conversation = steps::conversation(items);
    let mut messages = match format {
        Format::OpenAiChat | Format::OpenAiResponses => assemble::system_messages(window, format, &conversation.system)?,
        Format::Anthropic | Format::Gemini => Vec::new(),
    };
    messages.extend(assemble::messages(window, format, &conversation)?);
    with_breakpoints(window, format, &mut messages, 0)?;
    Ok(messages)
}

/// The step whose cut leaves out a view item of kind `kind` standing for ledger index
/// `index`: the step it is sent in (a late result goes with its call's). `None` when no cut
/// leaves it out: a SYSTEM item (the OpenAI formats send them all first, wherever they
/// stand) or one before the first step.
pub(super) fn cut_step(window: &Window, kind: Kind, index: usize) -> Option<usize> {
    if kind == Kind::System { None } else { window.step_sent_in(index) }
}

/// With `cache_breakpoints` and the Anthropic format, marks `messages` (the conversation
/// rendered) with `cache_control` on the last message the stable prefix of the last
/// `prepare` renders exactly as the whole view does, and on the newest message, leaving room
/// for `caller` breakpoints elsewhere in the request (see `breakpoints`).
fn with_breakpoints(window: &Window, format: Format, messages: &mut [String], caller: usize) -> Result<()> {
    if format != Format::Anthropic || !window.settings().cache_breakpoints {
        return Ok(());
    }
    let stable = window.stable_items();
    let prefix = match stable {
        0 => Vec::new(),
        _ => {
            let mut items = items_to_send(window);
            items.truncate(stable);
            assemble::messages(window, format, &steps::conversation(items))?
        }
    };
    let common = prefix.iter().zip(messages.iter()).take_while(|(a, b)| a == b).count();
    breakpoints::place(messages, common.checked_sub(1), caller);
    Ok(())
}

/// The `cache_control` breakpoints of an Anthropic base body: on system blocks and tools.
fn base_breakpoints(body: &Map<String, Value>) -> usize {
    ["system", "tools"]
        .iter()
        .filter_map(|key| body.get(*key).and_then(Value::as_array))
        .flatten()
        .filter(|block| block.get("cache_control").is_some())
        .count()
}

/// The key of a request body that holds the conversation in `format`.
pub fn conversation_key(format: Format) -> &'static str {
    match format {
        Format::OpenAiChat | Format::Anthropic => "messages",
        Format::OpenAiResponses => "input",
        Format::Gemini => "contents",
    }
}

/// The whole request body: `base` (the agent's body without the conversation, `""` for
/// `{}`) with the conversation of [`render_json`] under the format's key, and the system
/// prompt where the format wants it:
/// - OpenAI Chat: `messages`, SYSTEM messages first;
/// - OpenAI Responses: `input`, SYSTEM messages first as `system` messages (`instructions`
///   in `base`, if any, is kept as it is);
/// - Anthropic: `system` (text blocks, after the blocks of a `system` already in `base`)
///   and `messages`;
/// - Gemini: `systemInstruction` (parts, after those of a `systemInstruction` or
///   `system_instruction` already in `base`) and `contents`.
///
/// The base's other keys are kept, in their order (re-serialised compactly). The base may
/// hold the conversation key only empty (`[]` or `null`): the window's conversation
/// replaces it; anything else is refused rather than silently dropped.
///
/// Errors: [`ErrorKind::Parse`] for a base that is not JSON; [`ErrorKind::InvalidArg`] for
/// one that is not an object, holds a non-empty conversation key, or a system key of another
/// shape (the message names the key); [`ErrorKind::OutOfRange`] when the view holds no
/// message to send (an empty window, or only a system prompt outside the conversation
/// key): every provider refuses an empty conversation; [`ErrorKind::Unsupported`] as for
/// [`render_json`].
pub fn render_request(window: &Window, base: &str) -> Result<String> {
    let format = window.format();
    let mut body = base_object(base)?;
    let key = conversation_key(format);
    if body.get(key).is_some_and(|value| !(value.is_null() || value.as_array().is_some_and(Vec::is_empty))) {
        return Err(Error::invalid_arg(format!(
            "base, key '{key}': already holds a conversation; pass the body without it ('{key}' absent, null or []): \
             the window renders the conversation"
        )));
    }
    let conversation = steps::conversation(items_to_send(window));
    let mut messages = Vec::new();
    match format {
        Format::OpenAiChat | Format::OpenAiResponses => {
            messages = assemble::system_messages(window, format, &conversation.system)?;
        }
        Format::Anthropic => place_system(&mut body, "system", &conversation, anthropic::system_blocks)?,
        Format::Gemini => place_system(&mut body, "systemInstruction", &conversation, gemini::system_parts)?,
    }
    messages.extend(assemble::messages(window, format, &conversation)?);
    if messages.is_empty() {
        // Every provider refuses a request without a message (OpenAI's `messages` has
        // minItems 1; Anthropic and Gemini want a first user turn).
        return Err(Error::new(
            ErrorKind::OutOfRange,
            format!("nothing to send: the view holds no message to put under '{key}'; push a USER message first"),
        ));
    }
    with_breakpoints(window, format, &mut messages, base_breakpoints(&body))?;
    if !body.contains_key(key) {
        body.insert(key.to_owned(), Value::Null);
    }
    let mut out = String::from("{");
    for (i, (name, value)) in body.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String(name.clone()).to_string());
        out.push(':');
        if name == key {
            out.push('[');
            out.push_str(&messages.join(","));
            out.push(']');
        } else {
            out.push_str(&value.to_string());
        }
    }
    out.push('}');
    window.note_request();
    Ok(out)
}

/// The base body as an object (`""` is `{}`).
fn base_object(base: &str) -> Result<Map<String, Value>> {
    if base.trim().is_empty() {
        return Ok(Map::new());
    }
    match crate::strict_json::parse(base) {
        Ok(Value::Object(body)) => Ok(body),
        Ok(_) => Err(Error::invalid_arg("base must be a JSON object (the request body without its conversation)")),
        Err(e) => Err(Error::new(ErrorKind::Parse, format!("base is not valid JSON: {e}"))),
    }
}

/// Puts the SYSTEM texts, as `blocks` makes them, in the body's system key `key` (Anthropic
/// `system`: an array of blocks; Gemini `systemInstruction`: an object with `parts`), after
/// what the base already holds there.
fn place_system(
    body: &mut Map<String, Value>,
    key: &str,
    conversation: &Conversation<'_>,
    blocks: fn(&[&str]) -> Vec<Value>,
) -> Result<()> {
    let texts = assemble::system_texts(&conversation.system)?;
    let added = blocks(&texts);
    if added.is_empty() {
        return Ok(());
    }
    let gemini = key == "systemInstruction";
    let key = if gemini && body.contains_key("system_instruction") { "system_instruction" } else { key };
    let wrong = || {
        Error::invalid_arg(format!(
            "base, key '{key}': must be {}",
            if gemini { "an object with \"parts\"" } else { "a string or an array of blocks" }
        ))
    };
    let mut existing: Vec<Value> = match body.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) if !gemini => anthropic::system_blocks(&[text]),
        Some(Value::Array(blocks)) if !gemini => blocks.clone(),
        Some(Value::Object(instruction)) if gemini => match instruction.get("parts") {
            Some(Value::Array(parts)) => parts.clone(),
            _ => return Err(wrong()),
        },
        Some(_) => return Err(wrong()),
    };
    existing.extend(added);
    let value = if gemini {
        let mut instruction = body.get(key).and_then(Value::as_object).cloned().unwrap_or_default();
        instruction.insert("parts".to_owned(), Value::Array(existing));
        Value::Object(instruction)
    } else {
        Value::Array(existing)
    };
    body.insert(key.to_owned(), value);
    Ok(())
}
