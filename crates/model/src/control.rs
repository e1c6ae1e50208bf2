//! Live control of a running attack (`attack -control`): the orders it
//! takes ([`Order`]) and the marks they leave in the result stream
//! ([`Marker`]).

use crate::{Rate, Stages};

/// What an order asks of the schedule.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Go on at this rate, from the change on.
    Rate(Rate),
    /// Replace what is left of the schedule with these stages, the first
    /// starting at the change.
    Stages(Stages),
    /// Send nothing more until a resume.
    Pause,
    /// Go on as before the pause, from the resume's time.
    Resume,
    /// Stop as Ctrl-C does: what is in flight is waited for.
    Stop,
}

impl Command {
    /// The command as a marker says it: `rate 3000/1s`, `pause`.
    pub fn said(&self) -> String {
        match self {
            Command::Rate(r) => format!("rate {r}"),
            Command::Stages(s) => format!("stages {s}"),
            Command::Pause => "pause".into(),
            Command::Resume => "resume".into(),
            Command::Stop => "stop".into(),
        }
    }
}

/// A command's words that do not parse back ([`Command::said`]'s form).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a control command: {0:?}")]
pub struct CommandError(pub String);

impl std::str::FromStr for Command {
    type Err = CommandError;

    /// Reads [`Command::said`]'s words back: `rate 3000/1s`, `pause`.
    fn from_str(s: &str) -> Result<Self, CommandError> {
        let bad = || CommandError(s.to_string());
        let (word, rest) = s.split_once(' ').unwrap_or((s, ""));
        Ok(match (word, rest) {
            ("rate", r) => Command::Rate(r.parse().map_err(|_| bad())?),
            ("stages", st) => Command::Stages(st.parse().map_err(|_| bad())?),
            ("pause", "") => Command::Pause,
            ("resume", "") => Command::Resume,
            ("stop", "") => Command::Stop,
            _ => return Err(bad()),
        })
    }
}

/// One order: the command, when it applies and who gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    /// What to do.
    pub command: Command,
    /// When, unix ns (`collect` gives every attacker the same one);
    /// `None`: now. A time already past is taken as now.
    pub at: Option<i64>,
    /// Who asked: the caller's address, `collect`, `keys`.
    pub who: String,
}

/// A change made to a running attack, as the stream keeps it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Marker {
    /// When it was made, unix ns.
    pub at: i64,
    /// The schedule time from which it holds, unix ns (the attack's start
    /// and the offset in its schedule).
    pub from: i64,
    /// The first request (of the whole schedule) on the new line.
    pub first: u64,
    /// What changed: `rate 3000/1s`, `pause`, `resume`, `stop`.
    pub what: String,
    /// Who asked.
    pub who: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_reads_back_from_its_words() {
        for c in [
            Command::Rate("3000/1s".parse().unwrap()),
            Command::Stages("10s:100,1m:100".parse().unwrap()),
            Command::Pause,
            Command::Resume,
            Command::Stop,
        ] {
            assert_eq!(c.said().parse::<Command>(), Ok(c.clone()), "{}", c.said());
        }
        for bad in ["", "rate", "rate fast", "pause now", "faster"] {
            assert_eq!(bad.parse::<Command>(), Err(CommandError(bad.into())));
        }
    }
}
