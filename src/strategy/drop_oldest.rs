//! Drop oldest (Forge's sliding-window fallback): thresholds on tokens, messages and turns;
//! when any one is exceeded, drop the oldest whole turns until all hold within `low_water`
//! of them (the sliding walk, see [`super::sliding`]). The newest turn is never dropped.

use super::plan::{Cost, Costs, Limits, Plan};
use crate::view::render::Treatment;

/// The plan of the sliding walk under `limits` over the turns rendered whole, never before
/// `floor` (turns dropped by hand); the newest turn alone when even it is over.
pub fn plan(costs: &mut Costs<'_>, floor: usize, turn_count: usize, limits: &Limits) -> Plan {
    let newest = turn_count.saturating_sub(1);
    let first = costs.first_kept_whole(limits, turn_count).max(floor.min(newest));
    Plan::whole_from(first, turn_count)
}

/// The plan keeping the longest run of newest whole turns, from `floor` on, within `limits`
/// (low water left aside): the sliding window's correction when the view repairs tool pairs
/// its token sums do not see. The newest turn alone when even it is over. O(turns kept).
pub fn fit_from(costs: &mut Costs<'_>, floor: usize, turn_count: usize, limits: &Limits) -> Plan {
    let mut first = turn_count.saturating_sub(1).max(floor.min(turn_count));
    let mut suffix = Cost::default();
    for turn in (floor..turn_count).rev() {
        suffix = suffix.plus(costs.of(turn, Treatment::Whole));
        let whole_turns = (turn_count - turn) as u64;
        if turn + 1 < turn_count && !limits.admit(suffix, whole_turns) {
            break;
        }
        first = turn;
    }
    Plan::whole_from(first, turn_count)
}
