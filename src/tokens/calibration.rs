//! Calibration of estimates from the prompt totals a provider reports.
//!
//! A window whose model has no public tokenizer learns from each report how the provider's
//! real count of a request relates to its own estimate, and scales every estimated count by
//! what it learned. Raw estimates stay cached in the ledger; only the fit changes, so nothing
//! is recounted.
//!
//! **The fit.** A report says that a request whose estimated part was `x` tokens (its exact
//! part, the declared overhead included, taken away) really held `y` tokens. The window fits
//! `y = overhead + ratio * x`: `ratio` scales every estimate, and `overhead` is what every
//! request holds that the host did not declare ([`Calibration::overhead`]: a system prompt or
//! tool definitions not given to `set_overhead`, the provider's framing of the request), a
//! constant that a ratio alone can only mimic by growing every estimate. The fit is weighted
//! least squares where a report weighs its estimated tokens (the error of an estimate grows
//! with its size), recent reports weigh most ([`DECAY`]), and two priors keep one report
//! from swinging it: the ratio counts as [`PRIOR_TOKENS`] estimated tokens seen at ratio 1,
//! and the overhead as a weak pull to 0 ([`PRIOR_OVERHEAD`]). With one report the ratio stays
//! near 1 and the overhead takes the difference; reports of requests of other sizes tell the
//! two apart. Both stay within bounds: the ratio within [`Calibration::MIN_RATIO`]..[`Calibration::MAX_RATIO`], the
//! overhead within 0..[`Calibration::MAX_OVERHEAD`].
//!
//! **What a report can say.** A request of `x` estimated tokens could hold at most
//! [`Calibration::most_explained`]`(x)` real tokens beyond its exact part: its estimate at
//! the highest ratio the estimator's error allows, plus the largest undeclared overhead.
//! The estimator's error is measured (`cargo bench --bench calibration` prints its tails): on
//! 8,000 real texts per family, with the estimator refitted without that family's vendor,
//! the p99 of the absolute error is 17% to 31% (Mistral Tekken the worst) and the largest
//! single-text error 74% (Gemma 3). A request sums many texts, whose errors partly cancel, so
//! it holds at most twice its estimate; a small request (one short text, where a single
//! text's error could go further) is covered by the undeclared overhead allowed. A report
//! above that is refused by the window: no request could explain it.

/// How much an earlier report still weighs when a new one arrives: recent requests count
/// most, so the fit follows a conversation whose content shifts (prose to code).
const DECAY: f64 = 0.8;
/// The ratio's prior: it counts as this many estimated tokens seen at ratio 1, so a small
/// first report (78 estimated tokens reported as 162) cannot swing it.
const PRIOR_TOKENS: f64 = 4096.0;
/// The overhead's prior, a pull to 0 as weak as a report of a million estimated tokens: the
/// reports, not the prior, decide the overhead.
const PRIOR_OVERHEAD: f64 = 1.0 / 1_048_576.0;
/// See [`Calibration::MIN_RATIO`].
const MIN_RATIO: f64 = Calibration::MIN_RATIO;
/// See [`Calibration::MAX_RATIO`].
const MAX_RATIO: f64 = Calibration::MAX_RATIO;
/// See [`Calibration::MAX_OVERHEAD`].
const MAX_OVERHEAD: u64 = Calibration::MAX_OVERHEAD;

/// What the window learned from provider reports: the ratio of real tokens to estimated
/// tokens, and the overhead every request holds that the host did not declare.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    sums: Sums,
    ratio: f64,
    overhead: f64,
}

impl Default for Calibration {
    fn default() -> Calibration {
        Calibration { sums: Sums::default(), ratio: 1.0, overhead: 0.0 }
    }
}

/// The decayed sums of the reports, each weighing `1 / x` (`x` its estimated tokens, `y` its
/// real ones): the sufficient statistics of the weighted least-squares fit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sums {
    /// Σ w·y: the real tokens.
    real: f64,
    /// Σ w·x: the estimated tokens.
    estimated: f64,
    /// Σ w: the reports.
    reports: f64,
    /// Σ w/x.
    inverse: f64,
    /// Σ w·y/x: the reports' ratios.
    ratios: f64,
}

/// The sums a window saves ([`Calibration::state`]); a document saved before the overhead
/// was learned holds `real` and `estimated` only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CalibrationState {
    /// The decayed sum of the real tokens reported.
    pub real: f64,
    /// The decayed sum of the estimated tokens they were reported for.
    pub estimated: f64,
    /// The decayed number of reports, `None` in an older document.
    pub reports: Option<f64>,
    /// The decayed sum of `1 / estimated` of the reports, `None` in an older document.
    pub inverse: Option<f64>,
    /// The decayed sum of the reports' ratios, `None` in an older document.
    pub ratios: Option<f64>,
}

impl Calibration {
    /// The least learned ratio: the estimator's error (its p99 is at most 31% on every
    /// family held out, see the module docs) keeps a request's real count within half and
    /// twice its estimate.
    pub const MIN_RATIO: f64 = 0.5;
    /// The most learned ratio (see [`Calibration::MIN_RATIO`]).
    pub const MAX_RATIO: f64 = 2.0;
    /// The largest overhead learned without being declared: a coding agent's system prompt
    /// and tool definitions (about 15,000 tokens for Claude Code's own) fit; an agent that
    /// sends more declares it with `set_overhead`.
    pub const MAX_OVERHEAD: u64 = 32_768;

    /// Records that a request whose estimated part was `estimated` tokens held `real` tokens
    /// beyond its exact part, and fits the ratio and overhead again.
    pub fn observe(&mut self, real: u64, estimated: u64) {
        if estimated == 0 {
            return;
        }
        let (x, y) = (estimated as f64, real as f64);
        let s = &mut self.sums;
        s.real = s.real * DECAY + y;
        s.estimated = s.estimated * DECAY + x;
        s.reports = s.reports * DECAY + 1.0;
        s.inverse = s.inverse * DECAY + 1.0 / x;
        s.ratios = s.ratios * DECAY + y / x;
        self.fit();
    }

    /// Solves the penalised weighted least squares of `y = overhead + ratio * x` over the
    /// sums (see the module docs), within the bounds: a bound met fixes that parameter and
    /// the other is fitted again given it.
    fn fit(&mut self) {
        let s = self.sums;
        if s.reports <= 0.0 {
            (self.ratio, self.overhead) = (1.0, 0.0);
            return;
        }
        // Normal equations: overhead·(inverse + P_a) + ratio·reports = ratios,
        //                   overhead·reports + ratio·(estimated + P_b) = real + P_b.
        let (a11, a12, a22) = (s.inverse + PRIOR_OVERHEAD, s.reports, s.estimated + PRIOR_TOKENS);
        let (b1, b2) = (s.ratios, s.real + PRIOR_TOKENS);
        let det = a11 * a22 - a12 * a12;
        let mut ratio = (a11 * b2 - a12 * b1) / det;
        let mut overhead = (b1 * a22 - a12 * b2) / det;
        if !(MIN_RATIO..=MAX_RATIO).contains(&ratio) {
            ratio = ratio.clamp(MIN_RATIO, MAX_RATIO);
            overhead = (b1 - ratio * a12) / a11;
        }
        if !(0.0..=MAX_OVERHEAD as f64).contains(&overhead) {
            overhead = overhead.clamp(0.0, MAX_OVERHEAD as f64);
            ratio = ((b2 - overhead * a12) / a22).clamp(MIN_RATIO, MAX_RATIO);
        }
        (self.ratio, self.overhead) = (ratio, overhead);
    }

    /// Real tokens per estimated token; 1 before any report.
    pub fn ratio(&self) -> f64 {
        self.ratio
    }

    /// Tokens every request holds that the host did not declare, as learned; 0 before any
    /// report.
    pub fn overhead(&self) -> u64 {
        self.overhead.round() as u64
    }

    /// The most real tokens beyond its exact part a request of `estimated` estimated tokens
    /// could hold: its estimate at [`Calibration::MAX_RATIO`] plus [`Calibration::MAX_OVERHEAD`] undeclared.
    pub fn most_explained(estimated: u64) -> u64 {
        (estimated as f64 * MAX_RATIO).ceil() as u64 + MAX_OVERHEAD
    }

    /// The learned sums, for saving.
    pub fn state(&self) -> CalibrationState {
        let s = self.sums;
        CalibrationState {
            real: s.real,
            estimated: s.estimated,
            reports: Some(s.reports),
            inverse: Some(s.inverse),
            ratios: Some(s.ratios),
        }
    }

    /// A calibration with saved sums; `None` unless every sum is finite and non-negative.
    /// A document saved before the overhead was learned (sums of real and estimated tokens
    /// only) reads as one report of those sums: its ratio, now under the prior.
    pub fn from_state(state: CalibrationState) -> Option<Calibration> {
        let CalibrationState { real, estimated, .. } = state;
        let single = |value: f64| if estimated > 0.0 { value } else { 0.0 };
        let sums = Sums {
            real,
            estimated,
            reports: state.reports.unwrap_or(single(1.0)),
            inverse: state.inverse.unwrap_or(single(1.0 / estimated)),
            ratios: state.ratios.unwrap_or(single(real / estimated)),
        };
        let valid = |x: f64| x.is_finite() && x >= 0.0;
        if ![sums.real, sums.estimated, sums.reports, sums.inverse, sums.ratios].into_iter().all(valid) {
            return None;
        }
        let mut calibration = Calibration { sums, ..Calibration::default() };
        calibration.fit();
        Some(calibration)
    }

    /// `estimated` tokens scaled by the ratio, rounded to the nearest token.
    pub fn apply(&self, estimated: u64) -> u64 {
        if self.ratio == 1.0 { estimated } else { (estimated as f64 * self.ratio).round() as u64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibrated(reports: &[(u64, u64)]) -> Calibration {
        let mut calibration = Calibration::default();
        for &(real, estimated) in reports {
            calibration.observe(real, estimated);
        }
        calibration
    }

    #[test]
    fn learns_the_ratio_and_applies_it() {
        let mut calibration = Calibration::default();
        assert_eq!(calibration.apply(1000), 1000);
        // Requests of several sizes, each 20% more than its estimate: a ratio, no overhead.
        for estimated in [10_000, 20_000, 40_000, 80_000] {
            calibration.observe(estimated * 12 / 10, estimated);
        }
        // The prior still pulls the ratio a little towards 1, and the overhead makes up for
        // it: the largest request is predicted within 1%.
        assert!((calibration.ratio() - 1.2).abs() < 0.02, "{calibration:?}");
        let predicted = (calibration.overhead() + calibration.apply(80_000)) as f64;
        assert!((predicted / 96_000.0 - 1.0).abs() < 0.01, "{calibration:?}");
        let scaled = calibration.apply(500);
        assert!((590..=600).contains(&scaled), "{scaled}");
        let before = calibration;
        calibration.observe(0, 0);
        assert_eq!(calibration, before, "a report of no estimated tokens teaches nothing");
    }

    /// Issue 26: 78 estimated tokens reported as 162 set a ratio of 1.6 (2.08 unclamped);
    /// the prior keeps it near 1 and the difference is taken as overhead.
    #[test]
    fn one_small_report_does_not_swing_the_ratio() {
        let calibration = calibrated(&[(162, 78)]);
        assert!((calibration.ratio() - 1.0).abs() < 0.01, "{calibration:?}");
        assert_eq!(calibration.overhead(), 84);
        // A large request is evidence: its ratio moves the fit.
        let calibration = calibrated(&[(130_000, 100_000)]);
        assert!(calibration.ratio() > 1.2, "{calibration:?}");
    }

    /// Issue 26: an agent that never declared its overhead reports it with every request; a
    /// ratio alone was pinned at its clamp. The fit finds the constant and the ratio.
    #[test]
    fn learns_an_undeclared_overhead_as_an_intercept() {
        // 12,000 tokens never declared; the provider counts 1,000 for every 900 estimated.
        let reports: Vec<(u64, u64)> = (1..=12).map(|step| (12_000 + step * 1_000, step * 900)).collect();
        let calibration = calibrated(&reports);
        assert!((calibration.ratio() - 1.11).abs() < 0.05, "{calibration:?}");
        assert!((11_000..=13_000).contains(&calibration.overhead()), "{calibration:?}");
        // From the second report on, the fit predicts the next request within a few percent.
        let mut calibration = calibrated(&reports[..2]);
        for &(real, estimated) in &reports[2..] {
            let predicted = calibration.overhead() + calibration.apply(estimated);
            assert!((predicted as f64 - real as f64).abs() / (real as f64) < 0.05, "{predicted} for {real}");
            calibration.observe(real, estimated);
        }
    }

    #[test]
    fn the_fit_stays_within_its_bounds() {
        let calibration = calibrated(&[(1_000_000_000, 1)]);
        assert_eq!(calibration.overhead(), MAX_OVERHEAD);
        let calibration = calibrated(&[(4_000_000, 1_000_000), (8_000_000, 2_000_000)]);
        assert_eq!(calibration.ratio(), MAX_RATIO);
        let calibration = calibrated(&[(1, 1_000_000), (2, 2_000_000)]);
        assert_eq!(calibration.ratio(), MIN_RATIO);
        assert_eq!(calibration.overhead(), 0);
        assert_eq!(Calibration::most_explained(11), 22 + MAX_OVERHEAD);
    }

    #[test]
    fn apply_is_monotone() {
        let calibration = calibrated(&[(1337, 1000), (20_000, 15_000)]);
        let mut previous = 0;
        for n in 0..5000 {
            let scaled = calibration.apply(n);
            assert!(scaled >= previous);
            previous = scaled;
        }
    }

    #[test]
    fn the_state_round_trips_and_older_documents_read() {
        let calibration = calibrated(&[(1337, 1000), (20_000, 15_000), (31_000, 24_000)]);
        assert_eq!(Calibration::from_state(calibration.state()), Some(calibration));
        // Saved before the overhead: one report of the sums, under the prior.
        let old = CalibrationState { real: 12_000.0, estimated: 10_000.0, ..CalibrationState::default() };
        let read = Calibration::from_state(old).unwrap();
        assert_eq!(read, calibrated(&[(12_000, 10_000)]));
        assert_eq!(Calibration::from_state(CalibrationState::default()), Some(Calibration::default()));
        let negative = CalibrationState { inverse: Some(-1.0), ..calibration.state() };
        assert_eq!(Calibration::from_state(negative), None);
    }
}
