//! Tool call pairing: which tool results answer which calls within a turn, and what is wrong.
//!
//! Pairs are matched within one turn (a call and its results belong to the same assistant
//! step). A result answers the call with the same call id. Tool messages pushed without an
//! id (plain `push` of a TOOL_CALL or TOOL_RESULT) are not checked: the library cannot know
//! what they pair with, and agents that push results alone keep working. The view repairs
//! what is wrong: orphan and duplicated results and duplicated calls are left
//! out, and a call left unanswered in a completed turn gets a synthetic "cancelled" result.

use crate::message::{Kind, Message};

/// What is wrong with one tool message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Problem {
    /// A result whose call is not earlier in its turn.
    OrphanResult,
    /// A second result for a call that was already answered.
    DuplicateResult,
    /// A call reusing the id of an earlier call in the same turn.
    DuplicateCall,
    /// A call of a completed turn that no result answers.
    UnansweredCall,
}

impl Problem {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Problem::OrphanResult => "orphan_result",
            Problem::DuplicateResult => "duplicate_result",
            Problem::DuplicateCall => "duplicate_call",
            Problem::UnansweredCall => "unanswered_call",
        }
    }

    /// Why `push_tool` refuses a message with this problem.
    pub fn refusal(self) -> &'static str {
        match self {
            Problem::DuplicateCall => "a call with this id was already pushed in this turn",
            Problem::DuplicateResult => "this call was already answered",
            _ => "no call with this id was pushed in this turn",
        }
    }

    /// What the view does about it.
    pub fn repair(self) -> &'static str {
        match self {
            Problem::UnansweredCall => "the view answers it with a synthetic cancelled result",
            _ => "the view leaves it out",
        }
    }

    /// True when the view leaves the message out.
    pub fn leaves_out(self) -> bool {
        self != Problem::UnansweredCall
    }
}

/// One problem, at ledger index `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defect {
    /// The message's ledger index.
    pub index: usize,
    /// What is wrong.
    pub problem: Problem,
    /// For an unanswered call: the ledger index before which the view inserts the synthetic
    /// result (the end of the run of tool messages holding the call). Otherwise `index`.
    pub repair_at: usize,
}

/// Whether a call has been answered yet.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CallState {
    Open,
    Answered,
}

/// The defects of the turn `messages[first..end]`, sorted by index. `complete` says whether
/// the turn is finished: unanswered calls are defects only then.
pub fn analyze(messages: &[Message], first: usize, end: usize, complete: bool) -> Vec<Defect> {
    let turn = &messages[first..end];
    if !turn.iter().any(|m| m.call_id().is_some()) {
        return Vec::new();
    }
    let mut defects = Vec::new();
    let mut calls: Vec<(usize, &str, CallState)> = Vec::new();
    for (offset, message) in turn.iter().enumerate() {
        let index = first + offset;
        let Some(id) = message.call_id() else {
            continue;
        };
        match message.kind() {
            Kind::ToolCall => {
                if calls.iter().any(|&(_, other, _)| other == id) {
                    defects.push(Defect::at(index, Problem::DuplicateCall));
                } else {
                    calls.push((index, id, CallState::Open));
                }
            }
            Kind::ToolResult => {
                let open = calls.iter().position(|&(_, other, state)| other == id && state == CallState::Open);
                match open {
                    Some(call) => calls[call].2 = CallState::Answered,
                    None if calls.iter().any(|&(_, other, _)| other == id) => {
                        defects.push(Defect::at(index, Problem::DuplicateResult));
                    }
                    None => defects.push(Defect::at(index, Problem::OrphanResult)),
                }
            }
            _ => {}
        }
    }
    if complete {
        for &(index, _, state) in &calls {
            if state == CallState::Open {
                let run_end = (index..end)
                    .find(|&i| !matches!(messages[i].kind(), Kind::ToolCall | Kind::ToolResult))
                    .unwrap_or(end);
                defects.push(Defect {
                    index,
                    problem: Problem::UnansweredCall,
                    repair_at: run_end,
                });
            }
        }
        defects.sort_by_key(|d| d.index);
    }
    defects
}

impl Defect {
    fn at(index: usize, problem: Problem) -> Defect {
        Defect {
            index,
            problem,
            repair_at: index,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{CountSource, MessageExtras};
    use crate::tokens::Count;

    fn message(kind: Kind, id: Option<&str>) -> Message {
        let message = Message::new(kind, Count::estimate(1), CountSource::Caller, None);
        match id {
            Some(id) => message.with_extras(MessageExtras {
                call_id: Some(id.into()),
                ..MessageExtras::default()
            }),
            None => message,
        }
    }

    fn problems(turn: &[(Kind, Option<&str>)], complete: bool) -> Vec<(usize, Problem, usize)> {
        let messages: Vec<Message> = turn.iter().map(|&(kind, id)| message(kind, id)).collect();
        analyze(&messages, 0, messages.len(), complete)
            .into_iter()
            .map(|d| (d.index, d.problem, d.repair_at))
            .collect()
    }

    use Kind::{Assistant, ToolCall, ToolResult, User};

    #[test]
    fn parallel_calls_answered_in_any_order_are_fine() {
        let turn = [
            (User, None),
            (ToolCall, Some("a")),
            (ToolCall, Some("b")),
            (ToolResult, Some("b")),
            (ToolResult, Some("a")),
            (Assistant, None),
        ];
        assert_eq!(problems(&turn, true), vec![]);
    }

    #[test]
    fn finds_every_problem() {
        let turn = [
            (User, None),
            (ToolResult, Some("x")),  // 1: orphan
            (ToolCall, Some("a")),    // 2
            (ToolCall, Some("a")),    // 3: duplicate call
            (ToolCall, Some("b")),    // 4: unanswered, repaired before 7
            (ToolResult, Some("a")),  // 5
            (ToolResult, Some("a")),  // 6: duplicate result
            (Assistant, None),        // 7
        ];
        assert_eq!(
            problems(&turn, true),
            vec![
                (1, Problem::OrphanResult, 1),
                (3, Problem::DuplicateCall, 3),
                (4, Problem::UnansweredCall, 7),
                (6, Problem::DuplicateResult, 6),
            ]
        );
        // While the turn is unfinished, an open call is not a defect.
        assert_eq!(problems(&turn, false).len(), 3);
    }

    #[test]
    fn messages_without_ids_are_not_checked() {
        let turn = [(User, None), (ToolResult, None), (ToolCall, None), (ToolCall, Some("a"))];
        assert_eq!(problems(&turn, true), vec![(3, Problem::UnansweredCall, 4)]);
    }
}
