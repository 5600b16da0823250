//! Strategies whose decision at each turn starts from their decision at the turn before
//! (`tiered`, `monologue`): the decisions are replayed turn by turn, as if `end_turn` had run
//! after every turn, and remembered, so `end_turn` computes only the turns added or changed
//! since it last ran. The view is still a function of the ledger's contents and settings:
//! replaying the same pushes gives the same decisions whenever `end_turn` was called.

use super::plan::Costs;
use crate::ledger::Ledger;
use std::fmt::Debug;

/// A planner that decides turn by turn.
pub trait Stepper: Clone + Debug + PartialEq {
    /// What it decided after a turn; the default is the decision before any turn.
    type State: Copy + Debug + Default + PartialEq;

    /// The decision once turn `newest` (the newest turn so far) is added to `previous`.
    fn step(&self, costs: &mut Costs<'_>, previous: Self::State, newest: usize) -> Self::State;
}

/// What a decision saw of its newest turn: where it ended and whether a later turn existed.
/// A decision whose turn has changed since is recomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    end: usize,
    complete: bool,
}

impl Seen {
    fn of(ledger: &Ledger<'_>, turn: usize) -> Seen {
        Seen { end: ledger.first_of(turn + 1), complete: turn + 1 < ledger.turn_count() }
    }
}

/// The decisions of one planner for the settings they were made with: the last two (the
/// only ones a new turn or a change of the newest turn needs), so the memory stays the same
/// however long the session.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay<P: Stepper> {
    planner: Option<P>,
    /// The decisions after turns `first..first + states.len()`.
    states: Vec<(P::State, Seen)>,
    first: usize,
}

impl<P: Stepper> Default for Replay<P> {
    fn default() -> Self {
        Replay { planner: None, states: Vec::new(), first: 0 }
    }
}

impl<P: Stepper> Replay<P> {
    /// Forgets the decisions from turn `turn` on (the turn changed or was removed); an
    /// earlier turn than those remembered forgets all, and the next run replays every turn.
    pub fn forget_from(&mut self, turn: usize) {
        match turn.checked_sub(self.first) {
            Some(kept) if kept > 0 || turn == 0 => self.states.truncate(kept),
            _ => *self = Replay { planner: self.planner.take(), ..Replay::default() },
        }
    }

    /// The decision after the newest turn of `costs`' ledger (the default when there is
    /// none). Decisions of completed turns are final until forgotten; only the turns added
    /// since the last run, and the previous newest turn if it changed, are stepped: O(turns
    /// added) plus what the steps do. Different settings replay every turn.
    pub fn run(&mut self, planner: &P, costs: &mut Costs<'_>) -> P::State {
        let ledger = *costs.renderer().ledger();
        let turn_count = ledger.turn_count();
        if self.planner.as_ref() != Some(planner) || turn_count < self.first {
            *self = Replay { planner: Some(planner.clone()), ..Replay::default() };
        }
        self.states.truncate(turn_count - self.first);
        // Every decision but the last was made with its turn completed, so only the last
        // can be stale.
        if let Some(&(_, seen)) = self.states.last() {
            if seen != Seen::of(&ledger, self.first + self.states.len() - 1) {
                self.states.pop();
            }
        }
        if self.states.is_empty() && self.first > 0 {
            // The decision before the first remembered one is gone: replay every turn.
            self.first = 0;
        }
        while self.first + self.states.len() < turn_count {
            let turn = self.first + self.states.len();
            let previous = self.states.last().map_or_else(P::State::default, |&(state, _)| state);
            let state = planner.step(costs, previous, turn);
            self.states.push((state, Seen::of(&ledger, turn)));
            if self.states.len() > 2 {
                self.states.remove(0);
                self.first += 1;
            }
        }
        self.states.last().map_or_else(P::State::default, |&(state, _)| state)
    }
}
