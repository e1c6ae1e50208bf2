//! Opening result inputs for a reading command: `barrage_stream::Merge`,
//! with its errors said on stderr and turned into exit codes.

pub use barrage_stream::Merge;

/// [`Merge::open`] for command `cmd`: an input that cannot be opened is
/// said on stderr, and the exit code returned (2 for bad input, 1 for I/O).
pub fn open(cmd: &str, files: &[String]) -> Result<Merge, i32> {
    Merge::open(files).map_err(|e| {
        eprintln!("barrage {cmd}: {}", e.message);
        if e.bad_input {
            crate::EXIT_USAGE
        } else {
            crate::EXIT_IO
        }
    })
}

/// Prints the read errors of `merge` for `cmd` and gives the exit code.
pub fn finish(cmd: &str, merge: &Merge) -> i32 {
    let (lines, bad) = merge.errors();
    for l in &lines {
        eprintln!("barrage {cmd}: {l}");
    }
    match (lines.is_empty(), bad) {
        (true, _) => 0,
        (false, true) => crate::EXIT_USAGE,
        (false, false) => crate::EXIT_IO,
    }
}

/// The merge as the report's live source (`-every`).
pub struct Records(pub Merge);

impl barrage_report::Source for Records {
    fn next_hit(&mut self) -> Option<&barrage_stream::Hit> {
        self.0.next_hit()
    }
}
