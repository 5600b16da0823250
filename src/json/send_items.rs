//! What `render_json` sends: the one place that decides which items make up the request.
//!
//! Today that is the pinned messages plus the live messages `[start, count)`, in ledger
//! order. When the view (truncated copies, synthetic summary items) lands, this function
//! returns it instead; [`render_json`](super::render_json) already renders modified and
//! synthetic items from their kind and text.

use crate::message::Message;
use crate::window::Window;
use std::borrow::Cow;

/// One item of what is sent.
#[derive(Clone, Debug)]
pub struct SendItem<'a> {
    /// The ledger index of the message the item comes from; `None` for an item with no
    /// ledger message behind it.
    pub source: Option<usize>,
    /// The message to send: the ledger's own (borrowed), or a modified or synthetic copy.
    pub message: Cow<'a, Message>,
}

/// The items of the next request, in order: pinned messages (the head before the first USER
/// message and SYSTEM messages anywhere) and every message from `start` on. O(messages).
pub fn items_to_send(window: &Window) -> Vec<SendItem<'_>> {
    let start = window.start();
    (0..window.message_count())
        .filter(|&index| index >= start || window.is_pinned_at(index))
        .filter_map(|index| {
            Some(SendItem {
                source: Some(index),
                message: Cow::Borrowed(window.message(index)?),
            })
        })
        .collect()
}
