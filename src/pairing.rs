//! Tool call pairing: which tool results answer which calls within a turn, and what is wrong.
//!
//! Pairs are matched within one turn (a call and its results belong to the same assistant
//! step). A result answers the call with the same call id. Tool messages pushed without an
//! id (plain `push` of a TOOL_CALL or TOOL_RESULT, Gemini parts without `id`) pair in order,
//! as a request sends them: a result answers the oldest unanswered call without an id, of
//! its tool name when it names one and such a call is open (Gemini answers a step's calls
//! by name, in the order of the calls: see [`id_less_answer`]); a result without an id is
//! never a defect, so agents that push results alone keep working. The view repairs
//! what is wrong: orphan and duplicated results and duplicated calls are left
//! out, and a call left unanswered in a completed turn gets a synthetic "cancelled" result.

use crate::message::{Kind, Message};

/// What is wrong with one tool message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Problem {
    /// A result whose call is not earlier in its turn.
    OrphanResult,
    /// A second result for a call that was already answered.
    DuplicateResult,
    /// A call reusing the id of an earlier call in the same turn.
    DuplicateCall,
    /// A call of a completed turn that no result answers (and that takes an answer, see
    /// [`CallForm`]).
    UnansweredCall,
}

impl Problem {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Problem::OrphanResult => "orphan_result",
            Problem::DuplicateResult => "duplicate_result",
            Problem::DuplicateCall => "duplicate_call",
            Problem::UnansweredCall => "unanswered_call",
        }
    }

    /// Why `push_tool` refuses a message with this problem.
    pub fn refusal(self) -> &'static str {
        match self {
            Problem::DuplicateCall => "a call with this id was already pushed in this turn",
            Problem::DuplicateResult => "this call was already answered",
            _ => "no call with this id was pushed in this turn",
        }
    }

    /// What the view does about it.
    pub fn repair(self) -> &'static str {
        match self {
            Problem::UnansweredCall => "the view answers it with a synthetic cancelled result",
            _ => "the view leaves it out",
        }
    }

    /// True when the view leaves the message out.
    pub fn leaves_out(self) -> bool {
        self != Problem::UnansweredCall
    }
}

/// One problem, at ledger index `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defect {
    /// The message's ledger index.
    pub index: usize,
    /// What is wrong.
    pub problem: Problem,
    /// For an unanswered call: the ledger index before which the view inserts the synthetic
    /// result (the end of the run of tool messages holding the call). Otherwise `index`.
    pub repair_at: usize,
}

/// Whether a call has been answered yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallState {
    Open,
    Answered,
}

/// The calls of one turn so far, fed tool message after tool message: what [`analyze`]
/// tracks, and what a push checks a new tool message against.
#[derive(Debug, Default)]
pub struct TurnCalls<'a> {
    calls: Vec<(usize, &'a str, CallState)>,
}

impl<'a> TurnCalls<'a> {
    /// Feeds the message at ledger index `index`, of kind `kind` with call id `id`, after the
    /// turn's earlier ones: its problem, if any (a message of another kind has none).
    pub fn feed(&mut self, index: usize, kind: Kind, id: &'a str) -> Option<Problem> {
        match kind {
            Kind::ToolCall => {
                if self.calls.iter().any(|&(_, other, _)| other == id) {
                    return Some(Problem::DuplicateCall);
                }
                self.calls.push((index, id, CallState::Open));
                None
            }
            Kind::ToolResult => {
                let open = self.calls.iter().position(|&(_, other, state)| other == id && state == CallState::Open);
                match open {
                    Some(call) => {
                        self.calls[call].2 = CallState::Answered;
                        None
                    }
                    None if self.calls.iter().any(|&(_, other, _)| other == id) => Some(Problem::DuplicateResult),
                    None => Some(Problem::OrphanResult),
                }
            }
            _ => None,
        }
    }
}

/// The defects of the turn `messages[first..end]`, sorted by index. `complete` says whether
/// the turn is finished: unanswered calls are defects only then.
pub fn analyze(messages: &[Message], first: usize, end: usize, complete: bool) -> Vec<Defect> {
    let turn = &messages[first..end];
    if !turn.iter().any(|m| m.call_id().is_some() || m.kind() == Kind::ToolCall) {
        return Vec::new();
    }
    let mut defects = Vec::new();
    let mut calls = TurnCalls::default();
    // Calls without ids (and their tool names), answered in order by results without ids
    // of their step (as a request pairs them: see `json::steps`); `step_from` is where the
    // open step's id-less calls start.
    let mut id_less: Vec<(usize, Option<&str>, CallState)> = Vec::new();
    let (mut step_from, mut answered_in_step) = (0, false);
    for (offset, message) in turn.iter().enumerate() {
        let index = first + offset;
        if matches!(message.kind(), Kind::Thinking | Kind::Assistant | Kind::ToolCall) && answered_in_step {
            (step_from, answered_in_step) = (id_less.len(), false);
        }
        let Some(id) = message.call_id() else {
            match message.kind() {
                Kind::ToolCall => id_less.push((index, message.name(), CallState::Open)),
                Kind::ToolResult => {
                    let open = id_less[step_from..].iter().map(|&(_, name, state)| (name, state == CallState::Open));
                    if let Some(call) = id_less_answer(open, message.name()) {
                        id_less[step_from + call].2 = CallState::Answered;
                        answered_in_step = true;
                    }
                }
                _ => {}
            }
            continue;
        };
        match calls.feed(index, message.kind(), id) {
            Some(problem) => defects.push(Defect::at(index, problem)),
            None => answered_in_step |= message.kind() == Kind::ToolResult,
        }
    }
    if complete {
        let id_less = id_less.iter().map(|&(index, _, state)| (index, "", state));
        for (index, _, state) in calls.calls.iter().copied().chain(id_less) {
            // A call that takes no answer (a provider's built-in tool; a call counted
            // without a name) or cannot be cancelled is no defect: see `CallForm`.
            if state == CallState::Open && CallForm::of(&messages[index]).cancellable() {
                let run_end =
                    (index..end).find(|&i| !matches!(messages[i].kind(), Kind::ToolCall | Kind::ToolResult)).unwrap_or(end);
                defects.push(Defect { index, problem: Problem::UnansweredCall, repair_at: run_end });
            }
        }
        defects.sort_by_key(|d| d.index);
    }
    defects
}

/// How a tool call is answered on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallForm {
    /// A function the agent runs (every format's function call; Responses `function_call`),
    /// answered by a result (Responses `function_call_output`).
    Function,
    /// A Responses `custom_tool_call`, answered by a `custom_tool_call_output`.
    Custom,
    /// A Responses `apply_patch_call`, answered by an `apply_patch_call_output` (a cancelled
    /// one has status `failed`).
    ApplyPatch,
    /// A provider's built-in tool, run by the provider: it takes no answer.
    BuiltIn,
    /// A Responses client call whose output has no room for "cancelled" (`computer_call`
    /// wants a screenshot, `shell_call` and `local_shell_call` an exit status): left out of
    /// a request while unanswered.
    Unanswerable,
}

impl CallForm {
    /// The form of the TOOL_CALL `message`: from its Responses item type when it was pushed
    /// as one (see [`CallForm::of_item`]), else a function; a call without a tool name that
    /// is not a Responses item counts as built in.
    pub fn of(message: &Message) -> CallForm {
        let item_type = message
            .raw_json()
            .filter(|_| message.extras().and_then(|extras| extras.wire).is_some_and(|wire| wire.of == 1))
            .and_then(|raw| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(raw).ok())
            .and_then(|item| item.get("type").and_then(serde_json::Value::as_str).map(CallForm::of_item));
        match item_type {
            Some(form) => form,
            None if message.name().is_none() => CallForm::BuiltIn,
            None => CallForm::Function,
        }
    }

    /// How a Responses call item of type `item_type` is answered: `function_call`,
    /// `custom_tool_call` and `apply_patch_call` by the agent's output item; `computer_call`,
    /// `shell_call` and `local_shell_call` by outputs that cannot say "cancelled"; every
    /// other call item (`web_search_call`, `file_search_call`, `code_interpreter_call`,
    /// `image_generation_call`, `mcp_call`, ...) is run by OpenAI and takes no answer.
    pub fn of_item(item_type: &str) -> CallForm {
        match item_type {
            "custom_tool_call" => CallForm::Custom,
            "apply_patch_call" => CallForm::ApplyPatch,
            "computer_call" | "shell_call" | "local_shell_call" => CallForm::Unanswerable,
            _ if item_type != "function_call" && item_type.ends_with("_call") => CallForm::BuiltIn,
            _ => CallForm::Function,
        }
    }

    /// True when an unanswered call of this form gets a cancelled result.
    pub fn cancellable(self) -> bool {
        matches!(self, CallForm::Function | CallForm::Custom | CallForm::ApplyPatch)
    }
}

/// A call of the assistant step a request is reading, as the request pairs it: by its own
/// id, or (id-less) with the oldest id-less result of its name (see [`id_less_answer`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepCall<Id> {
    /// The call's own id (`None` for a call pushed without one).
    pub own_id: Option<Id>,
    /// The call's tool name, if known.
    pub name: Option<Id>,
    /// How it is answered.
    pub form: CallForm,
    /// True once a result answered it.
    pub answered: bool,
}

/// The call of `calls` a result with id `own` and tool name `name` answers in a request: the
/// first unanswered call with that id, or for an id-less result the id-less call
/// [`id_less_answer`] picks.
pub fn step_answer<'c, Id: AsRef<str> + 'c, Calls>(calls: Calls, own: Option<&str>, name: Option<&str>) -> Option<usize>
where
    Calls: IntoIterator<Item = &'c StepCall<Id>>,
{
    let calls = calls.into_iter();
    let Some(own) = own else {
        let id_less = calls.map(|call| (call.name.as_ref().map(AsRef::as_ref), call.own_id.is_none() && !call.answered));
        return id_less_answer(id_less, name);
    };
    calls.into_iter().position(|call| !call.answered && call.own_id.as_ref().is_some_and(|id| id.as_ref() == own))
}

/// Which of `calls` (each its tool name and whether it is an open id-less call) an id-less
/// result named `name` answers: the oldest open one of that name; a result without a name
/// (a plain `push`) answers the oldest open one. Gemini sends calls without ids and wants a
/// step's responses in the order of its calls, each naming its function.
pub fn id_less_answer<'n>(mut calls: impl Iterator<Item = (Option<&'n str>, bool)>, name: Option<&str>) -> Option<usize> {
    match name {
        Some(name) => calls.position(|(call, open)| open && call == Some(name)),
        None => calls.position(|(_, open)| open),
    }
}

/// The step a request reads last, fed message by message, and how many cancelled results
/// a request adds for the calls its steps leave unanswered (see `json::steps`): what the
/// running turn costs on top of its messages.
#[derive(Clone, Debug, Default)]
pub struct RunningStep {
    calls: Vec<StepCall<Box<str>>>,
    answered_any: bool,
    cancelled_before: usize,
}

impl RunningStep {
    /// Feeds the next message: a USER message starts afresh; thinking, text or a call after
    /// answers opens a new step; a result answers a call of the open step. Returns true when
    /// the message starts a step (a USER message starts its turn's first step): the one rule
    /// the ledger's steps, the planner and the wire's steps share.
    pub fn feed(&mut self, message: &Message) -> bool {
        match message.kind() {
            Kind::User => {
                *self = RunningStep::default();
                true
            }
            Kind::System => false,
            Kind::Thinking | Kind::Assistant | Kind::ToolCall => {
                let starts = self.answered_any;
                if starts {
                    self.close();
                }
                if message.kind() == Kind::ToolCall {
                    self.calls.push(StepCall {
                        own_id: message.call_id().map(Box::from),
                        name: message.name().map(Box::from),
                        form: CallForm::of(message),
                        answered: false,
                    });
                }
                starts
            }
            Kind::ToolResult => {
                if let Some(call) = step_answer(&self.calls, message.call_id(), message.name()) {
                    self.calls[call].answered = true;
                    self.answered_any = true;
                }
                false
            }
        }
    }

    /// How many cancelled results a request adds for the open step's unanswered calls (the
    /// running step's; those of the turn's completed steps are the view's own items).
    pub fn open_cancelled(&self) -> usize {
        self.calls.iter().filter(|call| !call.answered && call.form.cancellable()).count()
    }

    fn close(&mut self) {
        self.cancelled_before = self.cancelled();
        self.calls.clear();
        self.answered_any = false;
    }

    /// How many cancelled results a request adds for what was fed since the last USER
    /// message.
    pub fn cancelled(&self) -> usize {
        self.cancelled_before + self.calls.iter().filter(|call| !call.answered && call.form.cancellable()).count()
    }
}

impl Defect {
    fn at(index: usize, problem: Problem) -> Defect {
        Defect { index, problem, repair_at: index }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{CountSource, MessageExtras};
    use crate::tokens::Count;

    /// A message of `kind` with call id `id`; a call is named (a call without a name takes
    /// no answer).
    fn message(kind: Kind, id: Option<&str>) -> Message {
        let message = Message::new(kind, Count::estimate(1), CountSource::Caller, None);
        match (id, kind) {
            (None, Kind::ToolCall) | (Some(_), _) => message.with_extras(MessageExtras {
                call_id: id.map(Into::into),
                name: (kind == Kind::ToolCall).then(|| "read".into()),
                ..MessageExtras::default()
            }),
            (None, _) => message,
        }
    }

    fn problems(turn: &[(Kind, Option<&str>)], complete: bool) -> Vec<(usize, Problem, usize)> {
        let messages: Vec<Message> = turn.iter().map(|&(kind, id)| message(kind, id)).collect();
        analyze(&messages, 0, messages.len(), complete).into_iter().map(|d| (d.index, d.problem, d.repair_at)).collect()
    }

    use Kind::{Assistant, ToolCall, ToolResult, User};

    #[test]
    fn parallel_calls_answered_in_any_order_are_fine() {
        let turn = [
            (User, None),
            (ToolCall, Some("a")),
            (ToolCall, Some("b")),
            (ToolResult, Some("b")),
            (ToolResult, Some("a")),
            (Assistant, None),
        ];
        assert_eq!(problems(&turn, true), vec![]);
    }

    #[test]
    fn finds_every_problem() {
        let turn = [
            (User, None),
            (ToolResult, Some("x")), // 1: orphan
            (ToolCall, Some("a")),   // 2
            (ToolCall, Some("a")),   // 3: duplicate call
            (ToolCall, Some("b")),   // 4: unanswered, repaired before 7
            (ToolResult, Some("a")), // 5
            (ToolResult, Some("a")), // 6: duplicate result
            (Assistant, None),       // 7
        ];
        assert_eq!(
            problems(&turn, true),
            vec![
                (1, Problem::OrphanResult, 1),
                (3, Problem::DuplicateCall, 3),
                (4, Problem::UnansweredCall, 7),
                (6, Problem::DuplicateResult, 6),
            ]
        );
        // While the turn is unfinished, an open call is not a defect.
        assert_eq!(problems(&turn, false).len(), 3);
    }

    /// A TOOL_CALL or TOOL_RESULT without an id, of tool `name` (Gemini's parts).
    fn named(kind: Kind, name: &str) -> Message {
        Message::new(kind, Count::estimate(1), CountSource::Caller, None)
            .with_extras(MessageExtras { name: Some(name.into()), ..MessageExtras::default() })
    }

    #[test]
    fn id_less_calls_of_one_name_pair_by_name_in_order_within_their_step() {
        // Three parallel read calls and a grep, answered by name (grep first), then a read in
        // a second step: every call is its own, nothing is a duplicate.
        let user = message(User, None);
        let (read, grep) = (|kind| named(kind, "read"), |kind| named(kind, "grep"));
        let turn = [
            user.clone(),
            read(ToolCall),
            read(ToolCall),
            grep(ToolCall),
            read(ToolCall),
            grep(ToolResult),
            read(ToolResult),
            read(ToolResult),
            read(ToolResult),
            read(ToolCall), // 9: a second step
            read(ToolResult),
            message(Assistant, None),
        ];
        assert_eq!(analyze(&turn, 0, turn.len(), true), vec![]);
        // Without the last read answer of the first step, its third read call is the one
        // left open (answers go in the order of the calls), and the second step's answer
        // does not reach back into the first step.
        let mut short = turn.to_vec();
        short.remove(8);
        let defects = analyze(&short, 0, short.len(), true);
        assert_eq!(defects.iter().map(|d| (d.index, d.problem)).collect::<Vec<_>>(), [(4, Problem::UnansweredCall)]);
        // A named result answers only a call of its name.
        let wrong = [user, read(ToolCall), grep(ToolResult), message(Assistant, None)];
        assert_eq!(analyze(&wrong, 0, 4, true).len(), 1);
        let calls = [StepCall { own_id: None, name: Some("read"), form: CallForm::Function, answered: false }];
        assert_eq!(step_answer(&calls, None, Some("grep")), None);
        assert_eq!(step_answer(&calls, None, Some("read")), Some(0));
        assert_eq!(step_answer(&calls, None, None), Some(0));
    }

    #[test]
    fn messages_without_ids_pair_in_order() {
        // A result without an id is never a defect; a call without one is answered by the
        // next result without one, or cancelled.
        let turn = [(User, None), (ToolResult, None), (ToolCall, None), (ToolCall, Some("a"))];
        assert_eq!(problems(&turn, true), vec![(2, Problem::UnansweredCall, 4), (3, Problem::UnansweredCall, 4)]);
        let answered = [(User, None), (ToolCall, None), (ToolCall, None), (ToolResult, None), (Assistant, None)];
        assert_eq!(problems(&answered, true), vec![(2, Problem::UnansweredCall, 4)]);
        assert_eq!(problems(&answered, false), vec![]);
        // A call counted without a name (push_counted) takes no answer.
        let counted = [message(User, None), Message::new(ToolCall, Count::estimate(5), CountSource::Caller, None)];
        assert_eq!(analyze(&counted, 0, 2, true), vec![]);
    }
}
