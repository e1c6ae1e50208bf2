//! Streamed answers read event by event (`-stream`): server-sent events,
//! NDJSON lines, or HTTP chunks and HTTP/2 DATA frames, each event stamped
//! with when the read that completed it returned.
//!
//! A request's splitter and stamps live on a [`Tape`] that the client
//! makes before the exchange and reads after it, so that an answer cut by
//! `-timeout` (its exchange dropped mid-way) keeps the events that came.
//! The rooms tell an observer what they read (`core/observe.rs`) and know
//! nothing of events; a streamed exchange's observer is [`OnTask`], which
//! reaches the request's tape through the task (sizes: see there).

use std::{
    sync::{Arc, Mutex},
    time::Instant,
};

use crate::core::observe::Observe;

pub(crate) mod llm;
mod spec;

pub use llm::{ask_usage, ask_usage_in};
pub use spec::{BadStream, Llm, LlmUsage, StreamMode, StreamSpec};

pub use crate::core::observe::Taped;
pub use crate::core::stamps::{size_class, Stamps};

/// A request's splitter and stamps, shared by the client and its
/// exchange: one pointer, as a streamed request's future holds it twice
/// (see `send/taped.rs`).
#[derive(Clone, Debug)]
pub struct Tape(Arc<TapeInner>);

/// A tape's block: 256 bytes, one of mimalloc's size classes (held by
/// every open stream).
#[derive(Debug)]
struct TapeInner {
    /// When its stamps count from.
    base: Instant,
    inner: Mutex<(Splitter, Taped)>,
}

impl Tape {
    /// An empty tape for `spec`, whose stamps count from now.
    pub fn new(spec: &Arc<StreamSpec>) -> Self {
        Tape(Arc::new(TapeInner {
            base: Instant::now(),
            inner: Mutex::new((Splitter::new(spec.clone()), Taped::default())),
        }))
    }

    /// When its stamps count from.
    pub fn base(&self) -> Instant {
        self.0.base
    }

    /// Stamps the events the splitter completed since the last stamp
    /// with now (one clock read for all: they came in one read).
    fn stamp(&self, splitter: &mut Splitter, taped: &mut Taped) {
        let (n, malformed) = (
            std::mem::take(&mut splitter.pending),
            std::mem::take(&mut splitter.malformed),
        );
        if n > 0 {
            let ns = Instant::now()
                .saturating_duration_since(self.0.base)
                .as_nanos() as u64;
            let cap = splitter.spec.max_events;
            let room = cap.saturating_sub(taped.stamps.len()).min(n as usize);
            taped.stamps.push(ns, room);
            taped.count += u64::from(n);
        }
        taped.malformed += u64::from(malformed);
        if taped.error.is_none() {
            taped.error = splitter.error().map(Box::from);
        }
        for (i, p) in splitter.spec.patterns.iter().enumerate().take(64) {
            let text = p.as_str();
            if splitter.matched & (1 << i) != 0 && !taped.matched.iter().any(|t| t == text) {
                taped.matched.push(text.to_string());
            }
        }
    }

    /// What it holds, taken.
    pub fn take(&self) -> Taped {
        let mut inner = self.0.inner.lock().expect("tape");
        let tokens = inner.0.rare.as_mut().and_then(|r| r.tokens.take());
        let mut taped = std::mem::take(&mut inner.1);
        taped.tokens = tokens;
        taped
    }

    /// Whether the stream was refused (an event past `-max-event-bytes`).
    fn refused(&self) -> bool {
        let inner = self.0.inner.lock().expect("tape");
        inner.1.error.is_some() || inner.0.error().is_some()
    }
}

impl Tape {
    /// Runs `f` on the splitter, then stamps what it completed.
    fn on(&self, f: impl FnOnce(&mut Splitter, &mut Taped)) {
        let mut inner = self.0.inner.lock().expect("tape");
        let (splitter, taped) = &mut *inner;
        f(splitter, taped);
        self.stamp(splitter, taped);
    }
}

impl Observe for Tape {
    fn head(&self, content_type: Option<&[u8]>) {
        self.on(|s, _| s.head(content_type));
    }

    fn data(&self, bytes: &[u8], boundary: bool) {
        self.on(|s, t| {
            t.bytes = t.bytes.saturating_add(bytes.len() as u64);
            s.data(bytes);
            if boundary {
                s.boundary();
            }
        });
    }

    fn boundary(&self) {
        self.on(|s, _| s.boundary());
    }

    fn message(&self, data: &[u8]) -> bool {
        let mut counted = true;
        self.on(|s, _| {
            s.event(data);
            counted = s.pending > 0;
        });
        counted
    }

    fn finish(&self) {
        self.on(|s, t| s.finish(t.count, t.malformed));
    }
}

/// The observer a streamed exchange is given: the tape of the request
/// being polled, reached through the task ([`scoped`]). Zero-sized: a
/// tape's pointer carried down the exchange instead was held three times
/// (the client's exchange, the engine's, the connection's), and made a
/// streamed request's exchange future 536 bytes, past mimalloc's 512
/// class (129 bytes more per open stream, measured by
/// `tests/held_heap.rs`). The rooms see only [`Observe`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OnTask;

impl Observe for OnTask {
    fn head(&self, content_type: Option<&[u8]>) {
        let _ = TAPE.try_with(|t| t.head(content_type));
    }

    fn data(&self, bytes: &[u8], boundary: bool) {
        let _ = TAPE.try_with(|t| t.data(bytes, boundary));
    }

    fn boundary(&self) {
        let _ = TAPE.try_with(Tape::boundary);
    }

    fn message(&self, data: &[u8]) -> bool {
        TAPE.try_with(|t| t.message(data)).unwrap_or(true)
    }

    fn finish(&self) {
        let _ = TAPE.try_with(Tape::finish);
    }
}

tokio::task_local! {
    /// The tape of the request whose exchange is being polled ([`OnTask`]).
    static TAPE: Tape;
}

/// `f` with `tape` as the tape [`OnTask`] reaches.
pub(crate) fn scoped<F: std::future::Future>(
    tape: Tape,
    f: F,
) -> impl std::future::Future<Output = F::Output> {
    TAPE.scope(tape, f)
}

pin_project_lite::pin_project! {
    /// An exchange that ends as soon as its tape refuses the stream: the
    /// refusal is made while the exchange is polled, so it is looked at
    /// right after each poll, through the task's tape (no waker and no
    /// pointer kept: a streamed request's block stays at 224 bytes).
    pub(crate) struct UntilRefused<F> {
        #[pin]
        inner: F,
    }
}

impl<F> UntilRefused<F> {
    pub(crate) fn new(inner: F) -> Self {
        UntilRefused { inner }
    }
}

impl<F, T> std::future::Future for UntilRefused<F>
where
    F: std::future::Future<Output = Result<T, crate::Failure>>,
{
    type Output = Result<T, crate::Failure>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let polled = self.project().inner.poll(cx);
        if polled.is_pending() && TAPE.try_with(Tape::refused).unwrap_or(false) {
            return std::task::Poll::Ready(Err(crate::Failure("the stream was refused".into())));
        }
        polled
    }
}

/// Cuts one answer's body into events (see the module docs). Its
/// fields are narrow: it lives in every open stream's tape, whose block
/// is held at 256 bytes.
#[derive(Debug)]
pub(crate) struct Splitter {
    mode: StreamMode,
    spec: Arc<StreamSpec>,
    /// A line cut by a read.
    line: Vec<u8>,
    /// The SSE event's data so far, where something reads it (an
    /// `-event-filter` or an `event~` check); only its length otherwise
    /// (a buffer kept per open stream, and a copy per event, saved).
    data: Vec<u8>,
    data_len: u32,
    has_data: bool,
    /// The last byte was a CR (a CRLF may be cut between reads).
    after_cr: bool,
    /// Events completed since the last stamp (one read's).
    pending: u32,
    malformed: u32,
    /// Why the stream is refused, and `-llm`'s token counts: rare, so
    /// one pointer in every open stream's tape for both (a tape's block
    /// stays at 256 bytes).
    rare: Option<Box<Rare>>,
    /// Which patterns some event matched, a bit each (the first 64:
    /// a slice of flags cost every open stream 16 bytes).
    matched: u64,
    /// `-stream sse` on an answer of another `Content-Type`: which
    /// ([`OTHER_TYPES`]; 0: none of that), said if no event came.
    wrong_type: u8,
    /// No body byte seen yet (a leading BOM is skipped there).
    fresh: bool,
}

/// A splitter's rare parts ([`Splitter::rare`]).
#[derive(Debug, Default)]
struct Rare {
    error: Option<Box<str>>,
    tokens: Option<Box<barrage_model::Tokens>>,
}

/// The `Content-Type`s a `-stream sse` answer is named by when it is not
/// `text/event-stream` (kept as an index: a string would cost every open
/// stream 16 bytes).
const OTHER_TYPES: [&str; 7] = [
    "",
    "Content-Type text/plain",
    "Content-Type text/html",
    "Content-Type application/json",
    "Content-Type application/x-ndjson",
    "Content-Type application/octet-stream",
    "another Content-Type",
];

impl Splitter {
    fn new(spec: Arc<StreamSpec>) -> Splitter {
        Splitter {
            mode: spec.mode,
            line: Vec::new(),
            data: Vec::new(),
            data_len: 0,
            has_data: false,
            after_cr: false,
            pending: 0,
            malformed: 0,
            rare: None,
            matched: 0,
            wrong_type: 0,
            fresh: true,
            spec,
        }
    }

    /// The answer's head came: `auto` chooses by its `Content-Type`.
    pub(crate) fn head(&mut self, content_type: Option<&[u8]>) {
        // A new answer (after a redirect's): its own lines.
        self.line.clear();
        self.data.clear();
        self.data_len = 0;
        self.has_data = false;
        self.after_cr = false;
        self.fresh = true;
        self.mode = self.spec.mode;
        let ct = content_type
            .map(|c| String::from_utf8_lossy(c).to_ascii_lowercase())
            .unwrap_or_default();
        let essence = ct.split(';').next().unwrap_or("").trim().to_string();
        // An answer that names no type is taken as what was asked for.
        self.wrong_type =
            if self.mode != StreamMode::Sse || essence == "text/event-stream" || essence.is_empty()
            {
                0
            } else {
                OTHER_TYPES
                    .iter()
                    .position(|t| t.strip_prefix("Content-Type ") == Some(essence.as_str()))
                    .unwrap_or(OTHER_TYPES.len() - 1) as u8
            };
        if self.mode != StreamMode::Auto {
            return;
        }
        self.mode = match essence.as_str() {
            "text/event-stream" => StreamMode::Sse,
            "application/x-ndjson"
            | "application/ndjson"
            | "application/jsonl"
            | "application/x-jsonlines"
            | "application/jsonlines"
            | "application/json-seq" => StreamMode::Ndjson,
            _ => StreamMode::Chunks,
        };
    }

    /// Body bytes, as they came.
    pub(crate) fn data(&mut self, bytes: &[u8]) {
        if self.error().is_some() || bytes.is_empty() {
            return;
        }
        // WHATWG: a leading U+FEFF is skipped (split over reads, rarely:
        // a BOM cut after its first byte is then read as text).
        let bytes = if std::mem::take(&mut self.fresh) && self.mode == StreamMode::Sse {
            bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
        } else {
            bytes
        };
        match self.mode {
            StreamMode::Chunks | StreamMode::Auto => {}
            StreamMode::Sse | StreamMode::Ndjson => self.lines(bytes),
        }
    }

    /// A chunk (or DATA frame, or a read of an unchunked body) ended:
    /// one event in chunks mode.
    pub(crate) fn boundary(&mut self) {
        if matches!(self.mode, StreamMode::Chunks | StreamMode::Auto) && self.error().is_none() {
            self.pending = self.pending.saturating_add(1);
        }
    }

    /// The body ended (`counted` events and `malformed` lines before the
    /// last read): a last line without its newline is an event too.
    pub(crate) fn finish(&mut self, counted: u64, malformed: u64) {
        if self.mode == StreamMode::Ndjson && !self.line.is_empty() && self.error().is_none() {
            let line = std::mem::take(&mut self.line);
            self.ndjson_line(&line);
        }
        let wrong = std::mem::take(&mut self.wrong_type);
        // Lines that were no SSE and no event, in an answer of another
        // type: not a stream at all, said so (it read as 0 events and
        // "malformed 5"). An answer of no lines at all stays a success.
        let bad_lines = malformed + u64::from(self.malformed);
        if wrong > 0 && counted == 0 && self.pending == 0 && bad_lines > 0 && self.error().is_none()
        {
            self.refuse(
                format!(
                    "-stream sse: no event in an answer of {}, not text/event-stream (-stream auto reads it by its type)",
                    OTHER_TYPES[usize::from(wrong)]
                )
                .into(),
            );
        }
    }

    fn lines(&mut self, bytes: &[u8]) {
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' && self.after_cr {
                // The LF of a CRLF whose CR ended the line already.
                self.after_cr = false;
                start = i + 1;
                continue;
            }
            self.after_cr = false;
            if b == b'\n' || b == b'\r' {
                self.after_cr = b == b'\r';
                let piece = &bytes[start..i];
                if self.line.is_empty() {
                    self.one_line(piece);
                } else {
                    let mut line = std::mem::take(&mut self.line);
                    line.extend_from_slice(piece);
                    self.one_line(&line);
                    line.clear();
                    self.line = line;
                }
                start = i + 1;
                if self.error().is_some() {
                    return;
                }
            }
        }
        let rest = &bytes[start..];
        // A comment line is dropped whole: only its first byte is kept,
        // whatever its length (one over 1 MiB failed the record and lost
        // the next event).
        let comment = self.mode == StreamMode::Sse
            && (self.line.first() == Some(&b':')
                || (self.line.is_empty() && rest.first() == Some(&b':')));
        if comment {
            if self.line.is_empty() {
                self.line.push(b':');
            }
            return;
        }
        if self.line.len() + rest.len() > self.spec.max_event_bytes {
            self.too_long();
            return;
        }
        self.line.extend_from_slice(rest);
    }

    fn one_line(&mut self, line: &[u8]) {
        match self.mode {
            StreamMode::Ndjson => self.ndjson_line(line),
            _ => self.sse_line(line),
        }
    }

    fn ndjson_line(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.event(line);
    }

    /// An event's data, complete: counted if it passes the filter, and
    /// tried on the `event~` patterns.
    fn event(&mut self, data: &[u8]) {
        if self.spec.llm.is_some() {
            if !self.token_event(data) {
                return;
            }
        } else if !self.passes(data) {
            return;
        }
        self.pending = self.pending.saturating_add(1);
        for (i, r) in self.spec.patterns.iter().enumerate().take(64) {
            if self.matched & (1 << i) == 0 && r.is_match(data) {
                self.matched |= 1 << i;
            }
        }
    }

    /// One SSE line (WHATWG HTML, "event stream interpretation").
    fn sse_line(&mut self, line: &[u8]) {
        if line.is_empty() {
            if std::mem::take(&mut self.has_data) {
                self.data_len = 0;
                let mut data = std::mem::take(&mut self.data);
                if data.last() == Some(&b'\n') {
                    data.pop();
                }
                self.event(&data);
                data.clear();
                self.data = data;
            }
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => {
                let v = &line[at + 1..];
                (&line[..at], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let len = self.data_len as usize + value.len() + 1;
                if len > self.spec.max_event_bytes {
                    self.too_long();
                    return;
                }
                self.data_len = u32::try_from(len).unwrap_or(u32::MAX);
                if self.spec.filter.is_some()
                    || !self.spec.patterns.is_empty()
                    || self.spec.llm.is_some()
                {
                    self.data.extend_from_slice(value);
                    self.data.push(b'\n');
                }
                self.has_data = true;
            }
            b"event" | b"id" | b"retry" => {}
            _ => self.malformed = self.malformed.saturating_add(1),
        }
    }

    /// `-llm`: one chunk read for its usage and text; whether it is a
    /// token event.
    fn token_event(&mut self, data: &[u8]) -> bool {
        let rare = self.rare.get_or_insert_with(Default::default);
        llm::read_chunk(rare.tokens.get_or_insert_with(Default::default), data)
    }

    /// Why the stream is refused, if it is.
    fn error(&self) -> Option<&str> {
        self.rare.as_ref().and_then(|r| r.error.as_deref())
    }

    /// Refuses the stream for `why`.
    fn refuse(&mut self, why: Box<str>) {
        self.rare.get_or_insert_with(Default::default).error = Some(why);
    }

    /// Whether an event's data passes `-event-filter`: it holds the path,
    /// and its value there is neither null nor an empty string.
    fn passes(&self, data: &[u8]) -> bool {
        let Some((_, path)) = &self.spec.filter else {
            return true;
        };
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) else {
            return false;
        };
        // An empty string holds nothing either: vLLM's role chunk says
        // `"content":""` before the first token.
        crate::flow::check::lookup(&doc, path).is_some_and(|v| !v.is_null() && v != "")
    }

    fn too_long(&mut self) {
        self.refuse(
            format!(
                "an event longer than -max-event-bytes ({} bytes)",
                self.spec.max_event_bytes
            )
            .into(),
        );
        self.line = Vec::new();
        self.data = Vec::new();
    }
}

#[cfg(test)]
mod tests;
