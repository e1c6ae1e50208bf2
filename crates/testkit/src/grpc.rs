//! The test server's gRPC side: unary calls over HTTP/2, steered per
//! call by metadata, to test barrage's gRPC client against.
//!
//! - methods of `test.echo.Echo` answer; any other is UNIMPLEMENTED (12),
//!   trailers-only; server reflection answers too ([`crate::reflection`]);
//! - `Count` streams: `x-count: N` messages (3), each the request's
//!   message, the first `x-first-ms` (10) after the call, then one every
//!   `x-gap-ms` (10); then the status (`x-grpc-status`, 0);
//! - the reply is the request's message (echo), or `x-reply-bytes: N`
//!   bytes of `x`;
//! - `x-grpc-status: N` (and `x-grpc-message`) answers with that status;
//!   `x-trailers-only: 1` answers with headers only; `x-header-bytes: N`
//!   adds a header of N bytes;
//! - `x-delay-ms: N` waits first; `x-gzip: 1` compresses the reply
//!   (`grpc-encoding: gzip`); `x-reset: 1` resets the stream;
//! - `x-fault: F` answers wrongly, as grpc-go and ghz call an error:
//!   `http-204`, `http-302` (no gRPC at all), `short` (a prefix saying 100
//!   bytes, 10 sent), `stub` (a 3-byte body), `flag2` (compressed-flag
//!   2), `html` (`content-type: text/html`), `two` (two messages),
//!   `none` (OK without a message), `flood` (a 10-byte message, then
//!   bytes without end).

use std::{collections::VecDeque, convert::Infallible, io::Write, time::Duration};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::{body::Frame, HeaderMap, Response};

/// The response body type of the test server.
pub(crate) type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// A body of frames given up front: data, then trailers.
struct Frames(VecDeque<Frame<Bytes>>);

impl hyper::body::Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        std::task::Poll::Ready(self.0.pop_front().map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// Whether a request is a gRPC call.
pub(crate) fn is_grpc(h: &HeaderMap) -> bool {
    header(h, "content-type").is_some_and(|c| c.starts_with("application/grpc"))
}

fn grpc_headers(status: &str, message: Option<&str>) -> HeaderMap {
    let mut t = HeaderMap::new();
    if let Ok(v) = status.parse() {
        t.insert("grpc-status", v);
    }
    if let Some(v) = message.and_then(|m| m.parse().ok()) {
        t.insert("grpc-message", v);
    }
    t
}

/// The answer to a gRPC call (`Err` resets the stream).
pub(crate) async fn answer(
    path: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response<Body>, &'static str> {
    let base = || {
        let mut r = Response::new(Frames(VecDeque::new()).boxed());
        r.headers_mut()
            .insert("content-type", "application/grpc".parse().unwrap());
        r
    };
    if crate::reflection::is_reflection(path) && header(headers, "x-no-reflection").is_none() {
        let mut frames: VecDeque<Frame<Bytes>> = crate::reflection::answers(body)
            .iter()
            .map(|m| Frame::data(framed(0, m)))
            .collect();
        frames.push_back(Frame::trailers(grpc_headers("0", None)));
        let mut r = base();
        *r.body_mut() = Frames(frames).boxed();
        return Ok(r);
    }
    if path == "/test.echo.Echo/Count" {
        return Ok(count(headers, body));
    }
    if !path.starts_with("/test.echo.Echo/") {
        let mut r = base();
        r.headers_mut()
            .extend(grpc_headers("12", Some("unknown method")));
        return Ok(r);
    }
    if let Some(ms) = header(headers, "x-delay-ms").and_then(|v| v.parse().ok()) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if header(headers, "x-reset").is_some() {
        return Err("reset");
    }
    if let Some(f) = header(headers, "x-fault") {
        return Ok(fault(f));
    }
    let status = header(headers, "x-grpc-status").unwrap_or("0");
    let message = header(headers, "x-grpc-message");
    if header(headers, "x-trailers-only").is_some() {
        let mut r = base();
        r.headers_mut().extend(grpc_headers(status, message));
        return Ok(r);
    }
    let mut reply: Vec<u8> = match header(headers, "x-reply-bytes").and_then(|v| v.parse().ok()) {
        Some(n) => vec![b'x'; n],
        None => body.get(5..).unwrap_or_default().to_vec(),
    };
    let gzip = header(headers, "x-gzip").is_some();
    if gzip {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let _ = enc.write_all(&reply);
        reply = enc.finish().unwrap_or_default();
    }
    let mut frames = VecDeque::new();
    if status == "0" {
        frames.push_back(Frame::data(framed(u8::from(gzip), &reply)));
    }
    frames.push_back(Frame::trailers(grpc_headers(status, message)));
    let mut r = Response::new(Frames(frames).boxed());
    r.headers_mut()
        .insert("content-type", "application/grpc".parse().unwrap());
    if let Some(n) = header(headers, "x-header-bytes").and_then(|v| v.parse().ok()) {
        let big = "h".repeat(n);
        r.headers_mut().insert("x-big", big.parse().unwrap());
    }
    if gzip {
        r.headers_mut()
            .insert("grpc-encoding", "gzip".parse().unwrap());
    }
    Ok(r)
}

/// `message` with its prefix (`flag`: compressed).
fn framed(flag: u8, message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 5);
    out.push(flag);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out.into()
}

/// A body fed by the pacer: data frames, then trailers.
struct Fed(tokio::sync::mpsc::UnboundedReceiver<Frame<Bytes>>);

impl hyper::body::Body for Fed {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|f| f.map(Ok))
    }
}

/// `Count`: the request's message `x-count` times, `x-gap-ms` apart.
fn count(headers: &HeaderMap, body: &[u8]) -> Response<Body> {
    let num = |name: &str, or: u64| {
        header(headers, name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(or)
    };
    let (n, first, gap) = (
        num("x-count", 3),
        num("x-first-ms", 10),
        num("x-gap-ms", 10),
    );
    let status = header(headers, "x-grpc-status").unwrap_or("0").to_string();
    let message = framed(0, body.get(5..).unwrap_or_default());
    // At most 100,000 messages scripted (a frame each, held until due).
    let n = n.min(100_000);
    let mut script: Vec<(Duration, Frame<Bytes>)> = (0..n)
        .map(|i| {
            let at = Duration::from_millis(first + i * gap);
            (at, Frame::data(message.clone()))
        })
        .collect();
    let end = script.last().map_or(Duration::ZERO, |(at, _)| *at);
    script.push((end, Frame::trailers(grpc_headers(&status, None))));
    let rx = crate::pacer::pace(script);
    let mut r = Response::new(Fed(rx).boxed());
    r.headers_mut()
        .insert("content-type", "application/grpc".parse().unwrap());
    r
}

/// An endless body: `head`, then 64 KiB chunks of `x` for ever.
struct Endless(Option<Bytes>);

impl hyper::body::Body for Endless {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self
            .0
            .take()
            .unwrap_or_else(|| Bytes::from_static(&[b'x'; 65536]));
        std::task::Poll::Ready(Some(Ok(Frame::data(next))))
    }
}

/// The wrong answers of `x-fault`.
fn fault(f: &str) -> Response<Body> {
    let prefixed = |flag: u8, len: u32, bytes: &[u8]| {
        let mut v = vec![flag];
        v.extend_from_slice(&len.to_be_bytes());
        v.extend_from_slice(bytes);
        Bytes::from(v)
    };
    let ok = || grpc_headers("0", None);
    let frames: Vec<Frame<Bytes>> = match f {
        "short" => vec![
            Frame::data(prefixed(0, 100, b"0123456789")),
            Frame::trailers(ok()),
        ],
        "stub" => vec![
            Frame::data(Bytes::from_static(b"\0\0\0")),
            Frame::trailers(ok()),
        ],
        "flag2" => vec![Frame::data(prefixed(2, 1, b"x")), Frame::trailers(ok())],
        "two" => vec![
            Frame::data(prefixed(0, 1, b"a")),
            Frame::data(prefixed(0, 1, b"b")),
            Frame::trailers(ok()),
        ],
        "html" => vec![Frame::data(prefixed(0, 1, b"a")), Frame::trailers(ok())],
        "flood" => {
            let mut r = Response::new(Endless(Some(prefixed(0, 10, b"0123456789"))).boxed());
            r.headers_mut()
                .insert("content-type", "application/grpc".parse().unwrap());
            return r;
        }
        _ => vec![Frame::trailers(ok())],
    };
    let mut r = Response::new(Frames(frames.into()).boxed());
    let content_type = match f {
        "html" | "http-204" | "http-302" => "text/html",
        _ => "application/grpc",
    };
    r.headers_mut()
        .insert("content-type", content_type.parse().unwrap());
    if let Some(code) = f.strip_prefix("http-").and_then(|c| c.parse().ok()) {
        *r.status_mut() = hyper::StatusCode::from_u16(code).unwrap_or(hyper::StatusCode::OK);
        *r.body_mut() = Frames(VecDeque::new()).boxed();
        if code == 302 {
            r.headers_mut()
                .insert("location", "/elsewhere".parse().unwrap());
        }
    }
    r
}
