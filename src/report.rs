//! The JSON report `ctxwin_window_validate` gives: tool pairing problems in what was pushed,
//! what the view does about each, and how far the view is over budget.

use crate::window::Window;
use serde_json::{Value, json};

/// The report for `window`, for example
/// `{"valid":false,"problems":[{"index":7,"turn":1,"call_id":"call_2","problem":"unanswered_call",
/// "repair":"the view answers it with a synthetic cancelled result"}],"over_budget_by":0}`.
///
/// `valid` is true when no message has a pairing problem. Problems are in ledger order;
/// `turn` is the turn holding the message. `over_budget_by` is how many history tokens the
/// view is over the budget, which only happens when the newest turn alone is over.
pub fn validation_report(window: &Window) -> String {
    let problems: Vec<Value> = window
        .pairing_defects()
        .iter()
        .map(|defect| {
            let message = window.message(defect.index);
            json!({
                "index": defect.index,
                "turn": window.turn_of(defect.index),
                "call_id": message.and_then(|m| m.call_id()),
                "problem": defect.problem.name(),
                "repair": defect.problem.repair(),
            })
        })
        .collect();
    json!({
        "valid": problems.is_empty(),
        "problems": problems,
        "over_budget_by": window.overrun(),
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Kind;

    #[test]
    fn reports_unanswered_calls_of_completed_turns_only() {
        let mut window = Window::new("gpt-4o");
        window.push(Kind::User, "run both").unwrap();
        window.push_tool(Kind::ToolCall, "a", "ls").unwrap();
        window.push_tool(Kind::ToolCall, "b", "pwd").unwrap();
        window.push_tool(Kind::ToolResult, "b", "/home").unwrap();
        let report: Value = serde_json::from_str(&validation_report(&window)).unwrap();
        assert_eq!(report["valid"], true, "the newest turn may still be running: {report}");
        window.push(Kind::User, "and now?").unwrap();
        let report: Value = serde_json::from_str(&validation_report(&window)).unwrap();
        assert_eq!(report["valid"], false);
        let problems = report["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0]["index"], 1);
        assert_eq!(problems[0]["turn"], 0);
        assert_eq!(problems[0]["call_id"], "a");
        assert_eq!(problems[0]["problem"], "unanswered_call");
        assert_eq!(report["over_budget_by"], 0);
    }
}
