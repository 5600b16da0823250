//! Plans: how each step (the planner's unit, see [`crate::ledger`]) of the ledger is sent,
//! as runs of steps sent alike, and the view a plan yields. A plan has a handful of runs
//! whatever the length of the session, so it is built, stored and compared in O(runs);
//! rendering it reuses the items of the previous view for every step sent as before.
//!
//! A turn's USER message is sent whenever one of its steps is sent with a treatment that
//! keeps it: when its first step is dropped (or summarized) and a later one is sent, the view
//! sends the USER message at its place in ledger order, as the host that loops from
//! `context_window_start` sends it among its pinned messages.

use super::render::{Renderer, Treatment};
use super::thinking::OldThinking;
use super::{Item, Overlay, Span};
use crate::ledger::Ledger;
use crate::message::Kind;
use std::ops::Range;

/// What the compaction marker says was removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removed {
    /// Messages (tiered compaction's middle).
    Messages(usize),
    /// The oldest steps of a turn whose later steps are sent, and their tool calls.
    Steps {
        /// Steps removed.
        steps: usize,
        /// Tool calls among them.
        calls: usize,
    },
}

/// How every step is sent: runs of steps sent alike, and the compaction marker (before a
/// step). A run of [`Treatment::Summarized`] steps is sent as one summary block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `(first step, treatment)`, ascending; each run ends where the next begins, the last
    /// at `units`. Empty when there are no steps.
    runs: Vec<(usize, Treatment)>,
    /// Steps planned.
    units: usize,
    /// The step the marker stands before, and what it says was removed.
    marker: Option<(usize, Removed)>,
    /// Every clearable tool result before this ledger index is sent cleared (see
    /// `view::clearing`); 0 when nothing is.
    cleared_before: usize,
    /// Results superseded when the plan was made (see `view::clearing`): a view built with
    /// another count sends other notes, so its items are not reused.
    superseded: usize,
    /// The old thinking left out (see `view::thinking`).
    thinking: Option<OldThinking>,
}

impl Plan {
    /// A plan of no steps yet; [`Plan::push`] adds runs.
    pub fn empty() -> Plan {
        Plan { runs: Vec::new(), units: 0, marker: None, cleared_before: 0, superseded: 0, thinking: None }
    }

    /// Sends the steps `units` (which start where the plan ends) as `treatment`. Empty
    /// ranges are skipped and a run continuing the previous one's treatment joins it.
    pub fn push(&mut self, units: Range<usize>, treatment: Treatment) {
        debug_assert!(units.is_empty() || units.start == self.units, "runs are pushed in order");
        if units.is_empty() {
            return;
        }
        if self.runs.last().is_none_or(|&(_, last)| last != treatment) {
            self.runs.push((units.start, treatment));
        }
        self.units = units.end;
    }

    /// Places the compaction marker before step `unit`, saying `removed` messages were
    /// removed.
    pub fn mark(&mut self, unit: usize, removed: usize) {
        self.marker = Some((unit, Removed::Messages(removed)));
    }

    /// Places the step marker before step `unit`: `steps` steps of its turn, holding `calls`
    /// tool calls, were removed.
    pub fn mark_steps(&mut self, unit: usize, steps: usize, calls: usize) {
        self.marker = Some((unit, Removed::Steps { steps, calls }));
    }

    /// The plan sending steps from `prefix` on whole, up to `unit_count`.
    pub fn whole_from(prefix: usize, unit_count: usize) -> Plan {
        let mut plan = Plan::empty();
        plan.push(0..prefix.min(unit_count), Treatment::Dropped);
        plan.push(prefix.min(unit_count)..unit_count, Treatment::Whole);
        plan
    }

    /// This plan, with steps added since sent whole.
    pub fn extended(mut self, unit_count: usize) -> Plan {
        let planned = self.units;
        self.push(planned..unit_count.max(planned), Treatment::Whole);
        self
    }

    /// Steps planned.
    pub fn units(&self) -> usize {
        self.units
    }

    /// Sends every clearable tool result before ledger index `before` cleared, and the
    /// `superseded` results superseded so far as notes. The renderer the plan is built with
    /// clears the same ones.
    pub fn clear_before(&mut self, before: usize, superseded: usize) {
        self.cleared_before = before;
        self.superseded = superseded;
    }

    /// Leaves out the old thinking `thinking` says. The renderer the plan is built with
    /// leaves out the same.
    pub fn leave_out_thinking(&mut self, thinking: Option<OldThinking>) {
        self.thinking = thinking;
    }

    /// The ledger index before which clearable tool results are sent cleared.
    pub fn cleared_before(&self) -> usize {
        self.cleared_before
    }

    /// The old thinking the plan leaves out.
    pub fn old_thinking(&self) -> Option<OldThinking> {
        self.thinking
    }

    /// How step `unit` is sent, if it is planned. O(log runs).
    pub fn treatment(&self, unit: usize) -> Option<Treatment> {
        if unit >= self.units {
            return None;
        }
        let run = self.runs.partition_point(|&(first, _)| first <= unit) - 1;
        Some(self.runs[run].1)
    }

    /// The runs, as step ranges with their treatment.
    pub fn runs(&self) -> impl Iterator<Item = (Range<usize>, Treatment)> + '_ {
        self.runs.iter().enumerate().map(|(i, &(first, treatment))| {
            let end = self.runs.get(i + 1).map_or(self.units, |&(next, _)| next);
            (first..end, treatment)
        })
    }

    /// The first step sent with its turn's USER message, or the planned steps when none is.
    pub fn first_live_unit(&self) -> usize {
        self.runs().find(|(_, t)| t.keeps_user_message()).map_or(self.units, |(units, _)| units.start)
    }

    /// False for an item standing for a late result (as itself, cut or cleared) whose call's
    /// step this plan does not send the calls of; true for every other item (a cancelled
    /// result, a marker or a summary stands for a call or a step's first message, never for
    /// a result).
    fn sends_late_result(&self, ledger: &Ledger<'_>, index: usize) -> bool {
        let call = ledger.late_results().call_of(index);
        call.is_none_or(|call| self.sends_tool_messages(ledger, call))
    }

    /// True when the step holding ledger index `index` sends its tool calls and results.
    fn sends_tool_messages(&self, ledger: &Ledger<'_>, index: usize) -> bool {
        self.treatment(ledger.unit_of(index)).is_some_and(Treatment::sends_tool_calls)
    }

    /// The view this plan yields: the pinned head, then each run. Steps sent as they were in
    /// `previous` (steps completed when it was built) reuse its items, so the cost is the
    /// items' copy plus the rendering of the steps whose treatment changed.
    pub fn build(self, renderer: &Renderer<'_>, previous: Option<&Overlay>) -> Overlay {
        let ledger = renderer.ledger();
        let late = ledger.late_results();
        let mut items: Vec<Item> = Vec::new();
        let mut spans = Vec::new();
        renderer.pinned_items(0..ledger.first_of(0), &mut items);
        let reuse = |units: &Range<usize>, treatment: Treatment| {
            let previous = previous?;
            (units.end < previous.plan.units
                && previous.plan.cleared_before == self.cleared_before
                && previous.plan.superseded == self.superseded)
                .then_some(())?;
            // Steps on the same side of the old-thinking boundary in both views.
            let boundary = |plan: &Plan| plan.thinking.map_or((0, false), |t| (t.before, t.call_free_only));
            let ((was, was_rule), (now, rule)) = (boundary(&previous.plan), boundary(&self));
            (was_rule == rule && (units.end <= was.min(now) || units.start >= was.max(now))).then_some(())?;
            // Not the USER message of the turn that was the newest, once a later one started:
            // its images, kept then, are cleared now if the clear pointer passed it.
            let question = |unit: usize| ledger.question_of(ledger.turn_of_unit(unit));
            let was_newest = question(previous.plan.units.min(ledger.unit_count()) - 1);
            let newest = question(ledger.unit_count() - 1);
            let range = ledger.first_of(units.start)..ledger.first_of(units.end);
            (was_newest == newest || !range.contains(&was_newest)).then_some(())?;
            previous.span_items(units, treatment)
        };
        // The USER messages sent for runs that keep later steps of a turn whose first step
        // is not sent with it, ascending.
        let mut questions: Vec<usize> = self
            .runs()
            .filter(|(run, treatment)| treatment.keeps_user_message() && !ledger.opens_turn(run.start))
            .map(|(run, _)| ledger.first_unit_of(ledger.turn_of_unit(run.start)))
            // Sent again unless its first step sends it itself (a summary line is not the
            // question: the turn's later steps answer the question, so it goes with them).
            .filter(|&first| !self.treatment(first).is_some_and(Treatment::keeps_user_message))
            .map(|first| ledger.first_of(first))
            .filter(|&question| !ledger.is_pinned(question))
            .collect();
        // Several runs of one turn (stripped steps, then whole ones) share its question.
        questions.dedup();
        // The questions sent so far.
        let mut asked = 0;
        // The questions before ledger index `end` not sent yet.
        let ask = |end: usize, items: &mut Vec<Item>, asked: &mut usize| {
            while questions.get(*asked).is_some_and(|&q| q < end) {
                items.push(renderer.message_item(questions[*asked], false));
                *asked += 1;
            }
        };
        // The pinned messages of `range`, with the questions among them in ledger order.
        let pinned = |range: Range<usize>, items: &mut Vec<Item>, asked: &mut usize| {
            for &index in ledger.pinned_in(range.clone()) {
                ask(index, items, asked);
                items.push(renderer.message_item(index, false));
            }
            ask(range.end, items, asked);
        };
        for (run, treatment) in self.runs() {
            let marker = self.marker.filter(|&(before, _)| run.contains(&before));
            let mut split = run.start;
            if let Some((unit, removed)) = marker {
                // The marker stands before its step, after the pinned messages of the dropped
                // steps before it, so items keep ledger order.
                if treatment == Treatment::Dropped {
                    pinned(ledger.first_of(run.start)..ledger.first_of(unit), &mut items, &mut asked);
                    split = unit;
                }
                items.push(renderer.removed_marker(ledger.first_of(unit), removed));
            }
            let mut render = |units: Range<usize>, items: &mut Vec<Item>| {
                let start = items.len();
                // A late result goes with its call's step (rendered afresh): left out when
                // that step's calls are not sent, and its call answered as cancelled when
                // the result's step is not sent.
                let messages = ledger.first_of(units.start)..ledger.first_of(units.end);
                let has_late = treatment.sends_tool_calls()
                    && (late.any_in(messages.clone()) || late.calls_in(messages.clone()).next().is_some());
                match reuse(&units, treatment).filter(|_| !has_late) {
                    Some(old) => items.extend_from_slice(old),
                    None if treatment == Treatment::Summarized => renderer.render_block(units.clone(), items),
                    None => renderer.render(units.start, treatment, items),
                }
                if has_late {
                    let mut rendered = items.split_off(start);
                    rendered.retain(|item| self.sends_late_result(ledger, item.index));
                    for (call, _) in late.calls_in(messages).filter(|&(_, result)| !self.sends_tool_messages(ledger, result)) {
                        cancel(renderer, call, &mut rendered);
                    }
                    items.append(&mut rendered);
                }
                spans.push(Span { units, treatment, items: start..items.len() });
            };
            match treatment {
                Treatment::Dropped => pinned(ledger.first_of(split)..ledger.first_of(run.end), &mut items, &mut asked),
                Treatment::Summarized => {
                    let messages = ledger.first_of(run.start)..ledger.first_of(run.end);
                    render(run, &mut items);
                    // The block's pinned messages, with the question of a turn that goes on
                    // after it.
                    pinned(messages, &mut items, &mut asked);
                }
                _ => run.for_each(|unit| render(unit..unit + 1, &mut items)),
            }
        }
        Overlay::new(items, self, ledger, spans)
    }
}

/// Answers the call at ledger index `call` among a step's `items` with its cancelled
/// result, at the end of the run of tool messages holding it (as the step's own repairs
/// stand).
fn cancel(renderer: &Renderer<'_>, call: usize, items: &mut Vec<Item>) {
    let Some(at) = items.iter().position(|item| item.index == call && item.kind == Kind::ToolCall) else { return };
    let end = (at..items.len()).find(|&i| !matches!(items[i].kind, Kind::ToolCall | Kind::ToolResult)).unwrap_or(items.len());
    items.insert(end, renderer.cancelled_result(call));
}
