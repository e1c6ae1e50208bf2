//! barrage-flags: barrage's command line, apart from what runs it (as
//! `uv-cli` is to `uv`): every subcommand's flags with vegeta's names and
//! defaults ([`Cli`], [`Command`], [`AttackArgs`] …), the values clap
//! cannot parse from a type alone ([`parse_count`], [`DnsTtl`] …), and
//! vegeta's spelling (`-rate 5000`, `-rate=5000`, `--rate 5000`:
//! [`normalize`] before clap, [`one_dash_help`] and [`as_typed`] after).
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

mod commands;
mod spelling;
mod values;

pub use commands::*;
pub use spelling::{as_typed, normalize, one_dash_help};
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
