//! Text from C arrives as bytes: the `invalid_utf8` setting says whether bytes that are not
//! UTF-8 (a binary tool output, say) are refused or kept with U+FFFD in their place.

use super::Window;
use crate::config::InvalidUtf8;
use crate::error::{Error, ErrorKind, Result};
use crate::message::Kind;
use crate::tokens::Count;
use std::borrow::Cow;

/// Bytes decoded as the window's `invalid_utf8` setting says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// The text: the bytes themselves when they are UTF-8.
    pub text: Cow<'a, str>,
    /// True when invalid sequences were replaced by U+FFFD.
    pub replaced: bool,
}

impl Window {
    /// Decodes `bytes`, the parameter or field `what`: valid UTF-8 is borrowed as it is;
    /// otherwise INVALID_UTF8 naming `what` and the offset (`"error"`), or the text with
    /// U+FFFD in place of each maximal invalid sequence (`"replace"`).
    pub fn decode<'a>(&self, bytes: &'a [u8], what: &str) -> Result<Decoded<'a>> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Decoded { text: Cow::Borrowed(text), replaced: false }),
            Err(e) if self.settings.invalid_utf8 == InvalidUtf8::Error => Err(Error::new(
                ErrorKind::InvalidUtf8,
                format!(
                    "{what} is not valid UTF-8: invalid byte at offset {} (configure \"invalid_utf8\":\"replace\" to keep it with U+FFFD)",
                    e.valid_up_to()
                ),
            )),
            Err(_) => Ok(Decoded { text: String::from_utf8_lossy(bytes), replaced: true }),
        }
    }

    /// [`Window::push`] of bytes, decoded as [`Window::decode`] says; a replaced text is
    /// flagged on its message ([`crate::message::Message::replaced_utf8`]).
    pub fn push_bytes(&mut self, kind: Kind, bytes: &[u8]) -> Result<Count> {
        self.check_message_size(bytes.len())?;
        let decoded = self.decode(bytes, "text")?;
        let count = self.push(kind, &decoded.text)?;
        self.flag_newest(decoded.replaced);
        Ok(count)
    }

    /// [`Window::push_tool`] of a text given as bytes, decoded as [`Window::decode`] says.
    pub fn push_tool_bytes(&mut self, kind: Kind, call_id: &str, bytes: &[u8]) -> Result<Count> {
        let decoded = self.decode(bytes, "text")?;
        let count = self.push_tool(kind, call_id, &decoded.text)?;
        self.flag_newest(decoded.replaced);
        Ok(count)
    }

    /// Flags the newest message's text as replaced when `replaced`.
    fn flag_newest(&mut self, replaced: bool) {
        if let Some(message) = self.ledger.messages.last_mut().filter(|_| replaced) {
            message.mark_replaced_utf8();
        }
    }
}
