//! The exit-code table, whole, and the only calls to `process::exit`:
//! `main` turns an outcome into a code here, and the signal threads end a
//! hard stop here.
//!
//! | code | when |
//! |---|---|
//! | 0 | done; a graceful stop on the first Ctrl-C or SIGTERM; a closed stdout pipe |
//! | 1 | the tool's own I/O failed; `doctor`: the plan does not fit this host |
//! | 2 | bad usage or input |
//! | 3 | a `-fail-on` condition (or a sweep's limit) held |
//! | 130 | a hard stop on a second Ctrl-C |

/// The kinds of failure, each with its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The tool's own I/O failed (1).
    Io,
    /// `doctor`: the plan does not fit this host (1).
    Unfit,
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
            Kind::Io | Kind::Unfit => 1,
            Kind::Usage => 2,
            Kind::Threshold => 3,
            Kind::Interrupted => 130,
        }
    }
}

/// Ends the process with `code` (what failed is said before).
pub fn with(code: i32) -> ! {
    std::process::exit(code)
}

/// Ends the process as a hard stop (a second Ctrl-C), from a signal thread.
pub fn interrupted() -> ! {
    with(Kind::Interrupted.code())
}
