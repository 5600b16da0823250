//! Rendering one step of the ledger (the planner's unit, see [`crate::ledger`]) into view
//! items under a treatment, with tool pairs repaired. Every cost is the step's own: a step's
//! pairing is analysed over the step alone.

use super::clearing::ClearedView;
use super::plan::Removed;
use super::text;
use super::thinking::OldThinking;
use super::{Item, ItemType};
use crate::ledger::Ledger;
use crate::message::{Kind, Message};
use crate::pairing::{self, Problem};
use std::cell::OnceCell;

/// How a step is sent. Every treatment keeps a step's tool calls and results together: it
/// sends all of them or none; a late result (see [`pairing::LateResults`]) is sent only
/// when its call's step sends its calls (see [`Treatment::sends_tool_calls`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Treatment {
    /// Every message, tool pairs repaired.
    Whole,
    /// Every message, tool outputs longer than `tool_output_max_lines` cut to head and tail.
    OutputsTruncated,
    /// The USER message and the final ASSISTANT answer; thinking and tool traffic go.
    Stripped,
    /// One synthetic `[Summary]` user item.
    Summarized,
    /// Nothing but its pinned messages.
    Dropped,
}

impl Treatment {
    /// Every treatment; `treatment as usize` indexes it.
    pub const ALL: [Treatment; 5] =
        [Treatment::Whole, Treatment::OutputsTruncated, Treatment::Stripped, Treatment::Summarized, Treatment::Dropped];

    /// True when the step's turn's USER message is sent as itself (by the step that holds
    /// it, or before a later step of the turn when its first step is not sent).
    pub fn keeps_user_message(self) -> bool {
        matches!(self, Treatment::Whole | Treatment::OutputsTruncated | Treatment::Stripped)
    }

    /// True when the step's tool calls are sent.
    pub fn sends_tool_calls(self) -> bool {
        matches!(self, Treatment::Whole | Treatment::OutputsTruncated)
    }
}

/// Renders steps of one ledger.
#[derive(Clone, Copy)]
pub struct Renderer<'a> {
    ledger: Ledger<'a>,
    clearing: Option<ClearedView<'a>>,
    thinking: Option<OldThinking>,
}

impl<'a> Renderer<'a> {
    /// A renderer over `ledger`.
    pub fn new(ledger: Ledger<'a>) -> Renderer<'a> {
        Renderer { ledger, clearing: None, thinking: None }
    }

    /// This renderer, sending the tool results `clearing` clears as their placeholders.
    pub fn with_clearing(self, clearing: ClearedView<'a>) -> Renderer<'a> {
        Renderer { clearing: Some(clearing), ..self }
    }

    /// This renderer, leaving out the old thinking `thinking` says (none when `None`).
    pub fn with_thinking(self, thinking: Option<OldThinking>) -> Renderer<'a> {
        Renderer { thinking, ..self }
    }

    /// The ledger rendered.
    pub fn ledger(&self) -> &Ledger<'a> {
        &self.ledger
    }

    /// Appends the items of step `unit` under `treatment` to `out`. O(the step).
    pub fn render(&self, unit: usize, treatment: Treatment, out: &mut Vec<Item>) {
        let range = self.ledger.unit_range(unit);
        let messages = self.ledger.messages();
        match treatment {
            Treatment::Whole | Treatment::OutputsTruncated => {
                let complete = unit + 1 < self.ledger.unit_count();
                let defects = pairing::analyze(messages, range.start, range.end, complete, self.ledger.late_results());
                let truncate = treatment == Treatment::OutputsTruncated;
                let mut next_defect = 0;
                for index in range.clone() {
                    self.cancelled_results(&defects, index, out);
                    while defects.get(next_defect).is_some_and(|d| d.index < index) {
                        next_defect += 1;
                    }
                    let left_out = defects[next_defect..].iter().take_while(|d| d.index == index).any(|d| d.problem.leaves_out());
                    let old_thinking = self.thinking.is_some_and(|thinking| thinking.leaves_out(&self.ledger, unit, index));
                    if !left_out && !old_thinking {
                        out.push(self.message_item(index, truncate));
                    }
                }
                self.cancelled_results(&defects, range.end, out);
            }
            Treatment::Stripped => {
                let answer = self.final_answer(unit);
                let question = self.question(unit);
                for index in range {
                    if Some(index) == question || Some(index) == answer || self.is_pinned(index) {
                        out.push(self.message_item(index, false));
                    }
                }
            }
            Treatment::Summarized => {
                out.push(self.synthetic(Kind::User, range.start, self.summary_line(unit)));
                self.pinned_items(range, out);
            }
            Treatment::Dropped => self.pinned_items(range, out),
        }
    }

    /// The summary block of steps `units` (at least one): one synthetic USER item, standing
    /// at the first step's first message, holding each step's one-line summary, oldest
    /// first. The pinned messages of those steps are sent after it, by the caller.
    pub fn render_block(&self, units: std::ops::Range<usize>, out: &mut Vec<Item>) {
        let lines: Vec<String> = units.clone().map(|unit| self.summary_line(unit)).collect();
        out.push(self.synthetic(Kind::User, self.ledger.first_of(units.start), lines.join("\n")));
    }

    /// The one-line summary of step `unit`: its turn's question (for the turn's first step),
    /// its tool calls and the start of its final answer.
    fn summary_line(&self, unit: usize) -> String {
        let messages = self.ledger.messages();
        let range = self.ledger.unit_range(unit);
        let question = self.question(unit).and_then(|i| messages[i].text());
        let answer = self.final_answer(unit).and_then(|i| messages[i].text());
        let calls = messages[range].iter().filter(|m| m.kind() == Kind::ToolCall).count();
        text::summary_line(question, calls, answer)
    }

    /// The USER message step `unit` holds: its turn's, when it is the turn's first step.
    fn question(&self, unit: usize) -> Option<usize> {
        self.ledger.opens_turn(unit).then(|| self.ledger.first_of(unit))
    }

    /// The marker saying what was `removed`, standing at ledger index `index`.
    pub fn removed_marker(&self, index: usize, removed: Removed) -> Item {
        match removed {
            Removed::Messages(messages) => self.marker(index, messages),
            Removed::Steps { steps, calls } => self.step_marker(index, steps, calls),
        }
    }

    /// The step marker: `steps` older steps of the turn, holding `calls` tool calls, were
    /// removed; it stands at ledger index `index` (the first step sent after them).
    pub fn step_marker(&self, index: usize, steps: usize, calls: usize) -> Item {
        self.synthetic(Kind::User, index, text::step_marker(steps, calls))
    }

    /// The compaction marker for `removed` messages, standing at ledger index `index`.
    pub fn marker(&self, index: usize, removed: usize) -> Item {
        self.synthetic(Kind::User, index, text::marker(removed))
    }

    /// A ledger message as an item of its own (the pinned head, pinned messages of dropped
    /// turns).
    pub fn message_item(&self, index: usize, truncate: bool) -> Item {
        let message: &Message = &self.ledger.messages()[index];
        let pinned = self.ledger.is_pinned(index);
        let tokens = self.ledger.calibrated(message.count());
        let cut_of = || truncate.then(|| text::cut_result(&self.ledger, index)).flatten();
        let cut = OnceCell::new();
        // A cleared result is its placeholder, never cut further (nor counted cut); a
        // superseded read's note is sent only where it is shorter than what it stands for as
        // sent (whole or cut).
        let sent = || cut.get_or_init(cut_of).as_ref().map_or(tokens, |(count, _)| *count).tokens;
        if let Some((text, tokens)) = self.clearing.and_then(|clearing| clearing.cleared(&self.ledger, index, sent)) {
            return Item { item_type: ItemType::Truncated, kind: message.kind(), index, tokens, text: Some(text.into()), pinned };
        }
        match cut.into_inner().unwrap_or_else(cut_of) {
            Some((cut_tokens, cut)) => Item {
                item_type: ItemType::Truncated,
                kind: message.kind(),
                index,
                tokens: cut_tokens,
                text: Some(cut.into()),
                pinned,
            },
            None => Item { item_type: ItemType::Message, kind: message.kind(), index, text: None, tokens, pinned },
        }
    }

    fn synthetic(&self, kind: Kind, index: usize, text: String) -> Item {
        Item {
            item_type: ItemType::Synthetic,
            kind,
            index,
            tokens: self.ledger.model().count(&text),
            text: Some(text.into()),
            pinned: false,
        }
    }

    /// The synthetic cancelled result of the call at ledger index `call`.
    pub fn cancelled_result(&self, call: usize) -> Item {
        self.synthetic(Kind::ToolResult, call, text::CANCELLED_RESULT.to_owned())
    }

    /// Synthetic results for the unanswered calls repaired before ledger index `at`.
    fn cancelled_results(&self, defects: &[pairing::Defect], at: usize, out: &mut Vec<Item>) {
        for defect in defects.iter().filter(|d| d.problem == Problem::UnansweredCall && d.repair_at == at) {
            out.push(self.cancelled_result(defect.index));
        }
    }

    /// The pinned messages of ledger range `range`, as themselves. O(log pinned + pinned
    /// in range).
    pub fn pinned_items(&self, range: std::ops::Range<usize>, out: &mut Vec<Item>) {
        for &index in self.ledger.pinned_in(range) {
            out.push(self.message_item(index, false));
        }
    }

    /// The step's last ASSISTANT message, its final answer.
    fn final_answer(&self, unit: usize) -> Option<usize> {
        let messages = self.ledger.messages();
        self.ledger.unit_range(unit).rev().find(|&i| messages[i].kind() == Kind::Assistant)
    }

    fn is_pinned(&self, index: usize) -> bool {
        self.ledger.is_pinned(index)
    }
}
