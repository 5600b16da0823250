//! Turning a [`Conversation`] into wire messages of one format: one message per assistant
//! step, its answers as the format expects, and for Anthropic and Gemini, which want strict
//! user/assistant (user/model) alternation starting with the user, consecutive messages of
//! one role merged (a user text after a step's answers joins the answers' message) and a
//! conversation that would start with the assistant opened by
//! [`CONVERSATION_START`].
//!
//! A wire message pushed as JSON and sent whole, alone in its message, is its original text
//! byte for byte. One only some of whose ledger messages are sent is its original object
//! keeping only their blocks. Anything merged is re-serialised compactly, the first
//! message's fields first.

use super::parts::Part;
use super::steps::{Conversation, Entry, Unit};
use super::{anthropic, chat, gemini, parts, responses};
use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;
use crate::view::text::CONVERSATION_START;
use crate::window::Window;
use crate::wire::Format;
use serde_json::{Map, Value, json};
use std::borrow::Cow;

/// Who a wire message is from, for merging: messages of one role that follow each other
/// merge in Anthropic's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
    /// A Chat `tool` message, a SYSTEM message, or a Responses item: never merged.
    Alone,
}

/// A piece of a wire message: ledger message `index` of the wire message whose first
/// ledger message is `first`, or a message built from an entry.
#[derive(Clone, Debug)]
enum Piece {
    Wire { first: usize, indices: Vec<usize> },
    Built(Value),
}

/// One wire message to be: its role and its pieces.
#[derive(Clone, Debug)]
struct Fragment {
    role: Role,
    pieces: Vec<Piece>,
}

/// The conversation's messages (system prompt excluded) in `format`, each as JSON text.
pub fn messages(window: &Window, format: Format, conversation: &Conversation<'_>) -> Result<Vec<String>> {
    let mut fragments = Vec::new();
    for unit in &conversation.units {
        match unit {
            Unit::User(entry) => {
                let piece = piece(window, format, entry)?;
                // Anthropic's compaction block lives in an assistant message, with the
                // text and calls that follow it.
                let in_assistant =
                    format == Format::Anthropic && entry.item.message.is_compaction() && matches!(piece, Piece::Wire { .. });
                push(&mut fragments, if in_assistant { Role::Assistant } else { Role::User }, vec![piece]);
            }
            Unit::Step { said, answers } => {
                let said = said.iter().map(|entry| piece(window, format, entry)).collect::<Result<Vec<_>>>()?;
                let answers = answers.iter().map(|entry| piece(window, format, entry)).collect::<Result<Vec<_>>>()?;
                match format {
                    Format::OpenAiChat => {
                        push(&mut fragments, Role::Assistant, said);
                        for answer in answers {
                            push(&mut fragments, Role::Alone, vec![answer]);
                        }
                    }
                    Format::OpenAiResponses => {
                        for item in said.into_iter().chain(answers) {
                            push(&mut fragments, Role::Alone, vec![item]);
                        }
                    }
                    Format::Anthropic | Format::Gemini => {
                        push(&mut fragments, Role::Assistant, said);
                        push(&mut fragments, Role::User, answers);
                    }
                }
            }
        }
    }
    if matches!(format, Format::Anthropic | Format::Gemini) {
        fragments = merge_neighbours(fragments);
        if fragments.first().is_some_and(|first| first.role != Role::User) {
            let start = match format {
                Format::Gemini => json!({"role": "user", "parts": [{"text": CONVERSATION_START}]}),
                _ => json!({"role": "user", "content": CONVERSATION_START}),
            };
            fragments.insert(0, Fragment { role: Role::User, pieces: vec![Piece::Built(start)] });
        }
    }
    fragments.into_iter().map(|fragment| render(window, format, fragment)).collect()
}

/// The SYSTEM entries as messages of their own (Chat, Responses), in order.
pub fn system_messages(window: &Window, format: Format, system: &[Entry<'_>]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in system {
        let piece = piece(window, format, entry)?;
        if !matches!(&piece, Piece::Built(Value::Null)) {
            out.push(render(window, format, Fragment { role: Role::Alone, pieces: vec![piece] })?);
        }
    }
    Ok(out)
}

/// The texts of the SYSTEM entries (for Anthropic's `system`, Gemini's `systemInstruction`).
pub fn system_texts<'a>(system: &'a [Entry<'a>]) -> Result<Vec<&'a str>> {
    system.iter().map(|entry| text_of(entry)).collect()
}

/// Appends a fragment unless it has no pieces; pieces that render to nothing are left out.
fn push(fragments: &mut Vec<Fragment>, role: Role, pieces: Vec<Piece>) {
    let pieces: Vec<Piece> = pieces.into_iter().filter(|piece| !matches!(piece, Piece::Built(Value::Null))).collect();
    if !pieces.is_empty() {
        fragments.push(Fragment { role, pieces });
    }
}

/// Consecutive fragments of one role, merged.
fn merge_neighbours(fragments: Vec<Fragment>) -> Vec<Fragment> {
    let mut merged: Vec<Fragment> = Vec::with_capacity(fragments.len());
    for fragment in fragments {
        match merged.last_mut() {
            Some(last) if last.role == fragment.role && fragment.role != Role::Alone => last.pieces.extend(fragment.pieces),
            _ => merged.push(fragment),
        }
    }
    merged
}

/// The entry as a piece: its wire message's, when it is a ledger message pushed as JSON and
/// sent unchanged; otherwise a message built in `format` (`Value::Null` when the format has
/// none for it, or for a part of an Anthropic message that is only blank text, which
/// Anthropic refuses: its blocks are left out, and the message with them if nothing else
/// is left).
fn piece(window: &Window, format: Format, entry: &Entry<'_>) -> Result<Piece> {
    if let (Cow::Borrowed(message), Some(source)) = (&entry.item.message, entry.item.source) {
        if let Some(wire) = message.extras().and_then(|extras| extras.wire) {
            let index = usize::try_from(wire.index).unwrap_or(usize::MAX);
            if let Some(first) =
                source.checked_sub(index).filter(|&first| window.message(first).and_then(Message::raw_json).is_some())
            {
                if format == Format::Anthropic && anthropic::says_nothing(message) {
                    return Ok(Piece::Built(Value::Null));
                }
                return Ok(Piece::Wire { first, indices: vec![index] });
            }
        }
    }
    text_of(entry)?;
    let built = match format {
        Format::OpenAiChat => chat::synthesize(entry),
        Format::Anthropic => anthropic::synthesize(entry),
        Format::OpenAiResponses => responses::synthesize(entry),
        Format::Gemini => gemini::synthesize(entry),
    };
    Ok(Piece::Built(built.unwrap_or(Value::Null)))
}

/// The entry's text, or UNSUPPORTED when the window did not keep it.
fn text_of<'a>(entry: &'a Entry<'a>) -> Result<&'a str> {
    entry.item.message.text().ok_or_else(|| {
        let which = entry.item.source.map_or_else(|| "an item".to_owned(), |index| format!("message {index}"));
        Error::new(ErrorKind::Unsupported, format!("cannot render {which}: the window keeps counts only (retain_text is false)"))
    })
}

/// One fragment as JSON text.
fn render(window: &Window, format: Format, fragment: Fragment) -> Result<String> {
    let mut pieces: Vec<Piece> = Vec::with_capacity(fragment.pieces.len());
    for piece in fragment.pieces {
        match (pieces.last_mut(), piece) {
            (Some(Piece::Wire { first, indices }), Piece::Wire { first: next, indices: more }) if *first == next => {
                indices.extend(more);
            }
            (_, piece) => pieces.push(piece),
        }
    }
    if let [Piece::Wire { first, indices }] = pieces.as_slice() {
        if let Some((raw, of)) = wire(window, *first) {
            if indices.len() == of && indices.iter().enumerate().all(|(i, &index)| i == index) {
                return Ok(raw.to_owned());
            }
        }
    }
    let mut objects = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let value = match piece {
            Piece::Wire { first, indices } => {
                let (raw, _) = wire(window, first).expect("a wire piece has its wire JSON");
                partial(format, raw, &indices)
            }
            Piece::Built(value) => value,
        };
        if let Value::Object(object) = value {
            objects.push(object);
        }
    }
    let merged = if objects.len() == 1 {
        objects.pop().expect("one object")
    } else {
        match format {
            Format::OpenAiChat => chat::merge(objects),
            Format::Anthropic => anthropic::merge(objects),
            Format::Gemini => gemini::merge(objects),
            Format::OpenAiResponses => unreachable!("Responses items are never merged"),
        }
    };
    Ok(Value::Object(merged).to_string())
}

/// The wire JSON whose first ledger message is `first`, and how many ledger messages it
/// became.
fn wire(window: &Window, first: usize) -> Option<(&str, usize)> {
    let message = window.message(first)?;
    let of = message.extras()?.wire?.of;
    Some((message.raw_json()?, usize::try_from(of).ok()?))
}

/// `raw` with only the blocks of its ledger messages `present`.
fn partial(format: Format, raw: &str, present: &[usize]) -> Value {
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(raw) else {
        return Value::Null; // unreachable: `raw` parsed as an object when it was pushed
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
    Value::Object(message)
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

fn parts(format: Format, message: &Map<String, Value>) -> std::result::Result<Vec<Part>, parts::FieldError> {
    super::parts_of(format, message)
}
