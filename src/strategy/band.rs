//! How far a strategy goes once it has to act: until the view is within its limits, then on
//! until it is within `low_water` of them ([`Limits::low`]), one step at a time. The view
//! then stays unchanged for the turns it takes to grow back (a cached prompt prefix stays
//! valid), and never falls off a cliff: a single step gives up at most one turn's worth, so
//! the view lands less than one step under the low-water mark.

use super::plan::{Cost, Limits};

/// `state` shrunk by `advance` (one step, oldest and least destructive first; false when
/// nothing is left to give up) when `cost` is over `limits`, until it is within their low
/// water.
pub fn shrink<S>(mut state: S, limits: &Limits, cost: impl Fn(&S) -> Cost, mut advance: impl FnMut(&mut S) -> bool) -> S {
    if limits.admit(cost(&state), 0) {
        return state;
    }
    let low = limits.low();
    while !low.admit(cost(&state), 0) && advance(&mut state) {}
    state
}
