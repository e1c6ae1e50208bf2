use std::io::BufRead;

use barrage_model::Target;
use bytes::Bytes;

use crate::{HttpTargets, JsonTargets, TargetError};

/// The target file formats (`-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// vegeta's line-based http format.
    Http,
    /// JSON lines.
    Json,
}

impl std::str::FromStr for Format {
    type Err = crate::BadValue;
    fn from_str(s: &str) -> Result<Self, crate::BadValue> {
        match s {
            "http" => Ok(Format::Http),
            "json" => Ok(Format::Json),
            other => Err(crate::BadValue(format!(
                "unknown target format {other:?} (use http or json)"
            ))),
        }
    }
}

/// What `-header` and `-body` give every target.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// Headers placed before each target's own.
    pub headers: Vec<(String, String)>,
    /// Body for targets without one.
    pub body: Bytes,
}

/// Reads targets of either format from a buffered input.
pub enum TargetReader<R: BufRead> {
    /// The http format.
    Http(HttpTargets<R>),
    /// JSON lines.
    Json(JsonTargets<R>),
}

impl<R: BufRead> TargetReader<R> {
    /// A reader of `format` on `input`, naming it `source_name` in errors.
    pub fn new(input: R, source_name: &str, format: Format, defaults: Defaults) -> Self {
        match format {
            Format::Http => TargetReader::Http(HttpTargets::new(input, source_name, defaults)),
            Format::Json => TargetReader::Json(JsonTargets::new(input, source_name, defaults)),
        }
    }

    /// The next target; `Ok(None)` when the input ends.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Target>, TargetError> {
        match self {
            TargetReader::Http(r) => r.next(),
            TargetReader::Json(r) => r.next(),
        }
    }

    /// Reads every target (for the eager, round-robin mode).
    pub fn read_all(&mut self) -> Result<Vec<Target>, TargetError> {
        let mut all = Vec::new();
        while let Some(t) = self.next()? {
            all.push(t);
        }
        Ok(all)
    }
}

/// Every target of `text` in `format`, read as the file `name` with no
/// global headers or body (for the parsers' tests).
#[cfg(test)]
pub(crate) fn parse_text(
    text: &str,
    name: &str,
    format: crate::Format,
) -> Result<Vec<Target>, TargetError> {
    TargetReader::new(text.as_bytes(), name, format, crate::Defaults::default()).read_all()
}

/// Builds the error for `line` of `source`.
pub(crate) fn error(source: &str, line: u64, message: String) -> TargetError {
    TargetError {
        source_name: source.to_string(),
        line,
        message,
    }
}

/// Reads one line (without its end) into `buf`; `Ok(false)` at the end.
pub(crate) fn read_line<R: BufRead>(
    input: &mut R,
    buf: &mut Vec<u8>,
    source: &str,
    line: u64,
) -> Result<bool, TargetError> {
    buf.clear();
    match input.read_until(b'\n', buf) {
        Ok(0) => Ok(false),
        Ok(_) => {
            while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                buf.pop();
            }
            Ok(true)
        }
        Err(e) => Err(error(source, line, format!("cannot read targets: {e}"))),
    }
}
