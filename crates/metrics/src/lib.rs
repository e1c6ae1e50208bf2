//! barrage-metrics: folds hits into figures with memory bounded by the
//! number of distinct status codes and error texts, never by the number of
//! hits.
//!
//! [`Metrics::add`] takes each [`Hit`]; the accessors give vegeta's figures
//! (requests, rate, throughput, duration, wait, success ratio, bytes, status
//! codes, the error set in first-seen order) and latency quantiles from an
//! HdrHistogram exact to 3 significant digits (clamped to the exact min and
//! max). [`Metrics::merge`] combines metrics of separate inputs.
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

mod metrics;

pub use metrics::Metrics;
