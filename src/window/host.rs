//! The host's own messages: counts learned after the push ([`Window::set_count`],
//! [`Window::set_turn_count`]), host messages of several parts pushed at once with the host's
//! id ([`Window::push_message`]), and the lookups a request builder that loops over its own
//! array needs ([`Window::start_host_id`], [`Window::host_index`], [`Window::host_id`]).

use super::Window;
use super::tool_parts::kept_form;
use crate::error::{Error, ErrorKind, Result, echo};
use crate::message::{CountSource, Kind, Message, MessageExtras};
use crate::message::{counted_text, split_call_text};
use crate::tally::Tally;
use crate::tokens::Count;
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// One block of a host message, as [`Window::push_message`] takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part<'a> {
    /// The ledger kind of the block.
    pub kind: Kind,
    /// The block's text (decoded as the `invalid_utf8` setting says, see [`Window::decode`]).
    pub text: &'a str,
    /// True when invalid UTF-8 in the host's bytes was replaced by U+FFFD.
    pub replaced: bool,
    /// The provider's tool call id of a TOOL_CALL or TOOL_RESULT block, if any.
    pub call_id: Option<&'a str>,
    /// The tool name of a TOOL_CALL block, if given apart from its arguments (`text`); when
    /// absent, the text is the name, a newline and the arguments, as for [`Window::push`].
    pub name: Option<&'a str>,
}

/// A part checked and taken apart, ready to append.
struct Ready<'a> {
    kind: Kind,
    name: Option<Cow<'a, str>>,
    text: Cow<'a, str>,
}

/// Counts [`Window::apply_pending_counts`] applied, with the ones they replaced (`None`
/// for a message the library had not counted yet).
#[derive(Debug)]
pub(crate) struct AppliedCounts {
    pending: Vec<(usize, Count)>,
    replaced: Vec<(usize, Option<(Count, CountSource)>)>,
}

/// Where each host message starts in the ledger, by host id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct HostIds {
    starts: FxHashMap<i64, usize>,
}

impl HostIds {
    /// Notes `message`, about to be appended after `messages`: a host id other than the
    /// previous message's starts a host message there.
    pub fn note(&mut self, messages: &[Message], message: &Message) {
        if let Some(id) = message.host_id() {
            if messages.last().and_then(Message::host_id) != Some(id) {
                self.starts.entry(id).or_insert(messages.len());
            }
        }
    }

    /// Forgets `message`, removed from ledger index `index`: the host message is gone once
    /// its first part is.
    pub fn forget(&mut self, index: usize, message: &Message) {
        if let Some(id) = message.host_id() {
            if self.starts.get(&id) == Some(&index) {
                self.starts.remove(&id);
            }
        }
    }

    /// The ledger index where host message `id` starts.
    pub fn index(&self, id: i64) -> Option<usize> {
        self.starts.get(&id).copied()
    }

    /// The first ledger index whose message reuses the host id of an earlier, separate host
    /// message (a saved window must not hold one).
    pub fn first_reuse(messages: &[Message]) -> Option<(usize, i64)> {
        let mut seen = std::collections::HashSet::new();
        let mut previous = None;
        for (index, message) in messages.iter().enumerate() {
            let id = message.host_id();
            if let Some(id) = id.filter(|&id| previous != Some(id)) {
                if !seen.insert(id) {
                    return Some((index, id));
                }
            }
            previous = id;
        }
        None
    }
}

/// Counts [`Window::set_count`] recorded and the next enforcement applies, by ledger index
/// (the newest per message). A sorted vector: counts arrive in ledger order as a rule, so
/// recording one is O(1) then, O(pending) at worst.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct PendingCounts {
    counts: Vec<(usize, Count)>,
}

impl PendingCounts {
    /// Records `count` for message `index`, replacing one recorded before.
    pub fn record(&mut self, index: usize, count: Count) {
        match self.counts.last() {
            Some(&(last, _)) if last >= index => match self.counts.binary_search_by_key(&index, |&(i, _)| i) {
                Ok(at) => self.counts[at].1 = count,
                Err(at) => self.counts.insert(at, (index, count)),
            },
            _ => self.counts.push((index, count)),
        }
    }

    /// The count recorded for message `index`, if any.
    pub fn get(&self, index: usize) -> Option<Count> {
        self.counts.binary_search_by_key(&index, |&(i, _)| i).ok().map(|at| self.counts[at].1)
    }

    /// Forgets the messages from `message_count` on (a rewind removed them).
    pub fn forget_from(&mut self, message_count: usize) {
        let kept = self.counts.partition_point(|&(i, _)| i < message_count);
        self.counts.truncate(kept);
    }

    /// The recorded counts of the messages in `range`, by ledger index. O(log recorded).
    pub fn within(&self, range: std::ops::Range<usize>) -> &[(usize, Count)] {
        let from = self.counts.partition_point(|&(i, _)| i < range.start);
        let to = self.counts.partition_point(|&(i, _)| i < range.end);
        &self.counts[from..to]
    }

    /// Takes every recorded count, by ledger index, leaving none.
    pub fn take(&mut self) -> Vec<(usize, Count)> {
        std::mem::take(&mut self.counts)
    }

    /// Keeps `spent`'s buffer for the next counts, if none was recorded since it was taken.
    fn reuse(&mut self, mut spent: Vec<(usize, Count)>) {
        if self.counts.is_empty() {
            spent.clear();
            self.counts = spent;
        }
    }

    /// The recorded counts, by ledger index.
    pub fn iter(&self) -> impl Iterator<Item = (usize, Count)> + '_ {
        self.counts.iter().copied()
    }
}

impl Window {
    /// Replaces the count of message `index` with the caller's (a provider's exact figure
    /// learned after the push, say). The count becomes the caller's: taken as given and kept
    /// by [`Window::set_model`], as [`Window::push_counted`]'s are. It is recorded now and
    /// applied at the next enforcement ([`Window::end_turn`], or any call that re-enforces:
    /// settings, rewinds, `compact`), so nothing the window shows (boundary, view, totals,
    /// the message's count) moves in between, and a window saved in between restores
    /// exactly. Recording is O(1) for a message after every one recorded (the usual order),
    /// O(recorded) at worst; applying costs O(log turns) per count (O(1) in the newest turn:
    /// the per-turn sums are a Fenwick tree). A message pushed uncounted
    /// ([`Window::push_message_uncounted`]) whose count is recorded before it is needed is
    /// never counted.
    pub fn set_count(&mut self, index: usize, count: Count) -> Result<()> {
        self.message_at(index)?;
        self.ledger.pending_counts.record(index, count);
        Ok(())
    }

    /// The count message `index` shows the host (`message_get`), calibrated: the one
    /// [`Window::set_count`] recorded for it, at once, else its own. `None` past the end.
    pub fn shown_count(&self, index: usize) -> Option<Count> {
        let message = self.ledger.messages.get(index)?;
        Some(self.calibrated(self.ledger.pending_counts.get(index).unwrap_or(message.count())))
    }

    /// History tokens of turn `turn` as the host sees them (`turn_info`): with the counts
    /// [`Window::set_count`] and [`Window::set_turn_count`] recorded in it, at once, while
    /// the boundary, the view and [`Window::live_tokens`] wait for the next enforcement.
    /// O(log messages + counts recorded in the turn).
    pub(super) fn shown_turn_tokens(&self, turn: usize) -> Count {
        let mut tally = self.ledger.turn_tokens(turn);
        for &(index, count) in self.ledger.pending_counts.within(self.turn_range(turn)) {
            let message = &self.ledger.messages[index];
            if self.is_pinned(index, message.kind()) {
                continue;
            }
            if !message.is_uncounted() {
                tally.sub(self.calibrated(message.count()));
            }
            tally.add(self.calibrated(count));
        }
        tally.count()
    }

    /// The counts [`Window::set_count`] recorded that the next enforcement applies, by
    /// ledger index.
    pub fn pending_counts(&self) -> impl Iterator<Item = (usize, Count)> + '_ {
        self.ledger.pending_counts.iter()
    }

    /// Applies the counts [`Window::set_count`] recorded: totals and per-turn sums follow,
    /// and the cost cache forgets the turns they changed. Returns what
    /// [`Window::unapply_counts`] needs to undo it.
    ///
    /// A message the library has not counted yet takes the recorded count as its first (it
    /// is never counted: nothing read its count before); the other uncounted messages are
    /// counted ([`Window::resolve_counts`]).
    pub(super) fn apply_pending_counts(&mut self) -> AppliedCounts {
        let pending = self.ledger.pending_counts.take();
        let mut replaced = Vec::with_capacity(pending.len());
        for &(index, count) in &pending {
            if self.ledger.messages[index].is_uncounted() {
                self.settle(index, count, CountSource::Caller);
                replaced.push((index, None));
            } else {
                replaced.push((index, Some(self.replace_count(index, count, CountSource::Caller))));
            }
        }
        let ledger = &mut self.ledger;
        ledger.uncounted.retain(|&index| ledger.messages[index].is_uncounted());
        self.resolve_counts();
        AppliedCounts { pending, replaced }
    }

    /// Forgets what [`Window::apply_pending_counts`] applied: it stays applied (its buffers
    /// serve again).
    pub(super) fn keep_counts(&mut self, applied: AppliedCounts) {
        self.ledger.pending_counts.reuse(applied.pending);
    }

    /// Undoes [`Window::apply_pending_counts`]: the old counts are back and the counts are
    /// pending again (a call that fails after enforcing changes nothing).
    pub(crate) fn unapply_counts(&mut self, applied: AppliedCounts) {
        for (index, old) in applied.replaced.into_iter().rev() {
            match old {
                Some((count, source)) => drop(self.replace_count(index, count, source)),
                None => {
                    let units = self.ledger.unsettle(index, self.wire.calibration);
                    self.policy.costs.forget(units);
                    self.policy.costs.clearables.forget_from(index);
                }
            }
        }
        for (index, count) in applied.pending {
            self.ledger.pending_counts.record(index, count);
        }
    }

    /// Replaces message `index`'s count and source, keeping the totals, the per-turn sums
    /// and the cost cache in step; returns the old count and source.
    fn replace_count(&mut self, index: usize, count: Count, source: CountSource) -> (Count, CountSource) {
        let (old, kind) = (self.ledger.messages[index].count(), self.ledger.messages[index].kind());
        let (from, to) = (self.calibrated(old), self.calibrated(count));
        if self.is_pinned(index, kind) {
            self.ledger.pinned.sub(from);
            self.ledger.pinned.add(to);
        } else {
            let unit = self.ledger.unit_of(index).expect("a history message belongs to a step");
            self.ledger.history.sub(from);
            self.ledger.history.add(to);
            self.ledger.sums.sub(unit, from);
            self.ledger.sums.add(unit, to);
        }
        // A pinned SYSTEM message inside a step is rendered with its step: the view's items
        // of that step are stale too.
        self.policy.costs.forget(self.ledger.touched_units(index));
        self.policy.costs.clearables.forget_from(index);
        let message = &mut self.ledger.messages[index];
        let old_source = message.source();
        message.set_count(count);
        message.set_source(source);
        (old, old_source)
    }

    /// Records the total of turn `turn` when the caller knows only that (the difference of
    /// two provider usage reports, say): the counts of its messages are scaled to sum to
    /// `count`, each recorded as [`Window::set_count`] records it, with `count.exact`.
    /// SYSTEM messages inside the turn (pinned) keep their counts; a pinned USER or
    /// ASSISTANT message (the task) takes its share, as it was sent in the turn the total
    /// covers, though its tokens count as pinned, not as the turn's history.
    ///
    /// The total is spread in proportion to the messages' sizes, which need no counting: a
    /// message whose count the caller gave (pushed counted, or recorded by `set_count`)
    /// weighs four per token of that count, a message the library counts the bytes of the
    /// text it counts (a tool call's name and arguments), plus four per token of its media,
    /// or four per token of its count when the window keeps counts only; largest
    /// remainders first; all of it on the USER message when they weigh 0. So a turn's
    /// messages pushed with `ctxwin_window_push_message(..., out NULL)` are never counted.
    /// O(messages of the turn).
    pub fn set_turn_count(&mut self, turn: usize, count: Count) -> Result<()> {
        if turn >= self.ledger.turns.len() {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("turn {turn} does not exist: the window holds {} turns", self.ledger.turns.len()),
            ));
        }
        // Each history message's (index, weight), then (index, share).
        let mut shares: Vec<(usize, u64)> = self
            .turn_range(turn)
            .filter(|&index| self.ledger.messages[index].kind() != Kind::System)
            .map(|index| (index, self.size_of(index)))
            .collect();
        spread(&mut shares, u64::from(count.tokens));
        for (index, share) in shares {
            let tokens = u32::try_from(share).expect("a share is at most the u32 target");
            self.ledger.pending_counts.record(index, Count { tokens, exact: count.exact });
        }
        Ok(())
    }

    /// The weight of message `index` in [`Window::set_turn_count`]'s spread.
    fn size_of(&self, index: usize) -> u64 {
        let per_token = |count: Count| 4 * u64::from(count.tokens);
        if let Some(recorded) = self.ledger.pending_counts.get(index) {
            return per_token(recorded);
        }
        let message = &self.ledger.messages[index];
        match (message.source(), message.text()) {
            (CountSource::Library, Some(text)) => {
                let name = message.name().map_or(0, |name| name.len() + 1);
                (name + text.len()) as u64 + message.media().map_or(0, per_token)
            }
            _ => per_token(message.count()),
        }
    }

    /// Appends one host message of several parts (an assistant message with text, thinking
    /// and tool calls, say) under the host's id `host_id`: the same ledger messages as one
    /// push per part ([`Window::push_tool_call`] for a TOOL_CALL with an id and a name,
    /// [`Window::push_tool`] for a tool part with an id, [`Window::push`] otherwise, a named
    /// call without an id as its name, a newline and its text), each carrying `host_id`. All
    /// or nothing: every part is checked before any is appended. Returns the parts' total
    /// count.
    ///
    /// Errors (nothing appended, the message names `parts[i]` and its field): no parts, a
    /// host id already in the window (each host message has its own id; rewind with
    /// `truncate(host_index(id))` to replace one), a text over `max_message_bytes`, a call id
    /// on a part that is not a tool call or result, a name on a part that is not a tool
    /// call, a tool call without a name, arguments [`Window::push_tool_call`] refuses, an
    /// empty call id, a tool part with an id before any USER message, or an id the tool
    /// pairing refuses (see `push_tool`).
    pub fn push_message(&mut self, parts: &[Part<'_>], host_id: i64) -> Result<Count> {
        self.append_parts(parts, host_id, true).map(Tally::count)
    }

    /// [`Window::push_message`] without counting now: each part's text is counted when its
    /// count is first needed ([`Window::resolve_counts`]), and not at all when the caller's
    /// count ([`Window::set_count`], [`Window::set_turn_count`]) is recorded before that. In
    /// a window that keeps counts only (`retain_text` false) the parts are counted now, as
    /// their texts are not kept. The C API's route (`ctxwin_window_push_message` with `out`
    /// NULL), which resolves before every other call reads the window.
    pub(crate) fn push_message_uncounted(&mut self, parts: &[Part<'_>], host_id: i64) -> Result<()> {
        self.append_parts(parts, host_id, !self.settings.retain_text).map(drop)
    }

    /// Checks and appends the parts of host message `host_id`, counting them now when
    /// `count_now` (else each is uncounted); returns their calibrated total (0 uncounted).
    fn append_parts(&mut self, parts: &[Part<'_>], host_id: i64, count_now: bool) -> Result<Tally> {
        if parts.is_empty() {
            return Err(Error::invalid_arg(format!("parts: host message {host_id} has no parts (n is 0)")));
        }
        if let Some(index) = self.ledger.host_ids.index(host_id) {
            return Err(Error::invalid_arg(format!(
                "host_id {host_id} is already used by the host message at ledger index {index}"
            )));
        }
        // The first part refused, as pushing them one by one would find it: a part's own
        // error, unless an earlier part's call id is refused. A window keeping invalid tool
        // parts keeps the tool parts refused for their text or id as text instead.
        let keep = self.keeps_invalid_tool_parts();
        let mut kept = vec![false; parts.len()];
        let mut ready = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            match self.ready(part) {
                Ok(part) => ready.push(part),
                Err(e) if keep && matches!(part.kind, Kind::ToolCall | Kind::ToolResult) && e.kind() == ErrorKind::InvalidArg => {
                    kept[i] = true;
                    ready.push(Ready { kind: part.kind, name: None, text: Cow::Borrowed(part.text) });
                }
                Err(e) => {
                    self.check_part_ids(&parts[..i], &mut kept[..i])?;
                    return Err(Error::new(e.kind(), format!("parts[{i}].{}", e.message())));
                }
            }
        }
        self.check_part_ids(parts, &mut kept)?;
        let mut total = Tally::default();
        for ((part, ready), kept) in parts.iter().zip(ready).zip(kept) {
            let (kind, call_id, name, text) = match kept {
                true => {
                    let (kind, call_id, text) = kept_form(part.kind, part.call_id, part.name, part.text);
                    (kind, call_id, None, text)
                }
                false => (ready.kind, part.call_id, ready.name, ready.text),
            };
            let name = name.as_deref();
            let extras = MessageExtras {
                call_id: call_id.map(Box::from),
                name: name.map(Box::from),
                host_id: Some(host_id),
                replaced_utf8: part.replaced,
                kept_as_text: kept,
                ..MessageExtras::default()
            };
            let message = if count_now {
                let count = self.model.count(&counted_text(name, &text));
                total.add(self.calibrated(count));
                let text = self.settings.retain_text.then(|| Box::from(text.as_ref()));
                Message::new(kind, count, CountSource::Library, text)
            } else {
                Message::uncounted(kind, Box::from(text.as_ref()))
            };
            self.append(message.with_extras(extras));
        }
        Ok(total)
    }

    /// `part` checked as the push it stands for would check it, a TOOL_CALL's name and
    /// arguments taken apart. Errors name the field (`text: ...`, `name: ...`).
    fn ready<'a>(&self, part: &Part<'a>) -> Result<Ready<'a>> {
        let in_field = |field: &str, e: Error| Error::new(e.kind(), format!("{field}: {}", e.message()));
        let size = part.text.len().saturating_add(part.name.map_or(0, str::len));
        self.check_message_size(size).map_err(|e| in_field("text", e))?;
        match (part.kind, part.name) {
            (Kind::ToolCall, Some(name)) => {
                if name.trim().is_empty() {
                    return Err(Error::invalid_arg("name: must not be blank"));
                }
                if let Some(call_id) = part.call_id {
                    self.check_call_arguments(call_id, part.text).map_err(|e| in_field("text", e))?;
                }
                Ok(Ready { kind: part.kind, name: Some(Cow::Borrowed(name)), text: Cow::Borrowed(part.text) })
            }
            (Kind::ToolCall, None) => {
                let (name, arguments) = split_call_text(part.text).map_err(|e| in_field("text", e))?;
                Ok(Ready { kind: part.kind, name: Some(name), text: arguments })
            }
            (kind, Some(_)) => Err(Error::invalid_arg(format!(
                "name: only a TOOL_CALL part carries a tool name (this part is kind {})",
                kind.code()
            ))),
            (kind, None) => Ok(Ready { kind, name: None, text: Cow::Borrowed(part.text) }),
        }
    }

    /// Checks the parts' call ids as `push_tool` would, part after part, without touching
    /// the ledger: the newest turn's calls, then the parts', are fed to the pairing check.
    /// The parts marked in `kept` are kept as text (not fed); a window keeping invalid tool
    /// parts marks there the tool parts whose id would be refused, instead of refusing.
    fn check_part_ids(&self, parts: &[Part<'_>], kept: &mut [bool]) -> Result<()> {
        if parts.iter().all(|part| part.call_id.is_none()) {
            return Ok(());
        }
        // The running turn's calls are indexed: O(parts) however long the turn.
        let mut calls = self.ledger.calls.probe();
        let mut in_turn = !self.ledger.turns.is_empty();
        for (i, part) in parts.iter().enumerate() {
            if part.kind == Kind::User {
                calls.new_turn();
                in_turn = true;
            }
            let Some(id) = part.call_id else { continue };
            if !matches!(part.kind, Kind::ToolCall | Kind::ToolResult) {
                return Err(Error::invalid_arg(format!(
                    "parts[{i}].call_id: only TOOL_CALL and TOOL_RESULT parts carry a call id (this part is kind {})",
                    part.kind.code()
                )));
            }
            if kept[i] {
                continue;
            }
            let refusal = if id.is_empty() {
                Some(format!("parts[{i}].call_id must not be empty"))
            } else if !in_turn {
                Some(format!("parts[{i}].call_id '{}': a tool message needs a turn; push a USER message first", echo(id)))
            } else {
                calls.feed(part.kind, id).map(|problem| format!("parts[{i}].call_id '{}': {}", echo(id), problem.refusal()))
            };
            match refusal {
                Some(_) if self.keeps_invalid_tool_parts() => kept[i] = true,
                Some(refusal) => return Err(Error::invalid_arg(refusal)),
                None => {}
            }
        }
        Ok(())
    }

    /// The host id of the first live message ([`Window::start`]): a request builder loops
    /// over its own array from there. The boundary can fall inside a host message whose
    /// first parts close the pruned turn (tool results sent with role "user", then the
    /// USER text): `start() - host_index(id)` parts of it are pruned.
    ///
    /// Errors: OUT_OF_RANGE when the window holds no live message, INVALID_ARG when that
    /// message was not pushed with a host id.
    pub fn start_host_id(&self) -> Result<i64> {
        let start = self.start();
        let message = self
            .ledger
            .messages
            .get(start)
            .ok_or_else(|| Error::new(ErrorKind::OutOfRange, "the window holds no message, so no live host message"))?;
        message.host_id().ok_or_else(|| {
            Error::invalid_arg(format!(
                "the first live message (ledger index {start}) has no host id: it was not pushed with push_message"
            ))
        })
    }

    /// The ledger index of the first part of host message `host_id`.
    pub fn host_index(&self, host_id: i64) -> Result<usize> {
        self.ledger.host_ids.index(host_id).ok_or_else(|| {
            Error::new(ErrorKind::OutOfRange, format!("host_id {host_id}: no host message with this id in the window"))
        })
    }

    /// The host id of ledger message `index` (every part of a host message carries it), so
    /// any view item (`item.index`) is traced to the host's message.
    pub fn host_id(&self, index: usize) -> Result<i64> {
        self.message_at(index)?.host_id().ok_or_else(|| {
            Error::invalid_arg(format!("index {index}: the message was not pushed with push_message, so has no host id"))
        })
    }
}

impl Window {
    /// The message at `index`, or OUT_OF_RANGE naming the index.
    pub fn message_at(&self, index: usize) -> Result<&Message> {
        self.ledger.messages.get(index).ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfRange,
                format!("index {index}: message does not exist (the window holds {} messages)", self.ledger.messages.len()),
            )
        })
    }
}

/// Replaces the weights of `(index, weight)` (ascending indices) by their shares of
/// `target`: floors, then one more to the largest remainders, earliest first on ties; all of
/// it on the first when the weights sum to 0.
fn spread(weights: &mut [(usize, u64)], target: u64) {
    let total = weights.iter().map(|&(_, weight)| u128::from(weight)).sum::<u128>();
    let Some(first) = weights.first_mut() else { return };
    if total == 0 {
        first.1 = target;
        return;
    }
    // Each weight becomes its floor; (remainder, position) of each. A weight (four per u32
    // token, or a text's length) times a u32 target fits u128; u64 division, several times
    // cheaper, whenever the product fits.
    let mut remainders: Vec<(u128, usize)> = Vec::with_capacity(weights.len());
    let mut left = target;
    for (position, (_, weight)) in weights.iter_mut().enumerate() {
        let (floor, remainder) = match (weight.checked_mul(target), u64::try_from(total)) {
            (Some(product), Ok(total)) => (product / total, u128::from(product % total)),
            _ => {
                let product = u128::from(*weight) * u128::from(target);
                ((product / total) as u64, product % total)
            }
        };
        *weight = floor;
        left -= floor;
        remainders.push((remainder, position));
    }
    // Fewer than one per weight are left: to the largest remainders, earliest first.
    let left = left as usize;
    if left > 0 {
        let order = |a: &(u128, usize), b: &(u128, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        remainders.select_nth_unstable_by(left - 1, order);
        for &(_, position) in &remainders[..left] {
            weights[position].1 += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::spread;
    use proptest::prelude::*;

    proptest! {
        /// Shares sum to the target; each is the floor of its exact share or one more, the
        /// ones going to the largest remainders, earliest first on ties (checked against
        /// the same rule computed plainly in u128).
        #[test]
        fn spread_is_largest_remainders(weights in proptest::collection::vec(0u64..20_000_000_000, 1..12), target in 0u64..5_000_000_000) {
            let mut shares: Vec<(usize, u64)> = weights.iter().copied().enumerate().collect();
            spread(&mut shares, target);
            prop_assert_eq!(shares.iter().map(|&(_, share)| share).sum::<u64>(), target);
            let total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
            if total == 0 {
                prop_assert_eq!(shares[0].1, target);
                return Ok(());
            }
            let exact: Vec<(u128, u128)> = weights.iter().map(|&w| (u128::from(w) * u128::from(target) / total, u128::from(w) * u128::from(target) % total)).collect();
            let mut order: Vec<usize> = (0..weights.len()).collect();
            order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
            let left = (u128::from(target) - exact.iter().map(|&(floor, _)| floor).sum::<u128>()) as usize;
            for (rank, &i) in order.iter().enumerate() {
                prop_assert_eq!(u128::from(shares[i].1), exact[i].0 + u128::from(rank < left));
            }
        }
    }
}
