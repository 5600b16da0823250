//! What the tokens every request sends besides the history are made of, in words: the
//! errors that subtract them from the context limit name each part, so a caller sees that,
//! say, the cancelled results a request adds for open tool calls count, not only the
//! overhead and the pinned messages.

use super::Window;

impl Window {
    /// The parts of the window's fixed cost that are not zero, joined by ` + `
    /// (`system prompt 120 + tool definitions 300 + overhead learned from usage 90 + pinned
    /// messages 40 + summary 200 + cancelled results of 1 open tool call 12`), or `nothing`
    /// when every part is zero.
    pub(super) fn fixed_parts(&self) -> String {
        let calls = self.running_cancelled();
        let summary = self.sent_summary().map_or(0, |record| u64::from(self.calibrated(record.summary_tokens).tokens));
        let parts = [
            ("system prompt".to_owned(), u64::from(self.overhead.system)),
            ("tool definitions".to_owned(), u64::from(self.overhead.tools)),
            ("overhead learned from usage".to_owned(), u64::from(self.learned_overhead().tokens)),
            ("pinned messages".to_owned(), self.ledger.pinned.tokens()),
            ("summary".to_owned(), summary),
            (
                format!("cancelled results of {calls} open tool call{}", if calls == 1 { "" } else { "s" }),
                u64::from(self.running_cancellations().tokens),
            ),
        ];
        let named: Vec<String> =
            parts.iter().filter(|(_, tokens)| *tokens > 0).map(|(name, tokens)| format!("{name} {tokens}")).collect();
        if named.is_empty() { "nothing".to_owned() } else { named.join(" + ") }
    }
}
