//! Tool parts a model produced that the window cannot pair or send as tool messages:
//! arguments that are not a JSON object where the format needs one, a call cut short (no
//! tool name), an empty call id, an id no call carries, an id a second call reuses. Refused
//! by default, naming the id; under `"invalid_tool_parts":"keep"` kept, counted as their
//! text and flagged ([`crate::message::Message::kept_as_text`]), for hosts that must keep
//! whatever a model produced: a call becomes ASSISTANT text (the call as written, so the
//! model sees what it wrote), a result stays a TOOL_RESULT with its id (if any), which the
//! view leaves out as it leaves out every result that answers no call.

use super::Window;
use crate::config::InvalidToolParts;
use crate::error::{Error, Result, echo};
use crate::message::{Kind, Message, MessageExtras, counted_text};
use crate::pairing::Problem;
use crate::tokens::Count;
use std::borrow::Cow;

impl Window {
    /// True when the window keeps the tool parts it would refuse (`invalid_tool_parts`).
    pub(super) fn keeps_invalid_tool_parts(&self) -> bool {
        self.settings.invalid_tool_parts == InvalidToolParts::Keep
    }

    /// Returns `refusal`, or under `"invalid_tool_parts":"keep"` appends the refused tool
    /// part (`kind`, `call_id`, a call's `name` and its `text`) as text, flagged, and returns
    /// its count. A text over `max_message_bytes` is refused either way.
    pub(super) fn keep_tool_part_or(
        &mut self,
        refusal: Error,
        kind: Kind,
        call_id: &str,
        name: Option<&str>,
        text: &str,
    ) -> Result<Count> {
        if !self.keeps_invalid_tool_parts() {
            return Err(refusal);
        }
        self.check_message_size(text.len().saturating_add(name.map_or(0, str::len)))?;
        let (kind, call_id, text) = kept_form(kind, Some(call_id), name, text);
        let count = self.model.count(&text);
        let extras = MessageExtras { call_id: call_id.map(Box::from), kept_as_text: true, ..MessageExtras::default() };
        self.append(self.library_message(kind, count, &text, extras));
        Ok(count)
    }

    /// The ledger indices in `messages` (parsed from one push, about to be appended) of the
    /// tool results whose id no call earlier in their turn carries (a mistyped id): the
    /// first is refused as [`Window::push_tool`] refuses it, naming the id and the element of
    /// the push, unless the window keeps invalid tool parts (the caller flags them).
    /// Duplicated results and calls are left to the view's repair as before (a Gemini call
    /// without an id is keyed by its name). O(messages): the running turn's calls are
    /// indexed.
    pub(super) fn check_parsed_results(&self, messages: &[Message]) -> Result<Vec<usize>> {
        let mut orphans = Vec::new();
        if !messages.iter().any(|message| message.kind() == Kind::ToolResult && message.call_id().is_some()) {
            return Ok(orphans);
        }
        let mut calls = self.ledger.calls.probe();
        let mut in_turn = !self.ledger.turns.is_empty();
        let mut element = 0;
        for (i, message) in messages.iter().enumerate() {
            // Each element's first ledger message is part 0 of its wire message.
            if i > 0 && message.extras().and_then(|extras| extras.wire).is_none_or(|wire| wire.index == 0) {
                element += 1;
            }
            match (message.kind(), message.call_id()) {
                (Kind::User, _) => {
                    calls.new_turn();
                    in_turn = true;
                }
                (kind @ (Kind::ToolCall | Kind::ToolResult), Some(id)) if in_turn => {
                    if calls.feed(kind, id) != Some(Problem::OrphanResult) {
                        continue;
                    }
                    if !self.keeps_invalid_tool_parts() {
                        return Err(Error::invalid_arg(format!(
                            "element {element}: tool result for call id '{}': {} (a mistyped id? \
                             configure \"invalid_tool_parts\":\"keep\" to keep it)",
                            echo(id),
                            Problem::OrphanResult.refusal()
                        )));
                    }
                    orphans.push(i);
                }
                _ => {}
            }
        }
        Ok(orphans)
    }
}

/// What a refused tool part is kept as: a call as ASSISTANT text (its name, a newline and its
/// arguments, or its text as given), without its id; a result as a result with its id (none
/// when empty).
pub(super) fn kept_form<'a>(
    kind: Kind,
    call_id: Option<&'a str>,
    name: Option<&str>,
    text: &'a str,
) -> (Kind, Option<&'a str>, Cow<'a, str>) {
    match kind {
        Kind::ToolCall => (Kind::Assistant, None, counted_text(name, text)),
        _ => (kind, call_id.filter(|id| !id.is_empty()), Cow::Borrowed(text)),
    }
}
