//! What `render_json` sends: the window's view, as messages to render.
//!
//! A view item that is a ledger message unchanged is sent as that message (rendered from its
//! original JSON when it has one); a truncated copy, a summary or a synthetic "cancelled"
//! result becomes a new message of its kind and text, keeping the tool call id of the ledger
//! message it stands for.

use crate::message::{CountSource, Message, MessageExtras};
use crate::view::ItemType;
use crate::window::Window;
use std::borrow::Cow;

/// One item of what is sent.
#[derive(Clone, Debug)]
pub struct SendItem<'a> {
    /// The ledger index of the message the item is, unchanged; `None` for a truncated copy
    /// or a synthetic item.
    pub source: Option<usize>,
    /// The ledger index the item stands for: the message itself, the message a truncated
    /// copy shortens, the call a cancelled result answers, the first message a summary or
    /// marker replaces.
    pub stands_for: usize,
    /// The tool name of the ledger message the item stands for, if it has one (a truncated
    /// result keeps its name, a cancelled result takes its call's).
    pub name: Option<&'a str>,
    /// The message to send: the ledger's own (borrowed), or a modified or synthetic copy.
    pub message: Cow<'a, Message>,
    /// True when the ledger message the item stands for was pushed as provider JSON, so its
    /// text (and a truncated copy's) is what its wire form held: for a Gemini
    /// `functionResponse`, its `response` object as JSON.
    pub pushed_as_json: bool,
}

/// The items of the next request, in order: the window's view. O(view items).
pub fn items_to_send(window: &Window) -> Vec<SendItem<'_>> {
    (0..window.view_len())
        .filter_map(|i| window.view_item(i))
        .filter_map(|item| {
            let ledger = window.message(item.index);
            let name = ledger.and_then(Message::name);
            let pushed_as_json = ledger.and_then(Message::extras).is_some_and(|extras| extras.wire.is_some());
            if item.item_type == ItemType::Message {
                return ledger.map(|message| SendItem {
                    source: Some(item.index),
                    stands_for: item.index,
                    name,
                    message: Cow::Borrowed(message),
                    pushed_as_json,
                });
            }
            let extras = MessageExtras { call_id: ledger.and_then(Message::call_id).map(Into::into), ..MessageExtras::default() };
            let text = item.text.map(Into::into);
            let message = Message::new(item.kind, item.tokens, CountSource::Library, text).with_extras(extras);
            Some(SendItem { source: None, stands_for: item.index, name, message: Cow::Owned(message), pushed_as_json })
        })
        .collect()
}
