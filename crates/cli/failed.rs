//! Why a command failed, as the commands return it; `main` alone turns it
//! into lines on stderr and an exit code.

/// The kinds of failure, each with its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The tool's own I/O failed (1).
    Io,
    /// Bad usage or input (2).
    Usage,
    /// A `-fail-on` condition held (3).
    Threshold,
    /// Stopped hard by a second signal (130).
    Interrupted,
}

impl Kind {
    /// The exit code.
    pub fn code(self) -> i32 {
        match self {
            Kind::Io => crate::EXIT_IO,
            Kind::Usage => crate::EXIT_USAGE,
            Kind::Threshold => crate::report::EXIT_THRESHOLD,
            Kind::Interrupted => crate::EXIT_INTERRUPTED,
        }
    }
}

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

/// What a command returns.
pub type Outcome = Result<(), Failed>;
