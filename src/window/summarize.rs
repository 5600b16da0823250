//! The summary slot of a window: when to ask for a summary, the request, and the answer
//! that archives the steps it covers.
//!
//! A request covers the steps from the end of the archive to the strategy's target: the
//! turns the sliding window pruned (`sliding`), or the oldest steps that bring the view's
//! history within `low_water` of its limit (`summary`; never the newest `keep_recent_steps`
//! steps, nor into a newest turn of fewer steps). A chat turn is one step, so for a chat
//! the archive ends on a turn; in a long tool loop it ends at a step boundary inside the
//! running turn, whose USER message (the task) is still sent, and the summary stands where
//! the archived steps were. When they do not fit the model's window in one prompt, the
//! request covers as many steps as fit and `needs_summary` asks for the rest while it is
//! still needed (with `summary`, while the view is over `threshold`), each part rolling up
//! the previous summary.

use super::Window;
use crate::config::StrategyName;
use crate::error::{Error, ErrorKind, Result};
use crate::summary::prompt::Request;
use crate::summary::{CompactionRecord, PendingSummary};
use std::ops::Range;

impl Window {
    /// The newest compaction record: its summary is the one in place, sent where the steps
    /// it archived were (after the pinned head, and after the USER message of a turn whose
    /// oldest steps it archived). `None` before the first summary.
    pub fn summary(&self) -> Option<&CompactionRecord> {
        self.policy.compactions.last()
    }

    /// Every compaction record, oldest first.
    pub fn compactions(&self) -> &[CompactionRecord] {
        &self.policy.compactions
    }

    /// Turns archived whole by summaries: turns `0..archived_turns()` are replaced by the
    /// summary (see [`Window::archived_steps`] for an archive ending inside a turn).
    pub fn archived_turns(&self) -> usize {
        self.summary().map_or(0, |record| record.archived_turns)
    }

    /// Steps archived by summaries: steps `0..archived_steps()` (see
    /// [`Window::step_starts`]) are replaced by the summary. Their turns' USER messages are
    /// archived with them, except the USER message of a turn whose later steps are still
    /// sent. O(log steps).
    pub fn archived_steps(&self) -> usize {
        self.summary().map_or(0, |record| self.ledger.unit_of(record.archive_end()).unwrap_or(0))
    }

    /// The ledger index where the archive ends: the first message of the first step not
    /// archived (the first USER message before any summary).
    pub(super) fn archive_end(&self) -> usize {
        match self.summary() {
            Some(record) => record.archive_end(),
            None => self.ledger.turns.first().map_or(0, |turn| turn.first),
        }
    }

    /// The context limit summaries are fitted to: the `context_limit` setting, else the
    /// model table's, else the history budget.
    pub fn context_limit(&self) -> u32 {
        self.known_context_limit().unwrap_or(self.settings.history_budget)
    }

    /// Records the prompt total the provider reported for the last request (from
    /// [`Window::observe_usage`]), which the `summary` strategy's trigger also watches. A
    /// rewind or an accepted summary forgets it.
    pub(crate) fn record_prompt_total(&mut self, prompt_tokens: u64) {
        self.wire.prompt_total = Some(prompt_tokens);
    }

    /// The summary request handed out and not yet answered, if any.
    pub fn pending_summary(&self) -> Option<PendingSummary> {
        self.policy.pending_summary
    }

    /// The last prompt total recorded with [`Window::record_prompt_total`].
    pub fn prompt_total(&self) -> Option<u64> {
        self.wire.prompt_total
    }

    /// True when a summary should be asked for: with `sliding` (and the other strategies that
    /// drop), steps were pruned since the last summary, a one-task loop's oldest steps
    /// included; with `summary`, live tokens or the provider's last prompt total reach
    /// `threshold` of the context limit, or the history budget already pushed steps out of
    /// the view (with a small context limit the output reserve can leave less room than the
    /// threshold), and the view is over `low_water` of its limit with a step besides the
    /// newest ones to archive.
    pub fn needs_summary(&self) -> bool {
        if self.summary_target() <= self.archived_steps() {
            return false;
        }
        match self.settings.strategy {
            StrategyName::Sliding | StrategyName::DropOldest | StrategyName::Tiered | StrategyName::Monologue => true,
            StrategyName::Summary => {
                let trigger = self.settings.threshold.of(self.context_limit());
                let pruned = self.policy.first_unit > self.archived_steps();
                pruned
                    || u64::from(self.live_tokens().tokens) >= trigger
                    || self.wire.prompt_total.is_some_and(|total| total >= trigger)
            }
        }
    }

    /// One past the last step a summary would archive now.
    fn summary_target(&self) -> usize {
        match self.settings.strategy {
            StrategyName::Sliding | StrategyName::DropOldest | StrategyName::Tiered | StrategyName::Monologue => {
                self.policy.first_unit
            }
            StrategyName::Summary => self.summary_strategy_target(),
        }
    }

    /// The `summary` strategy's target: the oldest steps go (those already out of the view
    /// first) until the view's history is within `low_water` of the history limit, as the
    /// sliding window prunes; never the newest `keep_recent_steps` steps, nor into a newest
    /// turn of fewer steps (a chat's newest turn stays whole). An older turn goes whole (as
    /// before steps: its USER message and final answer go with its work); only the newest
    /// turn, a running tool loop, is cut at a step. So the view after a summary is less than
    /// one turn (one step, inside the newest turn) under the low-water mark.
    fn summary_strategy_target(&self) -> usize {
        let newest = self.ledger.units.len().saturating_sub(1);
        let latest = self.latest_first_step();
        let from = self.archived_steps().max(self.policy.first_unit).min(latest);
        let low = self.settings.low_water.floor_of(self.available_for_history());
        // History from a step on shrinks with the step: binary search, O(log² steps).
        let (mut lo, mut hi) = (from, latest);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.ledger.history_kept_from(mid, self.wire.calibration) > low { lo = mid + 1 } else { hi = mid }
        }
        let turn = self.ledger.turn_of_unit(lo);
        match turn == self.ledger.turn_of_unit(newest) || self.ledger.first_unit_of(turn) == lo {
            true => lo,
            false => self.ledger.first_unit_of(turn + 1),
        }
    }

    /// Makes `record` (its `tokens_after` still to learn) the newest compaction: a summary
    /// request built before is answered by it, the provider's last prompt total no longer
    /// describes the view, and the strategy re-runs over what is left.
    pub(super) fn accept_compaction(&mut self, record: CompactionRecord) {
        self.policy.compactions.push(record);
        self.refloor();
        self.policy.pending_summary = None;
        self.wire.prompt_total = None;
        self.bump_generation();
        self.enforce();
        let tokens_after = self.live_tokens().tokens;
        if let Some(record) = self.policy.compactions.last_mut() {
            record.tokens_after = tokens_after;
        }
    }

    /// The prompt to send to the agent's LLM: the steps to archive and the summary in place,
    /// fitted to the context limit minus `summary_budget`. Remembers what it covers for
    /// [`Window::set_summary`]; works whether or not the trigger has fired. This is the
    /// standalone request whatever the `summary_request` setting says:
    /// [`crate::json::summary_request`] builds the one the setting asks for (as the C API
    /// does).
    pub fn summary_request(&mut self) -> Result<String> {
        let (prompt, pending) = self.build_summary_request()?;
        self.await_summary(pending);
        Ok(prompt)
    }

    /// Makes `pending` (from [`Window::build_summary_request`]) the request
    /// [`Window::set_summary`] answers.
    pub fn await_summary(&mut self, pending: PendingSummary) {
        self.policy.pending_summary = Some(pending);
    }

    /// [`Window::summary_request`] without remembering the request: the prompt and what it
    /// covers, for a caller that hands the prompt on before committing to it.
    pub fn build_summary_request(&self) -> Result<(String, PendingSummary)> {
        self.summary_prompt(self.summary_steps()?, self.summary_request_budget(), false)
    }

    /// The steps a summary request covers now: from the end of the archive to the
    /// strategy's target. OUT_OF_RANGE when there are none.
    pub fn summary_steps(&self) -> Result<Range<usize>> {
        let (first, target) = (self.archived_steps(), self.summary_target());
        if target <= first {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                "nothing to summarise: no step left the window since the last summary",
            ));
        }
        Ok(first..target)
    }

    /// Tokens a summary request may hold: the context limit less room for the answer (the
    /// summary, and never less than the output reserve).
    pub fn summary_request_budget(&self) -> u64 {
        u64::from(self.context_limit().saturating_sub(self.settings.summary_budget.max(self.output_reserve())))
    }

    /// The standalone prompt for as many of `steps` (from the end of the archive on) as fit
    /// `budget` tokens, rolling up the summary in place, and what it covers; with `bare`, the
    /// transcript of those steps alone, without instructions.
    pub fn summary_prompt(&self, steps: Range<usize>, budget: u64, bare: bool) -> Result<(String, PendingSummary)> {
        let first_step = steps.start;
        let parts: Vec<_> = steps.map(|unit| self.ledger.unit_range(unit)).collect();
        let prompt = Request {
            model: &self.model,
            // A provider's compaction is the first message of the steps the request covers.
            previous: self.sent_summary().map(|record| &*record.summary),
            messages: &self.ledger.messages,
            steps: &parts,
            budget,
            summary_budget: self.settings.summary_budget,
            bare,
        }
        .build()
        .map_err(|e| Error::new(e.kind(), format!("{} (context limit {})", e.message(), self.context_limit())))?;
        let pending = PendingSummary { generation: self.policy.generation, first_step, end_step: first_step + prompt.steps };
        Ok((prompt.text, pending))
    }

    /// History tokens archiving steps `steps` takes out of the view: theirs, and the USER
    /// message of a turn the archive then leaves, less that of a turn it then ends inside.
    fn archived_history(&self, steps: Range<usize>) -> u64 {
        let calibration = self.wire.calibration;
        self.ledger.history_kept_from(steps.start, calibration) - self.ledger.history_kept_from(steps.end, calibration)
    }

    /// Takes the LLM's answer to the request built at `generation`: the summary replaces the
    /// previous one and the steps the request covered are archived (kept, not sent). A
    /// compaction record stamped `timestamp` (Unix seconds) is kept.
    ///
    /// The answer may come steps late (an agent goes on working while its LLM writes it):
    /// it is taken while the request still applies, whatever the window did meanwhile, since
    /// the steps it covers are still the next ones to archive: no summary was accepted since
    /// (nor a rewind, which cancels the request), and every step it covers is still due
    /// ([`Window::summary_steps`] still reaches its end: a larger budget or a new calibration
    /// may have brought them back into the view).
    ///
    /// Refused, changing nothing: no request pending, a `generation` other than the one the
    /// pending request was built at, or a request that no longer applies (MISMATCH); an empty
    /// summary (INVALID_ARG); a summary over `summary_budget` or larger than the previous
    /// summary and steps it replaces (OUT_OF_RANGE).
    pub fn set_summary(&mut self, generation: u32, text: &str, timestamp: u64) -> Result<()> {
        let pending = self.policy.pending_summary.ok_or_else(|| {
            Error::new(
                ErrorKind::Mismatch,
                "no summary request is pending: call summary_request first (a rewind cancels a request)",
            )
        })?;
        if generation != pending.generation {
            return Err(Error::new(
                ErrorKind::Mismatch,
                format!(
                    "summary for generation {generation} is stale: the pending request was built at generation {} (the \
                     window is at {}); answer with the generation read when the request was written",
                    pending.generation, self.policy.generation
                ),
            ));
        }
        let due = self.summary_target();
        if pending.first_step != self.archived_steps() || pending.end_step > due {
            return Err(Error::new(
                ErrorKind::Mismatch,
                format!(
                    "summary for generation {generation} is stale: it covers steps {}..{} but steps {}..{due} are due \
                     to be archived now (the window is at generation {}); request the summary again",
                    pending.first_step,
                    pending.end_step,
                    self.archived_steps(),
                    self.policy.generation
                ),
            ));
        }
        if text.trim().is_empty() {
            return Err(Error::invalid_arg("the summary is empty: the history stays as it was"));
        }
        let tokens = self.model.count(text);
        let budget = self.settings.summary_budget;
        if tokens.tokens > budget {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("the summary has {} tokens, more than summary_budget ({budget})", tokens.tokens),
            ));
        }
        let previous = self.sent_summary().map_or(0, |record| u64::from(record.summary_tokens.tokens));
        let archived = self.archived_history(pending.first_step..pending.end_step);
        if u64::from(tokens.tokens) > previous + archived {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "the summary has {} tokens, more than the {} tokens it replaces (previous summary and archived steps)",
                    tokens.tokens,
                    previous + archived
                ),
            ));
        }
        let tokens_before = self.live_tokens().tokens;
        let (cleared_results, cleared_tokens) = self.cleared_now();
        let end = self.ledger.units[pending.end_step];
        self.accept_compaction(CompactionRecord {
            number: self.policy.compactions.len() + 1,
            timestamp,
            summary: text.into(),
            summary_tokens: tokens,
            first_archived: self.archive_end(),
            last_archived: end - 1,
            archived_turns: self.ledger.turn_of(end).unwrap_or(0),
            tokens_before,
            tokens_after: tokens_before,
            provider: false,
            cleared_results,
            cleared_tokens,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Kind;
    use crate::persist;
    use crate::tokens::Count;

    /// A session of `turns` turns of `user` + `tool` tokens, counted, each completed; the
    /// task is not pinned (these tests archive it).
    fn session(config: &str, turns: usize, user: u32, tool: u32) -> Window {
        let mut window = Window::new("gpt-4o");
        window.configure(r#"{"pin_task":false}"#).unwrap();
        window.configure(config).unwrap();
        window.push_counted(Kind::System, Count::exact(50));
        for _ in 0..turns {
            window.push(Kind::User, "Please fix src/lib.rs").unwrap();
            window.push_counted(Kind::Assistant, Count::exact(user));
            window.push_counted(Kind::ToolResult, Count::exact(tool));
            window.end_turn();
        }
        window
    }

    /// Live tokens recomputed from scratch: overhead, pinned head, summary, live turns.
    fn reference_live(window: &Window) -> u64 {
        let overhead = u64::from(window.overhead().system) + u64::from(window.overhead().tools);
        let start = window.start();
        let turns_start = (0..window.turn_count()).map(|t| window.turn_info(t).unwrap().first_message).next();
        let mut total = overhead + window.summary().map_or(0, |r| u64::from(r.summary_tokens.tokens));
        for index in 0..window.message_count() {
            let message = window.message(index).unwrap();
            let pinned = message.kind() == Kind::System || turns_start.is_none_or(|first| index < first);
            if pinned || index >= start {
                total += u64::from(message.count().tokens);
            }
        }
        total
    }

    #[test]
    fn sliding_asks_for_the_pruned_turns_and_archives_them() {
        let mut window = session(r#"{"history_budget":1000,"summary_budget":40}"#, 6, 10, 290);
        assert!(window.first_live_turn() > 0 && window.needs_summary());
        let pruned = window.first_live_turn();
        let request = window.summary_request().unwrap();
        assert!(request.contains("Please fix src/lib.rs") && !request.contains("<previous_summary>"));
        let generation = window.generation();
        window.set_summary(generation, "Original task: fix src/lib.rs. Ledger: [done] read it.", 1234).unwrap();
        assert!(!window.needs_summary());
        assert_ne!(window.generation(), generation);
        let record = window.summary().unwrap().clone();
        assert_eq!((record.number, record.timestamp, record.archived_turns), (1, 1234, pruned));
        assert_eq!(record.first_archived, window.turn_info(0).unwrap().first_message);
        assert_eq!(record.last_archived + 1, window.turn_info(pruned).unwrap().first_message);
        assert_eq!(u64::from(window.live_tokens().tokens), reference_live(&window));
        assert_eq!(record.tokens_after, window.live_tokens().tokens);
        assert_eq!(record.tokens_after, record.tokens_before + record.summary_tokens.tokens);
        assert_eq!(window.message_count(), 1 + 6 * 3, "nothing archived is deleted");
        // The next pruned turn rolls up the previous summary.
        window.push_counted(Kind::User, Count::exact(900));
        window.end_turn();
        assert!(window.needs_summary());
        let request = window.summary_request().unwrap();
        assert!(request.contains("<previous_summary>\nOriginal task: fix src/lib.rs."));
        window.set_summary(window.generation(), "Rolled up.", 1300).unwrap();
        assert_eq!(window.compactions().len(), 2);
        assert_eq!(window.compactions()[1].first_archived, record.last_archived + 1);
    }

    #[test]
    fn every_rejection_leaves_the_window_as_it_was() {
        let mut window = session(r#"{"history_budget":1000,"summary_budget":40}"#, 6, 10, 290);
        let generation = window.generation();
        let err = window.set_summary(generation, "early", 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Mismatch, "{}", err.message());
        window.summary_request().unwrap();
        let before = persist::export(&window);
        let long = "word ".repeat(200);
        let cases = [
            (generation.wrapping_add(1), "stale", ErrorKind::Mismatch, "stale"),
            (generation, "", ErrorKind::InvalidArg, "empty"),
            (generation, " \n\t", ErrorKind::InvalidArg, "empty"),
            (generation, long.as_str(), ErrorKind::OutOfRange, "summary_budget"),
        ];
        for (generation, text, kind, needle) in cases {
            let err = window.set_summary(generation, text, 1).unwrap_err();
            assert_eq!(err.kind(), kind, "{text:?}");
            assert!(err.message().contains(needle), "{}", err.message());
            assert_eq!(persist::export(&window), before, "a failed summary changes nothing");
        }
        // Larger than what it replaces: a tiny archived range.
        let mut small = session(r#"{"history_budget":10,"summary_budget":400}"#, 2, 1, 1);
        small.summary_request().unwrap();
        let before = persist::export(&small);
        let err = small.set_summary(small.generation(), &"many words here ".repeat(5), 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfRange);
        assert!(err.message().contains("replaces"), "{}", err.message());
        assert_eq!(persist::export(&small), before);
        // A boundary move keeps the request while the steps it covers are still due...
        let mut moved = session(r#"{"history_budget":1000,"summary_budget":40}"#, 6, 10, 290);
        moved.summary_request().unwrap();
        let generation = moved.generation();
        moved.set_budget(10).unwrap();
        assert_ne!(moved.generation(), generation, "more turns pruned");
        moved.set_summary(generation, "late", 1).unwrap();
        // ...and makes it stale once they are back in the view.
        let mut back = session(r#"{"history_budget":1000,"summary_budget":40}"#, 6, 10, 290);
        back.summary_request().unwrap();
        let generation = back.generation();
        back.set_budget(100_000).unwrap();
        let before = persist::export(&back);
        let err = back.set_summary(generation, "late", 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Mismatch, "{}", err.message());
        assert!(err.message().contains("stale"), "{}", err.message());
        assert_eq!(persist::export(&back), before);
    }

    /// At a small context limit the automatic output reserve (a quarter) leaves less room
    /// than the threshold (0.85): the history budget prunes first, and that fires the summary.
    #[test]
    fn summary_strategy_fires_when_the_budget_prunes_before_the_threshold() {
        let mut window = session(r#"{"strategy":"summary","context_limit":4000,"summary_budget":300}"#, 2, 10, 290);
        assert!(!window.needs_summary());
        for _ in 0..12 {
            window.push_counted(Kind::User, Count::exact(300));
            window.end_turn();
        }
        let trigger = window.settings().threshold.of(window.context_limit());
        assert!(u64::from(window.live_tokens().tokens) < trigger, "the threshold is out of reach");
        assert!(window.first_live_turn() > 0, "the budget pruned");
        assert!(window.needs_summary(), "turns left the view: a summary is due");
        let pruned = window.first_live_turn();
        window.summary_request().unwrap();
        window.set_summary(window.generation(), "Original task: fix src/lib.rs.", 99).unwrap();
        // The request holds as many turns as fit the limit: at least those the budget pruned.
        assert!(window.archived_turns() >= pruned, "{} archived, {pruned} pruned", window.archived_turns());
    }

    #[test]
    fn summary_strategy_fires_at_the_threshold_and_archives_down_to_low_water() {
        let config = r#"{"strategy":"summary","context_limit":4000,"threshold":0.5,"low_water":0.5,"summary_budget":300}"#;
        let mut window = session(config, 3, 10, 290);
        for _ in 0..2 {
            window.push_counted(Kind::User, Count::exact(300));
            window.end_turn();
        }
        assert!(!window.needs_summary(), "{} live tokens", window.live_tokens().tokens);
        window.record_prompt_total(2000);
        assert!(window.needs_summary(), "the provider's prompt total reached 0.5 of 4000");
        window.record_prompt_total(10);
        for _ in 0..2 {
            window.push_counted(Kind::User, Count::exact(300));
            window.end_turn();
        }
        assert!(window.live_tokens().tokens >= 2000 && window.needs_summary());
        assert_eq!(window.first_live_turn(), 0, "nothing is dropped before the summary arrives");
        let low = window.settings().low_water.floor_of(window.available_for_history());
        assert!(window.view_history().tokens() > low, "the view is over low water: a summary has turns to archive");
        window.summary_request().unwrap();
        window.set_summary(window.generation(), "Original task: fix src/lib.rs.", 99).unwrap();
        // Only the oldest turns went: the view is within one turn under low water.
        let archived = window.archived_turns();
        assert!(archived > 0 && archived < window.turn_count() - 1, "{archived} of {} turns archived", window.turn_count());
        assert_eq!(window.first_live_turn(), archived);
        let history = window.view_history().tokens();
        let last_archived = u64::from(window.turn_info(archived - 1).unwrap().tokens.tokens);
        assert!(history <= low && history + last_archived > low, "history {history}, low water {low}");
        assert!(!window.needs_summary());
        assert!(window.prompt_total().is_none());
        let record = window.summary().unwrap();
        assert!(record.tokens_after < record.tokens_before);
        assert_eq!(u64::from(window.live_tokens().tokens), reference_live(&window));
        // The view grows back to the limit before the next summary or prune: the archived
        // turns no longer count against it.
        let (first, limit) = (window.first_live_turn(), window.available_for_history());
        while window.view_history().tokens() + 300 <= limit {
            window.push_counted(Kind::User, Count::exact(300));
            window.end_turn();
            assert_eq!(window.first_live_turn(), first, "pruned at {} of {limit}", window.view_history().tokens());
        }
    }

    #[test]
    fn a_range_too_large_for_one_prompt_is_asked_for_in_parts() {
        let mut window = Window::new("gpt-4o");
        window.configure(r#"{"strategy":"summary","context_limit":3000,"summary_budget":200}"#).unwrap();
        let file = "fn main() { println!(\"hello\"); }\n".repeat(60);
        for _ in 0..10 {
            window.push(Kind::User, "Read src/main.rs").unwrap();
            window.push(Kind::ToolResult, &file).unwrap();
            window.end_turn();
        }
        let mut parts = 0;
        while window.needs_summary() {
            let request = window.summary_request().unwrap();
            let tokens = window.model().count(&request).tokens;
            assert!(tokens + 200 <= 3000, "request of {tokens} tokens does not fit");
            window.set_summary(window.generation(), &format!("Part {parts} read src/main.rs."), 5).unwrap();
            parts += 1;
            assert!(parts < 10);
        }
        assert!(parts > 1, "the pruned turns of ~{} tokens each need several parts", window.message(1).unwrap().count().tokens);
        assert_eq!(window.compactions().len(), parts);
        assert_eq!(window.archived_turns(), window.first_live_turn(), "every pruned turn is summarised");
    }

    #[test]
    fn truncating_into_an_archived_range_drops_its_record() {
        let mut window = session(r#"{"history_budget":1000,"summary_budget":40}"#, 6, 10, 290);
        window.summary_request().unwrap();
        window.set_summary(window.generation(), "first", 1).unwrap();
        for _ in 0..3 {
            window.push_counted(Kind::User, Count::exact(400));
            window.end_turn();
        }
        window.summary_request().unwrap();
        window.set_summary(window.generation(), "second", 2).unwrap();
        let first = window.compactions()[0].clone();
        let second = window.compactions()[1].clone();
        let generation = window.generation();
        window.truncate(second.last_archived + 1).unwrap();
        assert_eq!(window.compactions().len(), 1, "no live turn follows the second range any more");
        assert_eq!(&*window.summary().unwrap().summary, "first");
        assert_ne!(window.generation(), generation);
        assert!(window.first_live_turn() >= first.archived_turns);
        assert_eq!(u64::from(window.live_tokens().tokens), reference_live(&window));
        window.truncate(first.last_archived).unwrap();
        assert!(window.summary().is_none());
        window.reset();
        assert!(window.compactions().is_empty() && !window.needs_summary());
        assert_eq!(window.summary_request().unwrap_err().kind(), ErrorKind::OutOfRange);
    }
}
