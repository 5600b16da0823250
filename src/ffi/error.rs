//! Status codes, their descriptions, and the error an exported function records on its handle.

use super::boundary::ffi_boundary;
use crate::error::{Error, ErrorKind};
use libc::c_char;

/// The result of every fallible function. `CTXWIN_STATUS_OK` (also spelt `CTXWIN_OK`) is 0,
/// so `if (rc)` tests for failure. The numbers are frozen and never reused.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ctxwin_status {
    /// Success.
    Ok = 0,
    /// A required pointer argument was NULL.
    NullArg = 1,
    /// Text was not valid UTF-8.
    InvalidUtf8 = 2,
    /// An argument had a value the function does not accept.
    InvalidArg = 3,
    /// An index or count was out of range.
    OutOfRange = 4,
    /// The caller's buffer was too small; `*needed` says how large it must be.
    BufferTooSmall = 5,
    /// The operation or option is not supported by this version.
    Unsupported = 6,
    /// Input could not be parsed.
    Parse = 7,
    /// A file could not be read or written.
    Io = 8,
    /// Input disagreed with the handle's state (for example a stale generation).
    Mismatch = 9,
    /// The library caught an internal panic; the handle is poisoned and only `_free` works.
    Panic = 10,
}

impl ctxwin_status {
    /// Every status, in code order.
    const ALL: [ctxwin_status; 11] = [
        ctxwin_status::Ok,
        ctxwin_status::NullArg,
        ctxwin_status::InvalidUtf8,
        ctxwin_status::InvalidArg,
        ctxwin_status::OutOfRange,
        ctxwin_status::BufferTooSmall,
        ctxwin_status::Unsupported,
        ctxwin_status::Parse,
        ctxwin_status::Io,
        ctxwin_status::Mismatch,
        ctxwin_status::Panic,
    ];

    /// A static, NUL-terminated description.
    fn description(self) -> &'static [u8] {
        match self {
            ctxwin_status::Ok => b"success\0",
            ctxwin_status::NullArg => b"a required pointer argument was NULL\0",
            ctxwin_status::InvalidUtf8 => b"text was not valid UTF-8\0",
            ctxwin_status::InvalidArg => b"invalid argument\0",
            ctxwin_status::OutOfRange => b"index or count out of range\0",
            ctxwin_status::BufferTooSmall => b"buffer too small\0",
            ctxwin_status::Unsupported => b"not supported by this version\0",
            ctxwin_status::Parse => b"input could not be parsed\0",
            ctxwin_status::Io => b"file input/output failed\0",
            ctxwin_status::Mismatch => b"input does not match the window's state\0",
            ctxwin_status::Panic => b"internal error: the library caught a panic\0",
        }
    }
}

impl From<ErrorKind> for ctxwin_status {
    fn from(kind: ErrorKind) -> ctxwin_status {
        match kind {
            ErrorKind::InvalidUtf8 => ctxwin_status::InvalidUtf8,
            ErrorKind::InvalidArg => ctxwin_status::InvalidArg,
            ErrorKind::OutOfRange => ctxwin_status::OutOfRange,
            ErrorKind::Unsupported => ctxwin_status::Unsupported,
            ErrorKind::Parse => ctxwin_status::Parse,
            ErrorKind::Io => ctxwin_status::Io,
            ErrorKind::Mismatch => ctxwin_status::Mismatch,
        }
    }
}

/// A failed call: the status to return and the message `last_error` will give.
#[derive(Debug)]
pub struct FfiError {
    pub(crate) status: ctxwin_status,
    pub(crate) message: String,
}

impl FfiError {
    /// A failure with `status`, explained by `message`.
    pub fn new(status: ctxwin_status, message: impl Into<String>) -> FfiError {
        FfiError { status, message: crate::error::capped(message.into()) }
    }
}

impl From<Error> for FfiError {
    fn from(error: Error) -> FfiError {
        FfiError::new(error.kind().into(), error.message())
    }
}

/// A static description of the status code `code`.
///
/// Takes any integer: codes this version does not know map to "unknown status code".
///
/// Returns a NUL-terminated string with static lifetime; never NULL; do not free it.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
#[unsafe(no_mangle)]
#[must_use]
pub extern "C" fn ctxwin_status_str(code: i32) -> *const c_char {
    ffi_boundary! {
    let description = usize::try_from(code)
        .ok()
        .and_then(|i| ctxwin_status::ALL.get(i))
        .map_or(&b"unknown status code\0"[..], |status| status.description());
    description.as_ptr().cast()
    }
}
