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

/// What a command returns.
pub type Outcome = Result<(), Failed>;
