//! barrage-model: the vocabulary every barrage stage shares, with no I/O.
//!
//! - [`Hit`]: the record of one scheduled request (what `attack` writes and
//!   `report`/`dump` read). Times are unix nanoseconds, durations nanoseconds.
//! - [`Audit`]: what the generator itself did, about once a second.
//! - [`Link`]: the connection a request went on and what opening it cost.
//! - [`Target`]: one request to send (method, URL, headers, body).
//! - [`Rate`]: `-rate` (`50/1s`, `2.5/100ms`, `0`, `infinity`) and the exact
//!   due offset of request *i* on the absolute schedule.
//! - [`Stages`]: `-stages` (`30s:1000,2m:1000,10s:0`), a rate ramped in
//!   straight lines, with the same exact due offsets.
//! - [`Arrivals`]: `-arrivals` (`uniform`, `poisson:SEED`) and
//!   [`PoissonClock`], the seeded Poisson process's arrival *i*.
//! - [`weights`]: weighted targets as one exact, evenly spread order.
//! - [`duration`]: Go-compatible duration parsing and formatting, so flags and
//!   reports read like vegeta's (`1m30s`, `363.985µs`).
//! - [`time`]: unix nanoseconds to and from RFC 3339.
//! - [`status`]: HTTP reason phrases, for vegeta's `404 Not Found` errors.
//! - [`gojson`]: JSON strings and floats written as Go writes them.
//!
//! ```
//! use barrage_model::{duration, Rate};
//! let rate: Rate = "200/1s".parse().unwrap();
//! assert_eq!(rate.offset_ns(3), Some(15_000_000));
//! assert_eq!(duration::format(duration::parse("1m30s").unwrap() as i64), "1m30s");
//! ```
#![deny(missing_docs)]

mod arrivals;
mod audit;
pub mod control;
pub mod duration;
pub mod gojson;
mod hit;
mod link;
mod proto;
mod rate;
mod sample;
pub mod sink;
pub mod size;
mod stages;
pub mod status;
mod target;
pub mod time;
pub mod weights;
pub mod words;

pub use arrivals::{Arrivals, ArrivalsError, PoissonClock, POSITION_ONE};
pub use audit::Audit;
pub use control::{Command, CommandError, Marker, Order};
pub use hit::{
    Hit, Lacks, SessionEnd, SessionMark, TokenSource, Tokens, CHECK_FAILED, GRPC_FAILED,
};
pub use link::Link;
pub use proto::Proto;
pub use rate::{Rate, RateError, DEFAULT_RATE};
pub use sample::ServerSample;
pub use stages::{Stages, StagesError};
pub use target::{Asked, Target};
