//! Messages as the ledger keeps them.

use crate::error::{Error, Result};
use crate::tokens::Count;
use std::borrow::Cow;

/// What a message is. The numbers are the frozen `CTXWIN_KIND_*` constants.
///
/// Kinds are not wire roles: Anthropic sends tool results with role "user", but a tool result
/// never starts a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A system prompt or instruction; always pinned.
    System = 0,
    /// A user message; starts a turn.
    User = 1,
    /// Assistant text.
    Assistant = 2,
    /// A tool call made by the assistant.
    ToolCall = 3,
    /// The result of a tool call.
    ToolResult = 4,
    /// Assistant reasoning.
    Thinking = 5,
}

impl Kind {
    /// Every kind, in code order.
    pub const ALL: [Kind; 6] = [Kind::System, Kind::User, Kind::Assistant, Kind::ToolCall, Kind::ToolResult, Kind::Thinking];

    /// The kind with code `code`, if there is one.
    pub fn from_code(code: i32) -> Option<Kind> {
        usize::try_from(code).ok().and_then(|i| Kind::ALL.get(i).copied())
    }

    /// The kind's frozen code.
    pub fn code(self) -> i32 {
        i32::from(self as u8)
    }
}

/// Who produced a message's count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountSource {
    /// Counted by the library when pushed; recounted when the model changes.
    Library,
    /// Supplied by the caller (`push_counted`); taken as given and never recounted.
    Caller,
}

/// The parts of a message most messages lack, boxed so that a counts-only window of millions
/// of messages pays one pointer for them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageExtras {
    /// The tool call id of a TOOL_CALL or TOOL_RESULT message.
    pub call_id: Option<Box<str>>,
    /// The tool (function) name of a TOOL_CALL, or of a TOOL_RESULT whose wire form names
    /// it (Gemini's `functionResponse`). The message's text is then the call's arguments or
    /// the result's body, without the name.
    pub name: Option<Box<str>>,
    /// The provider JSON object the message was pushed as, kept verbatim for rendering. A
    /// wire message that became several ledger messages keeps it on the first of them.
    pub raw_json: Option<Box<str>>,
    /// The caller's id for this message (a database row id), kept across save and load.
    pub external_id: Option<i64>,
    /// Which ledger message of its wire message this is, for messages pushed as JSON.
    pub wire: Option<WirePart>,
    /// Tokens of images and other non-text content, counted by the provider's rule and added
    /// to the text's count; a model change recounts the text only.
    pub media: Option<Count>,
    /// The host's id of the host message this ledger message is a part of
    /// (`push_message`); every part carries it.
    pub host_id: Option<i64>,
    /// True when the pushed bytes were not valid UTF-8 and each invalid sequence was
    /// replaced by U+FFFD (`invalid_utf8: "replace"`).
    pub replaced_utf8: bool,
    /// True for a tool part a model produced that the window could not pair or send as one,
    /// kept counted as its text (`invalid_tool_parts: "keep"`): a call is kept as ASSISTANT
    /// text, a result as a result the view leaves out.
    pub kept_as_text: bool,
    /// True for a provider's compaction (an Anthropic `compaction` block, an OpenAI
    /// Responses `compaction` item): a USER message that stands for everything before it,
    /// which the window archives (see `Window::push_parsed`).
    pub compaction: bool,
}

/// The position of a ledger message inside the provider message it was parsed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WirePart {
    /// This message's position among the wire message's ledger messages (0 = the first,
    /// which holds `raw_json`).
    pub index: u32,
    /// How many ledger messages the wire message became.
    pub of: u32,
}

/// One message in the ledger: its kind, its count and, unless the window keeps counts only,
/// its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    text: Option<Box<str>>,
    extras: Option<Box<MessageExtras>>,
    // The count's two fields side by side with the small ones: 32 bytes a message, not 40.
    tokens: u32,
    exact: bool,
    kind: Kind,
    source: CountSource,
    /// True while the library has not counted the text yet (see [`Message::uncounted`]).
    uncounted: bool,
}

impl Message {
    /// A message; `text` is `None` when the window keeps counts only.
    pub fn new(kind: Kind, count: Count, source: CountSource, text: Option<Box<str>>) -> Message {
        Message { text, extras: None, tokens: count.tokens, exact: count.exact, kind, source, uncounted: false }
    }

    /// A message whose text the library counts when its count is first needed (the window
    /// resolves it before anything reads it; a caller's count recorded first saves the
    /// counting). Its count reads 0 until then.
    pub(crate) fn uncounted(kind: Kind, text: Box<str>) -> Message {
        Message { uncounted: true, ..Message::new(kind, Count::exact(0), CountSource::Library, Some(text)) }
    }

    /// True while the library has not counted the text yet.
    pub(crate) fn is_uncounted(&self) -> bool {
        self.uncounted
    }

    /// Forgets the count: the library counts the text when it is next needed.
    pub(crate) fn mark_uncounted(&mut self) {
        self.tokens = 0;
        self.exact = true;
        self.source = CountSource::Library;
        self.uncounted = true;
    }

    /// This message with `extras` attached.
    pub fn with_extras(mut self, extras: MessageExtras) -> Message {
        self.extras = Some(Box::new(extras));
        self
    }

    /// The message's extras, if any.
    pub fn extras(&self) -> Option<&MessageExtras> {
        self.extras.as_deref()
    }

    /// The caller's id for this message, if it set one.
    pub fn external_id(&self) -> Option<i64> {
        self.extras().and_then(|extras| extras.external_id)
    }

    /// Ties this message to the caller's id (a database row id).
    pub(crate) fn set_external_id(&mut self, id: i64) {
        self.extras.get_or_insert_default().external_id = Some(id);
    }

    /// The host id of the host message this is a part of, if it was pushed with one.
    pub fn host_id(&self) -> Option<i64> {
        self.extras().and_then(|extras| extras.host_id)
    }

    /// True when invalid UTF-8 in the pushed text was replaced by U+FFFD.
    pub fn replaced_utf8(&self) -> bool {
        self.extras().is_some_and(|extras| extras.replaced_utf8)
    }

    /// True for a tool part kept as text (see [`MessageExtras::kept_as_text`]).
    pub fn kept_as_text(&self) -> bool {
        self.extras().is_some_and(|extras| extras.kept_as_text)
    }

    /// Flags the message as a tool part kept as text.
    pub(crate) fn mark_kept_as_text(&mut self) {
        self.extras.get_or_insert_default().kept_as_text = true;
    }

    /// Marks the text as having had invalid UTF-8 replaced.
    pub(crate) fn mark_replaced_utf8(&mut self) {
        self.extras.get_or_insert_default().replaced_utf8 = true;
    }

    /// True for a provider's compaction block or item (see [`MessageExtras::compaction`]).
    pub fn is_compaction(&self) -> bool {
        self.extras().is_some_and(|extras| extras.compaction)
    }

    /// Tokens of the message's non-text content (see [`MessageExtras::media`]).
    pub fn media(&self) -> Option<Count> {
        self.extras().and_then(|extras| extras.media)
    }

    /// The tool call id of a TOOL_CALL or TOOL_RESULT message, if it has one.
    pub fn call_id(&self) -> Option<&str> {
        self.extras.as_ref()?.call_id.as_deref()
    }

    /// The tool name of a TOOL_CALL (or of a TOOL_RESULT that carries one), if known.
    pub fn name(&self) -> Option<&str> {
        self.extras.as_ref()?.name.as_deref()
    }

    /// The JSON the message was pushed as, if it was pushed with `push_json` (kept on the
    /// first ledger message of its wire message only).
    pub fn raw_json(&self) -> Option<&str> {
        self.extras.as_ref()?.raw_json.as_deref()
    }

    /// The text the message's count covers (see [`counted_text`]), if the text was kept.
    pub fn counted_text(&self) -> Option<Cow<'_, str>> {
        Some(counted_text(self.name(), self.text()?))
    }

    /// The message's kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The message's token count.
    pub fn count(&self) -> Count {
        Count { tokens: self.tokens, exact: self.exact }
    }

    /// The retained text, if any.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Who produced the count.
    pub fn source(&self) -> CountSource {
        self.source
    }

    /// Replaces the count (after a model change, or the caller's `set_count`); the message
    /// is counted from then on.
    pub(crate) fn set_count(&mut self, count: Count) {
        self.tokens = count.tokens;
        self.exact = count.exact;
        self.uncounted = false;
    }

    /// Records who produced the count.
    pub(crate) fn set_source(&mut self, source: CountSource) {
        self.source = source;
    }
}

/// The text a message's count covers: a tool's name and its text (arguments or body) joined
/// by a newline, as the providers see both; the text alone when there is no name.
pub fn counted_text<'a>(name: Option<&str>, text: &'a str) -> Cow<'a, str> {
    match name {
        Some(name) => {
            let mut counted = String::with_capacity(name.len() + 1 + text.len());
            counted.push_str(name);
            counted.push('\n');
            counted.push_str(text);
            Cow::Owned(counted)
        }
        None => Cow::Borrowed(text),
    }
}

/// A TOOL_CALL's name and arguments from the text route (`push` and `push_tool`): the tool's
/// name, a newline and the arguments; or a JSON object naming the call,
/// `{"name": "read_file", "arguments": {...}}` (`input` or `args` for `arguments`; an
/// object or a string). Refused (INVALID_ARG, pointing to `push_tool_call`) when there is no
/// name: an empty first line, or a first line that is itself JSON arguments.
pub fn split_call_text(text: &str) -> Result<(Cow<'_, str>, Cow<'_, str>)> {
    if let Ok(serde_json::Value::Object(call)) = crate::strict_json::parse(text) {
        if let Some(name) = call.get("name").and_then(serde_json::Value::as_str).filter(|name| !name.trim().is_empty()) {
            let arguments = ["arguments", "input", "args"]
                .iter()
                .find_map(|key| call.get(*key))
                .map_or(String::new(), |value| value.as_str().map_or_else(|| value.to_string(), str::to_owned));
            return Ok((Cow::Owned(name.to_owned()), Cow::Owned(arguments)));
        }
    }
    let (name, arguments) = text.split_once('\n').unwrap_or((text, ""));
    let looks_like_arguments = (name.starts_with('{') || name.starts_with('[')) && crate::strict_json::parse(name).is_ok();
    if name.trim().is_empty() || looks_like_arguments {
        return Err(Error::invalid_arg(
            "a TOOL_CALL's text is its tool name, a newline, then its arguments (\"read_file\\n{...}\"), \
             or {\"name\":...,\"arguments\":...}; this text has no name: use \
             ctxwin_window_push_tool_call(w, id, name, arguments)",
        ));
    }
    Ok((Cow::Borrowed(name), Cow::Borrowed(arguments)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_route_splits_name_and_arguments() {
        let split = |text| split_call_text(text).map(|(name, arguments)| (name.into_owned(), arguments.into_owned()));
        assert_eq!(split("ls\n{\"dir\":\"src\"}").unwrap(), ("ls".into(), "{\"dir\":\"src\"}".into()));
        assert_eq!(split("read module").unwrap(), ("read module".into(), String::new()));
        assert_eq!(
            split("{\"name\":\"run\",\"arguments\":{\"cmd\":\"make\"}}").unwrap(),
            ("run".into(), "{\"cmd\":\"make\"}".into())
        );
        assert_eq!(split("{\"name\":\"run\",\"input\":\"x\"}").unwrap(), ("run".into(), "x".into()));
        for nameless in ["{\"path\":\"a.c\"}", "", "\n{}", "[1,2]\nx"] {
            let err = split_call_text(nameless).unwrap_err();
            assert!(err.message().contains("push_tool_call"), "{nameless:?}: {}", err.message());
        }
        assert_eq!(counted_text(Some("ls"), "{}"), "ls\n{}");
        assert_eq!(counted_text(None, "{}"), "{}");
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_message_takes_32_bytes() {
        assert_eq!(std::mem::size_of::<Message>(), 32);
    }
}
