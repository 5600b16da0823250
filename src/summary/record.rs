//! Compaction records: what each accepted summary archived, numbered for the UI and kept
//! across save and load.

use crate::error::Result;
use crate::fields::Fields;
use crate::tokens::Count;
use serde_json::{Value, json};

/// One accepted summary and what it archived. Archived messages stay in the ledger (they are
/// listable and exportable); they are only no longer sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactionRecord {
    /// 1-based number, in the order the summaries were accepted.
    pub number: usize,
    /// Unix time in seconds at which the summary was accepted.
    pub timestamp: u64,
    /// The summary. It covers every turn archived so far: each summary rolls up the previous
    /// one, so only the newest record's summary is sent.
    pub summary: Box<str>,
    /// Tokens of the summary, counted for the window's model.
    pub summary_tokens: Count,
    /// Index of the first message this compaction archived: where the previous record's
    /// archive ended.
    pub first_archived: usize,
    /// Index of the last message this compaction archived. `last_archived + 1` starts a step:
    /// a turn's USER message (the archive ends on a turn), or a step inside turn
    /// `archived_turns` (the archive holds that turn's oldest steps; its USER message is
    /// still sent, pinned or before the summary).
    pub last_archived: usize,
    /// Turns `0..archived_turns` are archived whole while this record is the newest:
    /// cumulative, unlike `first_archived..=last_archived`, which are this record's own
    /// messages. The turn holding `last_archived + 1`.
    pub archived_turns: usize,
    /// Live tokens just before the summary was accepted.
    pub tokens_before: u32,
    /// Live tokens just after.
    pub tokens_after: u32,
    /// True when the provider compacted (an Anthropic `compaction` block or an OpenAI
    /// Responses `compaction` item was pushed): the summary in place is that message, ledger
    /// message `last_archived + 1`, sent where it stands; `summary` is its text (empty for an
    /// encrypted item) and no synthetic summary item is sent.
    pub provider: bool,
    /// Tool results the view sent cleared just before the compaction (placeholders and
    /// superseded reads' notes, the clearing stage), and the tokens that saved: what the
    /// clearing stage had done before the summary was needed. 0 in records saved before 0.3.
    pub cleared_results: usize,
    /// The tokens clearing them saved.
    pub cleared_tokens: u64,
}

impl CompactionRecord {
    /// Messages this compaction archived.
    pub fn messages_archived(&self) -> usize {
        self.last_archived - self.first_archived + 1
    }

    /// The ledger index the archive ends before: the first message of the first step the
    /// archive left (a turn's USER message, or a step inside turn `archived_turns`).
    pub fn archive_end(&self) -> usize {
        self.last_archived + 1
    }

    /// The record as the JSON object `ctxwin_window_compaction_info` returns and the saved
    /// format stores.
    pub fn to_value(&self) -> Value {
        json!({
            "number": self.number,
            "timestamp": self.timestamp,
            "summary": &*self.summary,
            "summary_tokens": self.summary_tokens.tokens,
            "summary_exact": self.summary_tokens.exact,
            "messages_archived": self.messages_archived(),
            "first_archived": self.first_archived,
            "last_archived": self.last_archived,
            "archived_turns": self.archived_turns,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "provider": self.provider,
            "cleared_results": self.cleared_results,
            "cleared_tokens": self.cleared_tokens,
        })
    }

    /// Reads a record written by [`CompactionRecord::to_value`]; `path` names it in errors.
    /// Whether it fits the ledger is checked by the window it is restored into.
    pub fn from_value(value: &Value, path: &str) -> Result<CompactionRecord> {
        let fields = Fields::of(value, path)?;
        let record = CompactionRecord {
            number: fields.index("number")?,
            timestamp: fields.whole("timestamp", u64::MAX)?,
            summary: fields.string("summary")?.into(),
            summary_tokens: Count { tokens: fields.tokens("summary_tokens")?, exact: fields.boolean("summary_exact")? },
            first_archived: fields.index("first_archived")?,
            last_archived: fields.index("last_archived")?,
            archived_turns: fields.index("archived_turns")?,
            tokens_before: fields.tokens("tokens_before")?,
            tokens_after: fields.tokens("tokens_after")?,
            provider: fields.optional("provider").map(|_| fields.boolean("provider")).transpose()?.unwrap_or(false),
            cleared_results: fields
                .optional("cleared_results")
                .map(|_| fields.index("cleared_results"))
                .transpose()?
                .unwrap_or(0),
            cleared_tokens: fields
                .optional("cleared_tokens")
                .map(|_| fields.whole("cleared_tokens", u64::MAX))
                .transpose()?
                .unwrap_or(0),
        };
        if record.last_archived < record.first_archived || fields.index("messages_archived")? != record.messages_archived() {
            return Err(fields.wrong("messages_archived", "last_archived - first_archived + 1"));
        }
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> CompactionRecord {
        CompactionRecord {
            number: 2,
            timestamp: 1_700_000_000,
            summary: "Original task: \"fix\" the build".into(),
            summary_tokens: Count::estimate(9),
            first_archived: 4,
            last_archived: 11,
            archived_turns: 3,
            tokens_before: 5000,
            tokens_after: 900,
            provider: false,
            cleared_results: 7,
            cleared_tokens: 12_345,
        }
    }

    #[test]
    fn json_round_trips_and_counts_messages() {
        let value = record().to_value();
        assert_eq!(value["messages_archived"], 8);
        assert_eq!(CompactionRecord::from_value(&value, "r").unwrap(), record());
        // Saved before provider compactions existed: not one.
        let mut old = value.clone();
        old.as_object_mut().unwrap().remove("provider");
        assert_eq!(CompactionRecord::from_value(&old, "r").unwrap(), record());
        // Saved before clearing existed: nothing cleared.
        for key in ["cleared_results", "cleared_tokens"] {
            old.as_object_mut().unwrap().remove(key);
        }
        let unclear = CompactionRecord { cleared_results: 0, cleared_tokens: 0, ..record() };
        assert_eq!(CompactionRecord::from_value(&old, "r").unwrap(), unclear);
        let provider = CompactionRecord { provider: true, ..record() };
        assert_eq!(CompactionRecord::from_value(&provider.to_value(), "r").unwrap(), provider);
    }

    #[test]
    fn damaged_records_name_the_field() {
        let mut value = record().to_value();
        value["messages_archived"] = json!(3);
        let err = CompactionRecord::from_value(&value, "compactions[0]").unwrap_err();
        assert!(err.message().starts_with("compactions[0].messages_archived"), "{}", err.message());
        let mut value = record().to_value();
        value.as_object_mut().unwrap().remove("summary");
        let err = CompactionRecord::from_value(&value, "compactions[1]").unwrap_err();
        assert_eq!(err.message(), "compactions[1].summary: missing");
    }
}
