//! Counts computed when first needed. A host message pushed through the C API without asking
//! for its count (`ctxwin_window_push_message(..., out NULL)`) is appended uncounted: a host
//! that records the provider's figure before the next enforcement (`set_count`,
//! `set_turn_count`, then `end_turn`) never pays for counting it, as in restoring a saved
//! session. [`Window::resolve_counts`] is the one place uncounted messages get the library's
//! count: enforcement calls it, and so does the C API's handle before any other call reads
//! the window, so nothing ever reads a count that was not resolved.

use super::Window;
use crate::message::CountSource;
use crate::tokens::Count;

impl Window {
    /// Counts every message still uncounted (see [`Window::push_message_uncounted`]), so
    /// that every total, view and count the window shows includes them. O(1) when there is
    /// none.
    pub(crate) fn resolve_counts(&mut self) {
        if self.ledger.uncounted.is_empty() {
            return;
        }
        let mut uncounted = std::mem::take(&mut self.ledger.uncounted);
        for &index in &uncounted {
            let message = &self.ledger.messages[index];
            let text = message.counted_text().expect("an uncounted message keeps its text");
            let count = self.model.count(&text);
            let count = message.media().map_or(count, |media| count.plus(media));
            self.settle(index, count, CountSource::Library);
        }
        uncounted.clear();
        self.ledger.uncounted = uncounted;
    }

    /// True when some message is still uncounted.
    pub(crate) fn has_uncounted(&self) -> bool {
        !self.ledger.uncounted.is_empty()
    }

    /// Gives uncounted message `index` its first count, `count` from `source`; the sums
    /// follow and the cost cache forgets its steps. The caller takes `index` out of the
    /// uncounted list.
    pub(super) fn settle(&mut self, index: usize, count: Count, source: CountSource) {
        let units = self.ledger.settle(index, count, source, self.wire.calibration);
        self.policy.costs.forget(units);
        self.policy.costs.clearables.forget_from(index);
    }
}
