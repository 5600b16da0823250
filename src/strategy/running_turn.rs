//! The running (newest) turn when the strategy's view of it does not fit the context limit
//! (its newest `keep_recent_steps` steps are over the room): its oldest long tool outputs
//! are cut to head and tail by tiered L1's rule (`tool_output_max_lines`, long lines to
//! their ends), one at a time, until the view fits; steps go only when that is not enough
//! (`Window::plan_view`). Every strategy leaves the newest turn whole otherwise, so this
//! only acts when the turn is over the room the context limit leaves, and it depends on
//! nothing but the turn's contents and the settings.

use crate::message::Kind;
use crate::view::render::Renderer;
use crate::view::{ItemType, Overlay};

/// Cuts the oldest long tool outputs of turn `turn` (the newest) in `overlay` until its
/// history is within `room` tokens or none is left to cut. Returns how many it cut.
pub fn fit(renderer: &Renderer<'_>, overlay: &mut Overlay, turn: usize, room: u64) -> usize {
    let range = renderer.ledger().turn_range(turn);
    let mut history = overlay.history().tokens();
    let mut cut = 0;
    for item in overlay.items.iter_mut() {
        if history <= room {
            break;
        }
        let candidate = item.item_type == ItemType::Message && item.kind == Kind::ToolResult && !item.pinned;
        if !candidate || !range.contains(&item.index) {
            continue;
        }
        let shorter = renderer.message_item(item.index, true);
        if shorter.item_type == ItemType::Truncated && shorter.tokens.tokens < item.tokens.tokens {
            history -= u64::from(item.tokens.tokens - shorter.tokens.tokens);
            *item = shorter;
            cut += 1;
        }
    }
    cut
}
