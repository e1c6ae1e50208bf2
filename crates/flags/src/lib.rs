//! barrage-flags: barrage's command line, apart from what runs it (as
//! `uv-cli` is to `uv`): every subcommand's flags with vegeta's names and
//! defaults ([`Cli`], [`Command`], [`AttackArgs`] …), the values clap
//! cannot parse from a type alone ([`parse_count`], [`DnsTtl`] …), and
//! vegeta's spelling (`-rate 5000`, `-rate=5000`, `--rate 5000`:
//! [`normalize`] before clap, [`one_dash_help`] and [`as_typed`] after),
//! [`command`] and [`parse`] (clap's command as shaped for each
//! subcommand: what `sweep` sets itself is hidden and refused), and
//! [`usage_line`] (a usage error with what to type instead).
//!
//! It consumes the command line and produces parsed flags; the binary
//! (`crates/cli`) turns them into each stage's configuration.
//!
//! ```
//! use clap::Parser;
//! let args = barrage_flags::normalize(["barrage", "attack", "-rate=7"].map(Into::into));
//! let cli = barrage_flags::Cli::try_parse_from(args).unwrap();
//! let barrage_flags::Command::Attack(a) = cli.command else { panic!() };
//! assert_eq!(a.rate.per_second(), 7.0);
//! ```

#![deny(missing_docs)]

mod command;
mod commands;
mod configs;
mod conflicts;
mod hint;
mod live;
pub mod manual;
mod plan;
mod readers;
mod ready;
mod report;
mod ring;
mod spelling;
mod steer;
mod sweep;
#[cfg(test)]
mod testing;
mod values;

pub use command::{command, parse, SWEEP_NO_OUTPUT, SWEEP_SETS};
pub use commands::*;
pub use configs::StreamConflict;
pub use conflicts::Conflict;
pub use hint::{refused, usage_line, Refused};
pub use live::{CollectArgs, CollectConflict, SendArgs};
pub use readers::{CompareArgs, ExportArgs};
pub use ready::{destinations, Blame, ReadyError, Setup};
pub use report::{CompareConflict, ReportConflict};
pub use spelling::{as_typed, normalize, one_dash_help};
pub use steer::on_heard;
pub use sweep::SweepConflict;
pub use values::*;

/// A flag value that is not what the flag takes, in words for clap's
/// error line (`invalid value '-5' for '--rate <RATE>': …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadFlag(pub String);

impl From<String> for BadFlag {
    fn from(s: String) -> Self {
        BadFlag(s)
    }
}
