//! `render_json`: what is sent, as a JSON array in the window's provider format, ready to be
//! spliced into the request body (`messages`, `input` or `contents`).

use crate::wire::Format;
use super::parts::Part;
use super::send_items::{SendItem, items_to_send};
use super::{anthropic, chat, gemini, parts, responses};
use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;
use crate::window::Window;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The items [`items_to_send`] returns, as a compact JSON array in the window's format
/// (OpenAI Chat Completions while no JSON was pushed).
///
/// - A wire message all of whose ledger messages are sent, unchanged, is its original JSON
///   byte for byte, unknown fields included.
/// - A wire message only some of whose ledger messages are sent is its original object with
///   only those messages' blocks (content blocks, tool calls, parts), re-serialised
///   compactly with its fields in their original order.
/// - Any other item (pushed as plain text, or modified) becomes a message of its kind in the
///   window's format. Kinds a format has no message for are left out: SYSTEM for Anthropic
///   and Gemini (send it as the request's `system` / `systemInstruction`), THINKING for the
///   OpenAI formats.
///
/// Fails with [`ErrorKind::Unsupported`] for an item that has to be rebuilt but whose text
/// the window did not keep (`retain_text` false).
pub fn render_json(window: &Window) -> Result<String> {
    let format = window.wire_formats().preferred().unwrap_or(Format::OpenAiChat);
    let items = items_to_send(window);
    let mut rendered: Vec<Cow<'_, str>> = Vec::with_capacity(items.len());
    let mut next = 0;
    while next < items.len() {
        if let Some((raw, present, of)) = wire_group(window, &items[next..]) {
            next += present.len();
            if present.len() == of {
                rendered.push(Cow::Borrowed(raw));
            } else {
                rendered.push(Cow::Owned(partial(format, raw, &present)));
            }
            continue;
        }
        if let Some(message) = synthesize(window, format, &items[next])? {
            rendered.push(Cow::Owned(message));
        }
        next += 1;
    }
    Ok(format!("[{}]", rendered.join(",")))
}

/// The wire message `items[0]` starts sending unchanged: its JSON, which of its ledger
/// messages are in the run of items from the same wire message, and how many it has.
fn wire_group<'w>(window: &'w Window, items: &[SendItem<'_>]) -> Option<(&'w str, Vec<usize>, usize)> {
    let origin = |item: &SendItem<'_>| -> Option<(usize, usize, usize)> {
        let Cow::Borrowed(message) = &item.message else { return None };
        let wire = message.extras()?.wire?;
        let index = usize::try_from(wire.index).ok()?;
        Some((item.source?.checked_sub(index)?, index, usize::try_from(wire.of).ok()?))
    };
    let (first, _, of) = origin(items.first()?)?;
    let raw = window.message(first)?.extras()?.raw_json.as_deref()?;
    let present = items
        .iter()
        .map_while(|item| origin(item).filter(|&(o, _, _)| o == first).map(|(_, index, _)| index))
        .collect();
    Some((raw, present, of))
}

/// `raw` with only the blocks of its ledger messages `present`.
fn partial(format: Format, raw: &str, present: &[usize]) -> String {
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(raw) else {
        return raw.to_owned(); // unreachable: `raw` parsed as an object when it was pushed
    };
    let kept: Vec<Part> = parts(format, &message)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .filter(|(index, _)| present.contains(index))
        .map(|(_, part)| part)
        .collect();
    let keep = |block: usize| kept.iter().any(|part| part.blocks.contains(&block));
    select(format, &mut message, &keep);
    Value::Object(message).to_string()
}

fn select(format: Format, message: &mut Map<String, Value>, keep: &dyn Fn(usize) -> bool) {
    match format {
        Format::OpenAiChat => chat::select(message, keep),
        Format::Anthropic => anthropic::select(message, keep),
        Format::Gemini => gemini::select(message, keep),
        // Every Responses item is a single ledger message: it is sent whole or not at all.
        Format::OpenAiResponses => {}
    }
}

/// `item` as a message of its kind in `format`, or `None` when the format has none.
fn synthesize(window: &Window, format: Format, item: &SendItem<'_>) -> Result<Option<String>> {
    let message: &Message = &item.message;
    let text = message.text().ok_or_else(|| {
        let which = item.source.map_or_else(|| "an item".to_owned(), |index| format!("message {index}"));
        Error::new(
            ErrorKind::Unsupported,
            format!("cannot render {which}: the window keeps counts only (retain_text is false)"),
        )
    })?;
    let call_id = message.extras().and_then(|extras| extras.call_id.as_deref());
    let value = match format {
        Format::OpenAiChat => chat::synthesize(message.kind(), text, call_id),
        Format::Anthropic => anthropic::synthesize(message.kind(), text, call_id),
        Format::OpenAiResponses => responses::synthesize(message.kind(), text, call_id),
        Format::Gemini => gemini::synthesize(message.kind(), text, call_id, function_name(window, item)),
    };
    Ok(value.map(|value| value.to_string()))
}

/// The function name of the tool call or result `item` stands for, when that ledger message
/// was pushed as JSON (whose tool messages' texts start with the function's name); Gemini
/// answers a call by name, which its id need not be.
fn function_name<'w>(window: &'w Window, item: &SendItem<'_>) -> Option<&'w str> {
    let message = window.message(item.stands_for)?;
    message.extras()?.wire?;
    Some(parts::split_call(message.text()?).0)
}
