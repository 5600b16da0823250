//! The library's error type: a kind the C API maps to a status code, and a message for
//! `last_error`.

use std::fmt;

/// What went wrong, coarsely; each kind has a frozen C status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Text was not valid UTF-8.
    InvalidUtf8,
    /// An argument had a value the function does not accept.
    InvalidArg,
    /// An index or count was outside the valid range.
    OutOfRange,
    /// A feature or option this version does not provide.
    Unsupported,
    /// Input could not be parsed.
    Parse,
    /// Reading or writing a file failed.
    Io,
    /// Input disagreed with the current state (a stale generation, a foreign record).
    Mismatch,
}

/// An error with a human-readable explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// An error of `kind` explained by `message`, capped at [`MAX_MESSAGE_BYTES`] (see
    /// [`capped`]).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: capped(message.into()) }
    }

    /// Shorthand for an [`ErrorKind::InvalidArg`] error.
    pub fn invalid_arg(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArg, message)
    }

    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The explanation.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The most of an offending value (a name, a key, an id, a path) an error message repeats.
pub const MAX_ECHO_BYTES: usize = 200;

/// The most an error message holds, in bytes, the ellipsis and length of a cut message
/// included: a message that echoes its values through [`echo`] stays far below; one that
/// would not (a value echoed whole by mistake) is cut here, so no input makes `last_error`
/// hold more (a buffer of 4097 bytes takes any message and its NUL).
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// A value as an error message repeats it: whole up to [`MAX_ECHO_BYTES`] bytes, else its
/// first bytes (cut between characters), an ellipsis and its full length:
/// `sliding_window_strat… (100000000 bytes)`.
pub fn echo(value: &str) -> Echo<'_> {
    Echo { value, max: MAX_ECHO_BYTES }
}

/// A value displayed at most `max` bytes long (see [`echo`]).
pub struct Echo<'a> {
    value: &'a str,
    max: usize,
}

impl fmt::Display for Echo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.len() <= self.max {
            return f.write_str(self.value);
        }
        let mut end = self.max;
        while !self.value.is_char_boundary(end) {
            end -= 1;
        }
        write!(f, "{}{}", &self.value[..end], cut_mark(self.value.len()))
    }
}

/// What a cut value ends with, after its first bytes: an ellipsis and its full length `len`.
fn cut_mark(len: usize) -> String {
    format!("… ({len} bytes)")
}

/// `message` cut as [`echo`] cuts a value, to at most [`MAX_MESSAGE_BYTES`] bytes: the
/// ellipsis and the length it adds come out of the cap.
pub fn capped(message: String) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    let added = cut_mark(message.len()).len();
    Echo { value: &message, max: MAX_MESSAGE_BYTES - added }.to_string()
}

/// Result with the library's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_is_echoed_capped_with_its_length() {
        assert_eq!(echo("sliding").to_string(), "sliding");
        let exact = "x".repeat(MAX_ECHO_BYTES);
        assert_eq!(echo(&exact).to_string(), exact);
        let long = "y".repeat(100_000_000);
        assert_eq!(echo(&long).to_string(), format!("{}… (100000000 bytes)", "y".repeat(MAX_ECHO_BYTES)));
        // Cut between characters: 'é' is two bytes and would straddle byte 200.
        let accented = format!("{}é{}", "a".repeat(MAX_ECHO_BYTES - 1), "b".repeat(10));
        assert_eq!(echo(&accented).to_string(), format!("{}… ({} bytes)", "a".repeat(MAX_ECHO_BYTES - 1), accented.len()));
    }

    /// A message that echoes a value whole by mistake is still bounded.
    #[test]
    fn every_message_is_bounded() {
        let error = Error::invalid_arg(format!("unknown thing '{}'", "z".repeat(10_000_000)));
        assert_eq!(error.message().len(), MAX_MESSAGE_BYTES, "the cap holds the ellipsis and the length");
        assert!(error.message().starts_with("unknown thing 'zzz") && error.message().ends_with("… (10000016 bytes)"));
        assert_eq!(Error::invalid_arg("short").message(), "short");
    }
}
