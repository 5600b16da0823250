//! The view: the list of items to send. Original messages by ledger index, truncated copies
//! of messages, and synthetic items the library writes (a turn summary, the compaction
//! marker, a cancelled tool result). Strategies decide the view; the ledger never changes.

pub mod plan;
pub mod render;
pub mod text;

use crate::message::Kind;
use crate::tally::Tally;
use crate::tokens::Count;
use plan::Plan;
use render::Treatment;
use std::ops::Range;

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
    /// Where each turn sent (each summary block) stands among the items, ascending.
    spans: Vec<Span>,
}

/// The items of one turn sent, or of one summary block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The turns: one, or those of a summary block.
    pub turns: Range<usize>,
    /// How they are sent.
    pub treatment: Treatment,
    /// Their items.
    pub items: Range<usize>,
}

impl Overlay {
    /// The `items` of `plan`, computed over the first `through` messages, with the `spans`
    /// of its turns.
    pub fn new(items: Vec<Item>, plan: Plan, through: usize, spans: Vec<Span>) -> Overlay {
        Overlay { items, plan, through, spans }
    }

    /// The items of the turns `turns` if they were sent as `treatment`. O(log turns sent).
    pub fn span_items(&self, turns: &Range<usize>, treatment: Treatment) -> Option<&[Item]> {
        let at = self.spans.partition_point(|span| span.turns.start < turns.start);
        let span = self.spans.get(at).filter(|span| span.turns == *turns && span.treatment == treatment)?;
        Some(&self.items[span.items.clone()])
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
        self.plan.treatment(turn).is_some_and(Treatment::keeps_user_message)
    }

    /// The first turn whose USER message is sent, or the turns planned when none is.
    pub fn first_live_turn(&self) -> usize {
        self.plan.first_live_turn()
    }

    /// Turns whose USER message is not sent.
    pub fn dead_turns(&self) -> usize {
        self.plan.dead_turns()
    }
}
