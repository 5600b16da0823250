//! The final instruction of a summary request built as the conversation itself
//! (`summary_request: "conversation"`): the agent sends the conversation it last sent, which
//! the provider serves from its prompt cache, and this one user message after it.

use super::prompt::sections;

/// Where the part of the conversation to summarise ends.
#[derive(Clone, Copy, Debug)]
pub enum Kept<'a> {
    /// Everything above is summarised.
    Nothing,
    /// The newest turns stay in the agent's context: they start with the user message
    /// whose text starts with this.
    From(&'a str),
    /// They start with a user message whose text the window did not keep: `turns` turns
    /// stay.
    Turns(usize),
    /// They start inside a turn: its newest `steps` steps (model responses with the tool
    /// results they got) stay.
    Steps(usize),
    /// The whole conversation above stays: only the earlier messages are summarised.
    Everything,
    /// Only the messages before the work to summarise are shown (the pinned ones, a summary
    /// in place; maybe none), and they stay: the work comes as a transcript.
    Head,
}

/// The longest a quoted opening of the first kept message is, in characters.
const QUOTE_CHARS: usize = 120;

/// The instruction: what to summarise (`earlier`, a transcript of turns no longer in the
/// conversation, then the conversation above up to `kept`, absorbing the summary it starts
/// with when `rolls_up`), and the sections every summary holds.
pub fn instruction(earlier: Option<&str>, kept: Kept<'_>, rolls_up: bool, summary_budget: u32) -> String {
    let mut out = String::from(
        "Stop working on the task now: your next answer is a summary, not a step of the work. \
         The history of this conversation is being compacted: ",
    );
    match kept {
        Kept::Nothing => out.push_str(
            "every message above will be removed from your context and replaced by your summary, \
             so you must be able to continue the work from your summary alone.\n\n",
        ),
        Kept::From(text) => {
            let quote: String = text.chars().take(QUOTE_CHARS).collect();
            let more = if quote.len() < text.len() { "…" } else { "" };
            out.push_str(&format!(
                "the messages above, up to the user message that begins \"{quote}{more}\", will be removed \
                 from your context and replaced by your summary. That user message and everything after it \
                 stay: summarise them only as far as the earlier work needs.\n\n"
            ));
        }
        Kept::Turns(turns) => out.push_str(&format!(
            "the messages above will be removed from your context and replaced by your summary, except \
             the last {turns} user turn{} (from its user message on), which stay: summarise them only as far \
             as the earlier work needs.\n\n",
            if turns == 1 { "" } else { "s" }
        )),
        Kept::Steps(steps) => out.push_str(&format!(
            "the messages above will be removed from your context and replaced by your summary, except \
             the user's request and the last {steps} step{} of the work (each a response of yours with the \
             tool results it got), which stay: summarise them only as far as the earlier work needs.\n\n",
            if steps == 1 { "" } else { "s" }
        )),
        Kept::Everything => out.push_str(
            "the conversation above stays in your context; earlier messages, no longer in it, are replaced \
             by your summary. Use the conversation above only as context.\n\n",
        ),
        Kept::Head => out.push_str(
            "the work given below will be removed from your context and replaced by your summary (any \
             messages above stay), so you must be able to continue the work from your summary alone.\n\n",
        ),
    }
    if let Some(earlier) = earlier {
        out.push_str(match kept {
            Kept::Head => "The work to summarise:\n",
            _ => "These earlier messages, no longer sent in the conversation above, are replaced by your summary too:\n",
        });
        out.push_str(earlier);
        out.push('\n');
    }
    if rolls_up {
        out.push_str(
            "The conversation starts with the summary of still earlier history: your summary replaces it \
             and must absorb it.\n\n",
        );
    }
    out.push_str(&sections(summary_budget));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_where_the_kept_part_starts_and_asks_for_the_sections() {
        let long = "Now port the lexer to the new token type and keep the old API working. ".repeat(4);
        let text = instruction(None, Kept::From(&long), true, 700);
        assert!(text.contains("begins \"Now port the lexer"), "{text}");
        assert!(text.contains("…\", will be removed"), "a long opening is cut: {text}");
        assert!(text.contains("must absorb it") && text.contains("at most 700 tokens") && text.contains("[done]"));
        let text = instruction(None, Kept::From("Run the tests."), false, 10);
        assert!(text.contains("begins \"Run the tests.\", will") && !text.contains("absorb"));
        assert!(instruction(None, Kept::Nothing, false, 10).contains("every message above"));
        let head = instruction(Some("[message 3] USER:\nFix it."), Kept::Head, false, 10);
        assert!(head.contains("any messages above stay") && head.contains("The work to summarise:\n[message 3]"));
        assert!(instruction(None, Kept::Turns(2), false, 10).contains("the last 2 user turns"));
        let text = instruction(Some("<conversation>\n[message 0] USER:\nhi\n</conversation>\n"), Kept::Everything, false, 10);
        assert!(text.contains("only as context") && text.contains("no longer sent in the conversation above"), "{text}");
        assert!(text.contains("[message 0] USER:\nhi"), "{text}");
    }
}
