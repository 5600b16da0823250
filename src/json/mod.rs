//! Provider wire formats: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and
//! Gemini `contents`, parsed into the ledger's neutral messages and rendered back.
//!
//! One wire message becomes one ledger message per run of content of one kind: a Chat
//! assistant message with text and two tool calls becomes ASSISTANT + TOOL_CALL + TOOL_CALL;
//! an Anthropic user message with tool_result blocks and text becomes TOOL_RESULT messages
//! and a USER message (which starts a turn). Texts are counted with the window's model (a
//! tool call counts its name and arguments, joined by a newline; the name is kept apart from
//! the text, which is the arguments), images by the provider's
//! published rule (see [`ImageRule`]).
//!
//! The first ledger message of a wire message keeps the wire JSON verbatim, so
//! [`render_json`] reproduces it byte for byte when the whole wire message is sent. A wire
//! message only part of which is sent (the boundary fell inside it) is rebuilt from its own
//! JSON with only the blocks of the parts that are sent; its other fields are kept.
//!
//! A window speaks one format ([`Window::format`]), fixed by the configuration key `format`
//! or by the first JSON push whose shape only one format has; a message that fits several
//! formats (`{"role":"user","content":"hi"}`) is read in the window's and narrows the set of
//! formats the window may still speak without fixing one, and one of another recognisable
//! format is refused with [`ErrorKind::Mismatch`]. So a Claude model behind an
//! OpenAI-compatible gateway, whose window renders Anthropic's format while nothing says
//! otherwise, takes the gateway's Chat format at its first `tool_calls`. (Messages that fit
//! several formats are read alike in each of them, but for Anthropic's blank text blocks,
//! which Anthropic's reading keeps apart.)

mod anthropic;
mod assemble;
mod breakpoints;
mod chat;
mod format;
mod gemini;
mod image;
mod parts;
mod render;
mod response;
mod responses;
mod send_items;
mod steps;
mod summary_request;
mod tools;
pub mod transcript;

pub use crate::wire::{Format, FormatSet};
pub use image::{ImageRule, base64_dimensions, dimensions};
pub use render::{render_json, render_request};
pub use send_items::{SendItem, items_to_send};
pub use summary_request::{build_summary_request, summary_request};
pub use tools::count_tools;

use crate::error::{Error, ErrorKind, Result};
use crate::message::{CountSource, Message, MessageExtras, WirePart, counted_text};
use crate::tokens::Model;
use crate::window::Window;
use parts::{FieldError, Part};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The tool name sent for a call whose name the window does not know (a count-only or
/// pre-0.2 message rebuilt for the wire).
const UNNAMED: &str = "unknown_tool";

/// Parses `json` and appends its messages to `window`: what `ctxwin inspect` reads (see
/// [`transcript::read`]): one wire message, an array of them, JSON Lines, or a whole request
/// body, whose system prompt becomes a pinned SYSTEM message and whose `tools` count as the
/// tools overhead. A provider's whole response object pushes the message(s) it holds
/// (see [`response`]). All or nothing: when any element is invalid nothing changes, and the
/// error names the element (or line) and the field. A document above the window's
/// `max_message_bytes` is refused. Returns how many ledger messages were added.
pub fn push_json(window: &mut Window, json: &str) -> Result<usize> {
    window.check_message_size(json.len())?;
    let before = window.message_count();
    transcript::read(window, json, transcript::BodyExtras::Apply)?;
    Ok(window.message_count() - before)
}

/// Parses `json` (one wire message or an array of them) and appends the messages to
/// `window`, all or nothing. Returns how many ledger messages were added.
fn push_messages(window: &mut Window, json: &str) -> Result<usize> {
    let retain = window.settings().retain_text;
    let (formats, messages) = parse(json, window.model(), window.wire_formats(), window.format(), retain)?;
    let added = messages.len();
    window.push_parsed(messages, formats)?;
    Ok(added)
}

/// The JSON of the wire message ledger message `index` was parsed from (kept on the wire
/// message's first ledger message), if it was pushed as JSON and the window kept texts.
pub fn wire_json(window: &Window, index: usize) -> Option<&str> {
    let wire = window.message(index)?.extras()?.wire?;
    let first = index.checked_sub(usize::try_from(wire.index).ok()?)?;
    window.message(first)?.raw_json()
}

/// One message of a push: its verbatim text, its object, how errors name it, and the format
/// of the response object it was taken from, if it was.
struct Element<'a> {
    raw: Cow<'a, str>,
    object: Map<String, Value>,
    label: String,
    response: Option<Format>,
}

/// The ledger messages of `json` for `model`, and the formats of `allowed` every element
/// fits (the window's from now on). They are read in `current` (the window's format) when
/// it is one of those, else in the most preferred of them. `retain` keeps texts and wire
/// JSON (false: counts only).
pub fn parse(json: &str, model: &Model, allowed: FormatSet, current: Format, retain: bool) -> Result<(FormatSet, Vec<Message>)> {
    let elements = elements(json)?;
    let mut formats = allowed;
    for element in &elements {
        let shape = format::candidates(&element.object);
        let fits = match element.response {
            Some(response) if !shape.contains(response) => {
                return Err(Error::invalid_arg(format!(
                    "{} has the shape of {shape}, not of the {response} response it is in",
                    element.label,
                    response = response.name()
                )));
            }
            Some(response) => FormatSet::of(&[response]),
            None => shape,
        };
        let narrowed = formats.and(fits);
        if narrowed.is_empty() {
            let (kind, earlier) = if fits.and(allowed).is_empty() {
                (ErrorKind::Mismatch, "this window holds")
            } else {
                (ErrorKind::InvalidArg, "earlier elements of this array are")
            };
            return Err(Error::new(
                kind,
                format!("{} has the shape of {fits} but {earlier} {formats} messages: one format per window", element.label),
            ));
        }
        formats = narrowed;
    }
    let format = if formats.contains(current) { current } else { formats.preferred().expect("the set is not empty") };
    let mut messages = Vec::new();
    for element in &elements {
        let parts = parts_of(format, &element.object).map_err(|e| {
            Error::invalid_arg(format!("{}, field '{}': {} ({})", element.label, e.field, e.problem, format.name()))
        })?;
        messages.extend(ledger_messages(parts, &element.raw, model, retain));
    }
    Ok((formats, messages))
}

/// The messages of `json`: an array's elements, or the single object; an element that is a
/// provider's whole response object gives the message(s) it holds ([`response::read`]).
fn elements(json: &str) -> Result<Vec<Element<'_>>> {
    let syntax = |e: serde_json::Error| Error::new(ErrorKind::Parse, format!("invalid JSON: {e}"));
    let is_array = json.trim_start().starts_with('[');
    let raws: Vec<&RawValue> =
        if is_array { serde_json::from_str(json).map_err(syntax)? } else { vec![serde_json::from_str(json).map_err(syntax)?] };
    let mut elements = Vec::with_capacity(raws.len());
    for (i, raw) in raws.into_iter().enumerate() {
        let raw = raw.get();
        let label = if is_array { format!("element {i} (line {})", line_of(json, raw)) } else { "the message".to_owned() };
        let Value::Object(object) = crate::strict_json::parse(raw).map_err(syntax)? else {
            return Err(Error::invalid_arg(format!("{label} must be a JSON object (a message)")));
        };
        let pushed = response::read(object, raw).map_err(|problem| {
            let what = if is_array { label.clone() } else { "the JSON".to_owned() };
            Error::invalid_arg(format!("{what} {problem}"))
        })?;
        match pushed {
            response::Pushed::Response(held) => elements.extend(held.messages.into_iter().map(|(raw, object, path)| Element {
                label: format!("{path} of {}", if is_array { &label } else { "the response" }),
                raw,
                object,
                response: Some(held.format),
            })),
            response::Pushed::Message(object) => {
                elements.push(Element { raw: Cow::Borrowed(raw), object, label, response: None })
            }
        }
    }
    Ok(elements)
}

/// The 1-based line of `json` on which `part` (a slice of it) starts.
fn line_of(json: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(json.as_ptr() as usize).min(json.len());
    json[..offset].matches('\n').count() + 1
}

/// The parts of one wire message in `format`.
fn parts_of(format: Format, message: &Map<String, Value>) -> std::result::Result<Vec<Part>, FieldError> {
    match format {
        Format::OpenAiChat => chat::parts(message),
        Format::Anthropic => anthropic::parts(message),
        Format::OpenAiResponses => responses::parts(message),
        Format::Gemini => gemini::parts(message),
    }
}

/// One ledger message per part; the first keeps the wire JSON `raw`.
fn ledger_messages<'a>(parts: Vec<Part>, raw: &'a str, model: &'a Model, retain: bool) -> impl Iterator<Item = Message> + 'a {
    let of = u32::try_from(parts.len()).unwrap_or(u32::MAX);
    parts.into_iter().enumerate().map(move |(i, part)| {
        let text = part.text();
        let counted = counted_text(part.name.as_deref(), &text);
        let count = part.media.map_or(model.count(&counted), |media| model.count(&counted).plus(media));
        let extras = MessageExtras {
            call_id: part.call_id.map(Into::into),
            name: part.name.map(Into::into),
            raw_json: (retain && i == 0).then(|| raw.into()),
            wire: Some(WirePart { index: u32::try_from(i).unwrap_or(u32::MAX), of }),
            media: part.media,
            compaction: part.compaction,
            ..MessageExtras::default()
        };
        Message::new(part.kind, count, CountSource::Library, retain.then(|| text.into())).with_extras(extras)
    })
}
