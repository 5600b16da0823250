//! Rendering one turn of the ledger into view items under a treatment, with tool pairs
//! repaired.

use super::text;
use super::{Item, ItemType};
use crate::message::{Kind, Message};
use crate::pairing::{self, Problem};
use crate::window::Window;

/// How a turn is sent. Every treatment keeps a turn's tool calls and results together: it
/// sends all of them or none.
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
    /// Nothing but its pinned SYSTEM messages.
    Dropped,
}

impl Treatment {
    /// Every treatment; `treatment as usize` indexes it.
    pub const ALL: [Treatment; 5] = [
        Treatment::Whole,
        Treatment::OutputsTruncated,
        Treatment::Stripped,
        Treatment::Summarized,
        Treatment::Dropped,
    ];

    /// True when the turn's USER message is sent as itself.
    pub fn keeps_user_message(self) -> bool {
        matches!(self, Treatment::Whole | Treatment::OutputsTruncated | Treatment::Stripped)
    }
}

/// Renders turns of one window.
pub struct Renderer<'a> {
    window: &'a Window,
}

impl<'a> Renderer<'a> {
    /// A renderer over `window`'s ledger.
    pub fn new(window: &'a Window) -> Renderer<'a> {
        Renderer { window }
    }

    /// The window rendered.
    pub fn window(&self) -> &'a Window {
        self.window
    }

    /// Appends the items of turn `turn` under `treatment` to `out`.
    pub fn render(&self, turn: usize, treatment: Treatment, out: &mut Vec<Item>) {
        let range = self.window.turn_range(turn);
        let messages = self.window.messages();
        match treatment {
            Treatment::Whole | Treatment::OutputsTruncated => {
                let complete = turn + 1 < self.window.turn_count();
                let defects = pairing::analyze(messages, range.start, range.end, complete);
                let truncate = treatment == Treatment::OutputsTruncated;
                let mut next_defect = 0;
                for index in range.clone() {
                    self.cancelled_results(&defects, index, out);
                    while defects.get(next_defect).is_some_and(|d| d.index < index) {
                        next_defect += 1;
                    }
                    let left_out = defects[next_defect..]
                        .iter()
                        .take_while(|d| d.index == index)
                        .any(|d| d.problem.leaves_out());
                    if !left_out {
                        out.push(self.message_item(index, truncate));
                    }
                }
                self.cancelled_results(&defects, range.end, out);
            }
            Treatment::Stripped => {
                let answer = self.final_answer(turn);
                let question = range.start;
                for index in range {
                    if index == question || Some(index) == answer || self.is_pinned(index) {
                        out.push(self.message_item(index, false));
                    }
                }
            }
            Treatment::Summarized => {
                let question = messages[range.start].text();
                let answer = self.final_answer(turn).and_then(|i| messages[i].text());
                let calls = messages[range.clone()].iter().filter(|m| m.kind() == Kind::ToolCall).count();
                out.push(self.synthetic(Kind::User, range.start, text::summary_line(question, calls, answer)));
                self.pinned_items(range, out);
            }
            Treatment::Dropped => self.pinned_items(range, out),
        }
    }

    /// Non-pinned ledger messages of turn `turn`.
    pub fn history_messages(&self, turn: usize) -> usize {
        self.window.turn_range(turn).filter(|&i| !self.is_pinned(i)).count()
    }

    /// The compaction marker for `removed` messages, standing at ledger index `index`.
    pub fn marker(&self, index: usize, removed: usize) -> Item {
        self.synthetic(Kind::User, index, text::marker(removed))
    }

    /// A ledger message as an item of its own (the pinned head, pinned messages of dropped
    /// turns).
    pub fn message_item(&self, index: usize, truncate: bool) -> Item {
        let message: &Message = &self.window.messages()[index];
        let pinned = self.is_pinned(index);
        let cut = match (truncate && !pinned && message.kind() == Kind::ToolResult, message.text()) {
            (true, Some(text)) => text::head_and_tail(text, self.window.settings().tool_output_max_lines as usize),
            _ => None,
        };
        match cut {
            Some(cut) => Item {
                item_type: ItemType::Truncated,
                kind: message.kind(),
                index,
                tokens: self.window.model().count(&cut),
                text: Some(cut.into()),
                pinned,
            },
            None => Item {
                item_type: ItemType::Message,
                kind: message.kind(),
                index,
                text: None,
                tokens: self.window.calibrated(message.count()),
                pinned,
            },
        }
    }

    fn synthetic(&self, kind: Kind, index: usize, text: String) -> Item {
        Item {
            item_type: ItemType::Synthetic,
            kind,
            index,
            tokens: self.window.model().count(&text),
            text: Some(text.into()),
            pinned: false,
        }
    }

    /// Synthetic results for the unanswered calls repaired before ledger index `at`.
    fn cancelled_results(&self, defects: &[pairing::Defect], at: usize, out: &mut Vec<Item>) {
        for defect in defects.iter().filter(|d| d.problem == Problem::UnansweredCall && d.repair_at == at) {
            out.push(self.synthetic(Kind::ToolResult, defect.index, text::CANCELLED_RESULT.to_owned()));
        }
    }

    fn pinned_items(&self, range: std::ops::Range<usize>, out: &mut Vec<Item>) {
        for index in range.filter(|&i| self.is_pinned(i)) {
            out.push(self.message_item(index, false));
        }
    }

    /// The turn's last ASSISTANT message, its final answer.
    fn final_answer(&self, turn: usize) -> Option<usize> {
        let messages = self.window.messages();
        self.window.turn_range(turn).rev().find(|&i| messages[i].kind() == Kind::Assistant)
    }

    fn is_pinned(&self, index: usize) -> bool {
        self.window.is_pinned(index, self.window.messages()[index].kind())
    }
}
