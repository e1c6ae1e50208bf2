use std::io;

use thiserror::Error;

/// Why a result stream could not be read further.
#[derive(Debug, Error)]
pub enum StreamError {
    /// The input starts with neither the magic number nor CSV or JSON.
    #[error("not a barrage result stream (first bytes {first}: no magic number, not CSV or JSON lines either)")]
    NotAStream {
        /// The first bytes, in hex.
        first: String,
    },
    /// vegeta's own binary results (Go's gob encoding).
    #[error("a vegeta gob result file: barrage reads vegeta's CSV and JSON; convert it with vegeta encode -to csv FILE | barrage report (or -to json)")]
    VegetaGob,
    /// The input has no bytes at all.
    #[error("empty input (no result stream)")]
    Empty,
    /// Written by a newer barrage.
    #[error("result stream format version {found} is newer than this barrage reads (up to {supported}); upgrade barrage")]
    NewerVersion {
        /// The version in the header.
        found: u16,
        /// The newest version this build reads.
        supported: u16,
    },
    /// The input ends inside a header or frame.
    #[error("truncated result stream at byte {offset}: {what}")]
    Truncated {
        /// Offset of the incomplete part, bytes from the start.
        offset: u64,
        /// What was incomplete.
        what: &'static str,
    },
    /// A frame or record does not decode.
    #[error("corrupt result stream at byte {offset}: {what}")]
    Corrupt {
        /// Offset of the bad frame or record, bytes from the start.
        offset: u64,
        /// What was wrong.
        what: String,
    },
    /// A CSV or JSON line does not parse.
    #[error("line {line}: {what}")]
    BadLine {
        /// 1-based line number.
        line: u64,
        /// What was wrong.
        what: String,
    },
    /// The writer (an attack that could not start) left no records, and
    /// said why.
    #[error("the attack that writes this stream failed before its first request, so there is nothing to report: {reason}")]
    Aborted {
        /// The writer's error.
        reason: String,
    },
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl StreamError {
    /// `NotAStream` for an input starting with `bytes`.
    pub fn not_a_stream(bytes: &[u8]) -> Self {
        let hex: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
        StreamError::NotAStream {
            first: hex.join(" "),
        }
    }

    /// Whether the input itself is bad (exit 2) rather than the I/O (exit 1).
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, StreamError::Io(_))
    }
}
