//! Reads HTTP/1.1 responses out of the bytes a connection receives: the
//! head with `httparse`, then the body as RFC 9112 §6.3 frames it. Pure
//! and synchronous: it is fed whatever a read returned, in pieces of any
//! size, and keeps bytes only while a head (or a chunk-size or trailer
//! line) is cut mid-way, so a connection waiting for its answer holds no
//! buffer.

use std::mem::MaybeUninit;

use crate::core::observe::{Observe, Unobserved};
pub use crate::core::shape::Limits;

/// Interim (1xx) responses skipped before the final one; one more is an
/// error. Go's transport allows 5 (`max1xxResponses`), so vegeta does.
pub const MAX_INTERIM: u32 = 5;

/// Longest chunk-size line, extensions included.
const MAX_CHUNK_LINE: usize = 4096;

/// Header lines parsed on the stack; a head with more is parsed again
/// with room for all of them (there is no limit on the count, only on the
/// head's bytes).
const STACK_HEADERS: usize = 64;

/// What one response told, as it is read.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Head {
    /// The final status code.
    pub code: u16,
    /// The final status line's reason phrase, as the server wrote it
    /// (the usual "OK" without an allocation of its own).
    pub reason: std::borrow::Cow<'static, str>,
    /// Header lines, with `-keep-headers`.
    pub headers: Vec<(String, String)>,
    /// `Location`, for a 3xx.
    pub location: Option<Box<[u8]>>,
}

/// Why a response could not be read. The connection is closed after any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The head is longer than the limit.
    #[error("response head larger than {0} bytes (-max-header-bytes)")]
    HeadTooLarge(usize),
    /// httparse refused the head.
    #[error("malformed HTTP response {0}")]
    BadHead(String),
    /// Too many interim responses.
    #[error("too many 1xx informational responses (more than {MAX_INTERIM})")]
    TooManyInterim,
    /// A bad `Content-Length`.
    #[error("bad Content-Length {0:?}")]
    BadLength(String),
    /// A bad chunk-size line.
    #[error("malformed chunked encoding")]
    BadChunk,
    /// Trailers longer than the head limit.
    #[error("chunked trailers larger than {0} bytes (-max-header-bytes)")]
    TrailersTooLarge(usize),
    /// The connection ended before the response did.
    #[error("unexpected EOF")]
    Eof,
}

/// Where in a response the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    /// This many body bytes still to come.
    Length(u64),
    /// The body runs until the connection closes.
    UntilClose,
    /// Chunked: at a chunk-size line.
    ChunkSize,
    /// Chunked: this many bytes of chunk data still to come.
    ChunkData(u64),
    /// Chunked: after a chunk's data, this many bytes of its CRLF seen.
    ChunkEnd(u8),
    /// Chunked: in the trailers; whether the last byte ended a line (and
    /// the trailer bytes so far).
    Trailers {
        at_line_start: bool,
        seen: usize,
    },
    Done,
}

/// What [`Framer::feed`] did with the bytes it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fed {
    /// All of them taken; the response goes on.
    More,
    /// The response ended after this many of them (the rest belong to
    /// the next response on the connection, or are the server's mistake).
    Complete(usize),
}

/// Reads one response at a time (see the module docs).
#[derive(Debug)]
pub struct Framer {
    limits: Limits,
    state: State,
    /// A head, chunk-size line or the like cut mid-way: its bytes so far.
    partial: Vec<u8>,
    /// Where the search for the head's end resumes in `partial`.
    scanned: u32,
    interim: u32,
    head_request: bool,
    /// Whether the connection may carry another request after this one.
    reusable: bool,
    head_done: bool,
    /// The response so far.
    pub head: Head,
    /// Body bytes received.
    pub bytes_in: u64,
    /// Body bytes kept.
    pub body: Vec<u8>,
}

impl Framer {
    /// Ready for the response to a request; `head_request` for HEAD
    /// (whose response has no body whatever its headers say).
    pub fn new(limits: Limits, head_request: bool) -> Self {
        Framer {
            limits,
            state: State::Head,
            partial: Vec::new(),
            scanned: 0,
            interim: 0,
            head_request,
            reusable: true,
            head_done: false,
            head: Head::default(),
            bytes_in: 0,
            body: Vec::new(),
        }
    }

    /// `-max-header-bytes`.
    fn head_max(&self) -> usize {
        self.limits.head_bytes as usize
    }

    /// Whether the final response's head has been read.
    pub fn head_done(&self) -> bool {
        self.head_done
    }

    /// Whether the response is complete.
    pub fn done(&self) -> bool {
        self.state == State::Done
    }

    /// Whether the connection can carry another request once this
    /// response is complete (not after `Connection: close`, an HTTP/1.0
    /// answer without keep-alive, or a body read until close).
    pub fn reusable(&self) -> bool {
        self.reusable && self.state == State::Done
    }

    /// Takes the next bytes the connection received.
    pub fn feed(&mut self, data: &[u8]) -> Result<Fed, FrameError> {
        self.feed_observed(data, &Unobserved)
    }

    /// [`Framer::feed`], telling `obs` of the head, the body's bytes and
    /// its chunks' ends (`-stream`; only when `Limits::stream` says so).
    pub(crate) fn feed_observed<O: Observe>(
        &mut self,
        data: &[u8],
        obs: &O,
    ) -> Result<Fed, FrameError> {
        let mut at = 0;
        while at < data.len() {
            let rest = &data[at..];
            at += match self.state {
                State::Head => self.feed_head(rest, obs)?,
                State::Length(left) => {
                    let n = (left.min(rest.len() as u64)) as usize;
                    self.take_body(&rest[..n], obs);
                    if self.limits.stream {
                        obs.boundary();
                    }
                    self.state = if left == n as u64 {
                        State::Done
                    } else {
                        State::Length(left - n as u64)
                    };
                    n
                }
                State::UntilClose => {
                    self.take_body(rest, obs);
                    if self.limits.stream {
                        obs.boundary();
                    }
                    rest.len()
                }
                State::ChunkSize => self.feed_chunk_size(rest)?,
                State::ChunkData(left) => {
                    let n = (left.min(rest.len() as u64)) as usize;
                    self.take_body(&rest[..n], obs);
                    self.state = if left == n as u64 {
                        if self.limits.stream {
                            obs.boundary();
                        }
                        State::ChunkEnd(0)
                    } else {
                        State::ChunkData(left - n as u64)
                    };
                    n
                }
                State::ChunkEnd(seen) => {
                    let want = if seen == 0 { b'\r' } else { b'\n' };
                    if rest[0] != want {
                        return Err(FrameError::BadChunk);
                    }
                    self.state = if seen == 0 {
                        State::ChunkEnd(1)
                    } else {
                        State::ChunkSize
                    };
                    1
                }
                State::Trailers { .. } => self.feed_trailers(rest)?,
                State::Done => return Ok(Fed::Complete(at)),
            };
            if self.state == State::Done {
                return Ok(Fed::Complete(at));
            }
        }
        Ok(if self.state == State::Done {
            Fed::Complete(at)
        } else {
            Fed::More
        })
    }

    /// The connection closed: the end of a body read until close, else an
    /// error.
    pub fn eof(&mut self) -> Result<(), FrameError> {
        match self.state {
            State::UntilClose | State::Done => {
                self.state = State::Done;
                Ok(())
            }
            _ => Err(FrameError::Eof),
        }
    }

    /// Whether any byte of the response has arrived (a connection closed
    /// before that may be retried elsewhere: the server never saw the
    /// request, or dropped it unanswered).
    pub fn started(&self) -> bool {
        self.state != State::Head || !self.partial.is_empty() || self.interim > 0
    }

    /// Whether the body is also cut into events (`-stream`).
    pub(crate) fn streams(&self) -> bool {
        self.limits.stream
    }

    fn take_body(&mut self, bytes: &[u8], obs: &impl Observe) {
        self.bytes_in += bytes.len() as u64;
        if self.limits.stream {
            obs.data(bytes, false);
        }
        let room = if self.limits.keep_body < 0 {
            bytes.len()
        } else {
            (self.limits.keep_body as usize)
                .saturating_sub(self.body.len())
                .min(bytes.len())
        };
        self.body.extend_from_slice(&bytes[..room]);
    }

    /// Head bytes: parsed straight from `rest` when the whole head is in
    /// it (the usual case, no copy), else gathered in `partial`.
    fn feed_head(&mut self, rest: &[u8], obs: &impl Observe) -> Result<usize, FrameError> {
        if self.partial.is_empty() {
            if let Some(end) = head_end(rest, 0) {
                if end > self.head_max() {
                    return Err(FrameError::HeadTooLarge(self.head_max()));
                }
                self.parse_head(&rest[..end], obs)?;
                return Ok(end);
            }
            if rest.len() > self.head_max() {
                return Err(FrameError::HeadTooLarge(self.head_max()));
            }
            self.partial.extend_from_slice(rest);
            self.scanned = 0;
            return Ok(rest.len());
        }
        let before = self.partial.len();
        // Room for the rest of a head within the limit, and no more.
        let take = rest
            .len()
            .min(self.head_max() + 4 - before.min(self.head_max()));
        self.partial.extend_from_slice(&rest[..take]);
        match head_end(&self.partial, self.scanned as usize) {
            Some(end) if end <= self.head_max() => {
                let partial = std::mem::take(&mut self.partial);
                self.parse_head(&partial[..end], obs)?;
                self.scanned = 0;
                // What followed the head in these bytes is read again.
                Ok(end - before)
            }
            Some(_) => Err(FrameError::HeadTooLarge(self.head_max())),
            None if self.partial.len() > self.head_max() => {
                Err(FrameError::HeadTooLarge(self.head_max()))
            }
            None => {
                // The end may straddle the next read: resume 3 back.
                self.scanned =
                    u32::try_from(self.partial.len().saturating_sub(3)).unwrap_or(u32::MAX);
                Ok(take)
            }
        }
    }

    /// Parses a whole head (`head` ends with its empty line) and sets up
    /// the body's framing.
    fn parse_head(&mut self, head: &[u8], obs: &impl Observe) -> Result<(), FrameError> {
        let mut stack = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; STACK_HEADERS];
        let mut heap: Vec<MaybeUninit<httparse::Header<'_>>> = Vec::new();
        let mut config = httparse::ParserConfig::default();
        config
            .allow_obsolete_multiline_headers_in_responses(true)
            .allow_spaces_after_header_name_in_responses(true)
            .allow_multiple_spaces_in_response_status_delimiters(true)
            // A line httparse cannot read (a NUL in a value, say) is
            // skipped, not the response: Go records such responses.
            .ignore_invalid_headers_in_responses(true);
        let mut resp = httparse::Response::new(&mut []);
        let mut result = config.parse_response_with_uninit_headers(&mut resp, head, &mut stack);
        if matches!(result, Err(httparse::Error::TooManyHeaders)) {
            // Room for every line the head could hold.
            let lines = head.iter().filter(|b| **b == b'\n').count() + 1;
            heap.resize_with(lines, MaybeUninit::uninit);
            resp = httparse::Response::new(&mut []);
            result = config.parse_response_with_uninit_headers(&mut resp, head, &mut heap);
        }
        match result {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => {
                return Err(FrameError::BadHead("head (cut short)".into()))
            }
            Err(httparse::Error::HeaderValue) if head.iter().any(|b| is_odd_control(*b)) => {
                // Control bytes (a NUL, say) in a value: read as spaces,
                // as Go's reader lets them through.
                let cleaned: Vec<u8> = head
                    .iter()
                    .map(|b| if is_odd_control(*b) { b' ' } else { *b })
                    .collect();
                return self.parse_head(&cleaned, obs);
            }
            Err(e) => return Err(FrameError::BadHead(describe(e, head))),
        }
        let code = resp.code.unwrap_or(0);
        let version = resp.version.unwrap_or(1);
        // 1xx but 101 (a final answer) is interim: skipped.
        if (100..200).contains(&code) && code != 101 {
            self.interim += 1;
            if self.interim > MAX_INTERIM {
                return Err(FrameError::TooManyInterim);
            }
            return Ok(());
        }
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut encoded = false;
        let mut close = version == 0;
        let mut content_type = None;
        for h in resp.headers.iter() {
            let name = h.name;
            if name.eq_ignore_ascii_case("content-length") {
                // from_utf8 checks faster than the lossy walk (0.36% of a
                // ring thread at 20,000/s); lossy only for the error.
                let text = match std::str::from_utf8(h.value) {
                    Ok(t) => std::borrow::Cow::Borrowed(t),
                    Err(_) => String::from_utf8_lossy(h.value),
                };
                // Several values (in one line or several) must agree.
                for v in text.split(',') {
                    let n: u64 = v
                        .trim()
                        .parse()
                        .map_err(|_| FrameError::BadLength(text.to_string()))?;
                    if length.is_some_and(|l| l != n) {
                        return Err(FrameError::BadLength(text.to_string()));
                    }
                    length = Some(n);
                }
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                encoded = true;
                // chunked must be the last coding.
                chunked = h
                    .value
                    .rsplit(|b| *b == b',')
                    .next()
                    .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            } else if name.eq_ignore_ascii_case("connection") {
                for token in h.value.split(|b| *b == b',') {
                    let token = token.trim_ascii();
                    if token.eq_ignore_ascii_case(b"close") {
                        close = true;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && version == 0 {
                        close = false;
                    }
                }
            } else if name.eq_ignore_ascii_case("content-type") && self.limits.stream {
                content_type = Some(h.value);
            } else if name.eq_ignore_ascii_case("location") && (300..400).contains(&code) {
                self.head.location = Some(h.value.into());
            }
            if self.limits.keep_headers
                && self.head.headers.len() < barrage_model::Hit::MAX_HEADERS
                && (!self.limits.jar_only
                    || name.eq_ignore_ascii_case("set-cookie")
                    || name.eq_ignore_ascii_case("location"))
            {
                self.head.headers.push((
                    name.to_string(),
                    String::from_utf8_lossy(h.value).into_owned(),
                ));
            }
        }
        if self.limits.stream {
            obs.head(content_type);
        }
        self.head.code = code;
        self.head.reason = match resp.reason.unwrap_or("") {
            "OK" => "OK".into(),
            other => barrage_model::words::server_words(other.as_bytes()).into(),
        };
        self.head_done = true;
        self.reusable = !close;
        self.state = if self.head_request || code == 204 || code == 304 || code == 101 {
            if code == 101 {
                self.reusable = false;
            }
            State::Done
        } else if encoded {
            if chunked {
                State::ChunkSize
            } else {
                self.reusable = false;
                State::UntilClose
            }
        } else if let Some(n) = length {
            if n == 0 {
                State::Done
            } else {
                State::Length(n)
            }
        } else {
            self.reusable = false;
            State::UntilClose
        };
        // Transfer-Encoding with Content-Length: the connection is not
        // to be trusted afterwards (RFC 9112 §6.3).
        if encoded && length.is_some() {
            self.reusable = false;
        }
        Ok(())
    }

    fn feed_chunk_size(&mut self, rest: &[u8]) -> Result<usize, FrameError> {
        let (line, before): (&[u8], usize) = if self.partial.is_empty() {
            (rest, 0)
        } else {
            let before = self.partial.len();
            let take = rest
                .len()
                .min(MAX_CHUNK_LINE + 2 - before.min(MAX_CHUNK_LINE));
            self.partial.extend_from_slice(&rest[..take]);
            (&self.partial, before)
        };
        match httparse::parse_chunk_size(line) {
            Ok(httparse::Status::Complete((used, size))) => {
                self.partial.clear();
                self.state = if size == 0 {
                    State::Trailers {
                        at_line_start: true,
                        seen: 0,
                    }
                } else {
                    State::ChunkData(size)
                };
                Ok(used - before)
            }
            Ok(httparse::Status::Partial) => {
                if line.len() > MAX_CHUNK_LINE {
                    return Err(FrameError::BadChunk);
                }
                if before == 0 {
                    self.partial.extend_from_slice(rest);
                    Ok(rest.len())
                } else {
                    Ok(self.partial.len() - before)
                }
            }
            Err(_) => Err(FrameError::BadChunk),
        }
    }

    /// Trailer lines after the last chunk, up to an empty line; skipped
    /// (bounded by the head limit), a byte at a time: rare and short.
    fn feed_trailers(&mut self, rest: &[u8]) -> Result<usize, FrameError> {
        let State::Trailers {
            mut at_line_start,
            mut seen,
        } = self.state
        else {
            return Ok(0);
        };
        for (i, &b) in rest.iter().enumerate() {
            seen += 1;
            if seen > self.head_max() {
                return Err(FrameError::TrailersTooLarge(self.head_max()));
            }
            match b {
                b'\n' if at_line_start => {
                    self.state = State::Done;
                    return Ok(i + 1);
                }
                b'\n' => at_line_start = true,
                // A CR at a line's start is part of the empty line.
                b'\r' if at_line_start => {}
                _ => at_line_start = false,
            }
        }
        self.state = State::Trailers {
            at_line_start,
            seen,
        };
        Ok(rest.len())
    }
}

/// Where the head ends in `buf` (just past its empty line), looking from
/// `from`: a CRLF CRLF, or a bare LF LF, which RFC 9112 lets recipients
/// accept.
fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(p) = buf[i..].iter().position(|b| *b == b'\n') {
        let nl = i + p;
        let next = nl + 1;
        if buf.get(next) == Some(&b'\n') {
            return Some(next + 1);
        }
        if buf.get(next) == Some(&b'\r') && buf.get(next + 1) == Some(&b'\n') {
            return Some(next + 2);
        }
        i = next;
    }
    None
}

/// A control byte httparse refuses in a header value (not tab, CR, LF).
fn is_odd_control(b: u8) -> bool {
    (b < 0x20 && b != b'\t' && b != b'\r' && b != b'\n') || b == 0x7f
}

/// httparse's error with the line it is about: "status line
/// \"HTTP/1.1 2x0 OK\"".
fn describe(e: httparse::Error, head: &[u8]) -> String {
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first.trim_ascii_end());
    let first: String = first.chars().take(80).collect();
    match e {
        httparse::Error::Status | httparse::Error::Version => {
            format!("status line {first:?}")
        }
        httparse::Error::HeaderName | httparse::Error::HeaderValue => {
            format!("head: invalid header line (after {first:?})")
        }
        other => format!("head: {other} (status line {first:?})"),
    }
}

#[cfg(test)]
mod tests;
