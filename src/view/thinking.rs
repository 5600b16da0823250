//! Old thinking left out (`keep_thinking`): the THINKING messages of steps older than the
//! newest `keep_thinking` are not sent, where the provider's rules allow it, and a thinking
//! block is never modified: it is sent whole or not at all (see docs/formats.md, "Thinking
//! and reasoning in long tool loops").
//!
//! - Anthropic: thinking of any assistant message but the last may be left out; the newest
//!   step always keeps its own (the message whose `tool_use` is being answered).
//! - OpenAI Responses: a `reasoning` item goes back with the `function_call` items after it,
//!   so only the reasoning of a step without tool calls (a final answer) is left out.
//! - Gemini: every thought signature of the current turn (from the newest USER message on)
//!   must come back, so only thought parts of earlier turns are left out.
//! - OpenAI Chat carries no reasoning: thinking is left out of what the view counts too.

use crate::ledger::Ledger;
use crate::message::Kind;
use crate::wire::Format;

/// Which old thinking the view leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OldThinking {
    /// Steps before this one may have their thinking left out.
    pub before: usize,
    /// True when only steps without tool calls have it left out (OpenAI Responses).
    pub call_free_only: bool,
}

impl OldThinking {
    /// What is left out of `ledger` in `format` keeping the thinking of the newest `keep`
    /// steps (the newest step's always), or `None` when `keep` is `None` (all is kept).
    pub fn of(ledger: &Ledger<'_>, format: Format, keep: Option<u32>) -> Option<OldThinking> {
        let keep = keep?.max(1) as usize;
        let mut before = ledger.unit_count().saturating_sub(keep);
        if format == Format::Gemini {
            // The current turn's signatures go back.
            let newest_turn = ledger.turn_count().saturating_sub(1);
            before = before.min(ledger.first_unit_of(newest_turn));
        }
        Some(OldThinking { before, call_free_only: format == Format::OpenAiResponses })
    }

    /// True when the message at ledger index `index` of step `unit` is thinking the view
    /// leaves out.
    pub fn leaves_out(&self, ledger: &Ledger<'_>, unit: usize, index: usize) -> bool {
        let messages = ledger.messages();
        messages[index].kind() == Kind::Thinking
            && unit < self.before
            && !ledger.is_pinned(index)
            && !(self.call_free_only && messages[ledger.unit_range(unit)].iter().any(|m| m.kind() == Kind::ToolCall))
    }
}
