//! The generation: a counter that marks every change of what the view sends besides growth.
//!
//! A view grows with every push: the messages pushed since the strategy last ran follow it
//! as pushed. That is no change for a UI's divider nor for a summary request (the steps it
//! covers are still there, sent as before), so it keeps the generation. Anything else the
//! strategy does to the messages already in the view changes it: the first step sent moves
//! (steps or turns dropped, or back after a larger budget), the step marker changes, a result
//! is cleared, a message is cut, old thinking is left out, cancelled results are put in, a
//! pin adds or takes away a message before the start; and so do a summary accepted or
//! forgotten. What the window counts is not what it sends: a new calibration, or a count
//! recorded later, changes tokens but keeps the generation. A rewind cuts the view back to
//! the messages left and keeps it too (it cancels a pending summary request anyway).

use super::Window;
use crate::message::Kind;
use crate::view::{ItemType, Overlay};

/// What one item of a view sends: what it is, its kind, the ledger index it stands for and
/// its own text (`None`: the message's, which the ledger never changes). Its tokens are left
/// out.
type Sent<'a> = (ItemType, Kind, usize, Option<&'a str>);

impl Window {
    /// Marks a change of the view or of the summary.
    pub(super) fn bump_generation(&mut self) {
        self.policy.generation = self.policy.generation.wrapping_add(1);
    }

    /// Bumps the generation when the view planned (its first step sent and computed items)
    /// sends the messages already in the view otherwise than the view in place: anything but
    /// the messages pushed since, appended as pushed. O(1) while both views are plain,
    /// O(items) otherwise (as building the computed view is).
    pub(super) fn note_view_change(&mut self, first_unit: usize, overlay: Option<&Overlay>) {
        let moved = first_unit != self.policy.first_unit
            || match (&self.policy.overlay, overlay) {
                // Both the pinned messages before the same start and every message from it.
                (None, None) => false,
                (old, new) => !self.sent(self.policy.first_unit, old.as_ref()).eq(self.sent(first_unit, new)),
            };
        if moved {
            self.bump_generation();
        }
    }

    /// What the view of first step `first_unit` and computed items `overlay` sends of the
    /// ledger as it is now: the items of the ledger's messages (those a rewind removed left
    /// out), then the messages pushed since the view was computed, as pushed.
    fn sent<'a>(&'a self, first_unit: usize, overlay: Option<&'a Overlay>) -> impl Iterator<Item = Sent<'a>> + 'a {
        let len = self.ledger.messages.len();
        let as_pushed = move |index: usize| (ItemType::Message, self.ledger.messages[index].kind(), index, None);
        // A plain view: the pinned messages before its start, then every message from it.
        let (pinned, items, tail) = match overlay {
            Some(overlay) => (&[][..], &overlay.items[..], overlay.through.min(len)..len),
            None => {
                let start = match first_unit {
                    0 => 0,
                    unit => self.ledger.units.get(unit).copied().unwrap_or(len),
                };
                (self.pinned_before(start), &[][..], start..len)
            }
        };
        let items = items.iter().filter(move |item| item.index < len);
        pinned
            .iter()
            .map(move |&index| as_pushed(index))
            .chain(items.map(|item| (item.item_type, item.kind, item.index, item.text.as_deref())))
            .chain(tail.map(as_pushed))
    }
}
