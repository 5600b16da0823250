//! The texts the view writes itself: truncated tool outputs, one-line turn summaries, the
//! compaction marker and the cancelled result.

/// The text of the synthetic result that answers a call left unanswered.
pub const CANCELLED_RESULT: &str = "[Tool call cancelled: no result was recorded]";

/// The marker that stands where tiered compaction dropped the middle of the history.
pub fn marker(removed_messages: usize) -> String {
    format!("[Context compacted: {removed_messages} messages removed to fit context window]")
}

/// `text` cut to its first and last lines when it has more than `max_lines` lines: the head
/// keeps the larger half of `max_lines`, the tail the rest, and one line
/// `[... N lines truncated ...]` stands between them. `None` when the text is short enough.
pub fn head_and_tail(text: &str, max_lines: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max_lines {
        return None;
    }
    let head = max_lines.div_ceil(2);
    let tail = max_lines - head;
    let cut = lines.len() - head - tail;
    let mut out = lines[..head].join("\n");
    out.push_str(&format!("\n[... {cut} lines truncated ...]"));
    for line in &lines[lines.len() - tail..] {
        out.push('\n');
        out.push_str(line);
    }
    Some(out)
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
        assert_eq!(
            head_and_tail(&text, 5).unwrap(),
            "line 1\nline 2\nline 3\n[... 5 lines truncated ...]\nline 9\nline 10"
        );
        assert_eq!(head_and_tail(&text, 1).unwrap(), "line 1\n[... 9 lines truncated ...]");
        assert_eq!(head_and_tail(&text, 10), None);
    }

    #[test]
    fn summaries_quote_first_lines_and_leave_out_missing_texts() {
        let long = "x".repeat(200);
        let line = summary_line(Some("\nFind the bug\nin main.c"), 3, Some(&long));
        assert_eq!(
            line,
            format!("[Summary] User asked: \"Find the bug\". 3 tool calls. Answer: \"{}…\".", "x".repeat(80))
        );
        assert_eq!(summary_line(None, 1, None), "[Summary] 1 tool call.");
        assert_eq!(marker(12), "[Context compacted: 12 messages removed to fit context window]");
    }
}
