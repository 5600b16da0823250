//! The provider-facing state a [`Window`](super::Window) keeps: the wire formats its JSON
//! messages allow, the requests it rendered and prepared, and what the provider's usage
//! reports taught it (the prompt total, the calibration of estimates, the cache reports).

use super::last_request::LastRequestCell;
use super::usage::LastReport;
use crate::cache::CacheState;
use crate::tokens::Calibration;
use crate::wire::FormatSet;

/// What the window knows of the provider and the requests sent to it.
#[derive(Clone, Debug)]
pub(super) struct WireState {
    /// The provider formats the messages pushed as JSON are compatible with.
    pub wire_formats: FormatSet,
    /// The request last rendered, which `observe_last_usage` attributes usage to.
    pub last_request: LastRequestCell,
    /// The request last prepared and the provider's cache reports.
    pub cache: CacheState,
    /// The usage report last observed, so that the same report counts once.
    pub last_report: Option<LastReport>,
    /// The last prompt total the provider reported.
    pub prompt_total: Option<u64>,
    /// Learned from provider usage; scales estimated counts.
    pub calibration: Calibration,
}

impl Default for WireState {
    fn default() -> WireState {
        WireState {
            wire_formats: FormatSet::ANY,
            last_request: LastRequestCell::default(),
            cache: CacheState::default(),
            last_report: None,
            prompt_total: None,
            calibration: Calibration::default(),
        }
    }
}
