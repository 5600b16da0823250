//! Monologue compaction (ProbeAgent's compactor): older turns keep their user message and
//! final answer; thinking, tool calls and tool results go. The last `keep_recent_turns`
//! turns stay whole. Then, if still over, the oldest turns are dropped.

use super::plan::{Costs, Draft, Limits, Plan};
use crate::view::render::Treatment;

/// The monologue plan. Turns before `stripped_by_hand` were stripped by a manual compaction
/// and stay stripped; when the whole view is over `limits`, every turn older than the last
/// `keep_recent_turns` is stripped, then the oldest turns are dropped while still over. The
/// newest turn is always whole.
pub fn plan(
    costs: &mut Costs<'_>,
    floor: usize,
    turn_count: usize,
    limits: &Limits,
    keep_recent_turns: usize,
    stripped_by_hand: usize,
) -> Plan {
    let newest = turn_count.saturating_sub(1);
    let strip = |turn: usize, upto: usize| if turn < upto && turn < newest { Treatment::Stripped } else { Treatment::Whole };
    let mut draft = Draft::new(costs, floor, turn_count, |turn| strip(turn, stripped_by_hand));
    if draft.fits(costs, limits) {
        return draft.finish();
    }
    let older = turn_count.saturating_sub(keep_recent_turns);
    for turn in floor..older.min(newest) {
        draft.set(costs, turn, Treatment::Stripped);
    }
    for turn in floor..newest {
        if draft.fits(costs, limits) {
            break;
        }
        draft.set(costs, turn, Treatment::Dropped);
    }
    draft.finish()
}
