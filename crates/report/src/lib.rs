//! barrage-report: writes [`Metrics`] in vegeta's layouts.
//!
//! - [`text`]: the `Requests / Duration / Latencies / Bytes / Success /
//!   Status Codes / Error Set` report, aligned by [`TabWriter`] exactly as
//!   Go's `text/tabwriter` aligns it, durations rounded as vegeta rounds.
//! - [`json`]: vegeta's JSON report (integer ns, RFC 3339 times, Go's float
//!   and string notation), so tools written for vegeta keep working.
//!
//! ```
//! use barrage_metrics::Metrics;
//! use barrage_model::Hit;
//! let mut m = Metrics::new();
//! m.add(&Hit { code: 200, latency: 1_000_000, ..Hit::default() });
//! let mut out = Vec::new();
//! barrage_report::text(&m, &mut out).unwrap();
//! assert!(String::from_utf8(out).unwrap().starts_with("Requests      [total, rate, throughput]"));
//! ```
#![deny(missing_docs)]

mod json;
mod tabwriter;
mod text;

pub use barrage_metrics::Metrics;
pub use json::json;
pub use tabwriter::TabWriter;
pub use text::text;
