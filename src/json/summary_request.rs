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
//! request gives it, and the request covers them first.

use super::anthropic;
use super::gemini;
use super::render::conversation_messages;
use crate::config::SummaryRequest;
use crate::error::{Error, ErrorKind, Result};
use crate::summary::PendingSummary;
use crate::summary::conversation::{Kept, instruction};
use crate::window::Window;
use crate::wire::Format;
use serde_json::{Map, Value, json};

/// The summary request the `summary_request` setting asks for, remembered for
/// [`Window::set_summary`]: the standalone prompt, or (`"conversation"`) a JSON array in
/// the window's format, the conversation and then the instruction, to send as the
/// request's `messages` / `input` / `contents` with the agent's usual system prompt and
/// tools (see the module documentation).
///
/// A conversation request fits the context limit less `summary_budget` (send it with
/// `max_tokens` at most `summary_budget`: a longer summary is refused anyway); the standalone
/// prompt fits the limit less the larger of `summary_budget` and `output_reserve`.
///
/// Errors (nothing changes): OUT_OF_RANGE when nothing is to be summarised or the request
/// cannot fit; the render's errors.
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
    let mut messages = conversation_messages(window)?;
    // The answer is the summary, at most summary_budget tokens: the request may use the
    // rest (the view already leaves output_reserve free, which is at least that by default).
    let summary_budget = window.settings().summary_budget;
    let budget = u64::from(window.context_limit().saturating_sub(summary_budget));
    let sent = u64::from(window.live_tokens().tokens);
    let too_large = |needed: u64| {
        Error::new(
            ErrorKind::OutOfRange,
            format!(
                "a summary request built as the conversation needs {needed} tokens, more than the {budget} the context \
                 limit {} leaves with summary_budget {summary_budget} for the answer; \
                 summary_request \"standalone\" fits a smaller request",
                window.context_limit(),
            ),
        )
    };
    let room = budget.checked_sub(sent).ok_or_else(|| too_large(sent))?;
    let rolls_up = window.summary().is_some();
    // Where the kept part of the conversation starts when the request covers up to step
    // `end`: a turn's USER message, or a later step of a turn (a tool loop's newest steps).
    let starts = window.step_starts();
    let kept = |end: usize| {
        if end <= window.first_live_step() {
            return Kept::Everything;
        }
        let Some(&first) = starts.get(end) else { return Kept::Nothing };
        let turn = window.turn_of(first).unwrap_or(0);
        match window.turn_info(turn) {
            Ok(info) if info.first_message == first => match window.message(first).and_then(|m| m.text()) {
                Some(text) if !text.trim().is_empty() => Kept::From(text.trim()),
                _ => Kept::Turns(window.turn_count() - turn),
            },
            _ => Kept::Steps(starts.len() - end),
        }
    };
    let tokens = |text: &str| u64::from(window.model().count(text).tokens);
    // Steps to archive that left the view unsummarised go first, as a transcript, in as
    // many whole steps as fit; the steps the conversation holds follow when all of them do.
    let out_of_view = steps.start..steps.end.min(window.first_live_step());
    let (earlier, end) = if out_of_view.is_empty() {
        (None, steps.end)
    } else {
        let without = tokens(&instruction(Some(""), kept(steps.end), rolls_up, summary_budget));
        let left = room.checked_sub(without).ok_or_else(|| too_large(sent + without))?;
        let (transcript, part) = window.summary_prompt(out_of_view.clone(), left, true).map_err(|e| {
            Error::new(
                e.kind(),
                format!(
                    "{}: the conversation holds {sent} of the {budget} tokens a summary request may use; \
                     summary_request \"standalone\" fits a smaller request",
                    e.message()
                ),
            )
        })?;
        let end = if part.end_step == out_of_view.end { steps.end } else { part.end_step };
        (Some(transcript), end)
    };
    let text = instruction(earlier.as_deref(), kept(end), rolls_up, summary_budget);
    let needed = sent + tokens(&text);
    if needed > budget {
        return Err(too_large(needed));
    }
    let pending = PendingSummary { generation: window.generation(), first_step: steps.start, end_step: end };
    append_user_text(window.format(), &mut messages, &text)?;
    Ok((format!("[{}]", messages.join(",")), pending))
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
