//! Calibration of estimates from the prompt totals a provider reports.
//!
//! A window whose model has no public tokenizer learns the ratio of the provider's real token
//! counts to its own estimates and scales every estimated count by it. Raw estimates stay
//! cached in the ledger; only the ratio changes, so nothing is recounted.

/// How much an earlier observation still weighs when a new one arrives: recent requests
/// count most, so the ratio follows a conversation whose content shifts (prose to code).
const DECAY: f64 = 0.8;
/// The learned ratio is kept within these bounds, so one absurd report cannot wreck the
/// window's budget arithmetic.
const MIN_RATIO: f64 = 0.25;
const MAX_RATIO: f64 = 4.0;

/// The learned ratio of real tokens to estimated tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Calibration {
    real: f64,
    estimated: f64,
}

impl Calibration {
    /// Records that content estimated at `estimated` tokens really was `real` tokens.
    pub fn observe(&mut self, real: u64, estimated: u64) {
        if estimated == 0 {
            return;
        }
        self.real = self.real * DECAY + real as f64;
        self.estimated = self.estimated * DECAY + estimated as f64;
    }

    /// Real tokens per estimated token; 1 before any observation.
    pub fn ratio(&self) -> f64 {
        if self.estimated > 0.0 { (self.real / self.estimated).clamp(MIN_RATIO, MAX_RATIO) } else { 1.0 }
    }

    /// The learned sums (real, estimated), for saving.
    pub fn state(&self) -> (f64, f64) {
        (self.real, self.estimated)
    }

    /// A calibration with saved sums; `None` unless both are finite and non-negative.
    pub fn from_state(real: f64, estimated: f64) -> Option<Calibration> {
        let valid = |x: f64| x.is_finite() && x >= 0.0;
        (valid(real) && valid(estimated)).then_some(Calibration { real, estimated })
    }

    /// `estimated` tokens scaled by the ratio, rounded to the nearest token.
    pub fn apply(&self, estimated: u64) -> u64 {
        if self.estimated > 0.0 { (estimated as f64 * self.ratio()).round() as u64 } else { estimated }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_the_ratio_and_applies_it() {
        let mut calibration = Calibration::default();
        assert_eq!(calibration.apply(1000), 1000);
        calibration.observe(1200, 1000);
        assert!((calibration.ratio() - 1.2).abs() < 1e-9);
        assert_eq!(calibration.apply(500), 600);
        calibration.observe(0, 0);
        assert!((calibration.ratio() - 1.2).abs() < 1e-9);
    }

    #[test]
    fn recent_observations_weigh_more_and_the_ratio_is_bounded() {
        let mut calibration = Calibration::default();
        calibration.observe(1000, 1000);
        calibration.observe(1500, 1000);
        let ratio = calibration.ratio();
        assert!(ratio > 1.25 && ratio < 1.5, "{ratio}");
        calibration.observe(1_000_000_000, 1);
        assert_eq!(calibration.ratio(), MAX_RATIO);
    }

    #[test]
    fn apply_is_monotone() {
        let mut calibration = Calibration::default();
        calibration.observe(1337, 1000);
        let mut previous = 0;
        for n in 0..5000 {
            let scaled = calibration.apply(n);
            assert!(scaled >= previous);
            previous = scaled;
        }
    }
}
