//! barrage-metrics: folds hits into figures with memory bounded by the
//! number of distinct status codes, error texts, groups and open windows,
//! never by the number of hits.
//!
//! - [`Metrics`]: vegeta's figures (requests, rate, throughput, duration,
//!   wait, success ratio, bytes, status codes, error set in first-seen
//!   order), latency and lag [`Distribution`]s from HdrHistograms exact to
//!   3 significant digits, and exact [`Buckets`] counts. [`Options`] choose
//!   the latency view (from the actual or the intended send, or to the first byte), the [`SuccessRule`]
//!   and the buckets.
//! - [`Llm`]: LLM streams' tokens (`attack -llm`): TTFT, ITL, TPOT and
//!   E2E from the send and the schedule, token counts by source.
//! - [`Connections`]: the share of requests that opened a connection, and
//!   DNS, connect and TLS times over those.
//! - [`Windows`]: per-interval metrics for `report -every`.
//! - [`Groups`]: per-URL / method / code / attack / error metrics for `-by`.
//! - [`Shards`]: whether merged inputs are the shards of one schedule, and
//!   whether they agree.
//! - [`Threshold`]: `-fail-on` conditions such as `p99>250ms`.
//! - [`blocks`]: a run cut into blocks of send time, for the block
//!   bootstraps of `compare` and of a run's own intervals.
//! - [`prom_buckets`]: the latency buckets of the Prometheus histograms
//!   (native schema 3, and classic at every other of its bounds).
//! - [`Trust`]: the verdict on a run (was barrage the limit, are there
//!   records enough), from [`Evidence`] gathered as records are read.
//!
//! ```
//! use barrage_metrics::Metrics;
//! use barrage_model::Hit;
//! let mut m = Metrics::new();
//! for i in 0..100u64 {
//!     m.add(&Hit { timestamp: i as i64 * 10_000_000, latency: 1_000_000 + i * 1_000, code: 200, ..Hit::default() });
//! }
//! assert_eq!(m.requests(), 100);
//! assert_eq!(m.success_ratio(), 1.0);
//! assert!((m.quantile(0.5) as i64 - 1_049_000).abs() < 1_049);
//! ```
#![deny(missing_docs)]

pub mod blocks;
mod buckets;
mod connections;
mod distribution;
mod error;
mod events;
mod groups;
mod llm;
mod metrics;
pub mod prom_buckets;
mod prometheus;
mod seconds;
mod server;
mod sessions;
mod shards;
mod slo;
mod success;
mod threshold;
pub mod trust;
mod view;
mod windows;

pub use buckets::Buckets;
pub use connections::Connections;
pub use distribution::{set_precision, Distribution, SIGFIGS};
pub use error::ParseError;
pub use events::Events;
pub use groups::{GroupBy, Groups, MAX_GROUPS, OTHER};
pub use llm::{per_token, tpot, Llm};
pub use metrics::Metrics;
pub use prometheus::{Prometheus, MAX_SERIES};
pub use seconds::{PerSecond, SampleStats, Seconds};
pub use server::{Series as ServerSeries, Server, MAX_POINTS};
pub use sessions::Sessions;
pub use shards::{Shard, Shards, Verdict};
pub use slo::{Decision, Slo};
pub use success::SuccessRule;
pub use threshold::Threshold;
pub use trust::{Backlog, Check, Evidence, Interval, Intervals, Limits, Trust, Until, Warmup};
pub use view::{LatencyView, Options};
pub use windows::Windows;
