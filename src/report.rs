//! The JSON report `ctxwin_window_validate` gives: tool pairing problems in what was pushed,
//! what the view does about each, and how far the view is over budget.

use crate::window::Window;
use serde_json::{Value, json};

/// The report for `window`, for example
/// `{"valid":false,"problems":[{"index":7,"turn":1,"call_id":"call_2","problem":"unanswered_call",
/// "repair":"the view answers it with a synthetic cancelled result"}],"over_budget_by":0}`.
///
/// `valid` is true when no message has a pairing problem. Problems are in ledger order;
/// `turn` is the turn holding the message. `over_budget_by` is how many tokens the view is
/// over the budget, which only happens when the newest steps alone are over, or the fixed
/// cost (system prompt, tools, pinned messages, summary) is.
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

    /// A pinned task over the context limit by itself counts in full: what the request is
    /// over the limit with the output reserve kept, as a plain sum says.
    #[test]
    fn a_pinned_task_over_the_limit_is_over_budget_by_all_it_is_over() {
        let mut window = Window::new("gpt-4o");
        window.configure(r#"{"context_limit": 2000, "output_reserve": 500, "history_budget": "auto"}"#).unwrap();
        let task = "Refactor the parser and keep every test passing. ".repeat(300);
        window.push(Kind::User, &task).unwrap();
        window.push_tool(Kind::ToolCall, "a", "ls").unwrap();
        window.push_tool(Kind::ToolResult, "a", "src tests").unwrap();
        let report: Value = serde_json::from_str(&validation_report(&window)).unwrap();
        let task_tokens = u64::from(window.message(0).unwrap().count().tokens);
        let history = window.view_history().tokens();
        assert!(task_tokens > 2000, "{task_tokens}");
        assert_eq!(report["over_budget_by"], task_tokens + history + 500 - 2000, "{report}");
        let mut fits = Window::new("gpt-4o");
        fits.configure(r#"{"context_limit": 100000, "output_reserve": 500, "history_budget": "auto"}"#).unwrap();
        fits.push(Kind::User, &task).unwrap();
        let report: Value = serde_json::from_str(&validation_report(&fits)).unwrap();
        assert_eq!(report["over_budget_by"], 0);
    }
}
