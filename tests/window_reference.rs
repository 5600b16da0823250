//! The ledger against a straightforward reference: random operation sequences on a
//! `Window` and on a plain re-computation (drop the oldest step while over budget, after every
//! step, replayed over the whole ledger at every enforcement point) must agree on the
//! boundary, the live tokens and every turn.

use ctxwin::{Count, Kind, Window};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Push(Kind, u32, bool),
    EndTurn,
    SetBudget(i32),
    SetOverhead(i32, i32),
    IncludeOverhead(bool),
    Truncate(usize),
    Reset,
    DropOldest,
    LowWater(f64),
}

fn op() -> impl Strategy<Value = Op> {
    let kind = prop::sample::select(Kind::ALL.to_vec());
    prop_oneof![
        12 => (kind, 0u32..400, any::<bool>()).prop_map(|(k, t, e)| Op::Push(k, t, e)),
        4 => (0u32..120).prop_map(|t| Op::Push(Kind::User, t, true)),
        5 => Just(Op::EndTurn),
        1 => (0i32..3000).prop_map(Op::SetBudget),
        1 => (0i32..300, 0i32..300).prop_map(|(s, t)| Op::SetOverhead(s, t)),
        1 => any::<bool>().prop_map(Op::IncludeOverhead),
        1 => (0usize..80).prop_map(Op::Truncate),
        1 => Just(Op::Reset),
        1 => Just(Op::DropOldest),
        1 => prop::sample::select(vec![0.3, 0.5, 0.7, 0.8, 0.95, 1.0]).prop_map(Op::LowWater),
    ]
}

/// Newest steps of the running turn the window keeps by default (`keep_recent_steps`).
const KEEP_RECENT_STEPS: usize = 3;

/// The reference ledger: plain vectors and loops, over steps. A step starts at a USER
/// message, or at thinking, text or a call after a result answered a call of the current step
/// (calls and results pushed with counts alone pair in order); the task (the first USER
/// message) is pinned; a turn's USER message counts with the turn's last step.
#[derive(Default)]
struct Reference {
    messages: Vec<(Kind, u32, bool)>,
    budget: u64,
    overhead: u64,
    includes_overhead: bool,
    first_live: usize,
    /// The first kept step.
    first_step: usize,
    floor: usize,
    /// Each forced drop: the ledger length it was made at, and the floor it set.
    drops: Vec<(usize, usize)>,
    low_water: f64,
}

impl Reference {
    fn turn_starts(&self) -> Vec<usize> {
        (0..self.messages.len()).filter(|&i| self.messages[i].0 == Kind::User).collect()
    }

    /// The first message of every step, and the turn each step belongs to.
    fn steps(&self) -> (Vec<usize>, Vec<usize>) {
        let (mut starts, mut turns) = (Vec::new(), Vec::new());
        let (mut open_calls, mut answered) = (0usize, false);
        let mut turn = None;
        for (i, &(kind, _, _)) in self.messages.iter().enumerate() {
            let starts_step = match kind {
                Kind::User => {
                    turn = Some(turn.map_or(0, |t| t + 1));
                    true
                }
                Kind::Thinking | Kind::Assistant | Kind::ToolCall => turn.is_some() && answered,
                _ => false,
            };
            if starts_step {
                starts.push(i);
                turns.push(turn.unwrap());
                open_calls = 0;
                answered = false;
            }
            match kind {
                Kind::ToolCall => open_calls += 1,
                Kind::ToolResult if open_calls > 0 => {
                    open_calls -= 1;
                    answered = true;
                }
                _ => {}
            }
        }
        (starts, turns)
    }

    fn pinned(&self, i: usize) -> bool {
        let first_user = self.turn_starts().first().copied().unwrap_or(usize::MAX);
        self.messages[i].0 == Kind::System || i <= first_user
    }

    fn tokens(&self, range: std::ops::Range<usize>) -> u64 {
        range.filter(|&i| !self.pinned(i)).map(|i| u64::from(self.messages[i].1)).sum()
    }

    fn turn_tokens(&self, t: usize) -> u64 {
        let starts = self.turn_starts();
        let end = starts.get(t + 1).copied().unwrap_or(self.messages.len());
        self.tokens(starts[t]..end)
    }

    fn pinned_tokens(&self) -> u64 {
        (0..self.messages.len()).filter(|&i| self.pinned(i)).map(|i| u64::from(self.messages[i].1)).sum()
    }

    fn available(&self) -> u64 {
        if self.includes_overhead { self.budget.saturating_sub(self.overhead + self.pinned_tokens()) } else { self.budget }
    }

    /// The step marker's cost: what the window reserves for it, and what it costs for
    /// `steps` steps holding `calls` calls.
    fn marker(steps: usize, calls: usize) -> u64 {
        let text = ctxwin::view::text::step_marker(steps, calls);
        u64::from(ctxwin::tokens::Model::resolve("unknown-model").count(&text).tokens)
    }

    /// The sliding walk, after every step, from the start of the ledger: when the kept steps
    /// (with the marker's reserve when the first is not its turn's first) are over the
    /// budget, the oldest go until they are within `low_water` of it, never the newest
    /// `KEEP_RECENT_STEPS` of the running turn, nor any step of a turn that has no more.
    fn enforce(&mut self) {
        let turn_starts = self.turn_starts();
        let turns = turn_starts.len();
        self.floor = self.floor.min(turns.saturating_sub(1));
        let (starts, step_turn) = self.steps();
        let n = starts.len();
        let end_of = |u: usize| starts.get(u + 1).copied().unwrap_or(self.messages.len());
        let first_step_of = |t: usize| step_turn.iter().position(|&x| x == t).unwrap_or(n);
        let cost = |u: usize| {
            let t = step_turn[u];
            let opens = first_step_of(t) == u;
            let closes = u + 1 == n || step_turn[u + 1] != t;
            let user = self.tokens(turn_starts[t]..turn_starts[t] + 1);
            let own = self.tokens(starts[u]..end_of(u));
            match (opens, closes) {
                (true, false) => own - user,
                (false, true) => own + user,
                _ => own,
            }
        };
        let reserve = Self::marker(u32::MAX as usize, u32::MAX as usize);
        let marker = |first: usize| if first < n && first_step_of(step_turn[first]) != first { reserve } else { 0 };
        let available = self.available();
        let low = if self.low_water >= 1.0 { available } else { (self.low_water * available as f64).floor() as u64 };
        let mut k = 0;
        for (last, &turn) in step_turn.iter().enumerate().take(n) {
            let guard = first_step_of(turn).max((last + 1).saturating_sub(KEEP_RECENT_STEPS)).min(last);
            let kept = |k: usize| (k..=last).map(cost).sum::<u64>() + marker(k);
            if kept(k) > available {
                while k < guard && kept(k) > low {
                    k += 1;
                }
            }
        }
        let floor = first_step_of(self.floor).min(n);
        self.first_step = k.max(floor.min(n.saturating_sub(1)));
        self.first_live = if n == 0 { 0 } else { step_turn[self.first_step] };
    }

    fn live_tokens(&self) -> u64 {
        let (starts, step_turn) = self.steps();
        let mut live = self.overhead + self.pinned_tokens();
        let Some(&first) = starts.get(self.first_step) else { return live };
        live += self.tokens(first..self.messages.len());
        let turn_first = step_turn.iter().position(|&t| t == step_turn[self.first_step]).unwrap();
        if turn_first < self.first_step {
            // The boundary inside a turn: its USER message and the marker are sent too.
            let user = self.turn_starts()[step_turn[self.first_step]];
            let calls = (starts[turn_first]..first).filter(|&i| self.messages[i].0 == Kind::ToolCall).count();
            live += self.tokens(user..user + 1) + Self::marker(self.first_step - turn_first, calls);
        }
        live
    }

    fn start(&self) -> usize {
        if self.first_step == 0 { 0 } else { self.steps().0[self.first_step] }
    }
}

fn apply(window: &mut Window, reference: &mut Reference, op: &Op) {
    match *op {
        Op::Push(kind, tokens, exact) => {
            window.push_counted(kind, Count { tokens, exact });
            reference.messages.push((kind, tokens, exact));
        }
        Op::EndTurn => {
            let before = reference.first_live;
            let pruned = window.end_turn();
            reference.enforce();
            assert_eq!(pruned, reference.first_live.saturating_sub(before));
        }
        Op::SetBudget(budget) => {
            window.set_budget(budget).unwrap();
            reference.budget = budget as u64;
            reference.enforce();
        }
        Op::SetOverhead(system, tools) => {
            window.set_overhead(system, tools).unwrap();
            reference.overhead = (system + tools) as u64;
            reference.enforce();
        }
        Op::IncludeOverhead(on) => {
            window.configure(&format!(r#"{{"budget_includes_overhead":{on}}}"#)).unwrap();
            reference.includes_overhead = on;
            reference.enforce();
        }
        Op::Truncate(n) => {
            let result = window.truncate(n);
            if n > reference.messages.len() {
                assert!(result.is_err());
            } else {
                result.unwrap();
                reference.messages.truncate(n);
                // A rewind undoes the drops made when the ledger was longer.
                reference.drops.retain(|&(made_at, _)| made_at <= n);
                reference.floor = reference.drops.last().map_or(0, |&(_, floor)| floor);
                reference.enforce();
            }
        }
        Op::Reset => {
            window.reset();
            reference.messages.clear();
            reference.floor = 0;
            reference.drops.clear();
            reference.enforce();
        }
        Op::LowWater(low_water) => {
            window.configure(&format!(r#"{{"low_water":{low_water}}}"#)).unwrap();
            reference.low_water = low_water;
            reference.enforce();
        }
        Op::DropOldest => {
            let turns = reference.turn_starts().len();
            let result = window.drop_oldest_turn();
            if reference.first_live + 1 >= turns {
                assert!(result.is_err());
            } else {
                result.unwrap();
                reference.floor = reference.first_live + 1;
                reference.drops.push((reference.messages.len(), reference.floor));
                reference.enforce();
            }
        }
    }
}

fn check(window: &Window, reference: &Reference) {
    assert_eq!(window.message_count(), reference.messages.len());
    assert_eq!(window.first_live_turn(), reference.first_live);
    assert_eq!(window.start(), reference.start());
    let live = window.live_tokens();
    assert_eq!(u64::from(live.tokens), reference.live_tokens());
    let starts = reference.turn_starts();
    assert_eq!(window.turn_count(), starts.len());
    for (t, &first) in starts.iter().enumerate() {
        let info = window.turn_info(t).unwrap();
        assert_eq!(info.first_message, first);
        assert_eq!(u64::from(info.tokens.tokens), reference.turn_tokens(t));
        assert_eq!(info.live, t >= reference.first_live);
    }
    assert!(window.turn_info(starts.len()).is_err());
    // Structural invariants of the boundary: it starts a step; the USER message of the turn
    // it falls inside is sent from before it.
    assert!(window.start() <= window.message_count());
    if window.start() != 0 {
        assert!(reference.steps().0.contains(&window.start()));
        let question = starts[reference.first_live];
        assert!(question == window.start() || window.is_pinned_at(question));
    }
}

fn new_window(budget: i32) -> (Window, Reference) {
    let mut window = Window::new("unknown-model");
    window.set_budget(budget).unwrap();
    let reference = Reference { budget: budget as u64, low_water: window.settings().low_water.get(), ..Reference::default() };
    (window, reference)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn window_matches_the_reference(budget in 0i32..2000, ops in prop::collection::vec(op(), 0..160)) {
        let (mut window, mut reference) = new_window(budget);
        for op in &ops {
            apply(&mut window, &mut reference, op);
            check(&window, &reference);
        }
    }

    /// A host that restores a session by pushing the same messages (with end_turn after each
    /// turn) under the same settings gets the same boundary, however the original calls were
    /// interleaved.
    #[test]
    fn boundary_depends_on_contents_not_call_order(
        budget in 0i32..2000,
        ops in prop::collection::vec(op().prop_filter("no manual drops", |o| !matches!(o, Op::DropOldest)), 0..160),
    ) {
        let (mut window, mut reference) = new_window(budget);
        for op in &ops {
            apply(&mut window, &mut reference, op);
        }
        window.end_turn();
        // Replayed with end_turn after every turn, and with end_turn once at the end.
        for every_turn in [true, false] {
            let mut replay = Window::new("unknown-model");
            replay.set_budget(reference.budget as i32).unwrap();
            replay.set_overhead(reference.overhead as i32, 0).unwrap();
            replay
                .configure(&format!(
                    r#"{{"budget_includes_overhead":{},"low_water":{}}}"#,
                    reference.includes_overhead, reference.low_water
                ))
                .unwrap();
            for &(kind, tokens, exact) in &reference.messages {
                if kind == Kind::User && every_turn {
                    replay.end_turn();
                }
                replay.push_counted(kind, Count { tokens, exact });
            }
            replay.end_turn();
            prop_assert_eq!(replay.start(), window.start());
            prop_assert_eq!(replay.first_live_turn(), window.first_live_turn());
            prop_assert_eq!(replay.live_tokens(), window.live_tokens());
        }
    }
}

#[test]
fn exactness_of_totals_follows_the_messages() {
    let mut window = Window::new("unknown-model");
    window.push_counted(Kind::User, Count::exact(10));
    assert!(window.live_tokens().exact);
    window.push_counted(Kind::Assistant, Count::estimate(5));
    assert!(!window.live_tokens().exact);
    assert!(!window.turn_info(0).unwrap().tokens.exact);
    window.truncate(1).unwrap();
    assert!(window.live_tokens().exact);
}
