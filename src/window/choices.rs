//! The choices `drop_oldest_turn`, `compact` and `recover` record, each stamped with the
//! ledger's length when it was made, so that `truncate` undoes exactly the choices made
//! after the point it rewinds to (and `reset` all of them).

/// The manual choices in force after one call, and the ledger length it was made at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Messages in the ledger when the choice was made.
    pub messages: usize,
    /// Turns dropped by hand: the boundary never moves before this turn.
    pub forced_first_live: usize,
    /// Turns compacted by hand.
    pub compacted_through: usize,
    /// Steps dropped by `recover` from a turn it could not drop whole (the newest, a long
    /// tool loop): the boundary never moves before this step. 0 in choices saved before.
    pub forced_first_step: usize,
}

/// The recorded choices, oldest first. The floors only grow, so the newest entry is the
/// state in force, and popping the entries made after a point restores the state at it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ChoiceLog {
    log: Vec<Choice>,
}

impl ChoiceLog {
    /// Records `choice`; a choice made at the same ledger length replaces the previous one.
    pub fn record(&mut self, choice: Choice) {
        if self.log.last().is_some_and(|last| last.messages == choice.messages) {
            self.log.pop();
        }
        self.log.push(choice);
    }

    /// Undoes the choices made when the ledger held more than `messages` messages, and
    /// returns the state in force at that length.
    pub fn rewind(&mut self, messages: usize) -> Choice {
        let kept = self.log.partition_point(|choice| choice.messages <= messages);
        self.log.truncate(kept);
        self.current()
    }

    /// The choices in force (none: zero floors).
    pub fn current(&self) -> Choice {
        self.log.last().copied().unwrap_or(Choice {
            messages: 0,
            forced_first_live: 0,
            compacted_through: 0,
            forced_first_step: 0,
        })
    }

    /// Forgets every choice.
    pub fn clear(&mut self) {
        self.log.clear();
    }

    /// The log, oldest first.
    pub fn as_slice(&self) -> &[Choice] {
        &self.log
    }

    /// A log read back from a saved window: stamps ascending, floors not decreasing.
    pub fn from_saved(log: Vec<Choice>) -> Option<ChoiceLog> {
        let ordered = log.windows(2).all(|pair| {
            pair[0].messages < pair[1].messages
                && pair[0].forced_first_live <= pair[1].forced_first_live
                && pair[0].compacted_through <= pair[1].compacted_through
                && pair[0].forced_first_step <= pair[1].forced_first_step
        });
        ordered.then_some(ChoiceLog { log })
    }
}
