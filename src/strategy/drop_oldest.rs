//! Drop oldest (Forge's sliding-window fallback): thresholds on tokens, messages and turns;
//! when any one is exceeded, drop the oldest steps until all hold within `low_water` of them
//! (the sliding walk, see [`super::sliding`]). A chat turn is one step; a tool loop loses
//! its oldest steps behind one marker, never its newest `keep_recent_steps`. With the
//! clearing stage first, old tool results are cleared before any step is dropped (the walk
//! clears first, see [`super::sliding`]).

use std::ops::Range;

use super::clearing::ClearStage;
use super::plan::{Cost, Costs, Limits, Plan};
use crate::view::render::Treatment;

/// The plan of the sliding walk under `limits` over the steps rendered whole, keeping the
/// newest `keep_recent_steps` of the running turn, never before `floor` (turns dropped by
/// hand, archived by a summary), and the clear pointer when the clearing stage `clear` runs
/// first.
pub fn plan(
    costs: &mut Costs<'_>,
    floor: usize,
    limits: &Limits,
    keep_recent_steps: usize,
    clear: Option<ClearStage<'_>>,
) -> (Plan, usize) {
    let unit_count = costs.renderer().ledger().unit_count();
    let newest = unit_count.saturating_sub(1);
    let kept = costs.first_kept_whole(limits, keep_recent_steps, clear);
    (whole_from(costs, kept.first.max(floor.min(newest))), kept.cleared_before)
}

/// The plan keeping the longest run of newest steps, from `floor` on, within `limits` (low
/// water left aside; the marker's reserve counted when the run starts inside a turn), the
/// steps of `cut` counted with their long tool outputs cut to head and tail (those of the
/// running turn the caller then cuts as far as needed, see [`super::running_turn`]): the
/// sliding window's correction when the view repairs tool pairs its token sums do not see,
/// and the last resort for a running turn over the context limit. The newest step alone
/// when even it is over. O(steps kept).
pub fn fit_from(costs: &mut Costs<'_>, floor: usize, cut: Range<usize>, limits: &Limits) -> Plan {
    let ledger = *costs.renderer().ledger();
    let unit_count = ledger.unit_count();
    let reserve = costs.step_marker_reserve();
    let mut first = unit_count.saturating_sub(1).max(floor.min(unit_count));
    let mut suffix = Cost::default();
    for unit in (floor..unit_count).rev() {
        let treatment = if cut.contains(&unit) { Treatment::OutputsTruncated } else { Treatment::Whole };
        suffix = suffix.plus(costs.of(unit, treatment));
        let marker = if ledger.opens_turn(unit) { Cost::default() } else { reserve };
        let turns = (ledger.turn_of_unit(unit_count - 1) - ledger.turn_of_unit(unit) + 1) as u64;
        if unit + 1 < unit_count && !limits.admit(suffix.plus(marker), turns) {
            break;
        }
        first = unit;
    }
    whole_from(costs, first)
}

/// The plan sending steps from `first` on whole, behind the step marker when `first` is
/// not its turn's first step (and steps of its turn before it were dropped rather than
/// archived by a summary, which stands in their place).
pub fn whole_from(costs: &Costs<'_>, first: usize) -> Plan {
    let ledger = costs.renderer().ledger();
    let mut plan = Plan::whole_from(first, ledger.unit_count());
    if first < ledger.unit_count() && !ledger.opens_turn(first) {
        let dropped_from = ledger.first_unit_of(ledger.turn_of_unit(first)).max(ledger.archived());
        if dropped_from < first {
            plan.mark_steps(first, first - dropped_from, ledger.tool_calls(dropped_from..first));
        }
    }
    plan
}
