//! Token counting: exact counts for OpenAI's public encodings, flagged estimates for every
//! other model, the model registry that decides which applies, and the compact display form.
//!
//! Everything here is stateless and thread-safe; the encodings' tables are built once per
//! process on first use.

mod calibration;
// A build without some encoding family (cargo features) leaves parts of the counter unused.
#[cfg_attr(not(all(feature = "o200k", feature = "cl100k", feature = "p50k")), allow(dead_code, unused_imports))]
mod bpe;
mod display;
mod estimate;
mod lines;
mod loaded;
mod memo_sets;
mod models;
mod openai_models;
mod prefetch;
mod thread_memory;
mod utf8_char;
mod zeroed_pages;

pub use bpe::Encoding;
pub use calibration::{Calibration, CalibrationState};
pub use display::format_count;
pub use estimate::{EstimateFit, FEATURE_NAMES, FEATURES, Family, POOLED_FEATURES, estimate_features};
pub use loaded::{Format, Tokenizer};
pub use models::Model;
pub use thread_memory::release_thread_memory;

/// A token count and whether it is exact.
///
/// `exact` is true only when the count comes from the model's own public tokenizer (or from
/// the caller, who vouches for it); estimates are flagged so a UI can print them with `~`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Number of tokens.
    pub tokens: u32,
    /// True when `tokens` is exact for the model, false when it is an estimate.
    pub exact: bool,
}

impl Count {
    /// An exact count.
    pub fn exact(tokens: u32) -> Count {
        Count { tokens, exact: true }
    }

    /// An estimated count.
    pub fn estimate(tokens: u32) -> Count {
        Count { tokens, exact: false }
    }

    /// The sum of two counts (saturating), exact only when both are.
    pub fn plus(self, other: Count) -> Count {
        Count { tokens: self.tokens.saturating_add(other.tokens), exact: self.exact && other.exact }
    }
}

/// Saturating conversion used wherever a `usize` token total meets a `u32` field.
pub(crate) fn saturate_u32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
