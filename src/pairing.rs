//! Tool call pairing: which tool results answer which calls within a turn, and what is wrong.
//!
//! Pairs are matched within one turn. A result answers the call with the same call id,
//! usually in the call's own step; a result whose call is in an older step of the same turn
//! (a *late* result: a tool that finished after the model went on) pairs with it too, and a
//! request sends it in its call's step ([`LateResults`]). Tool messages pushed without an
//! id (plain `push` of a TOOL_CALL or TOOL_RESULT, Gemini parts without `id`) pair in order,
//! as a request sends them: a result answers the oldest unanswered call without an id, of
//! its tool name when it names one and such a call is open (Gemini answers a step's calls
//! by name, in the order of the calls: see [`id_less_answer`]); a result without an id is
//! never a defect, so agents that push results alone keep working. The view repairs
//! what is wrong: orphan and duplicated results and duplicated calls are left
//! out, and a call left unanswered in a completed turn gets a synthetic "cancelled" result.

use crate::message::{Kind, Message};
use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::hash::Hash;

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

/// What a tool message of `kind` does to the state of the call with its id (`None`: no call
/// with this id in the turn yet): the message's problem, if any, and the call's state after.
fn transition(kind: Kind, state: Option<CallState>) -> (Option<Problem>, Option<CallState>) {
    match (kind, state) {
        (Kind::ToolCall, None) => (None, Some(CallState::Open)),
        (Kind::ToolCall, Some(_)) => (Some(Problem::DuplicateCall), state),
        (Kind::ToolResult, Some(CallState::Open)) => (None, Some(CallState::Answered)),
        (Kind::ToolResult, Some(CallState::Answered)) => (Some(Problem::DuplicateResult), state),
        (Kind::ToolResult, None) => (Some(Problem::OrphanResult), None),
        _ => (None, state),
    }
}

/// The id-less calls of one step as id-less results answer them ([`id_less_answer`]'s
/// rule: a named result the oldest open call of its name, a result without a name the
/// oldest open call), indexed so that each answer costs O(1) amortised however many calls
/// the step holds. `K` is a tool name as kept, `T` what is kept of each call.
#[derive(Clone, Debug)]
struct IdLessCalls<K, T> {
    /// Every id-less call of the step, oldest first, and whether it is still open.
    calls: Vec<(T, bool)>,
    /// Positions in `calls`, oldest first; answered ones are skipped when met.
    oldest: VecDeque<usize>,
    /// Positions in `calls` by tool name, oldest first; answered ones are skipped when met.
    by_name: FxHashMap<K, VecDeque<usize>>,
}

impl<K, T> Default for IdLessCalls<K, T> {
    fn default() -> Self {
        IdLessCalls { calls: Vec::new(), oldest: VecDeque::new(), by_name: FxHashMap::default() }
    }
}

impl<K: Borrow<str> + Hash + Eq, T> IdLessCalls<K, T> {
    /// Adds an open call of tool `name`.
    fn push(&mut self, name: Option<K>, call: T) {
        let at = self.calls.len();
        self.calls.push((call, true));
        self.oldest.push_back(at);
        if let Some(name) = name {
            self.by_name.entry(name).or_default().push_back(at);
        }
    }

    /// Answers the call a result of tool `name` answers, if any is open: what was kept of it.
    fn answer(&mut self, name: Option<&str>) -> Option<&T> {
        let IdLessCalls { calls, oldest, by_name } = self;
        let queue = match name {
            Some(name) => by_name.get_mut(name)?,
            None => oldest,
        };
        while let Some(at) = queue.pop_front() {
            if std::mem::replace(&mut calls[at].1, false) {
                return Some(&calls[at].0);
            }
        }
        None
    }

    /// The calls still open, oldest first.
    fn open(&self) -> impl Iterator<Item = &T> {
        self.calls.iter().filter(|(_, open)| *open).map(|(call, _)| call)
    }

    /// Forgets every call (a new step).
    fn clear(&mut self) {
        self.calls.clear();
        self.oldest.clear();
        self.by_name.clear();
    }
}

/// One call of a turn, as [`TurnCalls`] keeps it.
#[derive(Clone, Copy, Debug)]
struct Call {
    index: usize,
    state: CallState,
    cancellable: bool,
}

/// The calls of one turn (or one step) so far, fed message after message and indexed: what
/// [`analyze`] tracks, and what the ledger keeps of its running turn and newest step, so
/// that a push checks a tool message, and a step's defects are known, in O(1) (amortised)
/// however long the turn or the step. Calls with ids are matched across the whole run fed;
/// id-less ones within their step, as a request pairs them (see `json::steps`). `K` is an id
/// or a tool name as kept: borrowed while analysing, owned in the ledger.
#[derive(Clone, Debug)]
pub struct TurnCalls<K = Box<str>> {
    /// The first call with each id (a later one reusing it is a duplicate, not kept).
    by_id: FxHashMap<K, Call>,
    /// The open step's calls without ids (id-less results answer only those).
    id_less: IdLessCalls<K, Call>,
    /// Earlier steps' id-less calls left unanswered that take a cancelled result: their
    /// ledger indices.
    left_open: Vec<usize>,
    /// True once a result of the open step answered a call (a call, text or thinking then
    /// opens the next step).
    answered_in_step: bool,
    /// The ledger index of the open step's first message: a call before it is an older
    /// step's, and a result answering it is late (it answers nothing of the open step).
    step_start: usize,
    /// Orphan and duplicated results and duplicated calls found so far.
    problems: usize,
    /// Calls not answered yet that take a cancelled result (see [`CallForm::cancellable`]).
    unanswered: usize,
}

impl<K> Default for TurnCalls<K> {
    fn default() -> Self {
        TurnCalls {
            by_id: FxHashMap::default(),
            id_less: IdLessCalls::default(),
            left_open: Vec::new(),
            answered_in_step: false,
            step_start: 0,
            problems: 0,
            unanswered: 0,
        }
    }
}

impl<K: Borrow<str> + Hash + Eq> TurnCalls<K> {
    /// The problem a tool message of `kind` with call id `id` would have if fed now
    /// (nothing is fed). O(1).
    pub fn check(&self, kind: Kind, id: &str) -> Option<Problem> {
        transition(kind, self.by_id.get(id).map(|call| call.state)).0
    }

    /// The ledger index of the open call with id `id` when it belongs to an older step of
    /// the run than the open one: a result with this id now is late. O(1).
    pub fn late_call(&self, id: &str) -> Option<usize> {
        let call = self.by_id.get(id)?;
        (call.state == CallState::Open && call.index < self.step_start).then_some(call.index)
    }

    /// Feeds `message`, at ledger index `index`, after the run's earlier ones: its problem,
    /// if any (a message that is not a tool message has none; neither has a result without
    /// an id). O(1) amortised (a Responses call item is read to know its form).
    pub fn feed<'m>(&mut self, index: usize, message: &'m Message) -> Option<Problem>
    where
        K: From<&'m str>,
    {
        let kind = message.kind();
        if matches!(kind, Kind::Thinking | Kind::Assistant | Kind::ToolCall) && self.answered_in_step {
            self.answered_in_step = false;
            self.step_start = index;
            let left = self.id_less.open().filter(|call| call.cancellable).map(|call| call.index);
            self.left_open.extend(left);
            self.id_less.clear();
        }
        if !matches!(kind, Kind::ToolCall | Kind::ToolResult) {
            return None;
        }
        let cancellable = || CallForm::of(message).cancellable();
        let Some(id) = message.call_id() else {
            match kind {
                Kind::ToolCall => {
                    let call = Call { index, state: CallState::Open, cancellable: cancellable() };
                    self.unanswered += usize::from(call.cancellable);
                    self.id_less.push(message.name().map(K::from), call);
                }
                _ => {
                    if let Some(call) = self.id_less.answer(message.name()) {
                        self.unanswered -= usize::from(call.cancellable);
                        self.answered_in_step = true;
                    }
                }
            }
            return None;
        };
        let problem = match self.by_id.get_mut(id) {
            Some(call) => {
                let (problem, state) = transition(kind, Some(call.state));
                if problem.is_none() {
                    // A result answering its call; a late one (its call is an older
                    // step's) answers nothing of the open step.
                    self.unanswered -= usize::from(call.cancellable);
                    self.answered_in_step |= call.index >= self.step_start;
                    call.state = state.unwrap_or(call.state);
                }
                problem
            }
            None if kind == Kind::ToolCall => {
                let call = Call { index, state: CallState::Open, cancellable: cancellable() };
                self.unanswered += usize::from(call.cancellable);
                self.by_id.insert(K::from(id), call);
                None
            }
            None => Some(Problem::OrphanResult),
        };
        self.problems += usize::from(problem.is_some());
        problem
    }

    /// Orphan and duplicated results and duplicated calls fed so far: the problems of a
    /// run still going on. O(1).
    pub fn problems(&self) -> usize {
        self.problems
    }

    /// Calls not answered yet that a completed run answers with a cancelled result. O(1).
    pub fn unanswered(&self) -> usize {
        self.unanswered
    }

    /// True when the run, `complete` or still going on, has defects the view repairs. O(1).
    pub fn defective(&self, complete: bool) -> bool {
        self.problems > 0 || (complete && self.unanswered > 0)
    }

    /// The ledger indices of the unanswered calls that take a cancelled result, ascending.
    fn unanswered_calls(&self) -> Vec<usize> {
        let by_id = self.by_id.values().filter(|call| call.state == CallState::Open && call.cancellable);
        let id_less = self.id_less.open().filter(|call| call.cancellable);
        let mut calls: Vec<usize> = by_id.chain(id_less).map(|call| call.index).chain(self.left_open.iter().copied()).collect();
        calls.sort_unstable();
        calls
    }

    /// A check of tool messages about to be added after the turn's, without feeding them.
    pub fn probe(&self) -> Probe<'_, K> {
        Probe { base: Some(self), fed: FxHashMap::default() }
    }
}

/// Tool messages checked one after the other on top of a turn's calls ([`TurnCalls::probe`])
/// without changing them: what an all-or-nothing push checks first. O(1) per message.
#[derive(Debug)]
pub struct Probe<'a, K> {
    /// The turn checked on top of; `None` once a USER message started a new one.
    base: Option<&'a TurnCalls<K>>,
    /// The states the probed messages gave their ids.
    fed: FxHashMap<&'a str, CallState>,
}

impl<'a, K: Borrow<str> + Hash + Eq> Probe<'a, K> {
    /// A USER message: what follows is a new turn.
    pub fn new_turn(&mut self) {
        self.base = None;
        self.fed.clear();
    }

    /// Checks a tool message of `kind` with call id `id` after the ones probed before: its
    /// problem, if any (then it is not counted as fed).
    pub fn feed(&mut self, kind: Kind, id: &'a str) -> Option<Problem> {
        let state = self.fed.get(id).copied().or_else(|| self.base.and_then(|base| base.by_id.get(id)).map(|call| call.state));
        let (problem, after) = transition(kind, state);
        if let (None, Some(after)) = (problem, after) {
            self.fed.insert(id, after);
        }
        problem
    }
}

/// The defects of the turn `messages[first..end]`, sorted by index. `complete` says whether
/// the turn is finished: unanswered calls are defects only then. The `late` results are not
/// defects of the step holding them, nor are the calls they answer of theirs.
pub fn analyze(messages: &[Message], first: usize, end: usize, complete: bool, late: &LateResults) -> Vec<Defect> {
    let turn = &messages[first..end];
    if !turn.iter().any(|m| m.call_id().is_some() || m.kind() == Kind::ToolCall) {
        return Vec::new();
    }
    let mut defects = Vec::new();
    let mut calls = TurnCalls::<&str>::default();
    for (offset, message) in turn.iter().enumerate() {
        let index = first + offset;
        if late.is_late(index) {
            continue;
        }
        if let Some(problem) = calls.feed(index, message) {
            defects.push(Defect::at(index, problem));
        }
    }
    if complete && calls.unanswered() > 0 {
        // The end of the run of tool messages holding each call, found once per run.
        let mut run_end = first;
        for index in calls.unanswered_calls().into_iter().filter(|&call| !late.answers(call)) {
            if run_end <= index {
                run_end = (index..end).find(|&i| !matches!(messages[i].kind(), Kind::ToolCall | Kind::ToolResult)).unwrap_or(end);
            }
            defects.push(Defect { index, problem: Problem::UnansweredCall, repair_at: run_end });
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

/// The step a request reads last, fed message by message: where steps start, and how many
/// cancelled results a request adds for the calls it leaves unanswered (see `json::steps`),
/// what the running step costs on top of its messages. Pairs as [`step_answer`] does (a
/// result answers the first unanswered call of the step with its id, an id-less result the
/// id-less call [`id_less_answer`] picks), indexed so that a message costs O(1) amortised
/// however many parallel calls the step holds.
#[derive(Clone, Debug, Default)]
pub struct RunningStep {
    /// The step's unanswered calls with an id, by id: whether each takes a cancelled result,
    /// oldest first.
    open: FxHashMap<Box<str>, VecDeque<bool>>,
    /// The step's id-less calls: whether each takes a cancelled result.
    id_less: IdLessCalls<Box<str>, bool>,
    /// Unanswered calls of the step that take a cancelled result.
    unanswered: usize,
    answered_any: bool,
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
                    *self = RunningStep::default();
                }
                if message.kind() == Kind::ToolCall {
                    let cancellable = CallForm::of(message).cancellable();
                    self.unanswered += usize::from(cancellable);
                    match message.call_id() {
                        Some(id) => self.open.entry(Box::from(id)).or_default().push_back(cancellable),
                        None => self.id_less.push(message.name().map(Box::from), cancellable),
                    }
                }
                starts
            }
            Kind::ToolResult => {
                let answered = match message.call_id() {
                    Some(id) => {
                        let calls = self.open.get_mut(id);
                        let (call, emptied) = calls.map_or((None, false), |calls| (calls.pop_front(), calls.is_empty()));
                        if emptied {
                            self.open.remove(id);
                        }
                        call
                    }
                    None => self.id_less.answer(message.name()).copied(),
                };
                if let Some(cancellable) = answered {
                    self.unanswered -= usize::from(cancellable);
                    self.answered_any = true;
                }
                false
            }
        }
    }

    /// How many cancelled results a request adds for the open step's unanswered calls (the
    /// running step's; those of the turn's completed steps are the view's own items). O(1).
    pub fn open_cancelled(&self) -> usize {
        self.unanswered
    }
}

/// The late results of a ledger: results whose call is in an older step of the same turn
/// (see [`TurnCalls::late_call`]). Each pairs with its call; a request sends it in its
/// call's step, after that step's other results, and leaves it out when the call's step is
/// not sent (see `json::steps`).
#[derive(Clone, Debug, Default)]
pub struct LateResults {
    /// (result, call) ledger indices, ascending by result.
    pairs: Vec<(usize, usize)>,
    /// The calls answered late, and the result answering each.
    calls: BTreeMap<usize, usize>,
}

impl LateResults {
    /// Records that the result at `result` (after every one recorded) answers the call at
    /// `call`, of an older step.
    pub fn record(&mut self, result: usize, call: usize) {
        debug_assert!(self.pairs.last().is_none_or(|&(last, _)| last < result));
        self.pairs.push((result, call));
        self.calls.insert(call, result);
    }

    /// Forgets the results from ledger index `message_count` on.
    pub fn truncate(&mut self, message_count: usize) {
        while let Some(&(_, call)) = self.pairs.last().filter(|&&(result, _)| result >= message_count) {
            self.pairs.pop();
            self.calls.remove(&call);
        }
    }

    /// True when the message at `index` is a late result. O(log late results).
    pub fn is_late(&self, index: usize) -> bool {
        self.call_of(index).is_some()
    }

    /// The calls answered by the late results from ledger index `first` on.
    pub fn calls_answered_from(&self, first: usize) -> impl Iterator<Item = usize> + '_ {
        let from = self.pairs.partition_point(|&(result, _)| result < first);
        self.pairs[from..].iter().map(|&(_, call)| call)
    }

    /// True when a late result lies in the ledger indices `range`. O(log late results).
    pub fn any_in(&self, range: std::ops::Range<usize>) -> bool {
        let first = self.pairs.partition_point(|&(result, _)| result < range.start);
        self.pairs.get(first).is_some_and(|&(result, _)| result < range.end)
    }

    /// True when the call at `call` is answered by a late result. O(log late results).
    pub fn answers(&self, call: usize) -> bool {
        self.calls.contains_key(&call)
    }

    /// The calls in the ledger indices `range` answered late, with their results, ascending.
    pub fn calls_in(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.calls.range(range).map(|(&call, &result)| (call, result))
    }

    /// The call the result at `index` answers, when it is late. O(log late results).
    pub fn call_of(&self, index: usize) -> Option<usize> {
        self.pairs.binary_search_by_key(&index, |&(result, _)| result).ok().map(|at| self.pairs[at].1)
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
        analyze(&messages, 0, messages.len(), complete, &LateResults::default())
            .into_iter()
            .map(|d| (d.index, d.problem, d.repair_at))
            .collect()
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
        assert_eq!(analyze(&turn, 0, turn.len(), true, &LateResults::default()), vec![]);
        // Without the last read answer of the first step, its third read call is the one
        // left open (answers go in the order of the calls), and the second step's answer
        // does not reach back into the first step.
        let mut short = turn.to_vec();
        short.remove(8);
        let defects = analyze(&short, 0, short.len(), true, &LateResults::default());
        assert_eq!(defects.iter().map(|d| (d.index, d.problem)).collect::<Vec<_>>(), [(4, Problem::UnansweredCall)]);
        // A named result answers only a call of its name.
        let wrong = [user, read(ToolCall), grep(ToolResult), message(Assistant, None)];
        assert_eq!(analyze(&wrong, 0, 4, true, &LateResults::default()).len(), 1);
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
        assert_eq!(analyze(&counted, 0, 2, true, &LateResults::default()), vec![]);
    }

    /// The pairing as first written, a linear scan of the run per message (what `analyze`
    /// did before the index): the reference the indexed [`TurnCalls`] must agree with. Each
    /// message's problem, and the defects of the run taken as complete.
    fn scanned(run: &[Message]) -> (Vec<Option<Problem>>, Vec<Defect>) {
        let mut calls: Vec<(usize, &str, bool)> = Vec::new(); // (index, id, answered)
        let mut id_less: Vec<(usize, Option<&str>, bool)> = Vec::new(); // (index, name, answered)
        let (mut step_from, mut step_start, mut answered_in_step) = (0, 0, false);
        let mut problems = Vec::new();
        for (index, message) in run.iter().enumerate() {
            if matches!(message.kind(), Kind::Thinking | Kind::Assistant | Kind::ToolCall) && answered_in_step {
                (step_from, step_start, answered_in_step) = (id_less.len(), index, false);
            }
            let problem = match (message.kind(), message.call_id()) {
                (Kind::ToolCall, None) => {
                    id_less.push((index, message.name(), false));
                    None
                }
                (Kind::ToolResult, None) => {
                    let open = id_less[step_from..].iter().map(|&(_, name, answered)| (name, !answered));
                    if let Some(call) = id_less_answer(open, message.name()) {
                        id_less[step_from + call].2 = true;
                        answered_in_step = true;
                    }
                    None
                }
                (Kind::ToolCall, Some(id)) if calls.iter().any(|call| call.1 == id) => Some(Problem::DuplicateCall),
                (Kind::ToolCall, Some(id)) => {
                    calls.push((index, id, false));
                    None
                }
                (Kind::ToolResult, Some(id)) => match calls.iter().position(|call| call.1 == id && !call.2) {
                    Some(at) => {
                        // A late result (its call is an older step's) answers nothing of
                        // this step.
                        calls[at].2 = true;
                        answered_in_step |= calls[at].0 >= step_start;
                        None
                    }
                    None if calls.iter().any(|call| call.1 == id) => Some(Problem::DuplicateResult),
                    None => Some(Problem::OrphanResult),
                },
                _ => None,
            };
            problems.push(problem);
        }
        let mut defects: Vec<Defect> =
            problems.iter().enumerate().filter_map(|(index, problem)| problem.map(|p| Defect::at(index, p))).collect();
        let calls = calls.iter().map(|call| (call.0, call.2)).chain(id_less.iter().map(|call| (call.0, call.2)));
        for (index, answered) in calls {
            if !answered && CallForm::of(&run[index]).cancellable() {
                let is_tool = |i: &usize| matches!(run[*i].kind(), Kind::ToolCall | Kind::ToolResult);
                let run_end = (index..run.len()).find(|i| !is_tool(i)).unwrap_or(run.len());
                defects.push(Defect { index, problem: Problem::UnansweredCall, repair_at: run_end });
            }
        }
        defects.sort_by_key(|d| d.index);
        (problems, defects)
    }

    /// The running step as first written, its calls in a list, each result answering
    /// through [`step_answer`]: whether each message starts a step, and how many cancelled
    /// results a request adds for the open step after the last.
    fn scanned_step(run: &[Message]) -> (Vec<bool>, usize) {
        let (mut calls, mut answered_any, mut starts) = (Vec::<StepCall<Box<str>>>::new(), false, Vec::new());
        for message in run {
            starts.push(match message.kind() {
                Kind::ToolResult => {
                    if let Some(call) = step_answer(&calls, message.call_id(), message.name()) {
                        calls[call].answered = true;
                        answered_any = true;
                    }
                    false
                }
                Kind::User => {
                    (calls, answered_any) = (Vec::new(), false);
                    true
                }
                Kind::System => false,
                kind => {
                    let starts = answered_any;
                    if answered_any {
                        calls.clear();
                        answered_any = false;
                    }
                    if kind == Kind::ToolCall {
                        calls.push(StepCall {
                            own_id: message.call_id().map(Box::from),
                            name: message.name().map(Box::from),
                            form: CallForm::of(message),
                            answered: false,
                        });
                    }
                    starts
                }
            });
        }
        (starts, calls.iter().filter(|call| !call.answered && call.form.cancellable()).count())
    }

    proptest::proptest! {
        /// The indexed pairing (pushes, `analyze`, the running step) agrees with the scans it
        /// replaced, over random turns of calls and results with few ids (so that ids
        /// repeat), id-less ones of a few tool names or none (Gemini's parts; a plain push),
        /// text, thinking and USER messages among them.
        #[test]
        fn indexed_pairing_agrees_with_the_scan(ops in proptest::collection::vec((0u8..7, 0u8..5, 0u8..3), 0..120)) {
            let turn: Vec<Message> = ops
                .iter()
                .map(|&(op, id, name)| {
                    let id = ["a", "b", "c", "d"].get(usize::from(id)).copied();
                    let name = ["read", "grep"].get(usize::from(name)).copied();
                    let tool = |kind| {
                        Message::new(kind, Count::estimate(1), CountSource::Caller, None).with_extras(MessageExtras {
                            call_id: id.map(Into::into),
                            name: name.map(Into::into),
                            ..MessageExtras::default()
                        })
                    };
                    match op {
                        0 | 1 => tool(ToolCall),
                        2 | 3 => tool(ToolResult),
                        4 => message(Assistant, None),
                        5 => message(Kind::Thinking, None),
                        _ => message(User, None),
                    }
                })
                .collect();
            let mut calls = TurnCalls::<Box<str>>::default();
            let mut running = RunningStep::default();
            let mut start = 0;
            let (starts, _) = scanned_step(&turn);
            for (index, message) in turn.iter().enumerate() {
                if message.kind() == User {
                    calls = TurnCalls::default();
                    start = index;
                }
                let checked = message.call_id().and_then(|id| calls.check(message.kind(), id));
                let fed = calls.feed(index, message);
                proptest::prop_assert_eq!(running.feed(message), starts[index]);
                let (problems, defects) = scanned(&turn[start..=index]);
                proptest::prop_assert_eq!(fed, problems[index - start]);
                proptest::prop_assert_eq!(checked, fed);
                proptest::prop_assert_eq!(calls.problems(), problems.iter().flatten().count());
                let unanswered = defects.iter().filter(|d| d.problem == Problem::UnansweredCall).count();
                proptest::prop_assert_eq!(calls.unanswered(), unanswered);
                proptest::prop_assert_eq!(running.open_cancelled(), scanned_step(&turn[..=index]).1);
                let shifted: Vec<Defect> =
                    defects.iter().map(|d| Defect { index: d.index + start, repair_at: d.repair_at + start, ..*d }).collect();
                proptest::prop_assert_eq!(analyze(&turn, start, index + 1, true, &LateResults::default()), shifted);
            }
        }
    }
}
