//! What the view sends for a cleared tool result (the clearing stage, see
//! `strategy::clearing`): a short placeholder naming the tool, the call and the tokens
//! cleared, in place of the output; the call stays (with `clear_tool_inputs`, with empty
//! arguments). And what clearing each result saves, read once per message.
//!
//! **Superseded results.** With a `supersede` rule for a tool (`{"read_file": "path"}`), a
//! result of that tool is superseded once a later call of it with the same value of the
//! named argument is answered in its own step: the view sends a note pointing to the later
//! call in place of the earlier result, whenever the clearing stage is on and whatever the
//! budget, since the model has what it said again further on. Like a cleared result, the
//! call stays, and pinned results and excluded tools' results are never superseded. The walk
//! counts superseded results whole (a note only makes the view smaller than the walk
//! thought), so the view stays a function of the ledger and the settings.
//!
//! **Images in old user messages.** A USER message before the clear pointer that holds
//! images or other non-text content is sent as its text followed by a placeholder naming the
//! tokens cleared, as a cleared result is, but for the pinned task's and the newest turn's
//! (the request the model is still working on). Such messages are clearable items of their
//! own, as results are: what clearing one saves moves the clear pointer too, so a
//! conversation without tool results clears its old images. A walk deciding at a step counts
//! nothing saved for the USER message of that step's turn ([`Clearables::saving_until`]);
//! once a later turn starts, that message is cleared if the pointer passed it, which only
//! makes the view smaller than the walk planned.

use super::text;
use crate::config::clearing::{Clearing, media_placeholder_text, placeholder_text, superseded_text};
use crate::ledger::Ledger;
use crate::message::{Kind, Message, counted_text};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

/// What clearing each tool result would save, and which call each answers: built once per
/// message, as the walk reaches it, and kept between runs like the walk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Clearables {
    /// `saved_before[i]`: the tokens clearing every clearable result before ledger index `i`
    /// saves. One longer than the messages seen.
    saved_before: Vec<u64>,
    /// `cut_before[i]`: the tokens cutting (as `tiered`'s L1 does, see
    /// [`text::cut_result`]) every clearable result before ledger index `i` saves: what
    /// clearing a result of a cut step saves is its saving less its cut's. As long as
    /// `saved_before`; all zero unless read with cuts (see [`Clearables::read_to`]).
    cut_before: Vec<u64>,
    /// The ledger indices of the tool results seen, ascending (clearable or not).
    results: Vec<usize>,
    /// The call each result seen answers, by the result's ledger index, and the other way.
    calls: HashMap<usize, usize>,
    answers: HashMap<usize, usize>,
    /// The calls of the turn being read, by id.
    turn_calls: HashMap<Box<str>, usize>,
    /// The ledger index of each USER message seen: where each turn starts.
    turn_starts: Vec<usize>,
    /// Superseded results (see the module's documentation): by the result's ledger index,
    /// the later call that supersedes it.
    superseded: BTreeMap<usize, usize>,
    /// The newest answered call of each tool and identifying value, by its result's ledger
    /// index.
    newest_reads: HashMap<ReadKey, usize>,
    /// Each change of `newest_reads`, oldest first, so that a forgotten turn's are undone.
    reads_log: Vec<ReadEntry>,
}

/// A tool and the value of the argument that identifies what a call of it read.
type ReadKey = (Box<str>, Box<str>);

/// One change of [`Clearables::newest_reads`]: the result at ledger index `result` became the
/// newest of `key`, after `previous`.
#[derive(Clone, Debug, PartialEq)]
struct ReadEntry {
    result: usize,
    key: ReadKey,
    previous: Option<usize>,
}

impl Clearables {
    /// Messages read so far.
    pub fn seen(&self) -> usize {
        self.saved_before.len().saturating_sub(1)
    }

    /// Forgets ledger message `index` and every later one (they changed or are gone): the
    /// turn holding it is read again from its USER message.
    pub fn forget_from(&mut self, index: usize) {
        if index >= self.seen() {
            return;
        }
        let turn = self.turn_starts.partition_point(|&start| start <= index);
        let Some(&start) = turn.checked_sub(1).and_then(|turn| self.turn_starts.get(turn)) else {
            *self = Clearables::default();
            return;
        };
        self.saved_before.truncate(start + 1);
        self.cut_before.truncate(start + 1);
        self.results.retain(|&r| r < start);
        self.calls.retain(|&result, _| result < start);
        self.answers.retain(|&call, _| call < start);
        self.turn_calls.clear();
        self.turn_starts.truncate(turn - 1);
        // (`Vec::pop_if` needs Rust 1.86; the crate's rust-version is 1.85.)
        while let Some(entry) =
            self.reads_log.last().is_some_and(|entry| entry.result >= start).then(|| self.reads_log.pop()).flatten()
        {
            match entry.previous {
                Some(previous) => {
                    self.superseded.remove(&previous);
                    self.newest_reads.insert(entry.key, previous)
                }
                None => self.newest_reads.remove(&entry.key),
            };
        }
    }

    /// Reads the ledger's messages up to `end` (exclusive) under `clearing`; with `cuts`
    /// (under `tiered`, the only reader of [`Clearables::cut_saving_in`]) it also cuts and
    /// counts each clearable result as L1 would. The same `cuts` for the whole life of the
    /// read: the window forgets everything read whenever its strategy may change.
    pub fn read_to(&mut self, ledger: &Ledger<'_>, clearing: &Clearing, end: usize, cuts: bool) {
        if self.saved_before.is_empty() {
            self.saved_before.push(0);
            self.cut_before.push(0);
        }
        let messages = ledger.messages();
        while self.seen() < end.min(messages.len()) {
            let index = self.seen();
            let message = &messages[index];
            let (mut saving, mut cut) = (0, 0);
            match message.kind() {
                Kind::User => {
                    self.turn_calls.clear();
                    self.turn_starts.push(index);
                    saving = media_cleared(ledger, index)
                        .map_or(0, |(_, count)| u64::from(ledger.calibrated(message.count()).tokens - count.tokens));
                }
                Kind::ToolCall => {
                    if let Some(id) = message.call_id() {
                        self.turn_calls.insert(id.into(), index);
                    }
                }
                Kind::ToolResult => {
                    let call = message.call_id().and_then(|id| self.turn_calls.get(id).copied());
                    if let Some(call) = call {
                        self.calls.insert(index, call);
                        self.answers.entry(call).or_insert(index);
                    }
                    self.results.push(index);
                    saving = Cleared::of(ledger, clearing, index, call).map_or(0, |cleared| cleared.saving);
                    if cuts && saving > 0 {
                        let whole = ledger.calibrated(message.count()).tokens;
                        cut = text::cut_result(ledger, index).map_or(0, |(count, _)| u64::from(whole - count.tokens));
                    }
                    if let Some(call) = call {
                        self.read(ledger, clearing, index, call);
                    }
                }
                _ => {}
            }
            let before = self.saved_before[index];
            self.saved_before.push(before + saving);
            let before = self.cut_before[index];
            self.cut_before.push(before + cut);
        }
    }

    /// Notes the result at ledger index `result`, answering the call at `call`, as the newest
    /// read of what the call names (when a `supersede` rule covers its tool), superseding the
    /// one before it. A result the view leaves out, or one answering a call of another step,
    /// supersedes nothing.
    fn read(&mut self, ledger: &Ledger<'_>, clearing: &Clearing, result: usize, call: usize) {
        let messages = ledger.messages();
        let Some(key) = read_key(clearing, &messages[call]) else {
            return;
        };
        if messages[result].kept_as_text() || ledger.unit_of(result) != ledger.unit_of(call) {
            return;
        }
        let previous = self.newest_reads.insert(key.clone(), result);
        if let Some(previous) = previous.filter(|&p| !ledger.is_pinned(p) && clearing.clears(Some(&key.0))) {
            self.superseded.insert(previous, call);
        }
        self.reads_log.push(ReadEntry { result, key, previous });
    }

    /// The later call that supersedes the result at ledger index `result`, if one does.
    pub fn superseded_by(&self, result: usize) -> Option<usize> {
        self.superseded.get(&result).copied()
    }

    /// True when a result at ledger index `from` or later is superseded. O(log results).
    pub fn supersedes_from(&self, from: usize) -> bool {
        self.superseded.range(from..).next().is_some()
    }

    /// Results superseded so far: grows with the ledger, so two views that read the same
    /// ledger with the same count supersede the same results.
    pub fn superseded_count(&self) -> usize {
        self.superseded.len()
    }

    /// Tokens clearing every clearable result in ledger range `range` saves (of messages
    /// read; nothing for an empty range, whatever was read).
    pub fn saving_in(&self, range: Range<usize>) -> u64 {
        self.sum_in(&self.saved_before, range)
    }

    /// Tokens cutting every clearable result in ledger range `range` saves (see
    /// `cut_before`), as [`Clearables::saving_in`] reads.
    pub fn cut_saving_in(&self, range: Range<usize>) -> u64 {
        self.sum_in(&self.cut_before, range)
    }

    /// The sum over ledger range `range` of the per-message values whose prefix sums are
    /// `before` (`saved_before` or `cut_before`), the messages not seen counting 0.
    fn sum_in(&self, before: &[u64], range: Range<usize>) -> u64 {
        if range.is_empty() {
            return 0;
        }
        let at = |i: usize| before[i.min(self.seen())];
        at(range.end) - at(range.start.min(range.end))
    }

    /// [`Clearables::saving_in`] as a walk deciding at the step that ends at ledger index
    /// `end` counts it: the USER message of that step's turn (the newest USER message before
    /// `end`) keeps its images, so clearing saves nothing there.
    pub fn saving_until(&self, range: Range<usize>, end: usize) -> u64 {
        let saving = self.saving_in(range.clone());
        match self.newest_question(end) {
            Some(question) if range.contains(&question) => saving - self.saving_in(question..question + 1),
            _ => saving,
        }
    }

    /// [`Clearables::reach`] as a walk deciding at the step that ends at ledger index `end`
    /// counts savings (see [`Clearables::saving_until`]).
    pub fn reach_until(&self, from: usize, to: usize, target: u64, end: usize) -> usize {
        let reached = self.reach(from, to, target);
        match self.newest_question(end) {
            Some(question) if (from..reached).contains(&question) => {
                self.reach(from, to, target + self.saving_in(question..question + 1))
            }
            _ => reached,
        }
    }

    /// The newest USER message before ledger index `end`.
    fn newest_question(&self, end: usize) -> Option<usize> {
        let before = self.turn_starts.partition_point(|&start| start < end);
        before.checked_sub(1).map(|turn| self.turn_starts[turn])
    }

    /// The nearest ledger index `to` in `from + 1..=end` such that clearing `from..to` saves
    /// at least `target` tokens (`end` when none does). O(log messages).
    pub fn reach(&self, from: usize, end: usize, target: u64) -> usize {
        let end = end.min(self.seen());
        if from >= end {
            return end;
        }
        let base = self.saved_before[from];
        (from + 1 + self.saved_before[from + 1..=end].partition_point(|&saved| saved - base < target)).min(end)
    }

    /// The ledger index before which the clear pointer may go at most once the ledger reads
    /// up to `end`: the newest `keep` results before `end` are never cleared.
    pub fn protected_from(&self, end: usize, keep: usize) -> usize {
        let before = self.results.partition_point(|&r| r < end);
        match before.checked_sub(keep) {
            _ if keep == 0 || before == 0 => end,
            Some(oldest_kept) => self.results[oldest_kept],
            None => self.results[0],
        }
    }

    /// The call that the result at ledger index `result` answers, if its turn has it.
    pub fn call_of(&self, result: usize) -> Option<usize> {
        self.calls.get(&result).copied()
    }

    /// The first result that answers the call at ledger index `call`.
    pub fn answer_of(&self, call: usize) -> Option<usize> {
        self.answers.get(&call).copied()
    }
}

/// What a view clears: every clearable result before ledger index `before`.
#[derive(Clone, Copy)]
pub struct ClearedView<'c> {
    /// The clear pointer.
    pub before: usize,
    /// The settings.
    pub clearing: &'c Clearing,
    /// The results' calls.
    pub clearables: &'c Clearables,
}

impl ClearedView<'_> {
    /// How the message at ledger index `index` is sent cleared, if it is: the placeholder of
    /// a cleared result, the note of a superseded one (where it is shorter than the `sent`
    /// tokens the result is otherwise sent as, whole or cut, asked only for a superseded
    /// result), or (with `clear_tool_inputs`) the empty arguments of a cleared result's call,
    /// with the text's tokens.
    pub fn cleared(
        &self,
        ledger: &Ledger<'_>,
        index: usize,
        sent: impl FnOnce() -> u32,
    ) -> Option<(String, crate::tokens::Count)> {
        let message = &ledger.messages()[index];
        match message.kind() {
            Kind::ToolResult => {
                let cleared = (index < self.before)
                    .then(|| Cleared::of(ledger, self.clearing, index, self.clearables.call_of(index)))
                    .flatten();
                match cleared {
                    Some(cleared) => Some((cleared.placeholder, cleared.placeholder_count)),
                    None => self.superseded(ledger, index, sent),
                }
            }
            Kind::User if index < self.before && index < newest_turn_start(ledger) => media_cleared(ledger, index),
            Kind::ToolCall if self.clearing.clear_tool_inputs && inputs_clearable(message) => {
                let result = self.clearables.answer_of(index).filter(|&result| result < self.before)?;
                Cleared::of(ledger, self.clearing, result, Some(index))?;
                let count = ledger.model().count(&counted_text(message.name(), CLEARED_ARGUMENTS));
                // Emptied only where that is shorter (as `Cleared::of` counts the saving).
                (count.tokens < ledger.calibrated(message.count()).tokens).then(|| (CLEARED_ARGUMENTS.to_owned(), count))
            }
            _ => None,
        }
    }
}

/// How the USER message at ledger index `index` is sent with its images (or other non-text
/// content) cleared: its text and a placeholder naming the tokens cleared, with their
/// tokens. `None` for the pinned task, a message without such content, or where that would
/// not be shorter.
fn media_cleared(ledger: &Ledger<'_>, index: usize) -> Option<(String, crate::tokens::Count)> {
    let message = &ledger.messages()[index];
    if message.kind() != Kind::User || ledger.is_pinned(index) {
        return None;
    }
    let media = message.media()?;
    let placeholder = media_placeholder_text(ledger.calibrated(media).tokens);
    let text = match message.text().filter(|text| !text.is_empty()) {
        Some(text) => format!("{text}\n{placeholder}"),
        None => placeholder,
    };
    let count = ledger.model().count(&text);
    (count.tokens < ledger.calibrated(message.count()).tokens).then_some((text, count))
}

/// The ledger index where the newest turn starts: its USER message, whose images the model
/// is still working on, is never cleared.
fn newest_turn_start(ledger: &Ledger<'_>) -> usize {
    ledger.turn_count().checked_sub(1).map_or(0, |turn| ledger.question_of(turn))
}

impl ClearedView<'_> {
    /// The note sent for the superseded result at ledger index `result`, with its tokens,
    /// when it is superseded and the note is shorter than the `sent` tokens the result is
    /// otherwise sent as.
    fn superseded(
        &self,
        ledger: &Ledger<'_>,
        result: usize,
        sent: impl FnOnce() -> u32,
    ) -> Option<(String, crate::tokens::Count)> {
        let messages = ledger.messages();
        let call = self.clearables.superseded_by(result)?;
        let later = &messages[call];
        let tool = later.name()?;
        let argument = self.clearing.superseding_argument(tool)?;
        let host_id = later.host_id().or_else(|| self.clearables.answer_of(call).and_then(|r| messages[r].host_id()));
        let note = superseded_text(tool, argument, later.call_id(), host_id);
        let count = ledger.model().count(&note);
        (count.tokens < sent()).then_some((note, count))
    }
}

/// The tool and identifying value of a call a `supersede` rule covers: the rule's argument
/// read from the call's arguments (a JSON object); a value that is not a string is taken as
/// its JSON text.
fn read_key(clearing: &Clearing, call: &Message) -> Option<ReadKey> {
    let tool = call.name()?;
    let argument = clearing.superseding_argument(tool)?;
    let Ok(Value::Object(arguments)) = crate::strict_json::parse(call.text()?) else {
        return None;
    };
    let value = arguments.get(argument)?;
    let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
    Some((tool.into(), value.into()))
}

/// How one cleared result is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cleared {
    /// The placeholder that stands for the result.
    pub placeholder: String,
    /// The placeholder's tokens.
    pub placeholder_count: crate::tokens::Count,
    /// Tokens clearing saves: the result's less the placeholder's, and with
    /// `clear_tool_inputs` the call's arguments less an empty object's.
    pub saving: u64,
}

/// True when the call `call` can be sent with its arguments cleared: a call sent as a
/// message of its own. A call the provider returned among other parts of one message (an
/// Anthropic `tool_use` after its thinking, parallel calls) is sent as it came, so that the
/// message keeps its parts together, and so is a Gemini `functionCall` carrying a thought
/// signature even alone in its content: a cleared call is rebuilt from its name and
/// arguments, which would lose the signature Gemini requires back in the current turn.
fn inputs_clearable(call: &Message) -> bool {
    let Some(extras) = call.extras() else { return true };
    extras.wire.is_none_or(|wire| wire.of == 1) && !extras.raw_json.as_deref().is_some_and(carries_thought_signature)
}

/// True when a pushed Gemini content holds a thought signature. Read from the raw text, not
/// parsed: a text that merely mentions the key only keeps a call's arguments, which the
/// planner and the renders both count (they ask this same function).
fn carries_thought_signature(raw_json: &str) -> bool {
    raw_json.contains("\"thoughtSignature\"") || raw_json.contains("\"thought_signature\"")
}

/// Arguments a call with cleared inputs is sent with.
pub const CLEARED_ARGUMENTS: &str = "{}";

impl Cleared {
    /// How the tool result at ledger index `result` (answering the call at `call`, if known)
    /// is sent when cleared, or `None` when it is not clearable: a pinned result, a result of
    /// an excluded tool, or one the placeholder would not shorten.
    pub fn of(ledger: &Ledger<'_>, clearing: &Clearing, result: usize, call: Option<usize>) -> Option<Cleared> {
        let messages: &[Message] = ledger.messages();
        let message = &messages[result];
        let call_message = call.map(|call| &messages[call]);
        let tool = call_message.and_then(Message::name).or(message.name());
        if message.kind() != Kind::ToolResult || ledger.is_pinned(result) || !clearing.clears(tool) {
            return None;
        }
        let tokens = ledger.calibrated(message.count()).tokens;
        let placeholder = placeholder_text(clearing.placeholder.as_deref(), tool, message.call_id(), message.host_id(), tokens);
        let placeholder_count = ledger.model().count(&placeholder);
        let mut saving = u64::from(tokens).checked_sub(u64::from(placeholder_count.tokens)).filter(|&s| s > 0)?;
        if let Some(call) = call_message.filter(|call| clearing.clear_tool_inputs && inputs_clearable(call)) {
            let whole = ledger.calibrated(call.count()).tokens;
            let emptied = ledger.model().count(&counted_text(call.name(), CLEARED_ARGUMENTS)).tokens;
            saving += u64::from(whole.saturating_sub(emptied));
        }
        Some(Cleared { placeholder, placeholder_count, saving })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{CountSource, MessageExtras};
    use crate::tokens::{Calibration, Count, Model};

    fn message(kind: Kind, id: Option<&str>, text: &str) -> Message {
        let extras = MessageExtras {
            call_id: id.map(Into::into),
            name: (kind == Kind::ToolCall).then(|| "read_file".into()),
            ..MessageExtras::default()
        };
        Message::new(kind, Count::exact(text.len() as u32), CountSource::Caller, Some(text.into())).with_extras(extras)
    }

    #[test]
    fn savings_protection_and_reach_follow_a_plain_recount() {
        let long = "x".repeat(4_000);
        let messages = vec![
            message(Kind::User, None, "task"),
            message(Kind::ToolCall, Some("a"), "{}"),
            message(Kind::ToolResult, Some("a"), &long),
            message(Kind::ToolCall, Some("b"), "{}"),
            message(Kind::ToolResult, Some("b"), "ok"),
            message(Kind::ToolCall, Some("c"), "{}"),
            message(Kind::ToolResult, Some("c"), &long),
        ];
        let turns = [crate::ledger::TurnStart { first: 0, first_unit: 0 }];
        let units = [0, 1, 3, 5];
        let model = Model::resolve("gpt-4o");
        let ledger = Ledger::new(&messages, &turns, &units, &[], &model, Calibration::default(), 40);
        let clearing = Clearing::default();
        let mut clearables = Clearables::default();
        clearables.read_to(&ledger, &clearing, messages.len(), true);
        // A result the placeholder would not shorten saves nothing; the long ones save their
        // tokens less the placeholder's.
        let placeholder = |id: &str| model.count(&placeholder_text(None, Some("read_file"), Some(id), None, 4_000)).tokens;
        assert_eq!(clearables.saving_in(4..5), 0);
        assert_eq!(clearables.saving_in(2..3), u64::from(4_000 - placeholder("a")));
        assert_eq!(clearables.saving_in(0..7), u64::from(8_000 - placeholder("a") - placeholder("c")));
        assert_eq!(clearables.call_of(6), Some(5));
        assert_eq!(clearables.answer_of(1), Some(2));
        // The newest `keep` results are protected.
        assert_eq!(clearables.protected_from(7, 0), 7);
        assert_eq!(clearables.protected_from(7, 1), 6);
        assert_eq!(clearables.protected_from(7, 2), 4);
        assert_eq!(clearables.protected_from(7, 5), 2);
        assert_eq!(clearables.protected_from(2, 1), 2);
        // The nearest point that saves the target.
        assert_eq!(clearables.reach(0, 7, 1), 3);
        assert_eq!(clearables.reach(0, 7, 4_000 - u64::from(placeholder("a")) + 1), 7);
        assert_eq!(clearables.reach(3, 5, 1), 5);
        // Forgetting a turn reads it again the same way.
        let before = clearables.clone();
        for index in [6, 3, 0] {
            clearables.forget_from(index);
            assert!(clearables.seen() <= index);
            clearables.read_to(&ledger, &clearing, messages.len(), true);
            assert_eq!(clearables, before, "forgotten from {index}");
        }
    }

    #[test]
    fn a_later_read_of_the_same_path_supersedes_and_forgetting_it_undoes_that() {
        let long = "x".repeat(4_000);
        let call = |id: &str, path: &str| message(Kind::ToolCall, Some(id), &format!(r#"{{"path":"{path}"}}"#));
        let messages = vec![
            message(Kind::User, None, "task"),
            call("a", "src/x.rs"),
            message(Kind::ToolResult, Some("a"), &long),
            call("b", "src/y.rs"),
            message(Kind::ToolResult, Some("b"), &long),
            message(Kind::User, None, "go on"),
            call("c", "src/x.rs"),
            message(Kind::ToolResult, Some("c"), &long),
            call("d", "src/x.rs"),
            message(Kind::ToolResult, Some("d"), &long),
        ];
        let turns = [crate::ledger::TurnStart { first: 0, first_unit: 0 }, crate::ledger::TurnStart { first: 5, first_unit: 2 }];
        let units = [0, 3, 5, 8];
        let model = Model::resolve("gpt-4o");
        let ledger = Ledger::new(&messages, &turns, &units, &[], &model, Calibration::default(), 40);
        let mut clearing = Clearing::default();
        clearing.apply("supersede", &serde_json::json!({"read_file": "path"})).unwrap();
        let mut clearables = Clearables::default();
        clearables.read_to(&ledger, &clearing, messages.len(), true);
        // a's result is superseded by c (the next read of src/x.rs), c's by d; b read another path.
        assert_eq!(clearables.superseded_by(2), Some(6));
        assert_eq!(clearables.superseded_by(7), Some(8));
        assert_eq!(clearables.superseded_by(4), None);
        assert_eq!(clearables.superseded_by(9), None);
        assert!(clearables.supersedes_from(7) && !clearables.supersedes_from(8));
        let view = ClearedView { before: 0, clearing: &clearing, clearables: &clearables };
        let (note, _) = view.cleared(&ledger, 2, || 4_000).unwrap();
        assert_eq!(note, superseded_text("read_file", "path", Some("c"), None));
        assert_eq!(view.cleared(&ledger, 9, || 4_000), None);
        // Forgetting the second turn undoes what it superseded; reading it again redoes it.
        let before = clearables.clone();
        clearables.forget_from(6);
        assert_eq!((clearables.superseded_by(2), clearables.superseded_count()), (None, 0));
        clearables.read_to(&ledger, &clearing, messages.len(), true);
        assert_eq!(clearables, before);
        // Without the rule nothing is superseded.
        let mut plain = Clearables::default();
        plain.read_to(&ledger, &Clearing::default(), messages.len(), true);
        assert_eq!(plain.superseded_count(), 0);
    }
}
