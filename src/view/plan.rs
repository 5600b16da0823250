//! Plans: how each turn of the ledger is sent, as runs of turns sent alike, and the view a
//! plan yields. A plan has a handful of runs whatever the length of the session, so it is
//! built, stored and compared in O(runs); rendering it reuses the items of the previous view
//! for every turn sent as before.

use super::render::{Renderer, Treatment};
use super::{Item, Overlay, Span};
use std::ops::Range;

/// How every turn is sent: runs of turns sent alike, and the compaction marker (before a
/// turn, counting the messages removed). A run of [`Treatment::Summarized`] turns is sent as
/// one summary block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `(first turn, treatment)`, ascending by turn; each run ends where the next begins,
    /// the last at `turns`. Empty when there are no turns.
    runs: Vec<(usize, Treatment)>,
    /// Turns planned.
    turns: usize,
    /// The turn the marker stands before, and the messages it says were removed.
    marker: Option<(usize, usize)>,
}

impl Plan {
    /// A plan of no turns yet; [`Plan::push`] adds runs.
    pub fn empty() -> Plan {
        Plan { runs: Vec::new(), turns: 0, marker: None }
    }

    /// Sends the turns `turns` (which start where the plan ends) as `treatment`. Empty
    /// ranges are skipped and a run continuing the previous one's treatment joins it.
    pub fn push(&mut self, turns: Range<usize>, treatment: Treatment) {
        debug_assert!(turns.is_empty() || turns.start == self.turns, "runs are pushed in order");
        if turns.is_empty() {
            return;
        }
        if self.runs.last().is_none_or(|&(_, last)| last != treatment) {
            self.runs.push((turns.start, treatment));
        }
        self.turns = turns.end;
    }

    /// Places the compaction marker before turn `turn`, saying `removed` messages were
    /// removed.
    pub fn mark(&mut self, turn: usize, removed: usize) {
        self.marker = Some((turn, removed));
    }

    /// The plan sending turns from `prefix` on whole, up to `turn_count`.
    pub fn whole_from(prefix: usize, turn_count: usize) -> Plan {
        let mut plan = Plan::empty();
        plan.push(0..prefix.min(turn_count), Treatment::Dropped);
        plan.push(prefix.min(turn_count)..turn_count, Treatment::Whole);
        plan
    }

    /// This plan, with turns added since sent whole.
    pub fn extended(mut self, turn_count: usize) -> Plan {
        let planned = self.turns;
        self.push(planned..turn_count.max(planned), Treatment::Whole);
        self
    }

    /// Turns planned.
    pub fn turns(&self) -> usize {
        self.turns
    }

    /// How turn `turn` is sent, if it is planned. O(log runs).
    pub fn treatment(&self, turn: usize) -> Option<Treatment> {
        if turn >= self.turns {
            return None;
        }
        let run = self.runs.partition_point(|&(first, _)| first <= turn) - 1;
        Some(self.runs[run].1)
    }

    /// The runs, as turn ranges with their treatment.
    pub fn runs(&self) -> impl Iterator<Item = (Range<usize>, Treatment)> + '_ {
        self.runs.iter().enumerate().map(|(i, &(first, treatment))| {
            let end = self.runs.get(i + 1).map_or(self.turns, |&(next, _)| next);
            (first..end, treatment)
        })
    }

    /// Turns whose USER message is not sent.
    pub fn dead_turns(&self) -> usize {
        self.runs().filter(|(_, t)| !t.keeps_user_message()).map(|(turns, _)| turns.len()).sum()
    }

    /// The first turn whose USER message is sent, or the planned turns when none is.
    pub fn first_live_turn(&self) -> usize {
        self.runs().find(|(_, t)| t.keeps_user_message()).map_or(self.turns, |(turns, _)| turns.start)
    }

    /// The view this plan yields: the pinned head, then each run. Turns sent as they were in
    /// `previous` (turns completed when it was built) reuse its items, so the cost is the
    /// items' copy plus the rendering of the turns whose treatment changed.
    pub fn build(self, renderer: &Renderer<'_>, previous: Option<&Overlay>) -> Overlay {
        let ledger = renderer.ledger();
        let mut items: Vec<Item> = Vec::new();
        let mut spans = Vec::new();
        renderer.pinned_items(0..ledger.first_of(0), &mut items);
        let reuse = |turns: &Range<usize>, treatment: Treatment| {
            let previous = previous?;
            (turns.end < previous.plan.turns).then_some(())?;
            previous.span_items(turns, treatment)
        };
        for (run, treatment) in self.runs() {
            let marker = self.marker.filter(|&(before, _)| run.contains(&before));
            let mut split = run.start;
            if let Some((turn, removed)) = marker {
                // The marker stands before its turn, after the pinned messages of the dropped
                // turns before it, so items keep ledger order.
                if treatment == Treatment::Dropped {
                    renderer.pinned_items(ledger.first_of(run.start)..ledger.first_of(turn), &mut items);
                    split = turn;
                }
                items.push(renderer.marker(ledger.first_of(turn), removed));
            }
            let mut render = |turns: Range<usize>, items: &mut Vec<Item>| {
                let start = items.len();
                match reuse(&turns, treatment) {
                    Some(old) => items.extend_from_slice(old),
                    None if treatment == Treatment::Summarized => renderer.render_block(turns.clone(), items),
                    None => renderer.render(turns.start, treatment, items),
                }
                spans.push(Span { turns, treatment, items: start..items.len() });
            };
            match treatment {
                Treatment::Dropped => renderer.pinned_items(ledger.first_of(split)..ledger.first_of(run.end), &mut items),
                Treatment::Summarized => render(run, &mut items),
                _ => run.for_each(|turn| render(turn..turn + 1, &mut items)),
            }
        }
        Overlay::new(items, self, ledger.message_count(), spans)
    }
}
