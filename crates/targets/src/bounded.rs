//! Reading inputs with limits: a line, a file read whole, a body file,
//! each bounded so that `-targets /dev/zero` or a 1.5 GB line is refused
//! in one line instead of read until memory runs out (issue 29).

use std::io::{BufRead, Read};

use crate::{error::error, TargetError};

/// The longest line of a targets file: a JSON target's line holds its
/// body (base64), so this is a body's size and more. Issue 29: a line
/// without end (`-targets /dev/zero`) was read until memory ran out.
pub const MAX_LINE: u64 = 64 << 20;

/// UTF-8's byte-order mark, skipped at the start of a targets file
/// (issue 29: `bad method: \u{feff}GET`).
pub(crate) const BOM: &[u8] = b"\xef\xbb\xbf";

/// The largest file read whole: a curl or HAR file, a `-feed` CSV.
pub const MAX_FILE: u64 = 256 << 20;

/// The largest body file (`@file`, `-body`, curl's `-d @file`).
pub const MAX_BODY: u64 = 1 << 30;

/// Why a file could not be read: it could not be read, or it is over
/// the limit for what it is.
#[derive(Debug)]
pub enum Unread {
    /// It could not be read.
    Io(std::io::Error),
    /// Over this many bytes.
    Over(u64),
    /// A device (`/dev/zero`): not a file or a pipe.
    Device,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Io(e) => write!(f, "{e}"),
            Unread::Device => write!(f, "a device, not a file or a pipe"),
            Unread::Over(limit) => {
                let what = match *limit {
                    MAX_BODY => "a body file",
                    MAX_LINE => "one line",
                    _ => "a file read whole",
                };
                write!(f, "larger than {} (the limit for {what})", mib(*limit))
            }
        }
    }
}

/// `64 MiB`, `1 GiB`.
pub fn mib(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else {
        format!("{} MiB", n >> 20)
    }
}

/// Reads the file at `path` whole, at most `limit` bytes: a device that
/// never ends (`/dev/zero`) or a file too large is refused, not read
/// until memory runs out. FIFOs and `/dev/stdin` are read as they come.
pub fn read_bounded(path: impl AsRef<std::path::Path>, limit: u64) -> Result<Vec<u8>, Unread> {
    use std::os::unix::fs::FileTypeExt;
    let file = std::fs::File::open(path).map_err(Unread::Io)?;
    let kind = file.metadata().map_err(Unread::Io)?;
    let limit = if kind.is_file() {
        if kind.len() > limit {
            return Err(Unread::Over(limit));
        }
        limit
    } else if kind.file_type().is_fifo() || kind.file_type().is_socket() {
        // A pipe (`<(cmd)`, /dev/stdin) says not how long it is: read
        // at most MAX_FILE of it.
        limit.min(MAX_FILE)
    } else {
        // /dev/zero and its like never end.
        return Err(Unread::Device);
    };
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Unread::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Unread::Over(limit));
    }
    Ok(bytes)
}

/// Reads one line (without its end) into `buf`; `Ok(false)` at the end.
/// A line over [`MAX_LINE`] is an error.
pub(crate) fn read_line<R: BufRead>(
    input: &mut R,
    buf: &mut Vec<u8>,
    source: &str,
    line: u64,
) -> Result<bool, TargetError> {
    buf.clear();
    match input.by_ref().take(MAX_LINE + 1).read_until(b'\n', buf) {
        Ok(0) => Ok(false),
        Ok(_) if buf.len() as u64 > MAX_LINE => Err(error(
            source,
            line,
            format!(
                "a line longer than {} (the limit for one line)",
                mib(MAX_LINE)
            ),
        )),
        Ok(_) => {
            while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                buf.pop();
            }
            // A byte-order mark, as Windows editors write: not text.
            if line == 1 && buf.starts_with(BOM) {
                buf.drain(..BOM.len());
            }
            Ok(true)
        }
        Err(e) => Err(error(source, line, format!("cannot read targets: {e}"))),
    }
}
