//! What the window sends: the view's items, its history tokens, and the tool pairing
//! problems of what was pushed.

use super::Window;
use crate::message::Kind;
use crate::pairing;
use crate::tally::Tally;
use crate::view::{ItemType, ViewItem};
use std::ops::Range;

impl Window {
    /// Items in the view: what to send. With `sliding` and no tool pairs to repair, exactly
    /// the pinned messages before `start` followed by messages `[start, count)`. Messages
    /// pushed since the strategy last ran are at the end, as pushed.
    pub fn view_len(&self) -> usize {
        let summary = usize::from(self.sent_summary().is_some());
        summary
            + match &self.policy.overlay {
                Some(overlay) => overlay.items.len() + self.ledger.messages.len() - overlay.through,
                None => self.pinned_before(self.start()).len() + self.ledger.messages.len() - self.start(),
            }
    }

    /// Item `i` of the view. O(1) for a computed view, O(log messages) otherwise. The summary
    /// in place, if any, is a synthetic USER item where the steps it archived were: after the
    /// leading pinned items, and after the USER message of a turn whose oldest steps it
    /// archived; its `index` is the first archived message.
    pub fn view_item(&self, i: usize) -> Option<ViewItem<'_>> {
        let Some((position, record)) = self.summary_position().zip(self.sent_summary()) else {
            return self.ledger_view_item(i);
        };
        match i.cmp(&position) {
            std::cmp::Ordering::Less => self.ledger_view_item(i),
            std::cmp::Ordering::Equal => Some(ViewItem {
                item_type: ItemType::Synthetic,
                kind: Kind::User,
                index: record.first_archived,
                text: Some(&record.summary),
                tokens: self.calibrated(record.summary_tokens),
            }),
            std::cmp::Ordering::Greater => self.ledger_view_item(i - 1),
        }
    }

    /// Where the summary item stands in the view: after the pinned items that lead it and
    /// the USER message of a turn whose oldest steps it archived (a ledger message before
    /// the archive's end that is sent, whole or with its images cleared), so that it stands
    /// where the archived steps were.
    fn summary_position(&self) -> Option<usize> {
        let end = self.sent_summary()?.archive_end();
        Some(match &self.policy.overlay {
            Some(overlay) => overlay
                .items
                .iter()
                .take_while(|item| item.pinned || item.item_type != ItemType::Synthetic && item.index < end)
                .count(),
            None => self.pinned_before(self.start()).len(),
        })
    }

    /// Item `i` of the view of the ledger's own messages (the summary item left out).
    fn ledger_view_item(&self, i: usize) -> Option<ViewItem<'_>> {
        let Some(overlay) = &self.policy.overlay else {
            let pinned = self.pinned_before(self.start());
            return match pinned.get(i) {
                Some(&index) => self.message_item(index),
                None => self.message_item(self.start().checked_add(i - pinned.len())?),
            };
        };
        let Some(item) = overlay.items.get(i) else {
            return self.message_item(overlay.through.checked_add(i - overlay.items.len())?);
        };
        let text = match item.item_type {
            ItemType::Message => self.ledger.messages[item.index].text(),
            ItemType::Truncated | ItemType::Synthetic => item.text.as_deref(),
        };
        Some(ViewItem { item_type: item.item_type, kind: item.kind, index: item.index, text, tokens: item.tokens })
    }

    fn message_item(&self, index: usize) -> Option<ViewItem<'_>> {
        let message = self.ledger.messages.get(index)?;
        Some(ViewItem {
            item_type: ItemType::Message,
            kind: message.kind(),
            index,
            text: message.text(),
            tokens: self.calibrated(message.count()),
        })
    }

    /// History tokens of the view (pinned messages excluded), which the budget caps.
    pub fn view_history(&self) -> Tally {
        match &self.policy.overlay {
            Some(overlay) => {
                let mut history = overlay.history();
                for index in overlay.through..self.ledger.messages.len() {
                    let message = &self.ledger.messages[index];
                    if !self.is_pinned(index, message.kind()) {
                        history.add(self.calibrated(message.count()));
                    }
                }
                history
            }
            None => self.history_from(self.policy.first_live_turn),
        }
    }

    /// How many tokens the view is over the budget: 0 whenever the strategy could fit it,
    /// more only when the newest steps alone are over, or the fixed cost (system prompt,
    /// tools, pinned messages, summary) is, which counts in full.
    pub fn overrun(&self) -> u64 {
        super::at_least_zero(i128::from(self.view_history().tokens()) - self.history_allowance())
    }

    /// The tool pairing problems of what was pushed, in ledger order, step by step as the
    /// view repairs them (the newest step's unanswered calls are not problems: it may still
    /// be running).
    pub fn pairing_defects(&self) -> Vec<pairing::Defect> {
        let newest = self.ledger.units.len().saturating_sub(1);
        let mut defects = Vec::new();
        for unit in 0..self.ledger.units.len() {
            let range = self.ledger.unit_range(unit);
            defects.extend(pairing::analyze(&self.ledger.messages, range.start, range.end, unit < newest, &self.ledger.late));
        }
        defects
    }

    /// The turn holding ledger index `index`, if any (messages before the first USER message
    /// belong to none).
    pub fn turn_of(&self, index: usize) -> Option<usize> {
        self.ledger.turn_of(index)
    }

    /// Ledger messages the view sends as pushed.
    pub(super) fn verbatim(&self) -> usize {
        match &self.policy.overlay {
            Some(overlay) => overlay.verbatim() + self.ledger.messages.len() - overlay.through,
            None => self.view_len(),
        }
    }

    /// Turns whose USER message is not sent.
    pub(super) fn dead_turns(&self) -> usize {
        match &self.policy.overlay {
            Some(overlay) => overlay.dead_turns(),
            None => self.policy.first_live_turn,
        }
    }

    /// The ledger indices of turn `turn`.
    pub(crate) fn turn_range(&self, turn: usize) -> Range<usize> {
        self.ledger.turn_range(turn)
    }

    /// The indices of the pinned messages before ledger index `end`.
    pub(crate) fn pinned_before(&self, end: usize) -> &[usize] {
        self.ledger.pinned_before(end)
    }
}
