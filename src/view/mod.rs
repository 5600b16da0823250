//! The view: the list of items to send. Original messages by ledger index, truncated copies
//! of messages, and synthetic items the library writes (a turn summary, the compaction
//! marker, a cancelled tool result). Strategies decide the view; the ledger never changes.

pub mod render;
pub mod text;

use crate::message::Kind;
use crate::tally::Tally;
use crate::tokens::Count;
use crate::strategy::plan::Plan;

/// What an item of the view is. The numbers are the `CTXWIN_ITEM_*` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemType {
    /// A ledger message, sent as pushed.
    Message = 0,
    /// A ledger message with its text shortened.
    Truncated = 1,
    /// An item the library wrote: a summary, the compaction marker, a cancelled result.
    Synthetic = 2,
}

/// One item of a computed view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// What the item is.
    pub item_type: ItemType,
    /// Its message kind.
    pub kind: Kind,
    /// The ledger index it stands for: the message itself; for a synthetic item, the turn's
    /// USER message (summary), the first removed message (marker) or the unanswered call
    /// (cancelled result).
    pub index: usize,
    /// The text of a truncated or synthetic item; `None` for a ledger message.
    pub text: Option<Box<str>>,
    /// Its tokens.
    pub tokens: Count,
    /// True for pinned messages, which do not count against the history budget.
    pub pinned: bool,
}

/// A borrowed item of the view, as callers read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewItem<'a> {
    /// What the item is.
    pub item_type: ItemType,
    /// Its message kind.
    pub kind: Kind,
    /// The ledger index it stands for (see [`Item::index`]).
    pub index: usize,
    /// Its text; `None` for a message whose text the window did not keep.
    pub text: Option<&'a str>,
    /// Its tokens.
    pub tokens: Count,
}

/// A computed view over the whole ledger: the items a plan yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlay {
    /// The items, in ledger order.
    pub items: Vec<Item>,
    /// The plan they come from.
    pub plan: Plan,
    /// The ledger's message count when the view was computed. Messages pushed since follow
    /// the items as pushed, until the strategy runs again.
    pub through: usize,
}

impl Overlay {
    /// The `items` of `plan`, computed over the first `through` messages.
    pub fn new(items: Vec<Item>, plan: Plan, through: usize) -> Overlay {
        Overlay { items, plan, through }
    }

    /// Tokens of the items that count against the history budget.
    pub fn history(&self) -> Tally {
        let mut tally = Tally::default();
        for item in self.items.iter().filter(|item| !item.pinned) {
            tally.add(item.tokens);
        }
        tally
    }

    /// Tokens of every item.
    pub fn total(&self) -> Tally {
        let mut tally = Tally::default();
        for item in &self.items {
            tally.add(item.tokens);
        }
        tally
    }

    /// Ledger messages sent as pushed.
    pub fn verbatim(&self) -> usize {
        self.items.iter().filter(|item| item.item_type == ItemType::Message).count()
    }

    /// True when turn `turn`'s USER message is sent as itself.
    pub fn is_live(&self, turn: usize) -> bool {
        turn.checked_sub(self.plan.prefix)
            .and_then(|t| self.plan.treatments.get(t))
            .is_some_and(|treatment| treatment.keeps_user_message())
    }

    /// The first turn whose USER message is sent, or `turn_count` when none is.
    pub fn first_live_turn(&self, turn_count: usize) -> usize {
        (self.plan.prefix..turn_count).find(|&t| self.is_live(t)).unwrap_or(turn_count)
    }

    /// Turns whose USER message is not sent.
    pub fn dead_turns(&self) -> usize {
        self.plan.prefix + self.plan.treatments.iter().filter(|t| !t.keeps_user_message()).count()
    }
}
