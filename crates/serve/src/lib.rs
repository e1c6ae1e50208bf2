//! barrage-serve: the HTTP servers barrage runs itself, on hyper.
//!
//! - [`Exporter`]: `attack -prometheus-addr`, the figures of the records
//!   written so far in Prometheus's text format.
//! - [`target`]: `barrage serve`, a small HTTP/1.1 + h2c target on
//!   loopback, so that a newcomer (and the README's first command) can
//!   attack something at once.
#![deny(missing_docs)]

mod exporter;
pub mod target;

pub use exporter::Exporter;
