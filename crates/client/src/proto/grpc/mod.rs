//! gRPC unary and server-streaming calls over HTTP/2 (hyper): a target
//! with the method `GRPC` and a URL naming the method
//! (`http://host:50051/pkg.Service/Method`, h2c; `https://`, TLS with ALPN
//! h2). Its body is the request message, framed here (the 5-byte length
//! prefix); its header lines are metadata. A unary answer is one
//! length-prefixed message and a status from the trailers (or from the
//! headers: trailers-only); a server-streaming method's (as its
//! descriptors say: `-proto-set` or server reflection, `reflect.rs`) is
//! any number of messages, each an event on the request's tape, and the
//! record ends at the trailers.

pub(crate) mod call;
mod protos;

pub use crate::core::shape::GrpcStreams;

pub(crate) use protos::method_path;
pub use protos::{is_json, prepare_body, Prepared, ProtoSet};

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue};
use http_body_util::BodyExt;

/// The method of a gRPC target.
pub const GRPC_METHOD: &str = "GRPC";

pub use barrage_model::GRPC_FAILED;

/// gRPC's default limit on a received message (grpc-go's and ghz's).
pub const DEFAULT_MAX_MESSAGE: usize = 4 << 20;

/// A status code's name (grpc/codes).
pub fn status_name(code: u32) -> &'static str {
    match code {
        0 => "OK",
        1 => "CANCELLED",
        2 => "UNKNOWN",
        3 => "INVALID_ARGUMENT",
        4 => "DEADLINE_EXCEEDED",
        5 => "NOT_FOUND",
        6 => "ALREADY_EXISTS",
        7 => "PERMISSION_DENIED",
        8 => "RESOURCE_EXHAUSTED",
        9 => "FAILED_PRECONDITION",
        10 => "ABORTED",
        11 => "OUT_OF_RANGE",
        12 => "UNIMPLEMENTED",
        13 => "INTERNAL",
        14 => "UNAVAILABLE",
        15 => "DATA_LOSS",
        16 => "UNAUTHENTICATED",
        _ => "UNKNOWN CODE",
    }
}

/// The error of a call that ended with `code`.
pub fn failed(code: u32, message: &str) -> String {
    let name = status_name(code);
    if message.is_empty() {
        format!("{GRPC_FAILED}{code} ({name})")
    } else {
        format!("{GRPC_FAILED}{code} ({name}): {message}")
    }
}

/// `message` framed: a flag byte (not compressed) and its length.
pub fn frame(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 5);
    out.push(0);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out.into()
}

/// The request headers a call adds to its metadata (unless given).
pub(crate) fn add_headers(h: &mut HeaderMap) {
    if !h.contains_key(header::CONTENT_TYPE) {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/grpc"),
        );
    }
    h.insert(header::TE, HeaderValue::from_static("trailers"));
}

/// `grpc-timeout` for `-timeout` (milliseconds; at most 8 digits).
pub(crate) fn timeout_header(t: std::time::Duration) -> HeaderValue {
    let ms = t.as_millis().clamp(1, 99_999_999);
    HeaderValue::from_str(&format!("{ms}m")).unwrap_or(HeaderValue::from_static("99999999m"))
}

/// What a call's answer came to.
pub(crate) struct Answer {
    /// The HTTP status.
    pub code: u16,
    /// The message's bytes (decompressed), up to `keep` of them.
    pub body: Vec<u8>,
    /// The message's size.
    pub bytes_in: u64,
    /// The error, when the status is not OK (or the answer is not gRPC).
    pub error: Option<String>,
    /// The response headers and trailers, with `-keep-headers`.
    pub headers: Vec<(String, String)>,
}

fn status_of(h: &HeaderMap) -> Option<(u32, String)> {
    let code = h.get("grpc-status")?.to_str().ok()?.trim().parse().ok()?;
    let message = h
        .get("grpc-message")
        .map(|m| {
            // Server-chosen words: cut like a reason phrase (issue 29).
            let decoded = percent_encoding::percent_decode(m.as_bytes()).collect::<Vec<u8>>();
            barrage_model::words::server_words(&decoded)
        })
        .unwrap_or_default();
    Some((code, message))
}

/// The gRPC code of a call answered with an HTTP status other than 200
/// (gRPC's "HTTP to gRPC status code mapping", as grpc-go applies it).
fn code_of_http(status: u16) -> u32 {
    match status {
        400 => 13,
        401 => 16,
        403 => 7,
        404 => 12,
        429 | 502 | 503 | 504 => 14,
        _ => 2,
    }
}

/// Why a head is not a gRPC answer (grpc-go's words), if it is not one.
fn not_grpc(head: &http::response::Parts) -> Option<(u32, String)> {
    let status = head.status.as_u16();
    let content_type = head.headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes());
    let is_grpc = content_type.is_some_and(|c| {
        c == b"application/grpc"
            || c.starts_with(b"application/grpc+")
            || c.starts_with(b"application/grpc;")
    });
    if status == 200 && is_grpc {
        return None;
    }
    let mut why = Vec::new();
    if status != 200 {
        why.push(format!(
            "unexpected HTTP status code received from server: {status} ({})",
            head.status.canonical_reason().unwrap_or("")
        ));
    }
    if !is_grpc {
        let c = content_type
            .map(barrage_model::words::server_words)
            .unwrap_or_default();
        why.push(format!("transport: received unexpected content-type {c:?}"));
    }
    Some((code_of_http(status), why.join("; ")))
}

/// An answer's messages as its DATA frames bring them, each at most `max`
/// bytes (or the call fails). Unary: the first message kept, anything
/// after it a fault. Streaming: each whole message handed over in turn
/// ([`Messages::take_done`]). What a call buffers is bounded by `max` plus a
/// prefix, whatever the server sends (issue 29: a prefix declaring 10
/// bytes followed by an endless body reached 4.2 GB).
pub(crate) struct Messages {
    max: usize,
    /// Server streaming: any number of messages.
    streaming: bool,
    /// Streaming: whole messages not yet taken.
    done: Vec<(bool, Vec<u8>)>,
    prefix: [u8; 5],
    /// Bytes of the current prefix in; 5 while inside a message's bytes,
    /// 0 between messages.
    have: usize,
    /// The current message's declared length, and its bytes in.
    len: usize,
    got: usize,
    messages: u32,
    message: Vec<u8>,
}

/// Why an answer's DATA cannot be a unary answer.
#[derive(Debug, PartialEq)]
pub(crate) enum Fault {
    /// The first message's declared length, above the limit.
    TooBig(usize),
    /// A compressed-flag other than 0 or 1.
    Flag(u8),
    /// A second message.
    Second,
    /// The answer ended inside a message: bytes of it got, of its length.
    Cut(usize, usize),
    /// The answer ended inside a message's 5-byte prefix, this far.
    CutPrefix(usize),
    /// A compressed message without `grpc-encoding`.
    NoEncoding,
    /// Gzip that does not decompress.
    Gzip(String),
    /// A message over the limit once decompressed.
    TooBigPlain,
}

impl Fault {
    /// The record's error (grpc-go's code and words).
    fn error(&self, max: usize) -> String {
        match self {
            Fault::TooBig(n) => failed(
                8,
                &format!("grpc: received message larger than max ({n} vs. {max})"),
            ),
            Fault::Flag(f) => failed(
                13,
                &format!("grpc: received unexpected payload format {f}"),
            ),
            Fault::Second => failed(
                13,
                "cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message",
            ),
            Fault::Cut(got, len) => failed(
                13,
                &format!("grpc: the answer ended inside its message ({got} of {len} bytes)"),
            ),
            Fault::CutPrefix(n) => failed(
                13,
                &format!("grpc: the answer ended inside a message's prefix ({n} of 5 bytes)"),
            ),
            Fault::NoEncoding => failed(13, "grpc: a compressed message without grpc-encoding"),
            Fault::Gzip(e) => failed(13, &format!("grpc: decompressing the message: {e}")),
            Fault::TooBigPlain => failed(
                8,
                &format!("grpc: received message after decompression larger than max ({max})"),
            ),
        }
    }
}

impl Messages {
    #[cfg(test)]
    pub(crate) fn new(max: usize) -> Self {
        Self::reading(max, false)
    }

    /// A reader of unary answers, or of streams.
    pub(crate) fn reading(max: usize, streaming: bool) -> Self {
        Messages {
            max,
            streaming,
            done: Vec::new(),
            prefix: [0; 5],
            have: 0,
            len: 0,
            got: 0,
            messages: 0,
            message: Vec::new(),
        }
    }

    /// Takes in one DATA frame's bytes.
    pub(crate) fn feed(&mut self, mut d: &[u8]) -> Result<(), Fault> {
        while !d.is_empty() {
            if self.have < 5 {
                let take = (5 - self.have).min(d.len());
                self.prefix[self.have..self.have + take].copy_from_slice(&d[..take]);
                self.have += take;
                d = &d[take..];
                if self.have < 5 {
                    break;
                }
                self.messages += 1;
                if self.messages > 1 && !self.streaming {
                    return Err(Fault::Second);
                }
                if self.prefix[0] > 1 {
                    return Err(Fault::Flag(self.prefix[0]));
                }
                self.len = u32::from_be_bytes([
                    self.prefix[1],
                    self.prefix[2],
                    self.prefix[3],
                    self.prefix[4],
                ]) as usize;
                if self.len > self.max {
                    return Err(Fault::TooBig(self.len));
                }
                self.got = 0;
                self.message = Vec::with_capacity(self.len.min(64 << 10));
                if self.len == 0 {
                    self.whole();
                }
            } else {
                let take = (self.len - self.got).min(d.len());
                self.message.extend_from_slice(&d[..take]);
                self.got += take;
                d = &d[take..];
                if self.got == self.len {
                    self.whole();
                }
            }
        }
        Ok(())
    }

    /// The current message is whole: kept (unary) or handed over.
    fn whole(&mut self) {
        self.have = 0;
        if self.streaming {
            let m = std::mem::take(&mut self.message);
            self.done.push((self.prefix[0] == 1, m));
        }
    }

    /// Streaming: the whole messages since the last call, with whether
    /// each is compressed.
    pub(crate) fn take_done(&mut self) -> std::vec::Drain<'_, (bool, Vec<u8>)> {
        self.done.drain(..)
    }

    /// At the end of the answer: the message (compressed or not), none,
    /// or the error of an answer that ended inside one.
    pub(crate) fn finish(self) -> Result<Option<(bool, Vec<u8>)>, Fault> {
        match self.have {
            // A stream handed its messages over as they came.
            0 if self.messages == 0 || self.streaming => Ok(None),
            0 => Ok(Some((self.prefix[0] == 1, self.message))),
            5 => Err(Fault::Cut(self.got, self.len)),
            n => Err(Fault::CutPrefix(n)),
        }
    }
}

/// Reads a call's answer: its head, its one message (at most
/// `max_message` bytes, decompressed when `grpc-encoding` says gzip), or
/// with `streaming` each of its messages as an event, and its status.
/// What grpc-go calls an error is one here: an answer that is not gRPC
/// (its HTTP status, its content-type), a message cut short, an unknown
/// compressed-flag, a second message of a unary call, OK without a
/// message from a unary call.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn read<O: crate::core::observe::Observe>(
    resp: http::Response<hyper::body::Incoming>,
    max_message: usize,
    keep: i64,
    keep_headers: bool,
    streaming: bool,
    fail: &(dyn Fn(&dyn std::error::Error) -> String + Sync),
    obs: O,
) -> Answer {
    let (head, mut incoming) = resp.into_parts();
    let mut out = Answer {
        code: head.status.as_u16(),
        body: Vec::new(),
        bytes_in: 0,
        error: None,
        headers: Vec::new(),
    };
    let keep_pairs = |h: &HeaderMap, out: &mut Vec<(String, String)>| {
        for (k, v) in h.iter().take(barrage_model::Hit::MAX_HEADERS) {
            out.push((
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            ));
        }
    };
    if keep_headers {
        keep_pairs(&head.headers, &mut out.headers);
    }
    // Not gRPC at all: the call fails on its head (the stream is reset
    // when `incoming` drops).
    if let Some((code, why)) = not_grpc(&head) {
        out.error = Some(failed(code, &why));
        return out;
    }
    // Trailers-only: the status in the head, no body.
    let mut status = status_of(&head.headers);
    let gzip = head
        .headers
        .get("grpc-encoding")
        .is_some_and(|e| e.as_bytes() == b"gzip");
    let room = usize::try_from(keep).unwrap_or(usize::MAX);
    let mut reader = Messages::reading(max_message, streaming);
    let mut fault = None;
    while let Some(frame) = incoming.frame().await {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => {
                out.code = 0;
                out.error = Some(fail(&e));
                return out;
            }
        };
        if let Some(d) = frame.data_ref() {
            if let Err(f) = reader.feed(d) {
                // Nothing more is read: dropping the body resets the
                // stream, as grpc-go cancels it.
                fault = Some(f);
                break;
            }
            // A stream's messages: each an event, kept up to -max-body.
            for (compressed, message) in reader.take_done() {
                match plain(compressed, gzip, message, max_message) {
                    Ok(m) => {
                        obs.message(&m);
                        out.bytes_in += m.len() as u64;
                        let take = room.saturating_sub(out.body.len()).min(m.len());
                        out.body.extend_from_slice(&m[..take]);
                    }
                    Err(e) => {
                        out.error = Some(e.error(max_message));
                        return out;
                    }
                }
            }
        } else if let Some(t) = frame.trailers_ref() {
            if keep_headers {
                keep_pairs(t, &mut out.headers);
            }
            status = status_of(t).or(status);
        }
    }
    if let Some(f) = fault {
        out.error = Some(f.error(max_message));
        return out;
    }
    let Some((code, message)) = status else {
        out.error = Some(failed(13, "grpc: the answer has no grpc-status"));
        return out;
    };
    if code != 0 {
        out.error = Some(failed(code, &message));
    }
    let found = match reader.finish() {
        Ok(m) => m,
        Err(e) => {
            out.error.get_or_insert(e.error(max_message));
            return out;
        }
    };
    if streaming {
        return out;
    }
    let Some((compressed, message)) = found else {
        if code == 0 {
            out.error = Some(failed(
                13,
                "cardinality violation: received no response message from non-server-streaming RPC",
            ));
        }
        return out;
    };
    let mut message = match plain(compressed, gzip, message, max_message) {
        Ok(m) => m,
        Err(e) => {
            out.error.get_or_insert(e.error(max_message));
            return out;
        }
    };
    out.bytes_in = message.len() as u64;
    message.truncate(room.min(message.len()));
    out.body = message;
    out
}

/// A message as sent (`compressed` as its flag said), decompressed when
/// `grpc-encoding` says gzip, at most `max` bytes after.
fn plain(compressed: bool, gzip: bool, message: Vec<u8>, max: usize) -> Result<Vec<u8>, Fault> {
    if !compressed {
        return Ok(message);
    }
    if !gzip {
        return Err(Fault::NoEncoding);
    }
    let mut plain = Vec::new();
    let mut dec = flate2::read::GzDecoder::new(&message[..]);
    let limit = (max + 1) as u64;
    if let Err(e) =
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut dec, limit), &mut plain)
    {
        return Err(Fault::Gzip(e.to_string()));
    }
    if plain.len() > max {
        return Err(Fault::TooBigPlain);
    }
    Ok(plain)
}

#[cfg(test)]
mod message_tests {
    use super::*;

    fn framed(flag: u8, len: u32, bytes: &[u8]) -> Vec<u8> {
        let mut v = vec![flag];
        v.extend_from_slice(&len.to_be_bytes());
        v.extend_from_slice(bytes);
        v
    }

    #[test]
    fn one_message_in_any_cuts() {
        let all = framed(0, 5, b"hello");
        for split in 0..all.len() {
            let mut u = Messages::new(100);
            u.feed(&all[..split]).unwrap();
            u.feed(&all[split..]).unwrap();
            assert_eq!(u.finish().unwrap(), Some((false, b"hello".to_vec())));
        }
        let mut u = Messages::new(100);
        u.feed(&framed(0, 0, b"")).unwrap();
        assert_eq!(u.finish().unwrap(), Some((false, Vec::new())));
        assert_eq!(Messages::new(100).finish().unwrap(), None);
    }

    #[test]
    fn a_stream_hands_over_each_message_whatever_the_cuts() {
        let mut all = framed(0, 5, b"hello");
        all.extend(framed(0, 0, b""));
        all.extend(framed(1, 3, b"abc"));
        for split in 0..all.len() {
            let mut m = Messages::reading(100, true);
            let mut got = Vec::new();
            m.feed(&all[..split]).unwrap();
            got.extend(m.take_done());
            m.feed(&all[split..]).unwrap();
            got.extend(m.take_done());
            assert_eq!(
                got,
                vec![
                    (false, b"hello".to_vec()),
                    (false, Vec::new()),
                    (true, b"abc".to_vec())
                ],
                "cut at {split}"
            );
            assert_eq!(m.finish().unwrap(), None);
        }
    }

    #[test]
    fn faults_are_named() {
        let mut u = Messages::new(100);
        u.feed(&framed(0, 100, b"0123456789")).unwrap();
        assert!(u
            .finish()
            .unwrap_err()
            .error(100)
            .contains("(10 of 100 bytes)"));
        let mut u = Messages::new(100);
        u.feed(b"\0\0\0").unwrap();
        assert!(u
            .finish()
            .unwrap_err()
            .error(100)
            .contains("prefix (3 of 5 bytes)"));
        assert_eq!(
            Messages::new(100).feed(&framed(2, 1, b"x")),
            Err(Fault::Flag(2))
        );
        assert_eq!(
            Messages::new(100).feed(&framed(0, 101, b"")),
            Err(Fault::TooBig(101))
        );
        let mut two = framed(0, 1, b"a");
        two.extend(framed(0, 1, b"b"));
        assert_eq!(Messages::new(100).feed(&two), Err(Fault::Second));
        // An endless body after a small message stops at the next prefix.
        let mut u = Messages::new(100);
        u.feed(&framed(0, 10, b"0123456789")).unwrap();
        assert_eq!(u.feed(&[7u8; 65536]), Err(Fault::Second));
    }
}
