//! How records are judged and measured: [`LatencyView`] (`-latency`) and
//! [`Options`].

use crate::{Buckets, SuccessRule};

/// Which latency the main figures show (`-latency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LatencyView {
    /// From the actual send (`timestamp`) to the last byte, as vegeta.
    #[default]
    Actual,
    /// From the intended send (`scheduled`): free of coordinated omission.
    Intended,
    /// From the actual send to the response's head: the server's time to
    /// first byte, without the body's transfer (0 for records without one).
    FirstByte,
}

impl std::str::FromStr for LatencyView {
    type Err = crate::ParseError;
    fn from_str(s: &str) -> Result<Self, crate::ParseError> {
        match s {
            "actual" => Ok(LatencyView::Actual),
            "intended" => Ok(LatencyView::Intended),
            "first-byte" => Ok(LatencyView::FirstByte),
            other => Err(crate::ParseError::from(format!(
                "unknown -latency {other:?} (use actual, intended or first-byte)"
            ))),
        }
    }
}

/// How hits are judged and measured.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Which latency the main figures use.
    pub latency: LatencyView,
    /// Which codes succeed.
    pub success: SuccessRule,
    /// Exact bucket counts to keep (`-buckets`, `hist[...]`).
    pub buckets: Option<Buckets>,
    /// The verdict's thresholds (`-limits`).
    pub limits: crate::Limits,
    /// Whether the run is cut into blocks for its intervals
    /// ([`crate::Metrics::intervals`]).
    pub intervals: bool,
    /// Objectives each request must meet, to count its attainment
    /// ([`crate::Metrics::attainment`]).
    pub slo: Option<crate::Slo>,
    /// The share of requests that must meet `slo` (`-attain`).
    pub attain: f64,
    /// Significant digits of the distributions (`-precision`; 0 leaves
    /// the process's, [`crate::set_precision`]).
    pub precision: u8,
}

impl Options {
    /// Whether `hit` succeeded, and its latency in the chosen view (ns).
    pub fn judge(&self, hit: &barrage_model::Hit) -> (bool, u64) {
        let ok =
            (self.success.accepts(hit.code) || hit.is_websocket_reply()) && !hit.judged_failure();
        let latency = match self.latency {
            LatencyView::Actual => hit.latency,
            LatencyView::Intended => hit.intended_latency(),
            LatencyView::FirstByte => hit.first_byte,
        };
        (ok, latency)
    }
}
