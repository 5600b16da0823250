//! Drop oldest (Forge's sliding-window fallback): thresholds on tokens, messages and turns;
//! when any one is exceeded, drop the oldest whole turns until all hold. The newest turn is
//! never dropped.

use super::plan::{Cost, Costs, Limits, Plan};
use crate::view::render::Treatment;

/// The plan keeping the longest run of newest whole turns, from `floor` on, within `limits`;
/// the newest turn alone when even it is over. O(turns kept).
pub fn plan(costs: &mut Costs<'_>, floor: usize, turn_count: usize, limits: &Limits) -> Plan {
    let mut first = turn_count.saturating_sub(1).max(floor.min(turn_count));
    let mut suffix = Cost::default();
    for turn in (floor..turn_count).rev() {
        let cost = costs.of(turn, Treatment::Whole);
        suffix.tokens += cost.tokens;
        suffix.items += cost.items;
        let whole_turns = (turn_count - turn) as u64;
        if turn + 1 < turn_count && !limits.admit(suffix, whole_turns) {
            break;
        }
        first = turn;
    }
    Plan::whole_from(first, turn_count)
}
