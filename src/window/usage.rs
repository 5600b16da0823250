//! Learning from the usage a provider reports: a request's prompt total calibrates the
//! estimated counts it held ([`crate::tokens::Calibration`]: a ratio and an undeclared
//! overhead), once per report, and only from a report the request could explain.
//!
//! **A report counts once.** A report is identified by the request it answers (its range
//! `first..end` and, when it is the request last prepared or rendered, that render: each
//! `prepare`, `render_json` or `render_request` is a request of its own) and by its numbers
//! (the prompt total, and from a usage object the cached and tool-use parts). The same report
//! observed again (a stream's `message_start` and its `message_delta`, every Gemini chunk)
//! changes nothing and succeeds. Another report for the request last prepared or rendered (a
//! later chunk with the final counts) replaces the earlier one in the calibration and the
//! cache statistics; for a range that is not that request's, other numbers are another
//! request's report (a host that sends the same messages again without a `prepare` or render
//! in between). A rewind, a reset, a new model or a report for another request ends that.

use super::Window;
use crate::cache::{CacheStats, Usage};
use crate::error::{Error, ErrorKind, Result};
use crate::tally::Tally;
use crate::tokens::{Calibration, Count};

/// The request a usage report answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ReportKey {
    first: usize,
    end: usize,
    /// The render of the request last prepared or rendered, when the report is for it.
    render: Option<u64>,
}

/// The report last observed, and what the window had learned before it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct LastReport {
    key: ReportKey,
    usage: Usage,
    calibration_before: Calibration,
    stats_before: CacheStats,
}

impl Window {
    /// Learns from a provider's usage report: the request that carried the overhead, the
    /// pinned messages before `end`, the summary in place and the messages `first..end` cost
    /// `prompt_tokens` (which the `summary` strategy's trigger also watches). When
    /// `first..end` is the range of the request last rendered, the report is judged against
    /// what that request sent (see [`super::LastRequest::sent`]: under `tiered` or
    /// `monologue`, the cut and written items); otherwise against the messages of the range
    /// as pushed. The part of the report above the exact counts calibrates the estimated ones
    /// (see [`Calibration`]); later totals scale every estimate by the learned ratio (raw
    /// counts stay cached), add the learned overhead, and the strategy is re-enforced. A
    /// range of exact counts only teaches nothing. The same report twice counts once (see
    /// the module docs).
    ///
    /// Errors (nothing changes): OUT_OF_RANGE for a range not within the window, INVALID_ARG
    /// for a negative total, MISMATCH for a total below the exact part of the request, not
    /// above it while the request holds estimates, or above what the request could hold
    /// ([`Calibration::most_explained`]).
    pub fn observe_usage(&mut self, first: usize, end: usize, prompt_tokens: i64) -> Result<()> {
        let (key, sent) = self.range_request(first, end)?;
        self.observe_report(key, sent, plain_usage(prompt_tokens)?, false)
    }

    /// The request of the messages `first..end` as a usage report sees it: the request last
    /// rendered when that is its range, else the messages as pushed.
    pub(super) fn range_request(&self, first: usize, end: usize) -> Result<(ReportKey, Tally)> {
        if first > end || end > self.ledger.messages.len() {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("usage range {first}..{end} is not within the window's {} messages", self.ledger.messages.len()),
            ));
        }
        Ok(match self.last_request() {
            Some(request) if (request.first, request.end) == (first, end) => {
                (ReportKey { first, end, render: Some(request.render) }, request.sent)
            }
            _ => (ReportKey { first, end, render: None }, self.range_sent(first, end)),
        })
    }

    /// The request last prepared or rendered, as a usage report sees it.
    pub(super) fn last_request_report(&self) -> Result<(ReportKey, Tally)> {
        let request = self.last_request().ok_or_else(|| {
            Error::new(
                ErrorKind::Mismatch,
                "no request to attribute the usage to: none was rendered since the window was created, \
                 reset, restored or rewound before its end",
            )
        })?;
        Ok((ReportKey { first: request.first, end: request.end, render: Some(request.render) }, request.sent))
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

    /// Takes the report `usage` for the request `key`, which held `sent` (before
    /// calibration); `object` when it came as a usage object (counted in the cache
    /// statistics). Checks it, counts it once, and learns from it.
    pub(super) fn observe_report(&mut self, key: ReportKey, sent: Tally, usage: Usage, object: bool) -> Result<()> {
        let reported = usage.sent_tokens();
        check_report(sent, reported)?;
        let (mut calibration, mut stats) = (self.wire.calibration, self.wire.cache.stats);
        if let Some(last) = self.wire.last_report.filter(|last| last.key == key) {
            if same_numbers(last.usage, usage) {
                return Ok(()); // the same report again: it counted already
            }
            if key.render.is_some() {
                // Another report for the same render replaces the earlier one.
                (calibration, stats) = (last.calibration_before, last.stats_before);
            }
        }
        self.wire.last_report = Some(LastReport { key, usage, calibration_before: calibration, stats_before: stats });
        self.record_prompt_total(reported);
        if object {
            stats.add(usage);
        }
        self.wire.cache.stats = stats;
        if sent.estimated > 0 {
            calibration.observe(reported - sent.exact, sent.estimated);
        }
        self.set_calibration(calibration);
        Ok(())
    }

    /// Scales the estimates by `calibration` from now on, re-enforcing the strategy when it
    /// changed. The new tokens alone keep the generation (they change what the window
    /// counts, not what it sends); steps the strategy drops for them change it.
    fn set_calibration(&mut self, calibration: Calibration) {
        if calibration == self.wire.calibration {
            return;
        }
        self.wire.calibration = calibration;
        self.rebuild_tallies();
        self.policy.costs.clear();
        self.enforce();
    }

    /// Real tokens per estimated token, as learned by [`Window::observe_usage`] (1 before).
    pub fn calibration_ratio(&self) -> f64 {
        self.wire.calibration.ratio()
    }

    /// The overhead every request holds that was not declared with
    /// [`Window::set_overhead`], as learned by [`Window::observe_usage`] (0 before): an
    /// estimate, part of every request's tokens.
    pub fn learned_overhead(&self) -> Count {
        Count::estimate(crate::tokens::saturate_u32(self.wire.calibration.overhead()))
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

/// Whether two reports state the same numbers (as a usage object or as a total).
fn same_numbers(a: Usage, b: Usage) -> bool {
    (a.prompt_tokens, a.cached_tokens, a.tool_use_tokens) == (b.prompt_tokens, b.cached_tokens, b.tool_use_tokens)
}

/// A prompt total given as a number, as a report of no provider's shape.
pub(super) fn plain_usage(prompt_tokens: i64) -> Result<Usage> {
    let prompt_tokens = u64::try_from(prompt_tokens)
        .map_err(|_| Error::invalid_arg(format!("prompt tokens must not be negative (got {prompt_tokens})")))?;
    Ok(Usage { prompt_tokens, ..Usage::default() })
}

/// Refuses a report the request that held `sent` could not explain: a total below its exact
/// part, one not above it while it holds estimates (nothing to learn the estimates from), or
/// one above the most its estimated part and an undeclared overhead could hold.
fn check_report(sent: Tally, reported: u64) -> Result<()> {
    let mismatch = |problem: String| Err(Error::new(ErrorKind::Mismatch, problem));
    if reported < sent.exact || (sent.estimated > 0 && reported == sent.exact) {
        let relation = if reported < sent.exact { "is below" } else { "does not exceed" };
        return mismatch(format!(
            "reported prompt total {reported} {relation} the exact part of the request ({} tokens)",
            sent.exact
        ));
    }
    let most = sent.exact.saturating_add(Calibration::most_explained(sent.estimated));
    if reported > most {
        return mismatch(format!(
            "reported prompt total {reported} is more than the request could hold: at most {most} ({} exact, \
             {} estimated at up to {} times, and {} tokens of overhead not declared); declare what every request \
             sends with set_overhead",
            sent.exact,
            sent.estimated,
            Calibration::MAX_RATIO,
            Calibration::MAX_OVERHEAD
        ));
    }
    Ok(())
}
