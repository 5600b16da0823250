//! The view: the list of items to send. Original messages by ledger index, truncated copies
//! of messages, and synthetic items the library writes (a turn summary, the compaction
//! marker, a cancelled tool result). Strategies decide the view; the ledger never changes.

pub mod clearing;
pub mod plan;
pub mod render;
pub mod text;
pub mod thinking;

use crate::ledger::Ledger;
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
    /// Where each step sent (each summary block) stands among the items, ascending.
    spans: Vec<Span>,
    /// The turns whose USER message is not sent, as ascending runs.
    dead: Vec<Range<usize>>,
    /// Turns planned.
    turns: usize,
}

/// The items of one step sent, or of one summary block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The steps: one, or those of a summary block.
    pub units: Range<usize>,
    /// How they are sent.
    pub treatment: Treatment,
    /// Their items.
    pub items: Range<usize>,
}

impl Overlay {
    /// The `items` of `plan` over `ledger` (all its messages), with the `spans` of its
    /// steps. O(runs × log turns) besides the items.
    pub fn new(items: Vec<Item>, plan: Plan, ledger: &Ledger<'_>, spans: Vec<Span>) -> Overlay {
        // A turn is dead when none of its steps is sent with its USER message: the runs that
        // do not keep it, widened to whole turns.
        let mut dead: Vec<Range<usize>> = Vec::new();
        let all: Vec<_> = plan.runs().collect();
        let mut runs = all.into_iter().peekable();
        while let Some((run, treatment)) = runs.next() {
            if treatment.keeps_user_message() {
                continue;
            }
            let mut end = run.end;
            while let Some((next, _)) = runs.next_if(|(_, t)| !t.keeps_user_message()) {
                end = next.end;
            }
            let first = ledger.turn_of_unit(run.start) + usize::from(!ledger.opens_turn(run.start));
            let last = match end < ledger.unit_count() && !ledger.opens_turn(end) {
                true => ledger.turn_of_unit(end),
                false => ledger.turn_of_unit(end.saturating_sub(1)) + 1,
            };
            if first < last {
                dead.push(first..last);
            }
        }
        Overlay { items, plan, through: ledger.message_count(), spans, dead, turns: ledger.turn_count() }
    }

    /// The items of the steps `units` if they were sent as `treatment`. O(log steps sent).
    pub fn span_items(&self, units: &Range<usize>, treatment: Treatment) -> Option<&[Item]> {
        let at = self.spans.partition_point(|span| span.units.start < units.start);
        let span = self.spans.get(at).filter(|span| span.units == *units && span.treatment == treatment)?;
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

    /// True when turn `turn`'s USER message is sent as itself (a turn pushed since the view
    /// was built is). O(log runs).
    pub fn is_live(&self, turn: usize) -> bool {
        let at = self.dead.partition_point(|run| run.end <= turn);
        !self.dead.get(at).is_some_and(|run| run.contains(&turn))
    }

    /// The first turn whose USER message is sent, or the turns planned when none is.
    pub fn first_live_turn(&self) -> usize {
        match self.dead.first() {
            Some(run) if run.start == 0 => run.end,
            _ => 0,
        }
        .min(self.turns)
    }

    /// Turns whose USER message is not sent.
    pub fn dead_turns(&self) -> usize {
        self.dead.iter().map(|run| run.len()).sum()
    }
}
