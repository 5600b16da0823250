//! Messages as the ledger keeps them.

use crate::tokens::Count;

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
    pub const ALL: [Kind; 6] = [
        Kind::System,
        Kind::User,
        Kind::Assistant,
        Kind::ToolCall,
        Kind::ToolResult,
        Kind::Thinking,
    ];

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
}

impl Message {
    /// A message; `text` is `None` when the window keeps counts only.
    pub fn new(kind: Kind, count: Count, source: CountSource, text: Option<Box<str>>) -> Message {
        Message {
            text,
            extras: None,
            tokens: count.tokens,
            exact: count.exact,
            kind,
            source,
        }
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

    /// Marks the text as having had invalid UTF-8 replaced.
    pub(crate) fn mark_replaced_utf8(&mut self) {
        self.extras.get_or_insert_default().replaced_utf8 = true;
    }

    /// Tokens of the message's non-text content (see [`MessageExtras::media`]).
    pub fn media(&self) -> Option<Count> {
        self.extras().and_then(|extras| extras.media)
    }

    /// The tool call id of a TOOL_CALL or TOOL_RESULT message, if it has one.
    pub fn call_id(&self) -> Option<&str> {
        self.extras.as_ref()?.call_id.as_deref()
    }

    /// The message's kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The message's token count.
    pub fn count(&self) -> Count {
        Count {
            tokens: self.tokens,
            exact: self.exact,
        }
    }

    /// The retained text, if any.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Who produced the count.
    pub fn source(&self) -> CountSource {
        self.source
    }

    /// Replaces the count (after a model change, or the caller's `set_count`).
    pub(crate) fn set_count(&mut self, count: Count) {
        self.tokens = count.tokens;
        self.exact = count.exact;
    }

    /// Records who produced the count.
    pub(crate) fn set_source(&mut self, source: CountSource) {
        self.source = source;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_message_takes_32_bytes() {
        assert_eq!(std::mem::size_of::<Message>(), 32);
    }
}
