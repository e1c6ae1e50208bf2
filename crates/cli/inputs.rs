//! Opening result inputs for a reading command: `barrage_stream::Merge`,
//! with its errors said on stderr and turned into exit codes.

pub use barrage_stream::Merge;

pub use barrage_report::Records;

use crate::failed::{Failed, Kind, Outcome};

/// [`Merge::open`] (header lines left out unless `headers`): an input
/// that cannot be opened fails as bad input (2) or as I/O (1).
pub fn open(files: &[String], headers: bool) -> Result<Merge, Failed> {
    let merge = if headers {
        Merge::open(files)
    } else {
        Merge::open_without_headers(files)
    };
    merge.map_err(failed)
}

/// An input that cannot be opened: bad input (2) or I/O (1).
pub fn failed(e: barrage_stream::OpenError) -> Failed {
    match e.bad_input {
        true => Failed::usage(e.message),
        false => Failed::io(e.message),
    }
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

/// `records`' end: a view the inputs lack is bad input (2); a note on
/// stderr when the lag covers only some records; the shards check's
/// lines on stderr when `max_skew` is given and they disagree.
pub fn finish_records(
    records: &Records,
    total: Option<&barrage_metrics::Metrics>,
    command: &str,
) -> Outcome {
    let note = records.finish(total).map_err(Failed::usage)?;
    if let Some(note) = note {
        eprintln!("barrage {command}: {note}");
    }
    Ok(())
}

/// The shards check's lines, on stderr.
pub fn warn_of_shards(records: &Records, max_skew: std::time::Duration, command: &str) {
    for line in records.shard_lines(max_skew) {
        match line.strip_prefix("  ") {
            Some(_) => eprintln!("{line}"),
            None => eprintln!("barrage {command}: {line}"),
        }
    }
}
