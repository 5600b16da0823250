//! Strategies whose decision at each step starts from their decision at the step before
//! (`tiered`, `monologue`): the decisions are replayed step by step (a chat turn is one
//! step), as if the strategy had run after every step, and remembered, so `end_turn` and
//! `prepare` compute only the steps added or changed since they last ran. The view is still a function of the ledger's contents and settings:
//! replaying the same pushes gives the same decisions whenever `end_turn` was called.

use super::plan::Costs;
use crate::ledger::Ledger;
use std::fmt::Debug;

/// A planner that decides step by step.
pub trait Stepper: Clone + Debug + PartialEq {
    /// What it decided after a step; the default is the decision before any step.
    type State: Copy + Debug + Default + PartialEq;

    /// The decision once step `newest` (the newest step so far) is added to `previous`.
    fn step(&self, costs: &mut Costs<'_>, previous: Self::State, newest: usize) -> Self::State;
}

/// What a decision saw of its newest step: where it ended and whether a later step existed.
/// A decision whose step has changed since is recomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    end: usize,
    complete: bool,
}

impl Seen {
    fn of(ledger: &Ledger<'_>, unit: usize) -> Seen {
        Seen { end: ledger.first_of(unit + 1), complete: unit + 1 < ledger.unit_count() }
    }
}

/// The decisions of one planner for the settings they were made with: the last two (the
/// only ones a new step or a change of the newest step needs), so the memory stays the same
/// however long the session.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay<P: Stepper> {
    planner: Option<P>,
    /// The decisions after steps `first..first + states.len()`.
    states: Vec<(P::State, Seen)>,
    first: usize,
}

impl<P: Stepper> Default for Replay<P> {
    fn default() -> Self {
        Replay { planner: None, states: Vec::new(), first: 0 }
    }
}

impl<P: Stepper> Replay<P> {
    /// Forgets the decisions from step `step` on (the step changed or was removed); an
    /// earlier step than those remembered forgets all, and the next run replays every step.
    pub fn forget_from(&mut self, step: usize) {
        match step.checked_sub(self.first) {
            Some(kept) if kept > 0 || step == 0 => self.states.truncate(kept),
            _ => *self = Replay { planner: self.planner.take(), ..Replay::default() },
        }
    }

    /// The decision after the newest step of `costs`' ledger (the default when there is
    /// none). Decisions of completed steps are final until forgotten; only the steps added
    /// since the last run, and the previous newest step if it changed, are stepped: O(steps
    /// added) plus what the steps do. Different settings replay every step.
    pub fn run(&mut self, planner: &P, costs: &mut Costs<'_>) -> P::State {
        let ledger = *costs.renderer().ledger();
        let unit_count = ledger.unit_count();
        if self.planner.as_ref() != Some(planner) || unit_count < self.first {
            *self = Replay { planner: Some(planner.clone()), ..Replay::default() };
        }
        self.states.truncate(unit_count - self.first);
        // Every decision but the last was made with its step completed, so only the last
        // can be stale.
        if let Some(&(_, seen)) = self.states.last() {
            if seen != Seen::of(&ledger, self.first + self.states.len() - 1) {
                self.states.pop();
            }
        }
        if self.states.is_empty() && self.first > 0 {
            // The decision before the first remembered one is gone: replay every step.
            self.first = 0;
        }
        while self.first + self.states.len() < unit_count {
            let step = self.first + self.states.len();
            let previous = self.states.last().map_or_else(P::State::default, |&(state, _)| state);
            let state = planner.step(costs, previous, step);
            self.states.push((state, Seen::of(&ledger, step)));
            if self.states.len() > 2 {
                self.states.remove(0);
                self.first += 1;
            }
        }
        self.states.last().map_or_else(P::State::default, |&(state, _)| state)
    }
}
