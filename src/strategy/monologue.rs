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
    let mut draft = Draft::compacted_by_hand(costs, floor, turn_count, Treatment::Stripped, stripped_by_hand);
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

#[cfg(test)]
mod tests {
    use crate::message::Kind;
    use crate::window::Window;

    fn session(budget: u64) -> Window {
        let mut window = Window::new("estimated-model");
        window.configure(&format!(r#"{{"strategy":"monologue","keep_recent_turns":2,"history_budget":{budget}}}"#)).unwrap();
        for t in 0..5 {
            window.push(Kind::User, &format!("Question {t}: why is the build red?")).unwrap();
            window.push(Kind::Thinking, "I should read the CI log before answering anything.").unwrap();
            window.push_tool(Kind::ToolCall, &format!("log_{t}"), "fetch the log").unwrap();
            window.push_tool(Kind::ToolResult, &format!("log_{t}"), "error: linker failed with exit code 1").unwrap();
            window.push(Kind::Assistant, &format!("Answer {t}: a missing library.")).unwrap();
            window.end_turn();
        }
        window
    }

    fn sent(window: &Window) -> Vec<usize> {
        (0..window.view_len()).map(|i| window.view_item(i).unwrap().index).collect()
    }

    #[test]
    fn strips_older_turns_before_dropping_any() {
        let whole = session(1_000_000);
        let all = whole.view_history().tokens();
        assert_eq!(sent(&whole), (0..25).collect::<Vec<_>>(), "under budget nothing fires");
        let window = session(all - 1);
        let stripped: Vec<usize> = [0, 4, 5, 9, 10, 14].into_iter().chain(15..25).collect();
        assert_eq!(sent(&window), stripped, "turns 0 to 2 keep question and answer; 3 and 4 stay whole");
        // The smallest budget that still keeps every question: stripping alone fits it.
        let fits = window.view_history().tokens();
        assert_eq!(sent(&session(fits)), stripped);
        let tighter = sent(&session(fits - 1));
        assert!(!tighter.contains(&0), "then the oldest turn goes: {tighter:?}");
        assert!(tighter.ends_with(&(15..25).collect::<Vec<_>>()));
    }
}
