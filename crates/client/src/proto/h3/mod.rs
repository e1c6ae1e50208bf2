//! HTTP/3 (h3 over quinn): `-http3` sends `https://` targets over QUIC
//! with prior knowledge. One connection per host and worker thread, shared
//! by every request (each a stream of its own) until it closes, with at
//! most `-h3-streams` requests on it at once (else the server's limit);
//! its handshake over a QUIC connection (`transport/quic.rs`) and one
//! exchange on it.

use std::convert::Infallible;
use std::sync::{
    atomic::{AtomicBool, Ordering},
    Arc,
};

use bytes::{Buf, Bytes};
use http::{header, Request};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{
    core::{observe::Observe, response::Answer, shape::Shape},
    proto::hyper::Fail,
    transport::quic,
    Response,
};

type Sender = ::h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// A handle to an HTTP/3 connection, cloned for each request on it.
#[derive(Clone)]
pub(crate) struct Conn {
    sender: Sender,
    /// The QUIC connection under it, for why it closed.
    quic: quinn::Connection,
    /// `-h3-streams`: requests on it at once (`None`: the server's limit).
    streams: Option<Arc<Semaphore>>,
    /// Set when the connection has closed (its driver ended).
    closed: Arc<AtomicBool>,
    /// The server's name, for a certificate's failure.
    host: Arc<str>,
    /// What opening it cost, and its ends.
    pub(crate) opened: Arc<crate::transport::opened::Opened>,
}

impl Conn {
    /// Whether it closed (a new one is opened for the next request).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire) || self.quic.close_reason().is_some()
    }
}

/// HTTP/3 over the QUIC connection `quic` (its control streams and
/// SETTINGS); the connection is driven on a task of its own, holding
/// `permit` (`-max-connections`) until it closes.
pub(crate) async fn handshake(
    quic: quinn::Connection,
    host: &str,
    streams: usize,
    max_header_bytes: usize,
    permit: Option<OwnedSemaphorePermit>,
    opened: Arc<crate::transport::opened::Opened>,
) -> Result<Conn, crate::Failure> {
    let (mut driver, sender) = ::h3::client::builder()
        .max_field_section_size(max_header_bytes as u64)
        .build::<_, _, Bytes>(h3_quinn::Connection::new(quic.clone()))
        .await
        .map_err(|e| connection_failure(&quic, &e, host))?;
    let closed = Arc::new(AtomicBool::new(false));
    let done = closed.clone();
    tokio::spawn(async move {
        let _ = driver.wait_idle().await;
        done.store(true, Ordering::Release);
        drop(permit);
    });
    Ok(Conn {
        sender,
        quic,
        streams: (streams > 0).then(|| Arc::new(Semaphore::new(streams))),
        closed,
        host: host.into(),
        opened,
    })
}

/// Sends `req` with `body` as a stream of `conn` and reads its answer:
/// the head, then the body up to `-max-body` (every byte counted). A
/// failure after the head keeps what arrived (code 0, as vegeta records
/// a body broken off).
pub(crate) async fn exchange<O: Observe>(
    shape: &Shape,
    conn: Conn,
    req: Request<()>,
    body: &Bytes,
    fail: Fail<'_>,
    obs: O,
) -> Result<Answer<Infallible>, crate::Failure> {
    let _turn = match &conn.streams {
        Some(s) => Some(s.clone().acquire_owned().await.map_err(|e| fail(&e))?),
        None => None,
    };
    let mut sender = conn.sender.clone();
    let words = |e: &::h3::error::StreamError| fail(&stream_failure(&conn, e));
    let mut stream = Cancel {
        stream: sender.send_request(req).await.map_err(|e| words(&e))?,
        done: false,
    };
    if !body.is_empty() {
        stream
            .send_data(body.clone())
            .await
            .map_err(|e| words(&e))?;
    }
    stream.finish().await.map_err(|e| words(&e))?;
    let head = stream.recv_response().await.map_err(|e| words(&e))?;
    let head_at = std::time::Instant::now();
    let status = head.status();
    // RFC 9114 §4.1.2: a body whose length differs from its
    // content-length makes the answer malformed (HTTP/2 fails it alike).
    let declared: Option<u64> = head
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let location = (status.is_redirection() && shape.follow)
        .then(|| head.headers().get(header::LOCATION))
        .flatten()
        .map(|l| l.as_bytes().to_vec());
    let mut out = Response {
        code: status.as_u16(),
        head_at: Some(head_at),
        proto: barrage_model::Proto::Http3,
        ..Response::default()
    };
    if shape.keep_headers && location.is_none() {
        for (k, v) in head.headers().iter().take(barrage_model::Hit::MAX_HEADERS) {
            out.headers.push((
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            ));
        }
    }
    // -stream: each DATA frame's bytes go to the request's tape (chunks
    // mode: the frame is an event).
    let streamed = shape.limits.stream;
    if streamed {
        obs.head(
            head.headers()
                .get(header::CONTENT_TYPE)
                .map(|v| v.as_bytes()),
        );
    }
    loop {
        match stream.recv_data().await {
            Ok(Some(mut chunk)) => {
                while chunk.has_remaining() {
                    let data = chunk.chunk();
                    let n = data.len();
                    if streamed {
                        obs.data(data, n == chunk.remaining());
                    }
                    out.bytes_in += n as u64;
                    let room = if location.is_some() {
                        0
                    } else if shape.max_body < 0 {
                        n
                    } else {
                        (shape.max_body as usize)
                            .saturating_sub(out.body.len())
                            .min(n)
                    };
                    out.body.extend_from_slice(&data[..room]);
                    chunk.advance(n);
                }
                if declared.is_some_and(|d| out.bytes_in > d) {
                    stream.stop_sending(::h3::error::Code::H3_MESSAGE_ERROR);
                    stream.done = true;
                    return Ok(malformed(
                        out,
                        fail(&format!(
                            "http3: malformed response: body longer than its content-length ({})",
                            declared.unwrap_or_default()
                        )),
                    ));
                }
            }
            Ok(None) => {
                stream.done = true;
                if let Some(d) = declared.filter(|&d| out.bytes_in != d) {
                    let why = fail(&format!(
                        "http3: malformed response: body of {} bytes, content-length {d}: unexpected EOF",
                        out.bytes_in
                    ));
                    return Ok(malformed(out, why));
                }
                if streamed {
                    obs.finish();
                }
                break;
            }
            Err(e) => {
                stream.done = true;
                return Ok(malformed(out, words(&e)));
            }
        }
    }
    Ok(Answer {
        code: status.as_u16(),
        location,
        response: out,
        conn: None,
    })
}

/// An answer that failed after its head: code 0 and the error, what
/// arrived kept (as vegeta records a body broken off).
fn malformed(mut out: Response, error: String) -> Answer<Infallible> {
    out.code = 0;
    out.error = Some(error);
    Answer {
        code: 0,
        location: None,
        response: out,
        conn: None,
    }
}

/// A request's stream, its send side reset (`H3_REQUEST_CANCELLED`) when
/// it is dropped before its answer was read to its end: a request ended by
/// `-timeout` is cancelled alone (RFC 9114 §4.1.1). Left to quinn's drop,
/// its send side was finished mid-frame and the server failed the whole
/// connection, every other request on it with it.
struct Cancel {
    stream: ::h3::client::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>,
    /// Read to its end (or failed by the server): nothing to cancel.
    done: bool,
}

impl std::ops::Deref for Cancel {
    type Target = ::h3::client::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;
    fn deref(&self) -> &Self::Target {
        &self.stream
    }
}

impl std::ops::DerefMut for Cancel {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.stream
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        // The send side is reset here; the receive side is stopped by
        // quinn as its read is dropped (asking h3-quinn to stop it while a
        // read holds it panics).
        if !self.done {
            self.stream
                .stop_stream(::h3::error::Code::H3_REQUEST_CANCELLED);
        }
    }
}

/// A stream's failure, worded: the server's reset with its HTTP/3 error
/// name (`H3_REQUEST_REJECTED`), or the connection's end.
fn stream_failure(conn: &Conn, e: &::h3::error::StreamError) -> String {
    use ::h3::error::StreamError as S;
    match e {
        S::RemoteTerminate { code, .. } => {
            format!(
                "http3: stream reset by server: {code} ({:#x})",
                code.value()
            )
        }
        S::HeaderTooBig { .. } => {
            "http3: the response's header list is over -max-header-bytes".into()
        }
        S::ConnectionError { 0: c, .. } => connection_failure(&conn.quic, c, &conn.host),
        S::RemoteClosing { .. } => "http3: the server is closing the connection (GOAWAY)".into(),
        other => match conn.quic.close_reason() {
            Some(q) => quic::failure(&q, &conn.host),
            None => format!("http3: {other}"),
        },
    }
}

/// A connection's failure, worded from QUIC's reason where it has one.
fn connection_failure(
    quic: &quinn::Connection,
    e: &::h3::error::ConnectionError,
    host: &str,
) -> String {
    match quic.close_reason() {
        Some(q) => quic::failure(&q, host),
        None => format!("http3: {e}"),
    }
}
