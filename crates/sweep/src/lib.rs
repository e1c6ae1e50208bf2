//! barrage-sweep: "how much can this server take?" in one command.
//!
//! A sweep runs one attack per step at rising loads (`-rates`, open
//! model; `-concurrency`, closed model) on the engine of `barrage attack`,
//! into one result stream whose records carry their step as the attack
//! name (`rate=5000`, `c=200`; warm-up records `rate=5000 warmup`). Each
//! finished step becomes a [`Row`]: offered load, what was sent and
//! answered, latency percentiles, lag, errors, and whether barrage itself
//! kept the schedule ([`Row::generator_bound`]).
//!
//! - [`steps`]: the step grammar (`1000,2000`, `1000..20000/+1000`,
//!   `500..64000/x2`).
//! - [`sweep`]: the steps in order, `-stop-on`, or the `-find-max`
//!   search (grow ×2 until a step fails, then bisect to `-precision`).
//! - [`knee`]: the last step before more load stops paying.
//! - [`Found`]: what the search found, with its bracket.
//! - [`write_table`] (text, JSON, CSV) and [`write_chart`] (the HTML page).
//! - [`Collect`]: the rows again from a saved stream.
#![deny(missing_docs)]

mod chart;
mod found;
mod knee;
mod row;
mod run;
pub mod steps;
mod table;

pub use chart::{
    report_section, run_table, section as chart_section, write_chart, write_chart_file,
};
pub use found::Found;
pub use knee::knee;
pub use row::{Bounds, Decision, Row, SloRow};
pub use run::{sweep, Attacker, Collect, Outcome, Plan, RunStep, Step, SweepError, WARMUP};
pub use steps::{Load, StepsError};
pub use table::{write_table, Format, UnknownFormat};
