//! Size limits on the text the library accepts, so that one oversized input is refused with
//! an error instead of exhausting the host's memory.
//!
//! Exact counting needs working memory proportional to the text (the tokenizer holds the
//! tokens of the text and per-byte state for each pre-tokenized piece), and a window that
//! keeps texts holds a copy of each. The limit is checked on the length alone, before a byte
//! of the text is read.

use crate::error::{Error, ErrorKind, Result};

/// The default largest message a window accepts, in bytes (64 MiB): far above any model's
/// context window (a few million tokens at most), far below what would endanger a host.
/// `ctxwin_count_text` applies it to the texts it counts.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;

/// The largest message a window accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageLimit {
    /// At most this many bytes.
    Bytes(u64),
    /// No limit (configured as `"max_message_bytes": 0`).
    Unlimited,
}

impl Default for MessageLimit {
    fn default() -> MessageLimit {
        MessageLimit::Bytes(DEFAULT_MAX_MESSAGE_BYTES)
    }
}

impl MessageLimit {
    /// The limit a configured number of bytes means: 0 is no limit.
    pub fn from_bytes(bytes: u64) -> MessageLimit {
        if bytes == 0 { MessageLimit::Unlimited } else { MessageLimit::Bytes(bytes) }
    }

    /// The limit as configured: bytes, or 0 for no limit.
    pub fn as_bytes(self) -> u64 {
        match self {
            MessageLimit::Bytes(max) => max,
            MessageLimit::Unlimited => 0,
        }
    }

    /// Refuses a window's text of `len` bytes above the limit with an
    /// [`ErrorKind::OutOfRange`] error that names `what`, the size and the limit, and how to
    /// raise it.
    pub fn check(self, what: &str, len: usize) -> Result<()> {
        self.refuse(what, len, "configure max_message_bytes to raise it, 0 for no limit")
    }

    /// Refuses a text of `len` bytes above the default limit, for the counting functions
    /// that take no configuration (`ctxwin_count_text`, `ctxwin_tokenizer_count`): the
    /// error says where a larger text is counted.
    pub fn check_unconfigured(len: usize) -> Result<()> {
        MessageLimit::default().refuse(
            "text",
            len,
            "a window configured with a larger max_message_bytes, or 0 for no limit, counts it when pushed",
        )
    }

    /// Refuses tool definitions of `len` bytes above the default limit
    /// (`ctxwin_count_tools_json`, which takes no configuration either).
    pub fn check_tool_definitions(len: usize) -> Result<()> {
        MessageLimit::default().refuse(
            "the tool definitions' JSON",
            len,
            "the limit of the counting functions; definitions that large are not sent to a model",
        )
    }

    fn refuse(self, what: &str, len: usize, advice: &str) -> Result<()> {
        match self {
            MessageLimit::Bytes(max) if len as u64 > max => Err(Error::new(
                ErrorKind::OutOfRange,
                format!("{what} is {len} bytes, above the maximum message size of {max} bytes ({advice})"),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_only_above_the_limit() {
        let limit = MessageLimit::from_bytes(10);
        assert!(limit.check("text", 10).is_ok());
        let err = limit.check("text", 11).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfRange);
        assert!(err.message().contains("text is 11 bytes") && err.message().contains("10 bytes"));
    }

    /// The counting functions have nothing to configure: their refusal points to a window.
    #[test]
    fn an_unconfigured_count_is_not_told_to_configure() {
        let max = DEFAULT_MAX_MESSAGE_BYTES as usize;
        assert!(MessageLimit::check_unconfigured(max).is_ok());
        let err = MessageLimit::check_unconfigured(max + 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfRange);
        assert!(!err.message().contains("configure max_message_bytes"), "{}", err.message());
        assert!(err.message().contains("a window configured with a larger max_message_bytes"), "{}", err.message());
    }

    #[test]
    fn zero_means_no_limit_and_the_default_is_64_mib() {
        assert!(MessageLimit::from_bytes(0).check("text", usize::MAX).is_ok());
        let default = MessageLimit::default();
        assert!(default.check("text", 64 << 20).is_ok());
        assert!(default.check("text", (64 << 20) + 1).is_err());
        assert_eq!(crate::ffi::window::CTXWIN_DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_BYTES);
    }

    #[test]
    fn a_window_refuses_an_oversized_push_and_appends_nothing() {
        let mut window = crate::Window::new("gpt-4o");
        window.configure(r#"{"max_message_bytes":5}"#).unwrap();
        assert!(window.push(crate::Kind::User, "12345").is_ok());
        let err = window.push(crate::Kind::User, "123456").unwrap_err();
        assert!(err.message().contains("max_message_bytes"), "{}", err.message());
        assert_eq!(window.message_count(), 1);
        window.configure(r#"{"max_message_bytes":0}"#).unwrap();
        assert!(window.push(crate::Kind::User, "123456").is_ok());
    }
}
