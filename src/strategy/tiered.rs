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
    let mut draft = Draft::compacted_by_hand(costs, floor, turn_count, Treatment::OutputsTruncated, truncated_by_hand);
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

#[cfg(test)]
mod tests {
    use crate::message::Kind;
    use crate::view::ItemType;
    use crate::window::Window;

    /// A window of `turns` turns, each a question, a tool call with a 30-line output and an
    /// answer; counts are estimates (bytes / 4).
    fn session(turns: usize, settings: &str) -> Window {
        let mut window = Window::new("estimated-model");
        window.configure(settings).unwrap();
        window.push(Kind::System, "You are terse.").unwrap();
        let output: String = (0..30).map(|i| format!("line {i} of the output\n")).collect();
        for t in 0..turns {
            window.push(Kind::User, &format!("Question number {t}: what does this module do?")).unwrap();
            window.push_tool(Kind::ToolCall, &format!("call_{t}"), "read module").unwrap();
            window.push_tool(Kind::ToolResult, &format!("call_{t}"), &output).unwrap();
            window.push(Kind::Assistant, &format!("Answer {t}: it parses the configuration.")).unwrap();
            window.end_turn();
        }
        window
    }

    fn items(window: &Window) -> Vec<(ItemType, Kind, usize, String)> {
        (0..window.view_len())
            .map(|i| {
                let item = window.view_item(i).unwrap();
                (item.item_type, item.kind, item.index, item.text.unwrap_or("").to_owned())
            })
            .collect()
    }

    const KEEP: &str = r#""tool_output_max_lines":4,"keep_first":1,"keep_recent":4"#;

    fn tiered(budget: u64) -> Window {
        session(6, &format!(r#"{{"strategy":"tiered","history_budget":{budget},{KEEP}}}"#))
    }

    fn count(view: &[(ItemType, Kind, usize, String)], prefix: &str) -> usize {
        view.iter().filter(|item| item.3.starts_with(prefix)).count()
    }

    /// History tokens with every tool output but the newest turn's cut (L1 applied to all).
    fn after_l1() -> u64 {
        let mut window = tiered(1_000_000);
        window.compact();
        window.view_history().tokens()
    }

    #[test]
    fn l1_alone_when_cutting_outputs_is_enough() {
        let window = tiered(after_l1());
        let view = items(&window);
        assert_eq!(view.iter().filter(|item| item.0 == ItemType::Truncated).count(), 5, "all but the newest turn's");
        assert!(view.iter().all(|item| item.0 != ItemType::Synthetic));
        let cut = view.iter().filter(|i| i.0 == ItemType::Truncated);
        assert!(cut.clone().all(|i| i.3.contains("[... 26 lines truncated ...]")));
        assert!(items(&tiered(1_000_000)).iter().all(|item| item.0 == ItemType::Message), "nothing fires under budget");
    }

    #[test]
    fn l2_summarizes_the_oldest_middle_turn_first() {
        let view = items(&tiered(after_l1() - 1));
        assert_eq!(count(&view, "[Summary]"), 1, "{view:?}");
        assert_eq!(count(&view, "[Context compacted"), 0);
        // Turn 0 holds the first message (keep_first) and turn 5 the last four: the oldest
        // turn of the middle is turn 1, whose USER message is index 5.
        let summary = view.iter().find(|item| item.3.starts_with("[Summary]")).unwrap();
        assert_eq!((summary.0, summary.1, summary.2), (ItemType::Synthetic, Kind::User, 5));
        assert!(summary.3.contains("Question number 1") && summary.3.contains("1 tool call"));
        assert!(!view.iter().any(|item| (5..9).contains(&item.2) && item.0 != ItemType::Synthetic));
    }

    #[test]
    fn l3_comes_only_after_every_middle_turn_is_summarized() {
        let highest_with_marker = (1..after_l1())
            .rev()
            .find(|&budget| count(&items(&tiered(budget)), "[Context compacted") > 0)
            .unwrap();
        let before = items(&tiered(highest_with_marker + 1));
        assert_eq!(count(&before, "[Summary]"), 4, "turns 1 to 4 summarized first: {before:?}");
        let window = tiered(highest_with_marker);
        let view = items(&window);
        assert_eq!(count(&view, "[Context compacted"), 1);
        assert_eq!(count(&view, "[Summary]"), 0, "the middle is dropped, summaries included");
        let sent: Vec<usize> = view.iter().filter(|i| i.0 != ItemType::Synthetic).map(|i| i.2).collect();
        assert!((1..5).chain(21..25).all(|i| sent.contains(&i)), "first and recent turns stay: {view:?}");
        let marker = view.iter().find(|item| item.3.starts_with("[Context compacted")).unwrap();
        assert_eq!(marker.3, "[Context compacted: 16 messages removed to fit context window]");
        assert_eq!(marker.2, 5, "the marker stands where the middle began");
        assert!(window.view_history().tokens() <= highest_with_marker);
    }
}
