//! The exit-code table, whole, and the only calls to `process::exit`:
//! `main` turns an outcome into a code here, and the signal threads end a
//! hard stop here.
//!
//! The codes and when each is given: `docs/reference/exit-codes.md`, the
//! one table (the manual shows it; a test holds these kinds to it).

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
    /// `sweep`'s search: barrage itself was the limit (4).
    Generator,
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
            Kind::Generator => 4,
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

#[cfg(test)]
mod tests {
    use super::Kind;

    #[test]
    fn every_kind_has_its_row_in_the_one_table_and_every_row_a_kind() {
        let table: Vec<i32> = barrage_flags::manual::exit_codes()
            .iter()
            .map(|(c, _)| *c)
            .collect();
        let kinds = [
            Kind::Io,
            Kind::Unfit,
            Kind::Usage,
            Kind::Threshold,
            Kind::Generator,
            Kind::Interrupted,
        ];
        let mut codes: Vec<i32> = kinds.iter().map(|k| k.code()).collect();
        codes.push(0);
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(
            codes, table,
            "docs/reference/exit-codes.md and exit.rs disagree"
        );
    }
}
