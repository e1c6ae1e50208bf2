//! barrage-export: a result stream pushed into the monitoring people
//! already run, each figure stamped with its records' own time (not the
//! time of a scrape).
//!
//! - [`Intervals`]: records folded per `-interval` of send time and per
//!   label set (`-by`: method, url, code, attack, name), an interval
//!   closed once records one interval past its end arrive, the rest at the
//!   end; memory bounded by the open intervals and [`MAX_SERIES`] label
//!   sets.
//! - [`influx`]: InfluxDB's line protocol (measurement `barrage`, fields
//!   `requests`, `errors`, bytes and latency and lag figures).
//! - [`remote_write`]: Prometheus remote-write 1.0 (protobuf, snappy):
//!   cumulative counters `barrage_requests_total`, `…_errors_total`,
//!   bytes, and per interval the quantiles of
//!   `barrage_request_duration_seconds` and `barrage_lag_seconds`.
//! - [`otlp`]: OTLP/HTTP metrics (protobuf): monotonic cumulative sums
//!   and summaries of latency and lag.
//! - [`scraped`]: a scraped server's samples (`attack -scrape`), written
//!   at the end, into Prometheus and InfluxDB.
//! - [`Pusher`]: POSTs each batch on a thread of its own through a bounded
//!   queue, with retries and backoff; the reader never waits for it, so a
//!   `tee` upstream never blocks.
//!
//! ```
//! use barrage_export::{Intervals, Label};
//! use barrage_model::Hit;
//! let mut iv = Intervals::new(1_000_000_000, vec![Label::Code]);
//! let hit = Hit { timestamp: 5_000_000_000, code: 200, latency: 1_000_000, ..Hit::default() };
//! assert!(iv.add(&hit, true, hit.latency).is_empty());
//! let batches = iv.finish();
//! assert_eq!(batches[0].points[0].requests, 1);
//! ```
#![deny(missing_docs)]

pub mod influx;
mod intervals;
pub mod otlp;
mod push;
pub mod remote_write;
mod run;
pub mod scraped;

pub use intervals::{Batch, Intervals, Label, Point, MAX_SERIES};
pub use push::{Endpoint, PushError, Pusher, Summary};
pub use run::{Export, Exported, Protocol};
