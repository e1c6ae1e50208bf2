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
    /// A stream's time to its first token (event) from the send; a record
    /// without one, its whole latency: what `compare` holds two LLM runs
    /// to.
    Ttft,
    /// [`LatencyView::Ttft`] from the schedule.
    TtftIntended,
}

impl LatencyView {
    /// What its figures measure, in words.
    pub fn words(self) -> &'static str {
        match self {
            LatencyView::Actual => "from the send to the last byte",
            LatencyView::Intended => "from the scheduled send to the last byte (-latency intended)",
            LatencyView::FirstByte => "from the send to the response's head (-latency first-byte)",
            LatencyView::Ttft => "time to first token, from the send (-latency ttft)",
            LatencyView::TtftIntended => {
                "time to first token, from the scheduled send (-latency ttft-intended)"
            }
        }
    }
}

impl std::str::FromStr for LatencyView {
    type Err = crate::ParseError;
    fn from_str(s: &str) -> Result<Self, crate::ParseError> {
        match s {
            "actual" => Ok(LatencyView::Actual),
            "intended" => Ok(LatencyView::Intended),
            "first-byte" => Ok(LatencyView::FirstByte),
            "ttft" => Ok(LatencyView::Ttft),
            "ttft-intended" => Ok(LatencyView::TtftIntended),
            other => Err(crate::ParseError::from(format!(
                "unknown -latency {other:?} (use actual, intended, first-byte, ttft or ttft-intended)"
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
            LatencyView::Ttft => hit.ttft(),
            LatencyView::TtftIntended => hit.ttft().saturating_add(hit.lag()),
        };
        (ok, latency)
    }
}
