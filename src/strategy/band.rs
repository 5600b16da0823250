//! How far a strategy goes once it has to act: until the view is within its limits, then on
//! while the next step keeps the view at or above `low_water` of them. The view then stays
//! between `low_water` x limit and the limit, and unchanged for the turns it takes to grow
//! back (a cached prompt prefix stays valid), with no cliff below `low_water`: a single
//! step never removes more than one turn's worth.

use super::plan::{Cost, Limits};

/// `state` shrunk by `advance` (one step, oldest and least destructive first; false when
/// nothing is left to give up) until `cost` is within `limits`, then on while the next step
/// keeps the tokens at or above `low_water` x the token limit (or the items are above
/// `low_water` x the item limit) and does not grow the view.
pub fn shrink<S: Copy>(
    mut state: S,
    limits: &Limits,
    low_water: f64,
    cost: impl Fn(&S) -> Cost,
    mut advance: impl FnMut(&mut S) -> bool,
) -> S {
    while !limits.admit(cost(&state), 0) && advance(&mut state) {}
    let low_tokens = low_water * limits.tokens as f64;
    loop {
        let mut next = state;
        if !advance(&mut next) {
            return state;
        }
        let (now, then) = (cost(&state), cost(&next));
        let items_high = limits.items.is_some_and(|limit| now.items as f64 > low_water * limit as f64);
        let keeps_band = then.tokens as f64 >= low_tokens || items_high && then.items < now.items;
        if then.tokens > now.tokens || !keeps_band {
            return state;
        }
        state = next;
    }
}
