//! Tiered compaction (three-level compaction). When the view is over its limits:
//! L1 cuts long tool outputs to head and tail; L2 replaces old turns with one-line
//! `[Summary]` items, oldest first; L3 drops the middle of the history, keeping the turns
//! that hold the first `keep_first` and the last `keep_recent` messages, behind one
//! `[Context compacted: …]` marker; finally the dropped middle widens (into the recent turns,
//! then back through the first ones) while still over. Each level runs only while the view
//! is over. All of them work on whole turns, so a tool call never loses its result.

use super::plan::{Costs, Draft, Limits, Plan};
use crate::view::render::Treatment;

/// What tiered compaction keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    /// Messages at the start of the history to keep (rounded up to whole turns).
    pub first: usize,
    /// Messages at the end of the history to keep (rounded up to whole turns).
    pub recent: usize,
}

/// The tiered plan. Turns before `truncated_by_hand` had their tool outputs cut by a manual
/// compaction and stay cut. The newest turn is always whole.
pub fn plan(
    costs: &mut Costs<'_>,
    floor: usize,
    turn_count: usize,
    limits: &Limits,
    keep: Keep,
    truncated_by_hand: usize,
) -> Plan {
    let newest = turn_count.saturating_sub(1);
    let cut = |turn: usize, upto: usize| if turn < upto && turn < newest { Treatment::OutputsTruncated } else { Treatment::Whole };
    let mut draft = Draft::new(costs, floor, turn_count, |turn| cut(turn, truncated_by_hand));
    if draft.fits(costs, limits) {
        return draft.finish();
    }
    // L1: every tool output but the newest turn's.
    for turn in floor..newest {
        draft.set(costs, turn, Treatment::OutputsTruncated);
    }
    if draft.fits(costs, limits) {
        return draft.finish();
    }
    let (first_end, recent_start) = groups(costs, floor, turn_count, keep);
    // L2: summaries of the middle, oldest first, where a summary is smaller.
    for turn in first_end..recent_start {
        if costs.of(turn, Treatment::Summarized).tokens < costs.of(turn, Treatment::OutputsTruncated).tokens {
            draft.set(costs, turn, Treatment::Summarized);
            if draft.fits(costs, limits) {
                return draft.finish();
            }
        }
    }
    // L3: drop the middle behind one marker.
    if first_end < recent_start {
        for turn in first_end..recent_start {
            draft.set(costs, turn, Treatment::Dropped);
        }
        draft.mark(first_end);
    }
    // Keep within budget: widen the dropped run into the recent turns, then back through the
    // first ones.
    let rightwards = recent_start..newest;
    let leftwards = (floor..first_end).rev();
    for turn in rightwards.chain(leftwards) {
        if draft.fits(costs, limits) {
            break;
        }
        draft.set(costs, turn, Treatment::Dropped);
        draft.mark(turn.min(first_end));
    }
    if !draft.fits(costs, limits) {
        // Only the newest turn is left and it alone is over: the marker would only add to it.
        draft.unmark();
    }
    draft.finish()
}

/// The end of the first group of turns and the start of the recent group: the fewest whole
/// turns holding the first `keep.first` and the last `keep.recent` history messages. The
/// newest turn is always in the recent group; the groups never overlap.
fn groups(costs: &Costs<'_>, floor: usize, turn_count: usize, keep: Keep) -> (usize, usize) {
    let renderer = costs.renderer();
    let mut recent_start = turn_count.saturating_sub(1);
    let mut kept = renderer.history_messages(recent_start);
    while recent_start > floor && kept < keep.recent {
        recent_start -= 1;
        kept += renderer.history_messages(recent_start);
    }
    let mut first_end = floor;
    let mut kept = 0;
    while first_end < recent_start && kept < keep.first {
        kept += renderer.history_messages(first_end);
        first_end += 1;
    }
    (first_end, recent_start)
}
