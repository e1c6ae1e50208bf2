//! Opening result inputs for a reading command: `barrage_stream::Merge`,
//! with its errors said on stderr and turned into exit codes.

pub use barrage_stream::Merge;

use crate::failed::{Failed, Kind, Outcome};

/// [`Merge::open`] (header lines left out unless `headers`): an input
/// that cannot be opened fails as bad input (2) or as I/O (1).
pub fn open(files: &[String], headers: bool) -> Result<Merge, Failed> {
    let merge = if headers {
        Merge::open(files)
    } else {
        Merge::open_without_headers(files)
    };
    merge.map_err(|e| {
        if e.bad_input {
            Failed::usage(e.message)
        } else {
            Failed::io(e.message)
        }
    })
}

/// The read errors of `merge`, if any: bad input (2) when any is, else I/O (1).
pub fn finish(merge: &Merge) -> Outcome {
    let (lines, bad) = merge.errors();
    if lines.is_empty() {
        return Ok(());
    }
    let kind = if bad { Kind::Usage } else { Kind::Io };
    Err(Failed { kind, lines })
}

/// The merge as the report's live source (`-every`).
pub struct Records(pub Merge);

impl barrage_report::Source for Records {
    fn next_hit(&mut self) -> Option<&barrage_stream::Hit> {
        self.0.next_hit()
    }
}
