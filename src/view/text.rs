//! The texts the view writes itself: truncated tool outputs, one-line turn summaries, the
//! compaction marker and the cancelled result.

use crate::ledger::Ledger;
use crate::message::Kind;
use crate::tokens::Count;
use serde_json::Value;

/// The text of the synthetic result that answers a call left unanswered.
pub const CANCELLED_RESULT: &str = "[Tool call cancelled: no result was recorded]";

/// The user message a rendered Anthropic conversation starts with when the view starts with
/// an assistant message (Anthropic wants the user to speak first).
pub const CONVERSATION_START: &str = "[Conversation start]";

/// The marker that stands where tiered compaction dropped the middle of the history.
pub fn marker(removed_messages: usize) -> String {
    format!("[Context compacted: {removed_messages} messages removed to fit context window]")
}

/// The marker that stands where the oldest steps of a turn were dropped, its later steps
/// sent: how many steps and tool calls left the request.
pub fn step_marker(steps: usize, calls: usize) -> String {
    let s = if steps == 1 { "" } else { "s" };
    let c = if calls == 1 { "" } else { "s" };
    format!(
        "[Context compacted: {steps} earlier step{s} of this task ({calls} tool call{c} and their results) removed to fit context window]"
    )
}

/// Longest line a cut tool output keeps whole. A longer line (one-line JSON, minified
/// output, a Gemini `functionResponse`) keeps its first and last [`LINE_END_CHARS`]
/// characters around `[... N characters truncated ...]`.
pub const MAX_LINE_CHARS: usize = 400;
/// Characters kept at each end of a line longer than [`MAX_LINE_CHARS`].
const LINE_END_CHARS: usize = 150;

/// `text` cut when it has more than `max_lines` lines or a line of more than
/// [`MAX_LINE_CHARS`] characters: the first and last lines are kept (the head the larger
/// half of `max_lines`, the tail the rest) with one line `[... N lines truncated ...]`
/// between them, and every long line kept is cut in its middle. `None` when nothing is cut.
pub fn head_and_tail(text: &str, max_lines: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let too_many = lines.len() > max_lines;
    if !too_many && !lines.iter().any(|line| is_long(line)) {
        return None;
    }
    let (head, tail) = if too_many {
        let head = max_lines.div_ceil(2);
        (head, max_lines - head)
    } else {
        (lines.len(), 0)
    };
    let mut kept: Vec<String> = lines[..head].iter().map(|line| cut_line(line)).collect();
    if too_many {
        kept.push(format!("[... {} lines truncated ...]", lines.len() - head - tail));
    }
    kept.extend(lines[lines.len() - tail..].iter().map(|line| cut_line(line)));
    Some(kept.join("\n"))
}

/// What the message at ledger index `index` is sent as when the tool outputs of its step are
/// cut (see [`cut_output`]), with its tokens: `None` when it is not cut (a pinned message, not
/// a tool result, nothing long in it, or a cut that would not be smaller: the line saying what
/// was cut costs tokens too).
pub fn cut_result(ledger: &Ledger<'_>, index: usize) -> Option<(Count, String)> {
    let message = &ledger.messages()[index];
    if message.kind() != Kind::ToolResult || ledger.is_pinned(index) {
        return None;
    }
    let cut = cut_output(message.text()?, ledger.tool_output_max_lines())?;
    let count = ledger.model().count(&cut);
    (count.tokens < ledger.calibrated(message.count()).tokens).then_some((count, cut))
}

/// A tool output cut for tiered's L1: a JSON object (a Gemini `functionResponse`'s
/// `response`, a tool's JSON answer) is cut inside its values and stays the same object with
/// the same keys: every string cut by [`head_and_tail`], every array of more than
/// `max_lines` elements keeping its first and last elements (as many as [`head_and_tail`]
/// keeps lines) around the string `[... N items truncated ...]`. Other text is cut by
/// [`head_and_tail`]. `None` when nothing is cut (a JSON object whose strings and arrays are
/// all short is sent whole, never made a string).
pub fn cut_output(text: &str, max_lines: usize) -> Option<String> {
    if text.trim_start().starts_with('{') {
        if let Ok(Value::Object(mut object)) = crate::strict_json::parse(text) {
            let mut cut = false;
            for value in object.values_mut() {
                cut |= cut_value(value, max_lines);
            }
            return cut.then(|| Value::Object(object).to_string());
        }
    }
    head_and_tail(text, max_lines)
}

/// Cuts the strings and arrays inside `value` (see [`cut_output`]); true when any was cut.
fn cut_value(value: &mut Value, max_lines: usize) -> bool {
    match value {
        Value::String(text) => match head_and_tail(text, max_lines) {
            Some(cut) => {
                *text = cut;
                true
            }
            None => false,
        },
        Value::Array(items) => {
            let too_many = items.len() > max_lines;
            if too_many {
                let head = max_lines.div_ceil(2);
                let tail = max_lines - head;
                let removed = items.len() - head - tail;
                items.splice(head..items.len() - tail, [Value::String(format!("[... {removed} items truncated ...]"))]);
            }
            items.iter_mut().fold(too_many, |cut, item| cut_value(item, max_lines) | cut)
        }
        Value::Object(object) => object.values_mut().fold(false, |cut, item| cut_value(item, max_lines) | cut),
        _ => false,
    }
}

/// Whether `line` has more than [`MAX_LINE_CHARS`] characters (counted only when it has
/// more bytes than that).
fn is_long(line: &str) -> bool {
    line.len() > MAX_LINE_CHARS && line.chars().count() > MAX_LINE_CHARS
}

/// `line` with its middle replaced by a count of the characters cut, if it is longer than
/// [`MAX_LINE_CHARS`].
fn cut_line(line: &str) -> String {
    if !is_long(line) {
        return line.to_owned();
    }
    let chars = line.chars().count();
    let head_end = line.char_indices().nth(LINE_END_CHARS).map_or(line.len(), |(i, _)| i);
    let tail_start = line.char_indices().nth(chars - LINE_END_CHARS).map_or(line.len(), |(i, _)| i);
    let cut = chars - 2 * LINE_END_CHARS;
    format!("{}[... {cut} characters truncated ...]{}", &line[..head_end], &line[tail_start..])
}

/// Characters of a message a summary quotes.
const QUOTED_CHARS: usize = 80;

/// A one-line summary of a turn: what the user asked, how many tool calls it took and what
/// the answer began with. Texts the window did not keep are left out.
pub fn summary_line(question: Option<&str>, tool_calls: usize, answer: Option<&str>) -> String {
    let mut line = String::from("[Summary]");
    if let Some(question) = question {
        line.push_str(&format!(" User asked: \"{}\".", quote(question)));
    }
    if tool_calls > 0 {
        let plural = if tool_calls == 1 { "" } else { "s" };
        line.push_str(&format!(" {tool_calls} tool call{plural}."));
    }
    if let Some(answer) = answer {
        line.push_str(&format!(" Answer: \"{}\".", quote(answer)));
    }
    line
}

/// The first line of `text`, cut to [`QUOTED_CHARS`] characters with an ellipsis.
fn quote(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    match first.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &first[..cut]),
        None => first.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_with_a_count_of_the_cut() {
        let text: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
        let text = text.join("\n");
        assert_eq!(head_and_tail(&text, 5).unwrap(), "line 1\nline 2\nline 3\n[... 5 lines truncated ...]\nline 9\nline 10");
        assert_eq!(head_and_tail(&text, 1).unwrap(), "line 1\n[... 9 lines truncated ...]");
        assert_eq!(head_and_tail(&text, 10), None);
    }

    #[test]
    fn long_lines_keep_both_ends_with_a_count_of_the_cut() {
        // A one-line JSON output (a Gemini functionResponse, minified tool output).
        let json = format!("{{\"rows\":[{}]}}", vec!["\"é\""; 300].join(","));
        let cut = head_and_tail(&json, 40).unwrap();
        let chars = json.chars().count();
        assert_eq!(cut.lines().count(), 1);
        assert!(cut.starts_with(&json.chars().take(LINE_END_CHARS).collect::<String>()));
        let tail: String = json.chars().skip(chars - LINE_END_CHARS).collect();
        assert!(cut.ends_with(&tail));
        let marker = format!("[... {} characters truncated ...]", chars - 2 * LINE_END_CHARS);
        assert_eq!(cut.chars().count(), 2 * LINE_END_CHARS + marker.chars().count());
        assert!(cut.contains(&marker));
        // Lines at the limit stay whole; line cuts and character cuts combine.
        let edge = "x".repeat(MAX_LINE_CHARS);
        assert_eq!(head_and_tail(&edge, 1), None);
        let text = format!("{json}\nshort\nmiddle\n{edge}y");
        let cut = head_and_tail(&text, 2).unwrap();
        let lines: Vec<&str> = cut.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].contains("characters truncated"));
        assert_eq!(lines[1], "[... 2 lines truncated ...]");
        assert!(lines[2].ends_with("xxy") && lines[2].contains("[... 101 characters truncated ...]"));
    }

    #[test]
    fn a_json_object_is_cut_inside_its_values_and_keeps_its_keys() {
        let lines: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
        let object = serde_json::json!({"output": lines.join("\n"), "exit": 0, "rows": (1..=9).collect::<Vec<_>>(),
            "meta": {"log": "x".repeat(1000)}});
        let cut: Value = serde_json::from_str(&cut_output(&object.to_string(), 4).unwrap()).unwrap();
        let keys: Vec<&String> = cut.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["output", "exit", "rows", "meta"]);
        assert_eq!(cut["output"], "line 1\nline 2\n[... 6 lines truncated ...]\nline 9\nline 10");
        assert_eq!(cut["exit"], 0);
        assert_eq!(cut["rows"], serde_json::json!([1, 2, "[... 5 items truncated ...]", 8, 9]));
        assert!(cut["meta"]["log"].as_str().unwrap().contains("[... 700 characters truncated ...]"));
        // Nothing long: not cut (never turned into a string); not an object: cut as text.
        assert_eq!(cut_output(r#"{"a":1,"b":"short"}"#, 1), None);
        assert_eq!(cut_output(&lines.join("\n"), 4), head_and_tail(&lines.join("\n"), 4));
        assert_eq!(cut_output("{not json\n1\n2\n3", 1), head_and_tail("{not json\n1\n2\n3", 1));
    }

    #[test]
    fn summaries_quote_first_lines_and_leave_out_missing_texts() {
        let long = "x".repeat(200);
        let line = summary_line(Some("\nFind the bug\nin main.c"), 3, Some(&long));
        assert_eq!(line, format!("[Summary] User asked: \"Find the bug\". 3 tool calls. Answer: \"{}…\".", "x".repeat(80)));
        assert_eq!(summary_line(None, 1, None), "[Summary] 1 tool call.");
        assert_eq!(marker(12), "[Context compacted: 12 messages removed to fit context window]");
    }
}
