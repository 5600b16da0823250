//! The request last rendered, so that a provider's usage report can be attributed to it
//! without the caller recording its message range ([`Window::observe_last_usage`]).
//!
//! Rendering only reads the window, so the record is a `Cell`: whatever renders a request
//! (`render_json`, `render_request`, `prepare`) calls
//! [`Window::note_request`] with the range it sent, and every call that rewinds the ledger
//! below that range forgets it.

use super::Window;
use crate::error::{Error, ErrorKind, Result};
use std::cell::Cell;

/// A request's messages, as [`Window::observe_usage`] takes them: the pinned messages
/// before `end`, the summary in place, and the ledger messages `first..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastRequest {
    /// The first history message sent.
    pub first: usize,
    /// Messages in the ledger when the request was rendered.
    pub end: usize,
}

/// The last request rendered, if the ledger still holds it.
#[derive(Clone, Debug, Default)]
pub(super) struct LastRequestCell(Cell<Option<LastRequest>>);

impl LastRequestCell {
    /// Forgets the request if a rewind to `message_count` messages removed part of it.
    pub fn forget_from(&self, message_count: usize) {
        if self.0.get().is_some_and(|request| request.end > message_count) {
            self.0.set(None);
        }
    }

    /// Forgets the request.
    pub fn forget(&self) {
        self.0.set(None);
    }
}

impl Window {
    /// Records that a request of the current view was rendered: its history starts at
    /// [`Window::start`] and it holds every message pushed so far.
    pub fn note_request(&self) {
        self.note_request_range(self.start(), self.ledger.messages.len());
    }

    /// Records that a request of the messages `first..end` (and the pinned ones before
    /// `end`) was rendered.
    pub fn note_request_range(&self, first: usize, end: usize) {
        self.wire.last_request.0.set(Some(LastRequest { first, end }));
    }

    /// The request last rendered, while the ledger still holds it.
    pub fn last_request(&self) -> Option<LastRequest> {
        self.wire.last_request.0.get()
    }

    /// [`Window::observe_usage`] for the request last rendered: the provider's prompt total
    /// is attributed to the messages that request sent.
    ///
    /// Errors: MISMATCH when no request was rendered since the window was created, reset,
    /// restored or rewound below the request's end; otherwise as `observe_usage`.
    pub fn observe_last_usage(&mut self, prompt_tokens: i64) -> Result<()> {
        let request = self.last_request().ok_or_else(|| {
            Error::new(
                ErrorKind::Mismatch,
                "no request to attribute the usage to: none was rendered since the window was created, \
                 reset, restored or rewound before its end",
            )
        })?;
        self.observe_usage(request.first, request.end, prompt_tokens)
    }
}
