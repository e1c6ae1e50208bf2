//! Why a command failed, as the commands return it; `main` alone turns it
//! into lines on stderr and an exit code.

pub use crate::exit::Kind;

/// A failed command: its kind and the lines that say why (each printed
/// as `barrage CMD: line`).
#[derive(Debug)]
pub struct Failed {
    pub kind: Kind,
    pub lines: Vec<String>,
}

impl Failed {
    /// Bad usage or input, in one line.
    pub fn usage(line: impl std::fmt::Display) -> Self {
        Failed {
            kind: Kind::Usage,
            lines: vec![line.to_string()],
        }
    }

    /// The `-fail-on` conditions that `held`, each a line (exit 3), or
    /// none.
    pub fn fail_on<T: std::fmt::Display>(held: impl IntoIterator<Item = T>) -> Outcome {
        let lines: Vec<String> = held.into_iter().map(|h| format!("-fail-on: {h}")).collect();
        match lines.is_empty() {
            true => Ok(()),
            false => Err(Failed {
                kind: Kind::Threshold,
                lines,
            }),
        }
    }

    /// The tool's own I/O, in one line.
    pub fn io(line: impl std::fmt::Display) -> Self {
        Failed {
            kind: Kind::Io,
            lines: vec![line.to_string()],
        }
    }
}

/// Targets or a file a flag names that could not be made ready: the
/// tool's own I/O when a file could not be read, else bad input.
impl From<barrage_attack::load::LoadError> for Failed {
    fn from(e: barrage_attack::load::LoadError) -> Self {
        if e.is_io() {
            Failed::io(e)
        } else {
            Failed::usage(e)
        }
    }
}

/// An attack's flags that could not be made ready.
impl From<barrage_flags::ReadyError> for Failed {
    fn from(e: barrage_flags::ReadyError) -> Self {
        use barrage_flags::Blame;
        Failed {
            kind: match e.blame() {
                Blame::Usage => Kind::Usage,
                Blame::Io => Kind::Io,
                Blame::Unfit => Kind::Unfit,
            },
            lines: vec![e.to_string()],
        }
    }
}

/// What a command returns.
pub type Outcome = Result<(), Failed>;
