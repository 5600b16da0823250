//! Learning from the usage a provider reports: a request's prompt total calibrates the
//! estimated counts it held.

use super::Window;
use crate::error::{Error, ErrorKind, Result};
use crate::tally::Tally;
use crate::tokens::{Calibration, Count};

impl Window {
    /// Learns from a provider's usage report: the request that carried the overhead, the
    /// pinned messages before `end`, the summary in place and the messages `first..end` cost
    /// `prompt_tokens` (which the `summary` strategy's trigger also watches). When
    /// `first..end` is the range of the request last rendered, the report is judged against
    /// what that request sent (see [`LastRequest::sent`]: under `tiered` or `monologue`, the
    /// cut and written items); otherwise against the messages of the range as pushed. The
    /// part of the report above the exact counts calibrates the estimated ones; later
    /// totals scale every estimate by the learned ratio (raw counts stay cached) and the
    /// strategy is re-enforced. A range of exact counts only teaches nothing.
    pub fn observe_usage(&mut self, first: usize, end: usize, prompt_tokens: i64) -> Result<()> {
        if first > end || end > self.ledger.messages.len() {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("usage range {first}..{end} is not within the window's {} messages", self.ledger.messages.len()),
            ));
        }
        let sent = match self.last_request() {
            Some(request) if (request.first, request.end) == (first, end) => request.sent,
            _ => self.range_sent(first, end),
        };
        self.learn_usage(sent, prompt_tokens)
    }

    /// What a request of the messages `first..end` holds as pushed, counted before
    /// calibration: the overhead, the summary in place, the pinned messages before `end` and
    /// the messages of the range.
    fn range_sent(&self, first: usize, end: usize) -> Tally {
        let mut request = self.overhead_tally();
        if let Some(summary) = self.sent_summary() {
            request.add(summary.summary_tokens);
        }
        for (index, message) in self.ledger.messages[..end].iter().enumerate() {
            if index >= first || self.is_pinned(index, message.kind()) {
                request.add(message.count());
            }
        }
        request
    }

    /// [`Window::observe_usage`] once the request is known: `request` held these tokens
    /// (before calibration) and the provider reported `prompt_tokens`.
    pub(super) fn learn_usage(&mut self, request: Tally, prompt_tokens: i64) -> Result<()> {
        let reported = u64::try_from(prompt_tokens)
            .map_err(|_| Error::invalid_arg(format!("prompt tokens must not be negative (got {prompt_tokens})")))?;
        // The provider's total covers at least the exact counts; with estimates in the request
        // it must exceed them, or there is nothing to learn the estimates' ratio from.
        let real = reported.saturating_sub(request.exact);
        if reported < request.exact || (request.estimated > 0 && real == 0) {
            return Err(Error::new(
                ErrorKind::Mismatch,
                format!(
                    "reported prompt total {reported} {} the exact part of the request ({} tokens)",
                    if reported < request.exact { "is below" } else { "does not exceed" },
                    request.exact
                ),
            ));
        }
        // Only an accepted report is recorded: a refused one changes nothing.
        self.record_prompt_total(reported);
        if request.estimated == 0 {
            return Ok(());
        }
        let (ratio, generation) = (self.wire.calibration.ratio(), self.policy.generation);
        self.wire.calibration.observe(real, request.estimated);
        self.rebuild_tallies();
        self.policy.costs.clear();
        self.enforce();
        // A new ratio changes the tokens of the estimated items even when the boundary stays
        // (a computed view's items already differ, which bumped it), and the generation
        // marks every change of the view.
        if self.policy.generation == generation && self.wire.calibration.ratio() != ratio {
            self.bump_generation();
        }
        Ok(())
    }

    /// Real tokens per estimated token, as learned by [`Window::observe_usage`] (1 before).
    pub fn calibration_ratio(&self) -> f64 {
        self.wire.calibration.ratio()
    }

    /// What the window learned from provider usage.
    pub fn calibration(&self) -> Calibration {
        self.wire.calibration
    }

    /// `count` as the window uses it: estimates scaled by the calibration. Every total the
    /// window keeps sums these, so a new ratio re-sums the cached counts (nothing is
    /// recounted).
    pub fn calibrated(&self, count: Count) -> Count {
        crate::ledger::calibrated(self.wire.calibration, count)
    }
}
