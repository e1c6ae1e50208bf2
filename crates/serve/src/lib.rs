//! barrage-serve: the HTTP servers barrage runs itself, on hyper.
//!
//! - [`ControlServer`]: `attack -control`, live control of the attack.
//! - [`Exporter`]: `attack -prometheus-addr`, the figures of the records
//!   written so far in Prometheus's text format.
//! - [`target`]: `barrage serve`, a small HTTP/1.1 + h2c target on
//!   loopback, so that a newcomer (and the README's first command) can
//!   attack something at once.
//! - [`App`]: `/login`, `/me`, `/items`, `/form-login` and `/home`, a small app with sessions for
//!   flows (`-format flow`), in `barrage serve` and the tests' server.
#![deny(missing_docs)]

mod answer;
mod app;
mod chat;
pub mod control;
mod exporter;
pub mod target;

pub use app::{App, AppTally};
pub use control::{ControlServer, Steer};
pub use exporter::Exporter;
