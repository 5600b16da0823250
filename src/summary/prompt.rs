//! The summary request: the prompt the agent sends to its own LLM to summarise a range of
//! steps (whole turns of a chat, the oldest steps of a tool loop), rolling up the previous
//! summary. The prompt is built to fit a token budget (the model's context limit minus room
//! for the answer): when the range does not fit, it covers as many whole steps as fit and the
//! rest is asked for in later parts; a single step too large on its own has its texts
//! clipped.

use crate::error::{Error, ErrorKind, Result};
use crate::message::{Kind, Message};
use crate::tokens::Model;
use std::fmt::Write;
use std::ops::Range;

/// How many times a prompt is re-rendered to fit its budget before giving up.
const MAX_FIT_ATTEMPTS: usize = 24;

/// What to summarise and under which limits.
pub struct Request<'a> {
    /// The model the prompt is counted for.
    pub model: &'a Model,
    /// The summary in place, which the new one must absorb.
    pub previous: Option<&'a str>,
    /// The whole ledger.
    pub messages: &'a [Message],
    /// Message ranges of the steps still to summarise, oldest first; not empty (a chat turn
    /// is one step).
    pub steps: &'a [Range<usize>],
    /// Tokens the prompt may use.
    pub budget: u64,
    /// Tokens the answer may use; the prompt asks for no more.
    pub summary_budget: u32,
    /// The transcript alone: the `<conversation>` block, without the instructions around it
    /// (for a request whose instructions are elsewhere).
    pub bare: bool,
}

/// A rendered request.
#[derive(Debug)]
pub struct Prompt {
    /// The prompt text.
    pub text: String,
    /// How many of the requested steps it covers (at least one).
    pub steps: usize,
}

impl Request<'_> {
    /// The prompt for as many whole steps as fit the budget (at least one, clipped if it
    /// must be). Fails when the instructions and the previous summary alone do not fit.
    pub fn build(&self) -> Result<Prompt> {
        let fixed = self.tokens(&self.render(0, None));
        if fixed > self.budget {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "the context limit leaves {} tokens for a summary request, but its instructions and the previous summary alone need {fixed}",
                    self.budget
                ),
            ));
        }
        let mut take = self.steps_that_fit(self.budget - fixed);
        while take > 0 {
            let text = self.render(take, None);
            if self.tokens(&text) <= self.budget {
                return Ok(Prompt { text, steps: take });
            }
            take -= 1;
        }
        self.clipped_first_step(fixed)
    }

    /// Whole steps whose estimated cost fits `available` tokens.
    fn steps_that_fit(&self, available: u64) -> usize {
        let mut used = 0;
        let mut take = 0;
        for step in self.steps {
            used += self.messages_of(step.clone()).map(|(i, m)| self.line_cost(i, m)).sum::<u64>();
            if used > available {
                break;
            }
            take += 1;
        }
        take
    }

    /// The first step alone with its texts clipped to fit: shrinks the text allowance by
    /// each overrun until the prompt fits.
    fn clipped_first_step(&self, fixed: u64) -> Result<Prompt> {
        let mut allowance = self.budget - fixed;
        for _ in 0..MAX_FIT_ATTEMPTS {
            let text = self.render(1, Some(allowance));
            let tokens = self.tokens(&text);
            if tokens <= self.budget {
                return Ok(Prompt { text, steps: 1 });
            }
            if allowance == 0 {
                break;
            }
            allowance = allowance.saturating_sub((tokens - self.budget).max(allowance / 8).max(1));
        }
        Err(Error::new(
            ErrorKind::OutOfRange,
            format!(
                "the context limit leaves {} tokens for a summary request: too few for even one step's message headers",
                self.budget
            ),
        ))
    }

    /// The prompt covering the first `take` steps. With `allowance`, message texts share
    /// that many tokens in order; a text that does not fit is clipped, later ones omitted.
    fn render(&self, take: usize, mut allowance: Option<u64>) -> String {
        if self.bare {
            let mut out = String::new();
            self.transcript(take, &mut allowance, &mut out);
            return out;
        }
        let mut out = String::from(
            "You are compacting the history of a conversation between a user and an AI agent. \
             The messages below will be removed from the agent's context and replaced by your summary, \
             so the agent must be able to continue the work from your summary alone.\n\n",
        );
        if let Some(previous) = self.previous {
            out.push_str(
                "The summary of the earlier history, which your summary replaces and must absorb:\n\
                 <previous_summary>\n",
            );
            out.push_str(previous);
            out.push_str("\n</previous_summary>\n\n");
        }
        self.transcript(take, &mut allowance, &mut out);
        out.push('\n');
        if take < self.steps.len() {
            let _ = write!(
                out,
                "This is one part of a longer history: it covers {take} of the {} steps still to summarise. \
                 The next part will be sent with your summary as the previous summary.\n\n",
                self.steps.len()
            );
        }
        out.push_str(&sections(self.summary_budget));
        out
    }

    /// The `<conversation>` block of the first `take` steps, with a newline after it.
    fn transcript(&self, take: usize, allowance: &mut Option<u64>, out: &mut String) {
        let covered = &self.steps[..take];
        match (covered.first(), covered.last()) {
            (Some(first), Some(last)) => {
                let _ = writeln!(out, "<conversation messages=\"{}-{}\">", first.start, last.end - 1);
            }
            _ => out.push_str("<conversation>\n"),
        }
        for step in covered {
            for (index, message) in self.messages_of(step.clone()) {
                out.push_str(&line_header(index, message));
                out.push_str(&body(self.model, message, allowance));
                out.push('\n');
            }
        }
        out.push_str("</conversation>\n");
    }

    /// The messages of `range` that a summary replaces: pinned SYSTEM messages stay live.
    fn messages_of(&self, range: Range<usize>) -> impl Iterator<Item = (usize, &Message)> {
        self.messages[range.clone()]
            .iter()
            .zip(range)
            .map(|(message, index)| (index, message))
            .filter(|(_, message)| message.kind() != Kind::System)
    }

    /// The estimated prompt tokens of one message: its header line and its count.
    fn line_cost(&self, index: usize, message: &Message) -> u64 {
        u64::from(self.model.count(&line_header(index, message)).tokens) + u64::from(message.count().tokens) + 1
    }

    fn tokens(&self, text: &str) -> u64 {
        u64::from(self.model.count(text).tokens)
    }
}

/// What the summary must hold, and its size: the closing instructions of every summary
/// request.
pub fn sections(summary_budget: u32) -> String {
    format!(
        "Write the summary in plain text with these four sections:\n\
         1. Original task: what the user asked for and the constraints they set.\n\
         2. Progress: what has been done, with exact file names, paths, commands, identifiers and results.\n\
         3. Working memory: facts, decisions and open questions the agent still needs.\n\
         4. Ledger: every piece of work marked [done] or [pending], so finished work is not redone.\n\
         Keep everything the previous summary says unless the conversation supersedes it. \
         Answer with the summary only, in at most {summary_budget} tokens.\n"
    )
}

/// `[message 12] TOOL_CALL read_file (call_1):` and a newline: the kind, then the tool's name
/// when the message has one (a call's text is its arguments alone, so the summary could not
/// say which tool ran without it), then the call id when it has one.
fn line_header(index: usize, message: &Message) -> String {
    let label = match message.kind() {
        Kind::System => "SYSTEM",
        Kind::User => "USER",
        Kind::Assistant => "ASSISTANT",
        Kind::ToolCall => "TOOL_CALL",
        Kind::ToolResult => "TOOL_RESULT",
        Kind::Thinking => "THINKING",
    };
    let mut header = format!("[message {index}] {label}");
    if let Some(name) = message.name() {
        let _ = write!(header, " {name}");
    }
    if let Some(call_id) = message.call_id() {
        let _ = write!(header, " ({call_id})");
    }
    header.push_str(":\n");
    header
}

/// A message's text for the prompt, charged to `allowance` when there is one.
fn body(model: &Model, message: &Message, allowance: &mut Option<u64>) -> String {
    let tokens = message.count().tokens;
    let Some(text) = message.text() else {
        return format!("(text not kept: {tokens} tokens)");
    };
    let Some(left) = allowance.as_mut() else {
        return text.to_owned();
    };
    if u64::from(tokens) <= *left {
        *left -= u64::from(tokens);
        return text.to_owned();
    }
    if *left == 0 {
        return format!("(omitted to fit the request: {tokens} tokens)");
    }
    let kept = clip_to_tokens(model, text, *left);
    *left = 0;
    format!("{kept}\n(clipped to fit the request: {} of {} bytes kept)", kept.len(), text.len())
}

/// The longest prefix of `text`, ending on a character boundary, of at most `tokens` tokens.
fn clip_to_tokens<'t>(model: &Model, text: &'t str, tokens: u64) -> &'t str {
    let (mut lo, mut hi) = (0, text.len());
    while lo < hi {
        let mid = floor_char_boundary(text, lo + (hi - lo).div_ceil(2));
        if mid <= lo {
            break;
        }
        if u64::from(model.count(&text[..mid]).tokens) <= tokens {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    &text[..floor_char_boundary(text, lo)]
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::CountSource;

    fn ledger(model: &Model, texts: &[(Kind, &str)]) -> Vec<Message> {
        texts.iter().map(|&(kind, text)| Message::new(kind, model.count(text), CountSource::Library, Some(text.into()))).collect()
    }

    fn request<'a>(model: &'a Model, messages: &'a [Message], steps: &'a [Range<usize>], budget: u64) -> Request<'a> {
        Request {
            model,
            previous: Some("Original task: port the parser."),
            messages,
            steps,
            budget,
            summary_budget: 500,
            bare: false,
        }
    }

    #[test]
    fn covers_every_turn_when_they_fit_and_asks_for_the_four_sections() {
        let model = Model::resolve("gpt-4o");
        let messages = ledger(
            &model,
            &[
                (Kind::User, "Fix src/parser.rs"),
                (Kind::ToolCall, "read src/parser.rs"),
                (Kind::System, "pinned note"),
                (Kind::User, "Now run the tests"),
            ],
        );
        let turns = [0..3, 3..4];
        let prompt = request(&model, &messages, &turns, 10_000).build().unwrap();
        assert_eq!(prompt.steps, 2);
        for needle in [
            "Original task: port the parser.",
            "[message 0] USER:\nFix src/parser.rs",
            "[message 3] USER:\nNow run the tests",
            "Original task:",
            "Progress:",
            "Working memory:",
            "[done] or [pending]",
            "at most 500 tokens",
        ] {
            assert!(prompt.text.contains(needle), "missing {needle:?} in\n{}", prompt.text);
        }
        assert!(!prompt.text.contains("pinned note"), "pinned messages stay live");
        assert!(!prompt.text.contains("one part of a longer history"));
    }

    #[test]
    fn splits_into_parts_and_clips_a_single_oversized_turn_to_the_budget() {
        let model = Model::resolve("gpt-4o");
        let long = "lorem ipsum dolor sit amet ".repeat(200);
        let messages =
            ledger(&model, &[(Kind::User, "a"), (Kind::ToolResult, &long), (Kind::User, "b"), (Kind::ToolResult, &long)]);
        let turns = [0..2, 2..4];
        let fixed = u64::from(model.count(&request(&model, &messages, &turns, 0).render(0, None)).tokens);
        let one_turn = u64::from(messages[1].count().tokens);
        assert!(one_turn > 1000, "the long text is {one_turn} tokens");
        for (budget, turns_covered, clipped) in [
            (fixed + 60, 1, true),
            (fixed + 700, 1, true),
            (fixed + one_turn + 100, 1, false),
            (fixed + 2 * one_turn + 200, 2, false),
        ] {
            let prompt = request(&model, &messages, &turns, budget).build().unwrap();
            assert!(u64::from(model.count(&prompt.text).tokens) <= budget, "budget {budget}");
            assert_eq!(prompt.steps, turns_covered, "budget {budget}");
            assert_eq!(prompt.text.contains("one part of a longer history"), turns_covered == 1);
            assert_eq!(prompt.text.contains("to fit the request"), clipped, "budget {budget}");
        }
        let err = request(&model, &messages, &turns, fixed - 1).build().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfRange);
    }

    #[test]
    fn clipping_keeps_a_prefix_within_the_tokens() {
        let model = Model::resolve("gpt-4o");
        let text = "héllo wörld, ünïcode everywhere ".repeat(30);
        for tokens in [0, 1, 5, 50] {
            let kept = clip_to_tokens(&model, &text, tokens);
            assert!(u64::from(model.count(kept).tokens) <= tokens);
            assert!(text.starts_with(kept));
            assert_eq!(kept.is_empty(), tokens == 0);
        }
        assert_eq!(clip_to_tokens(&model, &text, 10_000), text);
    }
}
