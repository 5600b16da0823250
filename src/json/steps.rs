//! What a request sends, as a provider sees it: the system prompt, then user messages and
//! assistant steps. A step is what the assistant produced between two inputs (its thinking,
//! text and tool calls) followed by the answers to its calls.
//!
//! The view is cut into steps whatever route pushed its messages (text, `push_tool`,
//! `push_tool_call`, JSON) and whatever the strategy did, and made whole on the way:
//! - a call without an id gets a deterministic one, `ctxwin_call_<ledger index>`, and a
//!   result without an id answers the oldest unanswered id-less call of its step;
//! - a result that answers no call of the step just before it is left out, unless it is a
//!   *late* result (see [`crate::pairing::LateResults`]): one answering, by its id, a call
//!   of an earlier step of the same turn that the request would answer as cancelled. It is
//!   sent in that step, in the cancelled result's place, so every format's rule (the answers
//!   follow their calls, before the next step) holds;
//! - a call reusing the id of a call sent earlier in its turn is left out, as the view
//!   leaves it out (a request rendered before `prepare` planned the new messages would
//!   otherwise send the id twice, and answer it twice);
//! - a call its step leaves unanswered (an interrupted call, or one still running when the
//!   request is rendered) is answered with the cancelled result
//!   ([`crate::view::text::CANCELLED_RESULT`]) in the form its call takes (see
//!   [`CallForm`]; the window counts these in its live tokens, see
//!   [`crate::pairing::RunningStep`]), except a provider's built-in tool call (a Responses `web_search_call`,
//!   `file_search_call`, `code_interpreter_call`, ...), which the provider ran and which
//!   takes no answer, and a Responses client call whose output cannot say "cancelled"
//!   (`computer_call`, `shell_call`, `local_shell_call`: a screenshot or an exit status),
//!   which is left out of the request while unanswered.
//!
//! SYSTEM messages, wherever they were pushed, are gathered in order as the system prompt.

use super::send_items::SendItem;
use crate::message::{CountSource, Kind, Message, MessageExtras};
use crate::pairing::{CallForm, StepCall, step_answer};
use crate::tokens::Count;
use crate::view::text::CANCELLED_RESULT;
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

/// One item to render, with the call id and tool name it is sent with.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    /// The item.
    pub item: SendItem<'a>,
    /// The call id on the wire: the message's own, or a deterministic one for an id-less
    /// call (and the result that answers it). Empty for messages that are not tool messages.
    pub call_id: Cow<'a, str>,
    /// The tool name: a call's own, a result's own or its call's.
    pub name: Option<&'a str>,
    /// For a result: the form of the call it answers, which decides its wire form.
    pub answers: Option<CallForm>,
}

impl Entry<'_> {
    /// The item's kind.
    pub fn kind(&self) -> Kind {
        self.item.message.kind()
    }

    /// The item's text ("" when the window did not keep it).
    pub fn text(&self) -> &str {
        self.item.message.text().unwrap_or_default()
    }

    /// The call id the message itself carries (`None` for an id-less tool message).
    pub fn own_call_id(&self) -> Option<&str> {
        self.item.message.call_id()
    }
}

/// A user input or an assistant step.
#[derive(Clone, Debug)]
pub enum Unit<'a> {
    /// A USER item (a user message, a summary, the compaction marker).
    User(Entry<'a>),
    /// An assistant step: what it said (thinking, text, calls) and the answers to its calls.
    Step {
        /// THINKING, ASSISTANT and TOOL_CALL items, in order.
        said: Vec<Entry<'a>>,
        /// One TOOL_RESULT per call that needs an answer, in arrival order (cancelled
        /// results last).
        answers: Vec<Entry<'a>>,
    },
}

/// A request's conversation: its system prompt and its units.
#[derive(Clone, Debug, Default)]
pub struct Conversation<'a> {
    /// The SYSTEM items, in order.
    pub system: Vec<Entry<'a>>,
    /// The user inputs and assistant steps, in order.
    pub units: Vec<Unit<'a>>,
}

/// A call of the open step: how it pairs, and how it is sent.
struct Call<'a> {
    pair: StepCall<Cow<'a, str>>,
    wire_id: Cow<'a, str>,
    name: Option<&'a str>,
    stands_for: usize,
}

/// The cancelled results of the running turn's closed steps, by their call's own id: where
/// each stands (unit, answer), for a late result to take its place.
type Cancelled = FxHashMap<String, (usize, usize)>;

/// Cuts `items` (what the view sends) into the system prompt, user inputs and whole steps.
pub fn conversation(items: Vec<SendItem<'_>>) -> Conversation<'_> {
    let mut out = Conversation::default();
    let mut step: Option<(Vec<Entry<'_>>, Vec<Entry<'_>>, Vec<Call<'_>>)> = None;
    let mut cancelled = Cancelled::default();
    // The own ids of the turn's calls sent so far.
    let mut turn_calls: FxHashSet<Cow<'_, str>> = FxHashSet::default();
    for item in items {
        let kind = item.message.kind();
        match kind {
            Kind::System => out.system.push(plain(item)),
            Kind::User => {
                close(&mut step, &mut out, &mut cancelled);
                cancelled.clear();
                turn_calls.clear();
                out.units.push(Unit::User(plain(item)));
            }
            Kind::Thinking | Kind::Assistant | Kind::ToolCall => {
                let mut entry = plain(item);
                let own_id = (kind == Kind::ToolCall && entry.own_call_id().is_some()).then(|| entry.call_id.clone());
                if own_id.as_ref().is_some_and(|id| !turn_calls.insert(id.clone())) {
                    continue; // a duplicate call: see the module's documentation
                }
                if step.as_ref().is_some_and(|(_, answers, _)| !answers.is_empty()) {
                    close(&mut step, &mut out, &mut cancelled);
                }
                let (said, _, calls) = step.get_or_insert_with(Default::default);
                if kind == Kind::ToolCall {
                    if own_id.is_none() {
                        entry.call_id = Cow::Owned(format!("ctxwin_call_{}", entry.item.stands_for));
                    }
                    calls.push(Call {
                        pair: StepCall {
                            own_id,
                            name: entry.name.map(Cow::Borrowed),
                            form: CallForm::of(&entry.item.message),
                            answered: false,
                        },
                        wire_id: entry.call_id.clone(),
                        name: entry.name,
                        stands_for: entry.item.stands_for,
                    });
                }
                said.push(entry);
            }
            Kind::ToolResult => {
                let mut entry = plain(item);
                let answer = step.as_mut().and_then(|(_, answers, calls)| {
                    let at = step_answer(calls.iter().map(|call| &call.pair), entry.own_call_id(), entry.name)?;
                    Some((answers, &mut calls[at]))
                });
                let Some((answers, call)) = answer else {
                    answer_late(entry, &mut out, &mut cancelled);
                    continue;
                };
                let synthetic = entry.item.source.is_none() && entry.text() == CANCELLED_RESULT;
                if synthetic && !call.pair.form.cancellable() {
                    continue; // the view's cancellation of a call that takes none: see `close`
                }
                call.pair.answered = true;
                entry.call_id = call.wire_id.clone();
                entry.name = entry.name.or(call.name);
                entry.answers = Some(call.pair.form);
                answers.push(entry);
            }
        }
    }
    close(&mut step, &mut out, &mut cancelled);
    out
}

/// Sends the late result `entry` in the place of its call's cancelled result, in an earlier
/// step of the turn; leaves it out when there is none (its call's step is not sent, or the
/// result answers no call).
fn answer_late<'a>(mut entry: Entry<'a>, out: &mut Conversation<'a>, cancelled: &mut Cancelled) {
    let Some((unit, at)) = entry.own_call_id().and_then(|id| cancelled.remove(id)) else { return };
    let Some(Unit::Step { answers, .. }) = out.units.get_mut(unit) else { return };
    let stand_in = &answers[at];
    entry.call_id = stand_in.call_id.clone();
    entry.name = entry.name.or(stand_in.name);
    entry.answers = stand_in.answers;
    answers[at] = entry;
}

/// An entry for `item` as pushed.
fn plain(item: SendItem<'_>) -> Entry<'_> {
    let call_id = match &item.message {
        Cow::Borrowed(message) => message.call_id().map(Cow::Borrowed),
        Cow::Owned(message) => message.call_id().map(|id| Cow::Owned(id.to_owned())),
    };
    Entry { call_id: call_id.unwrap_or_default(), name: item.name, item, answers: None }
}

/// Ends the open step, answering its unanswered calls with cancelled results (calls that take
/// no answer keep none; unanswerable ones are left out).
/// Records them in `cancelled` (with any the view itself sent as cancelled), for a late
/// result to replace.
fn close<'a>(
    step: &mut Option<(Vec<Entry<'a>>, Vec<Entry<'a>>, Vec<Call<'a>>)>,
    out: &mut Conversation<'a>,
    cancelled: &mut Cancelled,
) {
    let Some((mut said, mut answers, calls)) = step.take() else { return };
    for call in calls.into_iter().filter(|call| !call.pair.answered) {
        match call.pair.form {
            CallForm::BuiltIn => continue,
            CallForm::Unanswerable => {
                said.retain(|entry| entry.kind() != Kind::ToolCall || entry.item.stands_for != call.stands_for);
                continue;
            }
            CallForm::Function | CallForm::Custom | CallForm::ApplyPatch => {}
        }
        // The result carries its call's own id (none for an id-less call); the entry the id
        // it is sent with.
        let own_id = call.pair.own_id.as_deref().map(Into::into);
        let extras = MessageExtras { call_id: own_id, ..MessageExtras::default() };
        let message = Message::new(Kind::ToolResult, Count::exact(0), CountSource::Library, Some(CANCELLED_RESULT.into()))
            .with_extras(extras);
        answers.push(Entry {
            item: SendItem {
                source: None,
                stands_for: call.stands_for,
                name: call.name,
                message: Cow::Owned(message),
                pushed_as_json: false,
            },
            call_id: call.wire_id,
            name: call.name,
            answers: Some(call.pair.form),
        });
    }
    if !said.is_empty() || !answers.is_empty() {
        for (at, answer) in answers.iter().enumerate() {
            if answer.item.source.is_none() && answer.text() == CANCELLED_RESULT {
                if let Some(id) = answer.own_call_id() {
                    cancelled.insert(id.to_owned(), (out.units.len(), at));
                }
            }
        }
        out.units.push(Unit::Step { said, answers });
    }
}
