//! The stable prefix: the leading items of a request that are byte-identical to the previous
//! request's, where a provider's cache breakpoint belongs.
//!
//! Each item of a prepared request is remembered by a fingerprint, a 128-bit hash of what the
//! item sends: its type and kind, its text, the original JSON and call id of the ledger
//! message it is, and which parts of that JSON message the request sends (a message the
//! boundary splits is rendered from fewer blocks). A message whose text the window did not
//! keep is known by its index and count, and every item standing for a ledger index at or
//! after a rewind (`truncate`, `reset`) is taken as changed, so the prefix is never reported
//! longer than the true common prefix.

use crate::message::Message;
use crate::view::{ItemType, ViewItem};
use std::hash::{DefaultHasher, Hash, Hasher};

/// A 128-bit hash of what one item sends.
pub type Fingerprint = u128;

/// One item of a request: the view item and, when it is a ledger message sent as pushed,
/// that message.
#[derive(Clone, Copy, Debug)]
pub struct SentItem<'a> {
    /// The view item.
    pub item: ViewItem<'a>,
    /// The ledger message the item stands for.
    pub message: Option<&'a Message>,
}

impl SentItem<'_> {
    /// The original JSON message this item is a part of (its first ledger index), when it is
    /// sent as pushed.
    fn wire_origin(&self) -> Option<usize> {
        let wire = self.message?.extras()?.wire?;
        (self.item.item_type == ItemType::Message && wire.of > 1).then(|| self.item.index - wire.index as usize)
    }

    fn hash_into(&self, hasher: &mut DefaultHasher) {
        (self.item.item_type as u8, self.item.kind.code(), self.item.text).hash(hasher);
        if let Some(message) = self.message {
            message.call_id().hash(hasher);
            if self.item.item_type == ItemType::Message {
                let extras = message.extras();
                extras.and_then(|e| e.raw_json.as_deref()).hash(hasher);
                extras.and_then(|e| e.wire).map(|w| (w.index, w.of)).hash(hasher);
                if message.text().is_none() {
                    // Counts only: the message is known by where it stands and what it counts.
                    (self.item.index, message.count().tokens).hash(hasher);
                }
            }
        }
    }
}

/// The fingerprints of `items`, in order.
pub fn fingerprints(items: &[SentItem<'_>]) -> Vec<Fingerprint> {
    let mut out = Vec::with_capacity(items.len());
    let mut run = 0;
    while run < items.len() {
        // A run of items from one JSON message: each fingerprint covers which of its parts
        // are sent, since a message sent in part is rendered from fewer blocks.
        let origin = items[run].wire_origin();
        let end = match origin {
            Some(_) => run + items[run..].iter().take_while(|item| item.wire_origin() == origin).count(),
            None => run + 1,
        };
        // Which parts are sent, hashed once per message (per item, a message of n parts
        // cost O(n^2)).
        let parts = origin.map(|_| {
            let parts: Vec<usize> = items[run..end].iter().map(|item| item.item.index).collect();
            [0u8, 1].map(|salt| {
                let mut hasher = DefaultHasher::new();
                (salt, &parts).hash(&mut hasher);
                hasher.finish()
            })
        });
        for item in &items[run..end] {
            let half = |salt: u8| {
                let mut hasher = DefaultHasher::new();
                salt.hash(&mut hasher);
                item.hash_into(&mut hasher);
                if let Some(parts) = parts {
                    parts[usize::from(salt)].hash(&mut hasher);
                }
                hasher.finish()
            };
            out.push((u128::from(half(0)) << 64) | u128::from(half(1)));
        }
        run = end;
    }
    out
}

/// The request last prepared, as the stable prefix needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreparedView {
    /// The fingerprints of its items.
    items: Vec<Fingerprint>,
    /// The lowest ledger index removed since (a rewind): items standing for it or a later
    /// message may differ whatever their fingerprint says.
    rewound_from: Option<usize>,
    /// Leading items it had in common with the request before it.
    stable: usize,
}

impl PreparedView {
    /// A prepared view as saved.
    pub fn from_parts(items: Vec<Fingerprint>, rewound_from: Option<usize>, stable: usize) -> PreparedView {
        PreparedView { stable: stable.min(items.len()), items, rewound_from }
    }

    /// Its fingerprints, the ledger index rewound from, and its stable items, for saving.
    pub fn parts(&self) -> (&[Fingerprint], Option<usize>, usize) {
        (&self.items, self.rewound_from, self.stable)
    }

    /// Leading items the last prepared request had in common with the one before it.
    pub fn stable(&self) -> usize {
        self.stable
    }

    /// Records that ledger messages from `index` on were removed.
    pub fn rewound(&mut self, index: usize) {
        self.rewound_from = Some(self.rewound_from.map_or(index, |from| from.min(index)));
    }

    /// The leading items of the request now prepared, whose fingerprints are `next` and
    /// whose items stand for ledger indices `indices`, that the previous request sent
    /// identically; remembers `next` as the request now prepared.
    pub fn advance(&mut self, next: Vec<Fingerprint>, indices: &[usize]) -> usize {
        let trusted = |i: usize| self.rewound_from.is_none_or(|from| indices[i] < from);
        let stable = (0..next.len().min(self.items.len())).take_while(|&i| next[i] == self.items[i] && trusted(i)).count();
        *self = PreparedView { items: next, rewound_from: None, stable };
        stable
    }
}
