//! barrage-report: writes [`Metrics`] in vegeta's layouts, and barrage's
//! live rows.
//!
//! - [`text`]: the `Requests / Duration / Latencies / Bytes / Success /
//!   Status Codes / Error Set` report, aligned by [`TabWriter`] exactly as
//!   Go's `text/tabwriter` aligns it, durations rounded as vegeta rounds;
//!   plus a `Lag` line when the generator fell behind.
//! - [`json`]: vegeta's JSON report (integer ns, RFC 3339 times, Go's float
//!   and string notation), then barrage's `lag` object.
//! - [`hist`]: vegeta's bucket histogram; [`hdrplot`]: HdrHistogram's
//!   percentile distribution.
//! - [`window_row`], [`window_json`]: one line per interval for `-every`;
//!   [`live`] reads records and prints them as the intervals complete.
//! - [`ReportType`] (`-type`), [`write`] and [`write_groups`] (`-by`).
//! - [`progress`]: `attack`'s live progress line.
//! - [`Records`]: merged inputs read for a latency view, with the shards
//!   check.
//!
//! Every writer takes the [`Percentiles`] to show (vegeta's 50, 90, 95, 99
//! by default).
//!
//! ```
//! use barrage_metrics::Metrics;
//! use barrage_model::Hit;
//! use barrage_report::Percentiles;
//! let mut m = Metrics::new();
//! m.add(&Hit { code: 200, latency: 1_000_000, ..Hit::default() });
//! let mut out = Vec::new();
//! barrage_report::text(&m, &Percentiles::default(), &mut out).unwrap();
//! assert!(String::from_utf8(out).unwrap().starts_with("Requests      [total, rate, throughput]"));
//! ```
#![deny(missing_docs)]

pub mod compare;
mod error;
mod hdrplot;
mod hist;
pub mod html;
mod json;
mod layout;
mod lines;
mod live;
mod llm;
mod markers;
mod percentiles;
pub mod progress;
mod recorder;
mod records;
mod seconds;
mod server;
mod tabwriter;
pub(crate) mod text;
mod window;

pub use barrage_metrics::Metrics;
pub use error::ParseError;
pub use hdrplot::hdrplot;
pub use hist::hist;
pub use json::{json, json_group_object, json_object};
pub use layout::{write, write_groups, write_run_facts, Kind, ReportType};
pub use live::{find_warmup, live, whole, LiveEnd, RunFacts, Source};
pub use percentiles::Percentiles;
pub use recorder::{Recorder, Watcher};
pub use records::{MissingView, Records, WarmupFlag};
pub use seconds::seconds;
pub use tabwriter::TabWriter;
pub use text::text;
pub use window::{window_header, window_json, window_row, window_tail};
