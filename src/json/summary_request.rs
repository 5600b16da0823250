//! The summary request as the `summary_request` setting asks for it: the standalone prompt
//! ([`Window::build_summary_request`]), or the conversation itself, rendered as
//! [`super::render_json`] renders it, then a final user message asking for the summary
//! (`"conversation"`). The agent's last request sent that conversation, so the provider
//! serves it from its prompt cache and bills only the instruction in full (the big coding
//! agents compact this way). [`Window::set_summary`] answers either the same way.
//!
//! A conversation request covers the steps to archive that the view sends. Steps that left
//! the view before being summarised (pruned by the sliding window or the budget) are not in
//! the conversation: their transcript goes into the final message, as the standalone
//! request gives it, and the request covers them first. Near the limit the conversation is
//! cut after a step, still a prefix of the last request.

use super::anthropic;
use super::gemini;
use super::render::{conversation_messages, cut_step};
use crate::config::SummaryRequest;
use crate::error::{Error, ErrorKind, Result};
use crate::summary::PendingSummary;
use crate::summary::conversation::{Kept, instruction};
use crate::window::Window;
use crate::wire::Format;
use serde_json::{Map, Value, json};
use std::ops::Range;

/// The summary request the `summary_request` setting asks for, remembered for
/// [`Window::set_summary`]: the standalone prompt, or (`"conversation"`) a JSON array in
/// the window's format, the conversation and then the instruction, to send as the
/// request's `messages` / `input` / `contents` with the agent's usual system prompt and
/// tools (see the module documentation).
///
/// A conversation request fits the context limit less `summary_budget` (send it with
/// `max_tokens` at most `summary_budget`: a longer summary is refused anyway), cut after a
/// step where the whole conversation does not (see [`Conversation::build`]), or, where not
/// even the oldest step to archive fits, with the steps to archive as a clipped transcript
/// after the conversation before them; the standalone prompt fits the limit less the larger
/// of `summary_budget` and `output_reserve`.
///
/// Errors (nothing changes): OUT_OF_RANGE when nothing is to be summarised or not even the
/// messages before the steps to archive, the instruction and the first step's headers fit;
/// the render's errors.
pub fn summary_request(window: &mut Window) -> Result<String> {
    let (request, pending) = build_summary_request(window)?;
    window.await_summary(pending);
    Ok(request)
}

/// [`summary_request`] without remembering the request.
pub fn build_summary_request(window: &Window) -> Result<(String, PendingSummary)> {
    match window.settings().summary_request {
        SummaryRequest::Standalone => window.build_summary_request(),
        SummaryRequest::Conversation => conversation_request(window),
    }
}

fn conversation_request(window: &Window) -> Result<(String, PendingSummary)> {
    let steps = window.summary_steps()?;
    // The answer is the summary, at most summary_budget tokens: the request may use the
    // rest (the view already leaves output_reserve free, which is at least that by default).
    let summary_budget = window.settings().summary_budget;
    let request = Conversation {
        window,
        budget: u64::from(window.context_limit().saturating_sub(summary_budget)),
        sent: u64::from(window.live_tokens().tokens),
        out_of_view: steps.start..steps.end.min(window.first_live_step()),
        steps,
        rolls_up: window.summary().is_some(),
        summary_budget,
    };
    request.build()
}

/// Most cuts falling short [`Conversation::build`] renders the transcript of the steps out
/// of the view for before refusing (the costly part of a cut tried). That transcript is
/// fitted to the room the cut leaves, so such a cut falls short only by what joining it to
/// the instruction adds, or when not even the oldest step's headers fit: a handful do. Cuts
/// without one cost a count of the instruction each, and every one that leaves room for
/// the shortest instruction is tried: they are those within an instruction's length (a long
/// quoted message included) of the budget.
const MOST_TRANSCRIPTS_SHORT: usize = 32;

/// A conversation cut tried: the request and what it covers, or over the budget
/// (`transcript` when the transcript of the steps out of the view was rendered to find out).
enum Cut {
    Fits(String, PendingSummary),
    Short { transcript: bool },
}

/// What a `"conversation"` summary request is built from.
struct Conversation<'a> {
    window: &'a Window,
    /// The steps to archive.
    steps: Range<usize>,
    /// Those that left the view unsummarised: they come as a transcript.
    out_of_view: Range<usize>,
    /// Tokens the request may hold.
    budget: u64,
    /// Tokens the view sends.
    sent: u64,
    rolls_up: bool,
    summary_budget: u32,
}

impl Conversation<'_> {
    /// The whole conversation and the instruction; near the limit, where they do not fit,
    /// the conversation cut before a step: the newest steps that stay go first, then the
    /// newest of those to summarise (the request then covers fewer; `needs_summary` asks
    /// for the rest while it is needed). The part sent is still a prefix of the last
    /// request, which the provider serves from its cache. Steps to archive that left the
    /// view come as a transcript: the conversation is cut as far as it takes for all of
    /// them to fit, so that one request covers them, or, when not even a conversation cut
    /// after the first step it must hold leaves room for all of them, as many as fit.
    /// Where no cut holds the oldest step to archive, every step to archive comes as a
    /// transcript ([`Conversation::all_as_transcript`]).
    fn build(&self) -> Result<(String, PendingSummary)> {
        let window = self.window;
        let starts = window.step_starts();
        // Tokens the view sends for each step (its messages, cut or cleared, the results
        // standing for its calls, and the late results answering them); SYSTEM messages are
        // sent whatever the cut.
        let mut step_tokens = vec![0u64; starts.len()];
        for item in (0..window.view_len()).filter_map(|i| window.view_item(i)) {
            if let Some(step) = cut_step(window, item.kind, item.index) {
                step_tokens[step] += u64::from(item.tokens.tokens);
            }
        }
        // No instruction is shorter than these two: a cut that leaves no room for them is
        // not tried.
        let shortest = [Kept::Everything, Kept::Nothing]
            .map(|kept| self.tokens(&instruction(None, kept, self.rolls_up, self.summary_budget)))
            .into_iter()
            .min()
            .unwrap_or(0);
        // The request covers at least one step, and cuts only steps the view sends.
        let lowest = (self.steps.start + 1).max(window.first_live_step());
        let lowest_sent = self.sent_before(&step_tokens, lowest);
        // With steps out of the view, the cuts first tried leave room for all of their
        // transcript and take only a request covering them all, where some cut does.
        if let Some(transcript) = self.whole_transcript_tokens()? {
            let room_for_all = self.budget.saturating_sub(shortest + transcript);
            if lowest_sent <= room_for_all {
                if let Some(found) = self.search(&step_tokens, lowest, room_for_all, true)? {
                    return Ok(found);
                }
            }
        }
        if let Some(found) = self.search(&step_tokens, lowest, self.budget.saturating_sub(shortest), false)? {
            return Ok(found);
        }
        if let Some(found) = self.all_as_transcript(&step_tokens)? {
            return Ok(found);
        }
        let smallest = lowest_sent + shortest;
        Err(Error::new(
            ErrorKind::OutOfRange,
            format!(
                "a summary request built as the conversation needs at least {smallest} tokens, cut after the \
                 oldest step it must hold, more than the {} the context limit {} leaves with summary_budget {} \
                 for the answer, and the messages before the steps to summarise leave too little room for \
                 their transcript; summary_request \"standalone\", which sends only the transcript, may fit",
                self.budget,
                window.context_limit(),
                self.summary_budget,
            ),
        ))
    }

    /// Where no cut of the conversation holds the oldest step to archive (a step too large
    /// for the room the answer leaves, say one huge tool output): the conversation before
    /// the steps to archive (the pinned messages, the summary in place), still the start of
    /// the last request, then the steps to archive as a transcript in the instruction, as
    /// many whole steps as fit, the first one's texts clipped if it must be (as the
    /// standalone prompt gives them). `None` when not even that fits.
    fn all_as_transcript(&self, step_tokens: &[u64]) -> Result<Option<(String, PendingSummary)>> {
        let window = self.window;
        let shown = self.steps.start;
        let sent = self.sent_before(step_tokens, shown);
        let heading = |transcript: &str| instruction(Some(transcript), Kept::Head, self.rolls_up, self.summary_budget);
        let Some(mut left) = self.budget.checked_sub(sent + self.tokens(&heading(""))) else { return Ok(None) };
        // The transcript is fitted to `left` on its own; joined to the instruction it may
        // count a few tokens more: fitted again to what is left then.
        for _ in 0..4 {
            let (transcript, part) = match window.summary_prompt(self.steps.clone(), left, true) {
                Ok(found) => found,
                Err(e) if e.kind() == ErrorKind::OutOfRange => return Ok(None),
                Err(e) => return Err(e),
            };
            let text = heading(&transcript);
            let needed = sent + self.tokens(&text);
            if needed <= self.budget {
                let mut messages = conversation_messages(window, shown)?;
                append_user_text(window.format(), &mut messages, &text)?;
                return Ok(Some((format!("[{}]", messages.join(",")), part)));
            }
            left = left.saturating_sub(needed - self.budget);
        }
        Ok(None)
    }

    /// The first request, cutting from the newest step down to `lowest`, whose conversation
    /// sends at most `at_most` tokens (of which `step_tokens` are each step's) and fits with
    /// its instruction; with `whole`, covering all the steps out of the view. A cut that
    /// falls short says nothing of the next: its instruction may be longer (a quoted message
    /// or the steps that stay against none once the cut reaches the steps to archive).
    fn search(&self, step_tokens: &[u64], lowest: usize, at_most: u64, whole: bool) -> Result<Option<(String, PendingSummary)>> {
        let mut dropped = 0;
        let mut transcripts = 0;
        for shown in (lowest..=step_tokens.len()).rev() {
            dropped += step_tokens.get(shown).copied().unwrap_or(0);
            let sent = self.sent.saturating_sub(dropped);
            if sent > at_most {
                continue;
            }
            match self.cut_before(shown, sent, whole)? {
                Cut::Fits(request, pending) => return Ok(Some((request, pending))),
                Cut::Short { transcript } => transcripts += usize::from(transcript),
            }
            if transcripts == MOST_TRANSCRIPTS_SHORT {
                break;
            }
        }
        Ok(None)
    }

    /// The request of the conversation's steps before step `shown` (all of them when it is
    /// their count), holding `sent` tokens, and the instruction, if they fit (with `whole`,
    /// only if the transcript of the steps out of the view holds them all).
    fn cut_before(&self, shown: usize, sent: u64, whole: bool) -> Result<Cut> {
        let window = self.window;
        let room = self.budget.saturating_sub(sent);
        // Steps to archive that left the view unsummarised go first, as a transcript, in as
        // many whole steps as fit; the steps the conversation shows follow when all of them do.
        let (earlier, end) = if self.out_of_view.is_empty() {
            (None, self.steps.end.min(shown))
        } else {
            let without = self.tokens(&instruction(
                Some(""),
                self.kept(self.steps.end.min(shown), shown),
                self.rolls_up,
                self.summary_budget,
            ));
            let Some(left) = room.checked_sub(without) else { return Ok(Cut::Short { transcript: false }) };
            match window.summary_prompt(self.out_of_view.clone(), left, true) {
                Ok((transcript, part)) if part.end_step == self.out_of_view.end => (Some(transcript), self.steps.end.min(shown)),
                Ok(_) if whole => return Ok(Cut::Short { transcript: true }),
                Ok((transcript, part)) => (Some(transcript), part.end_step),
                // Not even the oldest step's transcript fits: fewer tokens sent may do.
                Err(e) if e.kind() == ErrorKind::OutOfRange => return Ok(Cut::Short { transcript: true }),
                Err(e) => return Err(e),
            }
        };
        let text = instruction(earlier.as_deref(), self.kept(end, shown), self.rolls_up, self.summary_budget);
        let needed = sent + self.tokens(&text);
        if needed > self.budget || end <= self.steps.start {
            return Ok(Cut::Short { transcript: earlier.is_some() });
        }
        let mut messages = conversation_messages(window, shown)?;
        append_user_text(window.format(), &mut messages, &text)?;
        let pending = PendingSummary { generation: window.generation(), first_step: self.steps.start, end_step: end };
        Ok(Cut::Fits(format!("[{}]", messages.join(",")), pending))
    }

    /// Tokens of the transcript of all the steps to archive that left the view (and of its
    /// heading in the instruction), if there are any and it fits the request's budget.
    fn whole_transcript_tokens(&self) -> Result<Option<u64>> {
        if self.out_of_view.is_empty() {
            return Ok(None);
        }
        let heading = self.tokens(&instruction(Some(""), Kept::Everything, false, 0))
            - self.tokens(&instruction(None, Kept::Everything, false, 0));
        match self.window.summary_prompt(self.out_of_view.clone(), self.budget, true) {
            Ok((transcript, part)) if part.end_step == self.out_of_view.end => Ok(Some(self.tokens(&transcript) + heading)),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == ErrorKind::OutOfRange => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Where the part of the conversation that stays starts, for a request covering up to
    /// step `end` and showing the steps before `shown`: a turn's USER message, or a later
    /// step of a turn (a tool loop's newest steps).
    fn kept(&self, end: usize, shown: usize) -> Kept<'_> {
        let window = self.window;
        if end <= window.first_live_step() {
            return Kept::Everything;
        }
        let starts = window.step_starts();
        let Some(&first) = starts.get(end).filter(|_| end < shown) else { return Kept::Nothing };
        let turn = window.turn_of(first).unwrap_or(0);
        match window.turn_info(turn) {
            Ok(info) if info.first_message == first => match window.message(first).and_then(|m| m.text()) {
                Some(text) if !text.trim().is_empty() => Kept::From(text.trim()),
                _ => Kept::Turns(self.turns_shown_from(turn, shown)),
            },
            _ => Kept::Steps(shown - end),
        }
    }

    /// Turns from `turn` on that show at least their USER message when the steps before
    /// `shown` are shown.
    fn turns_shown_from(&self, turn: usize, shown: usize) -> usize {
        let window = self.window;
        let Some(&cut) = window.step_starts().get(shown) else { return window.turn_count() - turn };
        let cut_turn = window.turn_of(cut).unwrap_or(turn);
        let whole = window.turn_info(cut_turn).is_ok_and(|info| info.first_message == cut);
        cut_turn + usize::from(!whole) - turn
    }

    /// Tokens the conversation sends cut before step `shown`, of which `step_tokens` are
    /// each step's.
    fn sent_before(&self, step_tokens: &[u64], shown: usize) -> u64 {
        self.sent.saturating_sub(step_tokens.iter().skip(shown).sum::<u64>())
    }

    fn tokens(&self, text: &str) -> u64 {
        u64::from(self.window.model().count(text).tokens)
    }
}

/// Appends a user message of `text` to `messages`. Anthropic and Gemini alternate roles: a
/// last message from the user takes it as one more block or part instead.
fn append_user_text(format: Format, messages: &mut Vec<String>, text: &str) -> Result<()> {
    let last_from_user = |messages: &[String]| -> Result<Option<Map<String, Value>>> {
        let Some(last) = messages.last() else { return Ok(None) };
        let value: Map<String, Value> = serde_json::from_str(last)
            .map_err(|e| Error::new(ErrorKind::Parse, format!("rendered message is not a JSON object: {e}")))?;
        Ok((value.get("role").and_then(Value::as_str) == Some("user")).then_some(value))
    };
    let message = match format {
        Format::OpenAiChat | Format::OpenAiResponses => json!({"role": "user", "content": text}),
        Format::Anthropic => {
            let new = json!({"role": "user", "content": text}).as_object().cloned().unwrap_or_default();
            match last_from_user(messages)? {
                Some(last) => {
                    messages.pop();
                    Value::Object(anthropic::merge(vec![last, new]))
                }
                None => Value::Object(new),
            }
        }
        Format::Gemini => {
            let new = json!({"role": "user", "parts": [{"text": text}]}).as_object().cloned().unwrap_or_default();
            match last_from_user(messages)? {
                Some(last) => {
                    messages.pop();
                    Value::Object(gemini::merge(vec![last, new]))
                }
                None => Value::Object(new),
            }
        }
    };
    messages.push(message.to_string());
    Ok(())
}
