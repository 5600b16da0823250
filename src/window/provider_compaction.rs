//! A provider's own compaction: an Anthropic `compaction` block or an OpenAI Responses
//! `compaction` item pushed as JSON. The provider drops everything before it, so the window
//! archives those turns as an accepted summary does (kept in the ledger, recorded as a
//! compaction record, undone by a rewind, saved) and the pushed message, which starts its
//! own turn, is the summary in place: sent where it stands, counted as any message.

use super::Window;
use crate::summary::CompactionRecord;
use std::time::{SystemTime, UNIX_EPOCH};

impl Window {
    /// The summary sent as a synthetic USER item after the pinned head: the newest record's,
    /// unless that record is a provider's compaction, whose message is in the view itself.
    pub fn sent_summary(&self) -> Option<&CompactionRecord> {
        self.summary().filter(|record| !record.provider)
    }

    /// Archives the turns before the provider compaction just pushed at ledger index
    /// `index` (the USER message that starts its turn), unless they already are.
    pub(super) fn archive_before_provider_compaction(&mut self, index: usize) {
        let Some(turn) = self.ledger.turn_of(index) else { return };
        if turn <= self.archived_turns() || self.ledger.turns[turn].first != index {
            return;
        }
        let tokens_before = self.live_tokens().tokens;
        let (cleared_results, cleared_tokens) = self.cleared_now();
        let message = &self.ledger.messages[index];
        let record = CompactionRecord {
            number: self.policy.compactions.len() + 1,
            timestamp: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            summary: message.text().unwrap_or_default().into(),
            summary_tokens: message.count(),
            first_archived: self.archive_end(),
            last_archived: index - 1,
            archived_turns: turn,
            tokens_before,
            tokens_after: tokens_before,
            provider: true,
            cleared_results,
            cleared_tokens,
        };
        // A summary request built before covers turns the provider summarised now.
        self.accept_compaction(record);
    }
}
