use std::io::{BufRead, Read};

use barrage_model::Target;

use crate::{
    bounded::{mib, BOM, MAX_FILE},
    error::error,
    Defaults, HttpTargets, JsonTargets, TargetError,
};

/// The target file formats (`-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// vegeta's line-based http format.
    Http,
    /// JSON lines.
    Json,
    /// curl command lines.
    Curl,
    /// A HAR 1.2 file's requests.
    Har,
    /// A flow: one session's steps (the http format with step
    /// directives), read whole by [`crate::Flow`].
    Flow,
}

impl std::str::FromStr for Format {
    type Err = crate::BadValue;
    fn from_str(s: &str) -> Result<Self, crate::BadValue> {
        match s {
            "http" => Ok(Format::Http),
            "json" => Ok(Format::Json),
            "curl" => Ok(Format::Curl),
            "har" => Ok(Format::Har),
            "flow" => Ok(Format::Flow),
            other => Err(crate::BadValue(format!(
                "unknown target format {other:?} (use http, json, curl, har or flow)"
            ))),
        }
    }
}

/// Reads targets of either format from a buffered input.
pub enum TargetReader<R: BufRead> {
    /// The http format.
    Http(HttpTargets<R>),
    /// JSON lines.
    Json(JsonTargets<R>),
    /// curl commands or a HAR file: read whole at the first target.
    Whole(Whole<R>),
}

/// A format read whole (curl, HAR): the input until the first target is
/// asked for, then the parsed targets.
pub struct Whole<R> {
    input: Option<R>,
    source: String,
    format: Format,
    defaults: Defaults,
    filter: Option<crate::har::Filter>,
    queue: std::collections::VecDeque<(Target, u64)>,
    notes: Vec<String>,
    line: u64,
}

impl<R: BufRead> Whole<R> {
    fn next(&mut self) -> Result<Option<Target>, TargetError> {
        self.load()?;
        Ok(self.queue.pop_front().map(|(t, line)| {
            self.line = line;
            t
        }))
    }

    fn load(&mut self) -> Result<(), TargetError> {
        if let Some(input) = self.input.take() {
            let mut bytes = Vec::new();
            if let Err(e) = input.take(MAX_FILE + 1).read_to_end(&mut bytes) {
                return Err(error(&self.source, 1, format!("cannot read targets: {e}")));
            }
            if bytes.len() as u64 > MAX_FILE {
                return Err(error(
                    &self.source,
                    1,
                    format!(
                        "larger than {} (the limit for a curl or HAR file)",
                        mib(MAX_FILE)
                    ),
                ));
            }
            if bytes.starts_with(BOM) {
                bytes.drain(..BOM.len());
            }
            let text = String::from_utf8(bytes).map_err(|e| {
                let ok = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let line = 1 + ok.iter().filter(|&&b| b == b'\n').count() as u64;
                error(&self.source, line, "bad target: not UTF-8 text".into())
            })?;
            if self.format == Format::Curl {
                let mut c = crate::CurlTargets::parse(&text, &self.source, &self.defaults)?;
                self.notes = c.take_notes();
                while let Some(t) = c.next_target() {
                    self.queue.push_back(t);
                }
            } else {
                let filter = self.filter.as_ref();
                let mut h = crate::HarTargets::parse(&text, &self.source, &self.defaults, filter)?;
                while let Some(t) = h.next_target() {
                    self.queue.push_back(t);
                }
            }
        }
        Ok(())
    }
}

impl<R: BufRead> TargetReader<R> {
    /// A reader of `format` on `input`, naming it `source_name` in errors.
    pub fn new(input: R, source_name: &str, format: Format, defaults: Defaults) -> Self {
        match format {
            Format::Http => TargetReader::Http(HttpTargets::new(input, source_name, defaults)),
            Format::Flow => TargetReader::Http(HttpTargets::flow(input, source_name, defaults)),
            Format::Json => TargetReader::Json(JsonTargets::new(input, source_name, defaults)),
            Format::Curl | Format::Har => TargetReader::Whole(Whole {
                input: Some(input),
                source: source_name.to_string(),
                format,
                defaults,
                filter: None,
                queue: Default::default(),
                notes: Vec::new(),
                line: 0,
            }),
        }
    }

    /// A flow's reader (`-format flow`), to read whole with
    /// [`crate::Flow::from_targets`]; `None` for other formats.
    pub fn into_flow(self) -> Option<HttpTargets<R>> {
        match self {
            TargetReader::Http(h) if h.is_flow() => Some(h),
            _ => None,
        }
    }

    /// Keeps only the HAR entries whose URL matches `filter` (`-har-filter`).
    pub fn with_har_filter(mut self, filter: Option<crate::har::Filter>) -> Self {
        if let TargetReader::Whole(w) = &mut self {
            w.filter = filter;
        }
        self
    }

    /// Reads a format that is read whole (curl, HAR) now, so that its
    /// errors and notes come before anything is sent; the others are read
    /// as targets are asked for.
    pub fn load(&mut self) -> Result<(), TargetError> {
        match self {
            TargetReader::Whole(w) => w.load(),
            _ => Ok(()),
        }
    }

    /// Notes for the user on what was read (curl's `-k`, `--http2`: honoured
    /// only with barrage's own flags), once.
    pub fn take_notes(&mut self) -> Vec<String> {
        match self {
            TargetReader::Whole(w) => std::mem::take(&mut w.notes),
            _ => Vec::new(),
        }
    }

    /// The next target; `Ok(None)` when the input ends.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Target>, TargetError> {
        match self {
            TargetReader::Http(r) => r.next(),
            TargetReader::Json(r) => r.next(),
            TargetReader::Whole(r) => r.next(),
        }
    }

    /// The line the last target read begins on.
    pub fn line(&self) -> u64 {
        match self {
            TargetReader::Http(r) => r.start_line(),
            TargetReader::Json(r) => r.line(),
            TargetReader::Whole(w) => w.line,
        }
    }

    /// The next target with its placeholders parsed against the `-feed`
    /// `columns` (a bad one is an error at the target's line).
    pub fn next_sendable(
        &mut self,
        columns: &[String],
    ) -> Result<Option<crate::Sendable>, TargetError> {
        let Some(t) = self.next()? else {
            return Ok(None);
        };
        if !crate::has_placeholders(&t) {
            return Ok(Some(crate::Sendable::Plain(t)));
        }
        match crate::TemplatedTarget::parse(&t, columns) {
            Ok(tt) => Ok(Some(crate::Sendable::Templated(tt))),
            Err(e) => Err(error(self.source(), self.line(), e.0)),
        }
    }

    fn source(&self) -> &str {
        match self {
            TargetReader::Http(r) => r.source(),
            TargetReader::Json(r) => r.source(),
            TargetReader::Whole(w) => &w.source,
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
