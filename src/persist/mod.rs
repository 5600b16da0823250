//! Saving and restoring a window: a versioned JSON document, written atomically.
//!
//! ```text
//! {"format":"ctxwin-window","version":1,
//!  "model":"gpt-4o", "tokenizer":"tokenizer.json:128000:…" (only when one was set),
//!  "settings":{…configure keys…}, "overhead":{"system":0,"tools":0},
//!  "generation":7, "first_live_turn":3, "forced_first_live":0, "compacted_through":0,
//!  "forced_first_step":0,
//!  "enforced_messages":12, "prompt_total":null,
//!  "pending_summary":{"generation":7,"first_step":2,"end_step":5},
//!  "calibration":{"real":0.0,"estimated":0.0,"reports":0.0,"inverse":0.0,"ratios":0.0},
//!  "wire_formats":15,
//!  "messages":[{"kind":1,"tokens":12,"exact":true,"source":"library","text":"…",
//!               "call_id":"…","name":"…","raw_json":"…","external_id":42,
//!               "wire":{"index":0,"of":2},"media":{"tokens":85,"exact":true}}, …],
//!  "compactions":[{…as ctxwin_window_compaction_info…}, …]}
//! ```
//! Optional message fields are omitted when absent. Every field that determines the window's
//! state is listed once, in [`write_window`] and [`read_window`], side by side: a field added
//! to one is added to the other. Reading never builds a partial window: it fails with PARSE
//! (naming the field) or UNSUPPORTED (a newer version, an unknown strategy) and nothing else
//! changes.

mod atomic;
mod checksum;
mod reading;

pub use reading::MAX_SAVED_BYTES;

use crate::cache::{CacheState, CacheStats, PreparedView};
use crate::config::{BudgetMode, Fraction, Settings, Tokens, clearing};
use crate::error::{Error, ErrorKind, Result};
use crate::fields::{Fields, parse_error};
use crate::message::{CountSource, Kind, Message, MessageExtras, WirePart, split_call_text};
use crate::summary::{CompactionRecord, PendingSummary};
use crate::tokens::{Calibration, CalibrationState, Count};
use crate::window::{Choice, Overhead, SavedPending, SavedWindow, Window};
use crate::wire::FormatSet;
use serde_json::{Map, Value, json};
use std::io::{self, Write};
use std::path::Path;

/// The `format` field every saved window carries.
pub const FORMAT: &str = "ctxwin-window";

/// The version this library writes; it reads this version and older ones.
pub const VERSION: u64 = 1;

/// The window as a saved JSON document.
pub fn export(window: &Window) -> String {
    let mut document = Vec::new();
    write_document(window, &mut document).expect("writing to memory cannot fail");
    String::from_utf8(document).expect("JSON is UTF-8")
}

/// Writes the window's saved document to `out` as [`export`] returns it, one message at a
/// time: the document is never held whole (a save or an export costs about the largest
/// message, not the window, on top of the window). The document is compact JSON that ends
/// with its checksum (see [`checksum`]).
pub fn write_document(window: &Window, out: &mut dyn Write) -> io::Result<()> {
    let Value::Object(members) = write_window(window) else { unreachable!("the document is an object") };
    let mut out = checksum::Summing::new(out);
    out.write_all(b"{")?;
    for (i, (name, value)) in members.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut out, name)?;
        out.write_all(b":")?;
        if name == "messages" {
            write_messages(window, &mut out)?;
        } else {
            serde_json::to_writer(&mut out, value)?;
        }
    }
    out.sum_only(b"}");
    let (sum, out) = out.finish();
    write!(out, ",\"{}\":\"{sum}\"}}", checksum::FIELD)
}

/// The `messages` array, one message built at a time.
fn write_messages(window: &Window, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"[")?;
    for index in 0..window.message_count() {
        if index > 0 {
            out.write_all(b",")?;
        }
        if let Some(message) = window.message(index) {
            serde_json::to_writer(&mut *out, &write_message(message))?;
        }
    }
    out.write_all(b"]")
}

/// The window a saved JSON document describes. A document that states a checksum must
/// match it (PARSE naming `checksum` otherwise); one without (saved before 0.3) is read as
/// it is.
pub fn import(json: &str) -> Result<Window> {
    let mut value: Value = crate::strict_json::parse(json)
        .map_err(|e| Error::new(ErrorKind::Parse, format!("saved window is not valid JSON (truncated or corrupted?): {e}")))?;
    checksum::verify(&mut value)?;
    read_window(&value)
}

/// [`import`], then checks that message `i` carries the caller's id `ids[i]`, for every
/// message: MISMATCH names the first disagreement.
pub fn import_checked(json: &str, ids: &[i64]) -> Result<Window> {
    let window = import(json)?;
    if ids.len() != window.message_count() {
        return Err(Error::new(
            ErrorKind::Mismatch,
            format!("the saved window holds {} messages but the caller has {} ids", window.message_count(), ids.len()),
        ));
    }
    for (index, &id) in ids.iter().enumerate() {
        let saved = window.message(index).and_then(Message::external_id);
        if saved != Some(id) {
            let saved = saved.map_or("no external id".to_owned(), |saved| format!("external id {saved}"));
            return Err(Error::new(ErrorKind::Mismatch, format!("message {index} has {saved} but the caller's row is {id}")));
        }
    }
    Ok(window)
}

/// Saves the window to `path` atomically (see [`atomic::replace_file`]): through symbolic
/// links, keeping the file's mode (a new file is private), never over something that is not
/// a regular file. A document larger than [`MAX_SAVED_BYTES`] is refused with OUT_OF_RANGE
/// (`load` could not read it back); nothing is written then.
pub fn save(window: &Window, path: &Path) -> Result<()> {
    let mut size = 0;
    let saved = atomic::replace_file(path, |out| write_document(window, &mut Limited { out, size: &mut size }));
    saved.map_err(|e| match size > MAX_SAVED_BYTES {
        true => Error::new(
            ErrorKind::OutOfRange,
            format!(
                "cannot save the window to '{}': the document is more than the {MAX_SAVED_BYTES} bytes a load reads",
                path.display()
            ),
        ),
        false => Error::new(ErrorKind::Io, format!("cannot save the window to '{}': {e}", path.display())),
    })
}

/// A writer that passes at most [`MAX_SAVED_BYTES`] on, counting them in `size`, and fails
/// (setting `size` to `u64::MAX`) rather than pass more.
struct Limited<'a> {
    out: &'a mut dyn Write,
    size: &'a mut u64,
}

impl Write for Limited<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if *self.size + bytes.len() as u64 > MAX_SAVED_BYTES {
            *self.size = u64::MAX;
            return Err(io::Error::other("the document is too large"));
        }
        let written = self.out.write(bytes)?;
        *self.size += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Loads the window saved at `path`: a regular file of at most [`MAX_SAVED_BYTES`], opened
/// without blocking (see [`reading::read_saved`]).
pub fn load(path: &Path) -> Result<Window> {
    let bytes = reading::read_saved(path)?;
    let json = document_text(&bytes).map_err(|e| Error::new(e.kind(), format!("'{}': {}", path.display(), e.message())))?;
    import(json).map_err(|e| Error::new(e.kind(), format!("'{}': {}", path.display(), e.message())))
}

/// The bytes of a saved document as text: bytes that are not UTF-8 (a document cut inside a
/// character, or corrupted) are PARSE, like any other damage.
pub fn document_text(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorKind::Parse,
            format!("saved window is not valid UTF-8 at byte {} (truncated or corrupted?)", e.valid_up_to()),
        )
    })
}

fn write_window(window: &Window) -> Value {
    let overhead = window.overhead();
    let mut document = json!({
        "format": FORMAT,
        "version": VERSION,
        "model": window.model().name(),
        "settings": saved_settings(window.settings()),
        "overhead": {"system": overhead.system, "tools": overhead.tools},
        "generation": window.generation(),
        "first_live_turn": window.first_live_turn(),
        "forced_first_live": window.forced_first_live(),
        "compacted_through": window.compacted_through(),
        "forced_first_step": window.forced_first_step(),
        "pins": window.host_pins(),
        "choices": window.choices().iter()
            .map(|c| match c.forced_first_step {
                // As written before steps could be dropped by hand.
                0 => json!([c.messages, c.forced_first_live, c.compacted_through]),
                step => json!([c.messages, c.forced_first_live, c.compacted_through, step]),
            })
            .collect::<Vec<_>>(),
        "pending_counts": window.pending_counts().map(|(index, count)| json!({
            "index": index, "tokens": count.tokens, "exact": count.exact,
        })).collect::<Vec<_>>(),
        "enforced_messages": window.enforced_messages(),
        "prompt_total": window.prompt_total(),
        "pending_summary": window.pending_summary().map(|p| json!({
            "generation": p.generation, "first_step": p.first_step, "end_step": p.end_step,
        })),
        "calibration": write_calibration(window.calibration()),
        "wire_formats": window.wire_formats().bits(),
        // Written one by one by `write_document`, in this place.
        "messages": Value::Null,
        "compactions": window.compactions().iter().map(CompactionRecord::to_value).collect::<Vec<_>>(),
        "cache": write_cache(window.cache_state()),
    });
    if let Some(tokenizer) = window.model().tokenizer() {
        document["tokenizer"] = json!(tokenizer.fingerprint());
    }
    document
}

/// The request last prepared (its items' fingerprints in hex) and the usage sums.
fn write_cache(cache: &CacheState) -> Value {
    let (items, rewound_from, stable) = cache.prepared.parts();
    json!({
        "prepared": items.iter().map(|f| format!("{f:032x}")).collect::<Vec<_>>(),
        "rewound_from": rewound_from,
        "stable": stable,
        "requests": cache.stats.requests,
        "prompt_tokens": cache.stats.prompt_tokens,
        "cached_tokens": cache.stats.cached_tokens,
    })
}

/// The cache state; a document saved before it existed has none.
fn read_cache(fields: &Fields) -> Result<CacheState> {
    let Some(value) = fields.optional("cache") else {
        return Ok(CacheState::default());
    };
    let cache = Fields::of(value, fields.path_of("cache"))?;
    let items = cache
        .array("prepared")?
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str()
                .filter(|hex| hex.len() == 32)
                .and_then(|hex| u128::from_str_radix(hex, 16).ok())
                .ok_or_else(|| parse_error(&format!("cache.prepared[{i}]"), "expected 32 hexadecimal digits"))
        })
        .collect::<Result<Vec<_>>>()?;
    let rewound_from = cache.optional_whole("rewound_from", usize::MAX as u64)?.map(|n| n as usize);
    Ok(CacheState {
        prepared: PreparedView::from_parts(items, rewound_from, cache.index("stable")?),
        stats: CacheStats {
            requests: cache.whole("requests", u64::MAX)?,
            prompt_tokens: cache.whole("prompt_tokens", u64::MAX)?,
            cached_tokens: cache.whole("cached_tokens", u64::MAX)?,
        },
    })
}

fn read_window(value: &Value) -> Result<Window> {
    let fields = Fields::of(value, "")?;
    read_header(&fields)?;
    let overhead = Fields::of(fields.value("overhead")?, "overhead")?;
    let message_count = fields.array("messages")?.len();
    let saved = SavedWindow {
        choices: read_choices(&fields, message_count)?,
        pending_counts: read_pending_counts(&fields)?,
        model: fields.string("model")?.to_owned(),
        tokenizer: match fields.optional("tokenizer") {
            None | Some(Value::Null) => None,
            Some(_) => Some(fields.string("tokenizer")?.to_owned()),
        },
        settings: read_settings(fields.value("settings")?)?,
        before_steps: fields.value("settings")?.get("keep_recent_steps").is_none(),
        pins: read_pins(&fields)?,
        overhead: Overhead { system: overhead.tokens("system")?, tools: overhead.tokens("tools")? },
        generation: fields.whole("generation", u64::from(u32::MAX))? as u32,
        first_live_turn: fields.index("first_live_turn")?,
        forced_first_live: fields.index("forced_first_live")?,
        compacted_through: fields.index("compacted_through")?,
        forced_first_step: fields
            .optional("forced_first_step")
            .map(|_| fields.index("forced_first_step"))
            .transpose()?
            .unwrap_or(0),
        enforced_messages: fields.index("enforced_messages")?,
        prompt_total: fields.optional_whole("prompt_total", u64::MAX)?,
        pending_summary: read_pending_summary(&fields)?,
        wire_formats: FormatSet::from_bits(fields.whole("wire_formats", u64::from(u8::MAX))?)
            .ok_or_else(|| fields.wrong("wire_formats", "a set of provider formats (0 to 15)"))?,
        calibration: read_calibration(&Fields::of(fields.value("calibration")?, "calibration")?)?,
        messages: read_messages(fields.array("messages")?)?,
        compactions: fields
            .array("compactions")?
            .iter()
            .enumerate()
            .map(|(i, record)| CompactionRecord::from_value(record, &format!("compactions[{i}]")))
            .collect::<Result<_>>()?,
        cache: read_cache(&fields)?,
    };
    Window::restore(saved)
}

/// The messages the host pinned: none in a document saved before pins existed.
fn read_pins(fields: &Fields) -> Result<Vec<usize>> {
    match fields.optional("pins") {
        None => Ok(Vec::new()),
        Some(Value::Array(pins)) => pins
            .iter()
            .enumerate()
            .map(|(i, pin)| {
                pin.as_u64()
                    .and_then(|pin| usize::try_from(pin).ok())
                    .ok_or_else(|| parse_error(&format!("pins[{i}]"), "expected a message index"))
            })
            .collect(),
        Some(_) => Err(fields.wrong("pins", "an array of message indices")),
    }
}

/// The summary request awaiting its answer, if any: `null` or its generation and steps (its
/// turns, in a document saved before a request could end inside a turn).
fn read_pending_summary(fields: &Fields) -> Result<Option<SavedPending>> {
    match fields.optional("pending_summary") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            let pending = Fields::of(value, fields.path_of("pending_summary"))?;
            let generation = pending.whole("generation", u64::from(u32::MAX))? as u32;
            Ok(Some(match pending.optional("first_step") {
                Some(_) => SavedPending::Steps(PendingSummary {
                    generation,
                    first_step: pending.index("first_step")?,
                    end_step: pending.index("end_step")?,
                }),
                None => SavedPending::Turns {
                    generation,
                    first_turn: pending.index("first_turn")?,
                    end_turn: pending.index("end_turn")?,
                },
            }))
        }
    }
}

/// The sums the calibration fits its ratio and overhead to.
fn write_calibration(calibration: Calibration) -> Value {
    let state = calibration.state();
    json!({
        "real": state.real, "estimated": state.estimated,
        "reports": state.reports, "inverse": state.inverse, "ratios": state.ratios,
    })
}

/// The learned calibration sums: finite and non-negative. `reports`, `inverse` and `ratios`
/// are absent in a document saved before the calibration learned an overhead.
fn read_calibration(fields: &Fields) -> Result<Calibration> {
    let optional = |name: &str| match fields.optional(name) {
        None => Ok(None),
        Some(_) => fields.number(name).map(Some),
    };
    let state = CalibrationState {
        real: fields.number("real")?,
        estimated: fields.number("estimated")?,
        reports: optional("reports")?,
        inverse: optional("inverse")?,
        ratios: optional("ratios")?,
    };
    Calibration::from_state(state).ok_or_else(|| parse_error("calibration", "every sum must be finite and not negative"))
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

/// The settings as a configuration object, without `history_budget` while it is the default
/// and without the clearing stage's keys while they are the defaults: a missing key restores
/// the default, in this version and in those before the key or the value existed (so a
/// document that uses neither still loads in older libraries).
fn saved_settings(settings: &Settings) -> Value {
    let mut value = settings.to_value();
    let object = value.as_object_mut().expect("settings are an object");
    if settings.budget_mode == BudgetMode::Default {
        object.remove("history_budget");
    }
    let defaults = Settings::default().to_value();
    for key in clearing::KEYS.iter().copied().chain(["stages"]) {
        if object.get(key) == defaults.get(key) || (key == "stages" && !settings.clearing.enabled) {
            object.remove(key);
        }
    }
    value
}

/// Settings are stored as a configuration object: an option this version lacks is
/// UNSUPPORTED, any other problem PARSE. A document saved before `low_water` and
/// `output_reserve` existed restores the behaviour it was saved with (1 and 0), and one
/// saved before `pin_task` did keeps its task unpinned.
fn read_settings(value: &Value) -> Result<Settings> {
    let before_keys =
        Settings { low_water: Fraction::ONE, output_reserve: Tokens::Fixed(0), pin_task: false, ..Settings::default() };
    before_keys.with_value(value).map_err(|e| match e.kind() {
        ErrorKind::Unsupported => Error::new(ErrorKind::Unsupported, format!("settings: {}", e.message())),
        _ => parse_error("settings", e.message()),
    })
}

fn source_name(source: CountSource) -> &'static str {
    match source {
        CountSource::Library => "library",
        CountSource::Caller => "caller",
    }
}

fn read_source(fields: &Fields) -> Result<CountSource> {
    match fields.string("source")? {
        "library" => Ok(CountSource::Library),
        "caller" => Ok(CountSource::Caller),
        _ => Err(fields.wrong("source", "\"library\" or \"caller\"")),
    }
}

/// The manual choices with the ledger length each was made at: `[messages,
/// forced_first_live, compacted_through]`, with `forced_first_step` fourth when `recover`
/// dropped steps inside a turn (a choice saved before that reads as step 0). A document
/// written before choices were saved has one choice in force, made at its current length.
fn read_choices(fields: &Fields, messages: usize) -> Result<Vec<Choice>> {
    let Some(value) = fields.optional("choices") else {
        let (forced_first_live, compacted_through) = (fields.index("forced_first_live")?, fields.index("compacted_through")?);
        let any = forced_first_live > 0 || compacted_through > 0;
        let choice = Choice { messages, forced_first_live, compacted_through, forced_first_step: 0 };
        return Ok(any.then_some(choice).into_iter().collect());
    };
    let Value::Array(choices) = value else {
        return Err(
            fields.wrong("choices", "an array of [messages, forced_first_live, compacted_through] or [..., forced_first_step]")
        );
    };
    choices
        .iter()
        .enumerate()
        .map(|(i, choice)| {
            let numbers: Option<Vec<usize>> = choice
                .as_array()
                .filter(|numbers| numbers.len() == 3 || numbers.len() == 4)
                .and_then(|numbers| numbers.iter().map(|n| n.as_u64().and_then(|n| usize::try_from(n).ok())).collect());
            match numbers.as_deref() {
                Some(&[messages, forced_first_live, compacted_through]) => {
                    Ok(Choice { messages, forced_first_live, compacted_through, forced_first_step: 0 })
                }
                Some(&[messages, forced_first_live, compacted_through, forced_first_step]) => {
                    Ok(Choice { messages, forced_first_live, compacted_through, forced_first_step })
                }
                _ => Err(parse_error(
                    &fields.path_of(&format!("choices[{i}]")),
                    "expected [messages, forced_first_live, compacted_through] or [..., forced_first_step]",
                )),
            }
        })
        .collect()
}

/// The counts `set_count` recorded for the next enforcement.
fn read_pending_counts(fields: &Fields) -> Result<Vec<(usize, Count)>> {
    let Some(value) = fields.optional("pending_counts") else { return Ok(Vec::new()) };
    let Value::Array(entries) = value else {
        return Err(fields.wrong("pending_counts", "an array"));
    };
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let entry = Fields::of(entry, fields.path_of(&format!("pending_counts[{i}]")))?;
            let count = Count { tokens: entry.tokens("tokens")?, exact: entry.boolean("exact")? };
            Ok((entry.index("index")?, count))
        })
        .collect()
}

fn write_message(message: &Message) -> Value {
    let mut object = Map::new();
    object.insert("kind".into(), json!(message.kind().code()));
    object.insert("tokens".into(), json!(message.count().tokens));
    object.insert("exact".into(), json!(message.count().exact));
    object.insert("source".into(), json!(source_name(message.source())));
    if let Some(text) = message.text() {
        object.insert("text".into(), json!(text));
    }
    if let Some(extras) = message.extras() {
        if let Some(call_id) = &extras.call_id {
            object.insert("call_id".into(), json!(call_id));
        }
        if let Some(name) = &extras.name {
            object.insert("name".into(), json!(name));
        }
        if let Some(raw_json) = &extras.raw_json {
            object.insert("raw_json".into(), json!(raw_json));
        }
        if let Some(id) = extras.external_id {
            object.insert("external_id".into(), json!(id));
        }
        if let Some(wire) = extras.wire {
            object.insert("wire".into(), json!({"index": wire.index, "of": wire.of}));
        }
        if let Some(media) = extras.media {
            object.insert("media".into(), json!({"tokens": media.tokens, "exact": media.exact}));
        }
        if let Some(id) = extras.host_id {
            object.insert("host_id".into(), json!(id));
        }
        if extras.replaced_utf8 {
            object.insert("replaced_utf8".into(), json!(true));
        }
        if extras.compaction {
            object.insert("compaction".into(), json!(true));
        }
        if extras.kept_as_text {
            object.insert("kept_as_text".into(), json!(true));
        }
    }
    Value::Object(object)
}

/// The ledger, each message read on its own, then each wire message's parts checked
/// together: a part `index` of `of` follows parts 0 to `index - 1` of the same wire message,
/// and only a part 0 holds a `raw_json` (render_json sends the wire message from it).
fn read_messages(values: &[Value]) -> Result<Vec<Message>> {
    let messages: Vec<Message> =
        values.iter().enumerate().map(|(i, message)| read_message(message, &format!("messages[{i}]"))).collect::<Result<_>>()?;
    let wire_of = |message: &Message| message.extras().and_then(|extras| extras.wire);
    for (i, message) in messages.iter().enumerate() {
        if message.raw_json().is_some() && wire_of(message).is_none_or(|wire| wire.index != 0) {
            return Err(parse_error(
                &format!("messages[{i}].raw_json"),
                "only the first part of a wire message (wire.index 0) has it",
            ));
        }
        let Some(wire) = wire_of(message) else { continue };
        let chained = i.checked_sub(wire.index as usize).is_some_and(|first| {
            (first..i).all(|j| wire_of(&messages[j]) == Some(WirePart { index: (j - first) as u32, of: wire.of }))
        });
        if !chained {
            return Err(parse_error(
                &format!("messages[{i}].wire"),
                &format!("part {} of {} must follow the parts before it of the same wire message", wire.index, wire.of),
            ));
        }
    }
    Ok(messages)
}

/// A message's place in its wire message: `index` below `of`.
fn read_wire_part(message: &Fields) -> Result<WirePart> {
    let wire = Fields::of(message.value("wire")?, message.path_of("wire"))?;
    let of = wire.whole("of", u64::from(u32::MAX))? as u32;
    let index = wire.whole("index", u64::from(u32::MAX))? as u32;
    if index >= of {
        return Err(wire.wrong("index", "a position below \"of\""));
    }
    Ok(WirePart { index, of })
}

/// A message's provider JSON, which render_json sends verbatim: a JSON object, as every
/// pushed wire message was, or a corrupted document would be sent as broken JSON.
fn read_raw_json(message: &Fields, raw: &str) -> Result<Box<str>> {
    match crate::strict_json::parse(raw) {
        Ok(Value::Object(_)) => Ok(Box::from(raw)),
        _ => Err(message.wrong("raw_json", "a JSON object (the message as pushed)")),
    }
}

fn read_message(value: &Value, path: &str) -> Result<Message> {
    let fields = Fields::of(value, path)?;
    let kind = Kind::from_code(fields.whole("kind", 5)? as i32).ok_or_else(|| fields.wrong("kind", "0 to 5"))?;
    let count = Count { tokens: fields.tokens("tokens")?, exact: fields.boolean("exact")? };
    let source = read_source(&fields)?;
    let mut text = fields.optional_string("text")?.map(Box::from);
    let mut name = fields.optional_string("name")?.map(Box::from);
    // Before 0.2 a TOOL_CALL kept its name on the first line of its text.
    if let (Kind::ToolCall, None, Some(legacy)) = (kind, &name, &text) {
        if let Ok((call_name, arguments)) = split_call_text(legacy) {
            (name, text) = (Some(Box::from(call_name.as_ref())), Some(Box::from(arguments.as_ref())));
        }
    }
    let extras = MessageExtras {
        call_id: fields.optional_string("call_id")?.map(Box::from),
        name,
        raw_json: fields.optional_string("raw_json")?.map(|raw| read_raw_json(&fields, raw)).transpose()?,
        external_id: fields.optional_i64("external_id")?,
        wire: fields.optional("wire").map(|_| read_wire_part(&fields)).transpose()?,
        media: fields
            .optional("media")
            .map(|value| {
                let media = Fields::of(value, fields.path_of("media"))?;
                Ok(Count { tokens: media.tokens("tokens")?, exact: media.boolean("exact")? })
            })
            .transpose()?,
        host_id: fields.optional_i64("host_id")?,
        replaced_utf8: fields.optional("replaced_utf8").map(|_| fields.boolean("replaced_utf8")).transpose()?.unwrap_or(false),
        compaction: fields.optional("compaction").map(|_| fields.boolean("compaction")).transpose()?.unwrap_or(false),
        kept_as_text: fields.optional("kept_as_text").map(|_| fields.boolean("kept_as_text")).transpose()?.unwrap_or(false),
    };
    if extras.compaction && kind != Kind::User {
        return Err(fields.wrong("compaction", "only on a USER message (kind 1)"));
    }
    let message = Message::new(kind, count, source, text);
    Ok(if extras == MessageExtras::default() { message } else { message.with_extras(extras) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::XorShift;
    use proptest::prelude::*;

    /// One step of a session, applied the same way to the original and to its restored copy.
    #[derive(Clone, Debug)]
    enum Step {
        Push(u8, String),
        Counted(u8, u32, bool),
        EndTurn,
        Summarise,
        DropOldest,
        Truncate(usize),
        ExternalId(usize, i64),
        Budget(u16),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u8..6, "[a-z .\\n]{0,40}").prop_map(|(k, t)| Step::Push(k, t)),
            (0u8..6, 0u32..400, any::<bool>()).prop_map(|(k, n, e)| Step::Counted(k, n, e)),
            Just(Step::EndTurn),
            Just(Step::EndTurn),
            Just(Step::Summarise),
            Just(Step::DropOldest),
            (0usize..60).prop_map(Step::Truncate),
            (0usize..60, any::<i64>()).prop_map(|(i, id)| Step::ExternalId(i, id)),
            (0u16..1500).prop_map(Step::Budget),
        ]
    }

    fn apply(window: &mut Window, step: &Step) {
        let kind = |k: u8| Kind::from_code(i32::from(k)).unwrap();
        match step {
            Step::Push(k, text) => drop(window.push(kind(*k), text)),
            Step::Counted(k, n, exact) => window.push_counted(kind(*k), Count { tokens: *n, exact: *exact }),
            Step::EndTurn => drop(window.end_turn()),
            Step::Summarise => {
                if window.summary_request().is_ok() {
                    let _ = window.set_summary(window.generation(), "s", 7);
                }
            }
            Step::DropOldest => drop(window.drop_oldest_turn()),
            Step::Truncate(n) => drop(window.truncate(*n)),
            Step::ExternalId(i, id) => drop(window.set_external_id(*i, *id)),
            Step::Budget(b) => drop(window.set_budget(i32::from(*b))),
        }
    }

    /// What a caller observes of the boundary and the ledger.
    fn observed(window: &Window) -> (usize, u32, Count, Vec<crate::window::TurnInfo>, Option<String>) {
        (
            window.start(),
            window.generation(),
            window.live_tokens(),
            (0..window.turn_count()).map(|t| window.turn_info(t).unwrap()).collect(),
            window.summary().map(|r| r.summary.to_string()),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn a_restored_window_continues_exactly_like_the_original(
            config in prop_oneof![Just(r#"{}"#), Just(r#"{"strategy":"summary","context_limit":3000,"summary_budget":50}"#),
                                  Just(r#"{"retain_text":false,"budget_includes_overhead":true,"summary_budget":20}"#)],
            before in prop::collection::vec(step(), 0..60),
            after in prop::collection::vec(step(), 0..30),
        ) {
            let mut original = Window::new("gpt-4o");
            original.configure(config).unwrap();
            original.set_overhead(30, 5).unwrap();
            for step in &before {
                apply(&mut original, step);
            }
            let saved = export(&original);
            let mut restored = import(&saved).unwrap();
            prop_assert_eq!(export(&restored), saved);
            prop_assert_eq!(observed(&restored), observed(&original));
            for step in &after {
                apply(&mut original, step);
                apply(&mut restored, step);
                prop_assert_eq!(observed(&restored), observed(&original));
            }
            prop_assert_eq!(export(&restored), export(&original));
        }
    }

    fn sample() -> Window {
        let mut window = Window::new("gpt-4o");
        window.configure(r#"{"history_budget":30}"#).unwrap();
        for turn in 0..4 {
            window.push(Kind::User, &format!("turn {turn}: please edit src/main.rs and run the tests")).unwrap();
            window.push_counted(Kind::ToolResult, Count::exact(20));
            window.end_turn();
        }
        window.set_external_id(0, 41).unwrap();
        window.summary_request().unwrap();
        window.set_summary(window.generation(), "Edited src/main.rs.", 9).unwrap();
        window
    }

    #[test]
    fn every_prefix_of_a_saved_window_is_refused_with_parse() {
        let saved = export(&sample());
        for end in 0..saved.len() {
            let err = import(&saved[..end]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse, "prefix of {end} bytes: {}", err.message());
        }
        assert!(import(&saved).is_ok());
    }

    #[test]
    fn damaged_fields_are_named_and_newer_versions_unsupported() {
        let mut saved: Value = serde_json::from_str(&export(&sample())).unwrap();
        // Edited on purpose below: without its checksum, as a document edited by hand must be.
        saved.as_object_mut().unwrap().remove("checksum");
        let edit = |path: &[&str], value: Value| {
            let mut doc = saved.clone();
            let mut slot = &mut doc;
            for key in path {
                slot = match key.parse::<usize>() {
                    Ok(i) => &mut slot[i],
                    Err(_) => &mut slot[*key],
                };
            }
            *slot = value;
            import(&doc.to_string()).unwrap_err()
        };
        let cases = [
            (edit(&["version"], json!(2)), ErrorKind::Unsupported, "version 2"),
            (edit(&["version"], json!("1")), ErrorKind::Parse, "version"),
            (edit(&["format"], json!("other")), ErrorKind::Parse, "format"),
            (edit(&["settings", "strategy"], json!("fifo")), ErrorKind::Parse, "fifo"),
            (edit(&["settings", "history_budget"], json!(-1)), ErrorKind::Parse, "history_budget"),
            (edit(&["messages", "2", "kind"], json!(9)), ErrorKind::Parse, "messages[2].kind"),
            (edit(&["messages", "1", "source"], json!("me")), ErrorKind::Parse, "messages[1].source"),
            (edit(&["messages", "0", "external_id"], json!("x")), ErrorKind::Parse, "messages[0].external_id"),
            (edit(&["compactions", "0", "archived_turns"], json!(0)), ErrorKind::Parse, "compactions[0]"),
            (edit(&["compactions", "0", "last_archived"], json!(2)), ErrorKind::Parse, "compactions[0]"),
            (edit(&["forced_first_live"], json!(99)), ErrorKind::Parse, "forced_first_live"),
            (edit(&["first_live_turn"], json!(0)), ErrorKind::Parse, "first_live_turn"),
            (edit(&["overhead"], json!([])), ErrorKind::Parse, "overhead"),
            (edit(&[], json!(null)), ErrorKind::Parse, "object"),
        ];
        for (err, kind, needle) in cases {
            assert_eq!(err.kind(), kind, "{}", err.message());
            assert!(err.message().contains(needle), "{needle}: {}", err.message());
        }
    }

    /// Before the checksum, 36% of random 1 to 3 bit flips and 97% of single-digit changes
    /// loaded as another window. Now a damaged document is refused (PARSE), or it loads as
    /// the same window (damage confined to the checksum member, which leaves the rest whole).
    #[test]
    fn a_flipped_bit_is_refused_or_changes_nothing() {
        let saved = export(&sample());
        let (mut refused, mut same) = (0, 0);
        let mut check = |bytes: &[u8]| match document_text(bytes).and_then(import) {
            Ok(window) => {
                assert_eq!(export(&window), saved, "a damaged document loaded as another window");
                same += 1;
            }
            Err(error) => {
                assert_eq!(error.kind(), ErrorKind::Parse, "{}", error.message());
                refused += 1;
            }
        };
        for bit in 0..saved.len() * 8 {
            let mut bytes = saved.clone().into_bytes();
            bytes[bit / 8] ^= 1 << (bit % 8);
            check(&bytes);
        }
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut next = move |n: usize| rng.below(n);
        for _ in 0..3000 {
            let mut bytes = saved.clone().into_bytes();
            for _ in 0..2 + next(2) {
                let bit = next(bytes.len() * 8);
                bytes[bit / 8] ^= 1 << (bit % 8);
            }
            check(&bytes);
        }
        // Every digit changed to every other digit.
        for (at, _) in saved.char_indices().filter(|(_, c)| c.is_ascii_digit()) {
            for digit in b'0'..=b'9' {
                let mut bytes = saved.clone().into_bytes();
                if bytes[at] != digit {
                    bytes[at] = digit;
                    check(&bytes);
                }
            }
        }
        assert!(refused > 10 * same, "{refused} refused, {same} the same");
    }

    /// The export streamed piece by piece is the canonical document the checksum sums: its
    /// compact JSON, members in order, then the checksum.
    #[test]
    fn the_streamed_document_is_its_own_compact_json_then_the_checksum() {
        let saved = export(&sample());
        let mut value: Value = serde_json::from_str(&saved).unwrap();
        let stated = value.as_object_mut().unwrap().shift_remove("checksum").unwrap();
        let body = value.to_string();
        assert_eq!(saved, format!("{},\"checksum\":{stated}}}", &body[..body.len() - 1]));
        assert!(stated.as_str().unwrap().starts_with("crc32:"));
    }

    /// Found by the import fuzz target: a document without `choices` whose
    /// `compacted_through` is past its turn count was accepted, and its own export was then
    /// refused (the next enforcement cut the floor down, the log kept it). Each choice must
    /// fit the turns of the ledger it was made on.
    #[test]
    fn a_choice_past_the_turns_is_refused_so_every_import_saves_again() {
        let mut window = Window::new("gpt-4o");
        window.configure(r#"{"strategy":"tiered"}"#).unwrap();
        window.push(Kind::User, "one").unwrap();
        window.end_turn();
        window.push(Kind::User, "two").unwrap();
        window.end_turn();
        let mut doc: Value = serde_json::from_str(&export(&window)).unwrap();
        doc.as_object_mut().unwrap().remove("checksum");
        for (field, value, choices) in [
            ("compacted_through", 3, None),
            ("compacted_through", 3, Some(json!([[2, 0, 3]]))),
            ("forced_first_live", 2, None),
            ("compacted_through", 2, Some(json!([[1, 0, 2], [2, 0, 2]]))),
        ] {
            let mut edited = doc.clone();
            edited[field] = json!(value);
            let object = edited.as_object_mut().unwrap();
            match choices {
                Some(choices) => drop(object.insert("choices".into(), choices)),
                None => drop(object.shift_remove("choices")),
            }
            let err = import(&edited.to_string()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse);
            assert!(err.message().starts_with(&format!("{field} {value} (choices[")), "{}", err.message());
        }
        // At the turn count, and an older document's choice: accepted, and saved again.
        let mut edited = doc.clone();
        edited["compacted_through"] = json!(2);
        edited.as_object_mut().unwrap().shift_remove("choices");
        let restored = import(&edited.to_string()).unwrap();
        assert_eq!(restored.compacted_through(), 2);
        let again = export(&restored);
        assert_eq!(export(&import(&again).unwrap()), again);
    }

    /// Found by the edited-documents property test (tests/persist_sessions.rs): a wire
    /// message's first part without its `wire` member imported, and render_json then
    /// panicked (PANIC from C, the handle poisoned). A counts-only window's parts have no
    /// raw_json, and still load.
    #[test]
    fn the_parts_of_a_wire_message_must_hang_together() {
        let mut window = Window::new("gpt-4o");
        let answer = r#"{"role":"assistant","content":"ok","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]}"#;
        crate::json::push_json(&mut window, &format!(r#"[{{"role":"user","content":"hi"}},{answer}]"#)).unwrap();
        let mut saved: Value = serde_json::from_str(&export(&window)).unwrap();
        saved.as_object_mut().unwrap().remove("checksum");
        assert_eq!(saved["messages"][2]["wire"], json!({"index": 1, "of": 2}));
        for (message, member, value, named) in [
            (1, "wire", None, "messages[1].raw_json"),
            (1, "wire", Some(json!({"index": 0, "of": 3})), "messages[2].wire"),
            (2, "wire", Some(json!({"index": 2, "of": 3})), "messages[2].wire"),
            (2, "raw_json", Some(json!(r#"{"role":"assistant"}"#)), "messages[2].raw_json"),
        ] {
            let mut doc = saved.clone();
            let object = doc["messages"][message].as_object_mut().unwrap();
            match value {
                Some(value) => drop(object.insert(member.into(), value)),
                None => drop(object.shift_remove(member)),
            }
            let err = import(&doc.to_string()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse);
            assert!(err.message().starts_with(&format!("{named}: ")), "{}", err.message());
        }
        let restored = import(&saved.to_string()).unwrap();
        assert_eq!(crate::json::render_json(&restored).unwrap(), crate::json::render_json(&window).unwrap());
        let mut counts_only = Window::new("gpt-4o");
        counts_only.configure(r#"{"retain_text":false}"#).unwrap();
        crate::json::push_json(&mut counts_only, &format!(r#"[{{"role":"user","content":"hi"}},{answer}]"#)).unwrap();
        let saved = export(&counts_only);
        assert!(!saved.contains("raw_json"));
        assert_eq!(export(&import(&saved).unwrap()), saved);
    }

    /// Found by the import fuzz target: a raw_json that is not JSON was imported, and
    /// render_json then sent it as broken JSON.
    #[test]
    fn a_raw_json_that_is_not_an_object_is_refused() {
        let mut window = Window::new("gpt-4o");
        crate::json::push_json(&mut window, r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]"#).unwrap();
        let mut saved: Value = serde_json::from_str(&export(&window)).unwrap();
        // Edited on purpose below: without its checksum, as a document edited by hand must be.
        saved.as_object_mut().unwrap().remove("checksum");
        for raw in [r#"{"role":"user","content":"hi"}m"#, "[1]", "7", ""] {
            let mut doc = saved.clone();
            doc["messages"][1]["raw_json"] = json!(raw);
            let err = import(&doc.to_string()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse, "{raw}: {}", err.message());
            assert!(err.message().contains("messages[1].raw_json"), "{}", err.message());
        }
        let restored = import(&saved.to_string()).unwrap();
        assert_eq!(crate::json::render_json(&restored).unwrap(), crate::json::render_json(&window).unwrap());
    }

    #[test]
    fn a_checked_import_compares_every_id() {
        let mut window = sample();
        let ids: Vec<i64> = (0..window.message_count() as i64).map(|i| 100 + i).collect();
        for (index, &id) in ids.iter().enumerate() {
            window.set_external_id(index, id).unwrap();
        }
        let saved = export(&window);
        assert_eq!(export(&import_checked(&saved, &ids).unwrap()), saved);
        let mut wrong = ids.clone();
        wrong[3] = 7;
        let err = import_checked(&saved, &wrong).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Mismatch);
        assert_eq!(err.message(), "message 3 has external id 103 but the caller's row is 7");
        let err = import_checked(&saved, &ids[1..]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Mismatch);
        assert_eq!(window.set_external_id(99, 1).unwrap_err().kind(), ErrorKind::OutOfRange);
    }

    #[test]
    fn save_and_load_round_trip_and_report_io_errors() {
        let path = std::env::temp_dir().join(format!("ctxwin-persist-{}.json", std::process::id()));
        let window = sample();
        save(&window, &path).unwrap();
        assert_eq!(export(&load(&path).unwrap()), export(&window));
        std::fs::write(&path, b"{\"format\":\"ctxwin-window\",\xff").unwrap();
        assert_eq!(load(&path).unwrap_err().kind(), ErrorKind::Parse);
        std::fs::remove_file(&path).unwrap();
        let err = load(&path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io);
        assert!(err.message().contains("ctxwin-persist"), "{}", err.message());
    }

    #[test]
    fn a_call_saved_before_names_were_kept_apart_reads_its_name_from_its_text() {
        let mut window = Window::new("gpt-4o");
        window.push(Kind::User, "list").unwrap();
        window.push_tool_call("c1", "ls", "{\"dir\":\"src\"}").unwrap();
        let mut doc: Value = serde_json::from_str(&export(&window)).unwrap();
        doc.as_object_mut().unwrap().remove("checksum");
        let call = &mut doc["messages"][1];
        call.as_object_mut().unwrap().remove("name");
        call["text"] = json!("ls\n{\"dir\":\"src\"}");
        let restored = import(&doc.to_string()).unwrap();
        let message = restored.message(1).unwrap();
        assert_eq!((message.name(), message.text()), (Some("ls"), Some("{\"dir\":\"src\"}")));
        assert_eq!(export(&restored), export(&window));
    }

    /// A one-task loop of `steps` tool steps under `summary`, prepared after each step as an
    /// agent does.
    fn one_task_loop(steps: usize) -> Window {
        let mut window = Window::new("gpt-4o");
        window.configure(r#"{"strategy":"summary","context_limit":6000,"summary_budget":100,"keep_recent_steps":2}"#).unwrap();
        window.push(Kind::User, "Fix the failing build in src/main.rs").unwrap();
        for step in 0..steps {
            let id = format!("call_{step}");
            window.push_tool_call(&id, "read_file", &format!(r#"{{"path":"src/m{step}.rs"}}"#)).unwrap();
            window.push_tool(Kind::ToolResult, &id, &format!("let x{step} = 1;\n").repeat(40)).unwrap();
            window.prepare().unwrap();
        }
        window
    }

    #[test]
    fn a_record_ending_inside_the_running_turn_and_its_request_round_trip() {
        let mut window = one_task_loop(40);
        assert!(window.needs_summary());
        window.summary_request().unwrap();
        window.set_summary(window.generation(), "Read src/m0.rs onwards.", 3).unwrap();
        let record = window.summary().unwrap().clone();
        assert_eq!((window.turn_count(), record.archived_turns), (1, 0));
        let end = record.archive_end();
        let step = window.step_starts().binary_search(&end).expect("the archive ends where a step starts");
        assert!(step > 1 && window.archived_steps() == step, "{record:?}");
        let saved = export(&window);
        let restored = import(&saved).unwrap();
        assert_eq!(export(&restored), saved);
        assert_eq!(restored.summary(), Some(&record));
        assert_eq!(crate::json::render_json(&restored).unwrap(), crate::json::render_json(&window).unwrap());
        // A request pending over the next steps is saved in steps and answered after a load.
        let mut window = window;
        for step in 40..80 {
            let id = format!("call_{step}");
            window.push_tool_call(&id, "read_file", "{}").unwrap();
            window.push_tool(Kind::ToolResult, &id, &"fn main() {}\n".repeat(40)).unwrap();
            window.prepare().unwrap();
        }
        window.summary_request().unwrap();
        let pending = window.pending_summary().unwrap();
        assert!(pending.first_step == step && pending.end_step > step, "{pending:?}");
        let mut restored = import(&export(&window)).unwrap();
        assert_eq!(restored.pending_summary(), Some(pending));
        restored.set_summary(restored.generation(), "Read every module.", 4).unwrap();
        window.set_summary(window.generation(), "Read every module.", 4).unwrap();
        assert_eq!(export(&restored), export(&window));
        assert_eq!(window.compactions()[1].first_archived, end, "the second record goes on where the first ended");
        // A record ending inside a step, or whose end is not in the turn it names, is refused.
        let mut doc: Value = serde_json::from_str(&export(&window)).unwrap();
        doc.as_object_mut().unwrap().remove("checksum");
        for (field, value) in [("last_archived", json!(end)), ("archived_turns", json!(1))] {
            let mut edited = doc.clone();
            edited["compactions"][0][field] = value;
            edited["compactions"][0]["messages_archived"] = json!(end + usize::from(field == "last_archived"));
            let err = import(&edited.to_string()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse);
            assert!(err.message().contains("compactions[0]"), "{field}: {}", err.message());
        }
    }

    /// A document saved before summaries could end inside a turn: its records end on turns
    /// (their fields are the same) and its pending request names turns. It loads as it did.
    #[test]
    fn a_record_and_request_saved_before_steps_read_as_they_did() {
        let mut window = sample();
        for turn in 4..8 {
            window.push(Kind::User, &format!("turn {turn}: please edit src/main.rs and run the tests")).unwrap();
            window.push_counted(Kind::ToolResult, Count::exact(20));
            window.end_turn();
        }
        window.summary_request().unwrap();
        let pending = window.pending_summary().unwrap();
        let turn_of_step = |step: usize| window.turn_of(window.step_starts()[step]).unwrap();
        let mut doc: Value = serde_json::from_str(&export(&window)).unwrap();
        doc.as_object_mut().unwrap().remove("checksum");
        doc["pending_summary"] = json!({
            "generation": pending.generation,
            "first_turn": turn_of_step(pending.first_step),
            "end_turn": turn_of_step(pending.end_step),
        });
        let record = &doc["compactions"][0];
        let turn_end = window.turn_info(record["archived_turns"].as_u64().unwrap() as usize).unwrap().first_message;
        assert_eq!(record["last_archived"].as_u64().unwrap() as usize + 1, turn_end, "a record of whole turns");
        let restored = import(&doc.to_string()).unwrap();
        assert_eq!(restored.pending_summary(), Some(pending));
        assert_eq!(restored.compactions(), window.compactions());
        assert_eq!(export(&restored), export(&window));
    }

    #[test]
    fn steps_recover_dropped_in_a_one_task_loop_are_saved_and_checked() {
        let mut window = Window::new("gpt-4o");
        window.push(Kind::User, "Fix the failing build in src/main.rs").unwrap();
        for step in 0..30 {
            let id = format!("call_{step}");
            window.push_tool_call(&id, "read_file", "{}").unwrap();
            window.push_tool(Kind::ToolResult, &id, &"fn main() {}\n".repeat(20)).unwrap();
        }
        window.end_turn();
        let info = crate::classify::classify(
            "This model's maximum context length is 4000 tokens. However, your messages resulted in 5000 tokens.",
        );
        window.recover(&info).unwrap();
        let step = window.forced_first_step();
        assert!(step > 1 && window.start() == window.step_starts()[step], "step {step}, start {}", window.start());
        let saved = export(&window);
        let doc: Value = serde_json::from_str(&saved).unwrap();
        assert_eq!(doc["forced_first_step"], json!(step));
        assert_eq!(doc["choices"].as_array().unwrap().last().unwrap()[3], json!(step));
        let restored = import(&saved).unwrap();
        assert_eq!(export(&restored), saved);
        assert_eq!(restored.start(), window.start());
        // A step past the ledger's is refused, naming the field.
        let mut edited = doc.clone();
        edited.as_object_mut().unwrap().remove("checksum");
        let last = edited["choices"].as_array().unwrap().len() - 1;
        edited["choices"][last][3] = json!(500);
        edited["forced_first_step"] = json!(500);
        let err = import(&edited.to_string()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Parse);
        assert!(err.message().contains("forced_first_step 500"), "{}", err.message());
    }
}
