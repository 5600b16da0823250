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
    /// An error of `kind` explained by `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
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

/// Result with the library's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
