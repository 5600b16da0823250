//! Saving and restoring a window: a versioned JSON document, written atomically.
//!
//! ```text
//! {"format":"ctxwin-window","version":1,
//!  "model":"gpt-4o", "settings":{…configure keys…}, "overhead":{"system":0,"tools":0},
//!  "generation":7, "forced_first_live":0, "prompt_total":null,
//!  "messages":[{"kind":1,"tokens":12,"exact":true,"source":"library","text":"…",
//!               "call_id":"…","raw_json":"…","external_id":42}, …],
//!  "compactions":[{…as ctxwin_window_compaction_info…}, …]}
//! ```
//! Optional message fields are omitted when absent. Every field that determines the window's
//! state is listed once, in [`write_window`] and [`read_window`], side by side: a field added
//! to one is added to the other. Reading never builds a partial window: it fails with PARSE
//! (naming the field) or UNSUPPORTED (a newer version, an unknown strategy) and nothing else
//! changes.

mod atomic;
pub mod fields;

use crate::config::Settings;
use crate::error::{Error, ErrorKind, Result};
use crate::message::{CountSource, Kind, Message, MessageExtras};
use crate::summary::CompactionRecord;
use crate::tokens::Count;
use crate::window::{Overhead, SavedWindow, Window};
use fields::{Fields, parse_error};
use serde_json::{Map, Value, json};
use std::path::Path;

/// The `format` field every saved window carries.
pub const FORMAT: &str = "ctxwin-window";

/// The version this library writes; it reads this version and older ones.
pub const VERSION: u64 = 1;

/// The window as a saved JSON document.
pub fn export(window: &Window) -> String {
    write_window(window).to_string()
}

/// The window a saved JSON document describes.
pub fn import(json: &str) -> Result<Window> {
    let value: Value = serde_json::from_str(json).map_err(|e| {
        Error::new(
            ErrorKind::Parse,
            format!("saved window is not valid JSON (truncated or corrupted?): {e}"),
        )
    })?;
    read_window(&value)
}

/// [`import`], then checks that message `i` carries the caller's id `ids[i]`, for every
/// message: MISMATCH names the first disagreement.
pub fn import_checked(json: &str, ids: &[i64]) -> Result<Window> {
    let window = import(json)?;
    if ids.len() != window.message_count() {
        return Err(Error::new(
            ErrorKind::Mismatch,
            format!(
                "the saved window holds {} messages but the caller has {} ids",
                window.message_count(),
                ids.len()
            ),
        ));
    }
    for (index, &id) in ids.iter().enumerate() {
        let saved = window.message(index).and_then(Message::external_id);
        if saved != Some(id) {
            let saved = saved.map_or("no external id".to_owned(), |saved| format!("external id {saved}"));
            return Err(Error::new(
                ErrorKind::Mismatch,
                format!("message {index} has {saved} but the caller's row is {id}"),
            ));
        }
    }
    Ok(window)
}

/// Saves the window to `path` atomically (see [`atomic::replace_file`]).
pub fn save(window: &Window, path: &Path) -> Result<()> {
    atomic::replace_file(path, export(window).as_bytes())
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot save the window to '{}': {e}", path.display())))
}

/// Loads the window saved at `path`.
pub fn load(path: &Path) -> Result<Window> {
    let json = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read '{}': {e}", path.display())))?;
    let json = std::str::from_utf8(&json).map_err(|e| {
        Error::new(
            ErrorKind::Parse,
            format!("'{}' is not a saved window: invalid UTF-8 at byte {}", path.display(), e.valid_up_to()),
        )
    })?;
    import(json).map_err(|e| Error::new(e.kind(), format!("'{}': {}", path.display(), e.message())))
}

fn write_window(window: &Window) -> Value {
    let overhead = window.overhead();
    json!({
        "format": FORMAT,
        "version": VERSION,
        "model": window.model().name(),
        "settings": window.settings().to_value(),
        "overhead": {"system": overhead.system, "tools": overhead.tools},
        "generation": window.generation(),
        "forced_first_live": window.forced_first_live(),
        "prompt_total": window.prompt_total(),
        "messages": (0..window.message_count())
            .filter_map(|index| window.message(index))
            .map(write_message)
            .collect::<Vec<_>>(),
        "compactions": window.compactions().iter().map(CompactionRecord::to_value).collect::<Vec<_>>(),
    })
}

fn read_window(value: &Value) -> Result<Window> {
    let fields = Fields::of(value, "")?;
    read_header(&fields)?;
    let overhead = Fields::of(fields.value("overhead")?, "overhead")?;
    let saved = SavedWindow {
        model: fields.string("model")?.to_owned(),
        settings: read_settings(fields.value("settings")?)?,
        overhead: Overhead {
            system: overhead.tokens("system")?,
            tools: overhead.tokens("tools")?,
        },
        generation: fields.whole("generation", u64::from(u32::MAX))? as u32,
        forced_first_live: fields.index("forced_first_live")?,
        prompt_total: fields.optional_whole("prompt_total", u64::MAX)?,
        messages: fields
            .array("messages")?
            .iter()
            .enumerate()
            .map(|(i, message)| read_message(message, &format!("messages[{i}]")))
            .collect::<Result<_>>()?,
        compactions: fields
            .array("compactions")?
            .iter()
            .enumerate()
            .map(|(i, record)| CompactionRecord::from_value(record, &format!("compactions[{i}]")))
            .collect::<Result<_>>()?,
    };
    Window::restore(saved)
}

/// Checks `format` and `version`: a newer version is UNSUPPORTED.
fn read_header(fields: &Fields) -> Result<()> {
    if fields.string("format")? != FORMAT {
        return Err(fields.wrong("format", &format!("\"{FORMAT}\"")));
    }
    let version = fields.whole("version", u64::MAX)?;
    if version > VERSION {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("saved window has format version {version}; this library reads versions up to {VERSION}"),
        ));
    }
    if version == 0 {
        return Err(fields.wrong("version", "a version from 1"));
    }
    Ok(())
}

/// Settings are stored as a configuration object: an option this version lacks is
/// UNSUPPORTED, any other problem PARSE.
fn read_settings(value: &Value) -> Result<Settings> {
    Settings::default().with_value(value).map_err(|e| match e.kind() {
        ErrorKind::Unsupported => Error::new(ErrorKind::Unsupported, format!("settings: {}", e.message())),
        _ => parse_error("settings", e.message()),
    })
}

fn write_message(message: &Message) -> Value {
    let mut object = Map::new();
    object.insert("kind".into(), json!(message.kind().code()));
    object.insert("tokens".into(), json!(message.count().tokens));
    object.insert("exact".into(), json!(message.count().exact));
    let source = match message.source() {
        CountSource::Library => "library",
        CountSource::Caller => "caller",
    };
    object.insert("source".into(), json!(source));
    if let Some(text) = message.text() {
        object.insert("text".into(), json!(text));
    }
    if let Some(extras) = message.extras() {
        if let Some(call_id) = &extras.call_id {
            object.insert("call_id".into(), json!(call_id));
        }
        if let Some(raw_json) = &extras.raw_json {
            object.insert("raw_json".into(), json!(raw_json));
        }
        if let Some(id) = extras.external_id {
            object.insert("external_id".into(), json!(id));
        }
    }
    Value::Object(object)
}

fn read_message(value: &Value, path: &str) -> Result<Message> {
    let fields = Fields::of(value, path)?;
    let kind = Kind::from_code(fields.whole("kind", 5)? as i32).ok_or_else(|| fields.wrong("kind", "0 to 5"))?;
    let count = Count {
        tokens: fields.tokens("tokens")?,
        exact: fields.boolean("exact")?,
    };
    let source = match fields.string("source")? {
        "library" => CountSource::Library,
        "caller" => CountSource::Caller,
        _ => return Err(fields.wrong("source", "\"library\" or \"caller\"")),
    };
    let text = fields.optional_string("text")?.map(Box::from);
    let extras = MessageExtras {
        call_id: fields.optional_string("call_id")?.map(Box::from),
        raw_json: fields.optional_string("raw_json")?.map(Box::from),
        external_id: fields.optional_i64("external_id")?,
    };
    let message = Message::new(kind, count, source, text);
    Ok(if extras == MessageExtras::default() {
        message
    } else {
        message.with_extras(extras)
    })
}
