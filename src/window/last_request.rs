//! The request last rendered, so that a provider's usage report can be attributed to it
//! without the caller recording its message range ([`Window::observe_last_usage`]).
//!
//! Rendering only reads the window, so the record is a `Cell`: whatever renders a request
//! (`render_json`, `render_request`, `prepare`) calls
//! [`Window::note_request`], which records the range it sent and what the request held as
//! it was sent (a computed view's cut outputs, summary blocks and markers, not the messages
//! they stand for), and every call that rewinds the ledger below that range forgets it.

use super::Window;
use super::usage::plain_usage;
use crate::error::Result;
use crate::tally::Tally;
use crate::view::ItemType;
use std::cell::Cell;

/// A request's messages, as [`Window::observe_usage`] takes them: the pinned messages
/// before `end`, the summary in place, and the ledger messages `first..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastRequest {
    /// The first history message sent.
    pub first: usize,
    /// Messages in the ledger when the request was rendered.
    pub end: usize,
    /// The tokens the request held, as counted before calibration: the overhead, the
    /// summary in place and every item sent (under `tiered` or `monologue` the cut outputs,
    /// summary block and marker, not the whole messages of `first..end`). A usage report for
    /// this request is judged against it.
    pub sent: Tally,
    /// Which render of the window this was (each `prepare`, `render_json` or
    /// `render_request` is a request of its own): a usage report counts once per render.
    pub render: u64,
}

/// The last request rendered, if the ledger still holds it, and the number of renders.
#[derive(Clone, Debug, Default)]
pub(super) struct LastRequestCell(Cell<Option<LastRequest>>, Cell<u64>);

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
    /// [`Window::start`], it holds every message pushed so far, and it sent the view's items.
    pub fn note_request(&self) {
        let renders = &self.wire.last_request.1;
        renders.set(renders.get().wrapping_add(1));
        let request =
            LastRequest { first: self.start(), end: self.ledger.messages.len(), sent: self.view_sent(), render: renders.get() };
        self.wire.last_request.0.set(Some(request));
    }

    /// What the current view sends, as counted before calibration (see [`LastRequest::sent`]).
    fn view_sent(&self) -> Tally {
        let mut sent = self.overhead_tally();
        if let Some(summary) = self.sent_summary() {
            sent.add(summary.summary_tokens);
        }
        let messages = &self.ledger.messages;
        match &self.policy.overlay {
            Some(overlay) => {
                for item in &overlay.items {
                    // A message sent whole counts as pushed; a cut or written item as counted.
                    sent.add(if item.item_type == ItemType::Message { messages[item.index].count() } else { item.tokens });
                }
                for message in &messages[overlay.through..] {
                    sent.add(message.count());
                }
            }
            None => {
                for &index in self.pinned_before(self.start()) {
                    sent.add(messages[index].count());
                }
                for message in &messages[self.start()..] {
                    sent.add(message.count());
                }
            }
        }
        sent.add(self.running_cancellations());
        sent
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
        let (key, sent) = self.last_request_report()?;
        self.observe_report(key, sent, plain_usage(prompt_tokens)?, false)
    }
}
