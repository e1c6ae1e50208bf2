//! Streamed answers with scripted gaps, for `-stream`: server-sent
//! events, NDJSON and bare chunks, an OpenAI-style chat completion, a
//! stream that never ends and an event that never ends. Each event goes
//! out as its own DATA frame (an HTTP/1.1 chunk), at a deadline counted
//! from the request's arrival, so that gaps do not drift.
//!
//! Routes (milliseconds):
//! - `/sse/N/GAP/FIRST`: N events `data: {"n":I}`, the first FIRST after
//!   the request, then one every GAP; `/sse-ka/...` adds a keep-alive
//!   comment between events, `/sse-bad/...` a line that is no SSE field
//!   (`oops, not a field`) in each event.
//! - `/ndjson/N/GAP/FIRST`, `/chunks/N/GAP/FIRST`: the same as lines of
//!   `application/x-ndjson` or bare chunks.
//! - `/v1/chat/completions`: 100 ms to a role delta, then 10 content
//!   deltas 20 ms apart, a finish delta and `data: [DONE]`.
//! - `/sse-endless/GAP`: an event every GAP until the client leaves.
//! - `/sse-huge`: one event whose data never ends.

use std::{
    convert::Infallible,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::{body::Frame, Response};
use tokio::{sync::mpsc, time::Instant};

/// A body fed a frame per message: by the pacer (scripted), or by a
/// task that waits for the client to read (`/sse-huge`).
enum Fed {
    Paced(mpsc::UnboundedReceiver<Bytes>),
    Task(mpsc::Receiver<Bytes>),
}

impl hyper::body::Body for Fed {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = match &mut *self {
            Fed::Paced(rx) => rx.poll_recv(cx),
            Fed::Task(rx) => rx.poll_recv(cx),
        };
        next.map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

/// One piece of a script: after this long from the request, these bytes.
type Piece = (Duration, Bytes);

/// `script` on the pacer's clock, counted from now (the request's
/// arrival).
fn answer(content_type: &'static str, script: Vec<Piece>) -> Response<crate::grpc::Body> {
    streaming(content_type, Fed::Paced(crate::pacer::pace(script)))
}

fn streaming(content_type: &'static str, body: Fed) -> Response<crate::grpc::Body> {
    let mut r = Response::new(body.boxed());
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    r
}

/// Events `make(i)` for i in 0..n, the first at `first` ms, then every
/// `gap` ms; `between`: bytes sent halfway between two events.
fn timed(
    n: u64,
    gap: u64,
    first: u64,
    make: impl Fn(u64) -> String,
    between: Option<&str>,
) -> Vec<Piece> {
    let mut out = Vec::new();
    for i in 0..n.min(100_000) {
        let at = Duration::from_millis(first + i * gap);
        if let (Some(b), true) = (between, i > 0) {
            out.push((
                at - Duration::from_millis(gap / 2),
                Bytes::from(b.to_string()),
            ));
        }
        out.push((at, Bytes::from(make(i))));
    }
    out
}

/// The response for a streaming route, or `None` for another path.
pub(crate) fn route(segs: &[&str]) -> Option<Response<crate::grpc::Body>> {
    let num = |i: usize| segs.get(i).and_then(|s| s.parse::<u64>().ok());
    let (n, gap, first) = (
        num(1).unwrap_or(0),
        num(2).unwrap_or(0),
        num(3).unwrap_or(0),
    );
    let sse = |i: u64| format!("data: {{\"n\":{i}}}\n\n");
    Some(match (segs.first().copied()?, segs.get(1).copied()) {
        ("sse", _) => answer("text/event-stream", timed(n, gap, first, sse, None)),
        ("sse-ka", _) => answer(
            "text/event-stream",
            timed(n, gap, first, sse, Some(": keep-alive\n\n")),
        ),
        ("sse-bad", _) => answer(
            "text/event-stream",
            timed(
                n,
                gap,
                first,
                |i| format!("oops, not a field\ndata: {{\"n\":{i}}}\n\n"),
                None,
            ),
        ),
        ("ndjson", _) => answer(
            "application/x-ndjson",
            timed(n, gap, first, |i| format!("{{\"n\":{i}}}\n"), None),
        ),
        ("chunks", _) => answer(
            "application/octet-stream",
            timed(n, gap, first, |i| format!("chunk {i};"), None),
        ),
        ("v1", Some("chat")) => {
            let chunk = |delta: &str, finish: &str| {
                format!(
                    "data: {{\"id\":\"cmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{{delta}}},\"finish_reason\":{finish}}}]}}\n\n"
                )
            };
            let mut script = vec![(
                Duration::from_millis(100),
                Bytes::from(chunk("\"role\":\"assistant\"", "null")),
            )];
            for i in 0..10u64 {
                let at = Duration::from_millis(100 + 20 * (i + 1));
                script.push((
                    at,
                    Bytes::from(chunk(&format!("\"content\":\"tok{i} \""), "null")),
                ));
            }
            let end = Duration::from_millis(100 + 20 * 11);
            script.push((end, Bytes::from(chunk("", "\"stop\""))));
            script.push((end, Bytes::from("data: [DONE]\n\n")));
            answer("text/event-stream", script)
        }
        ("sse-endless", _) => {
            let gap = Duration::from_millis(n.max(1));
            let (tx, rx) = mpsc::channel(16);
            tokio::spawn(async move {
                let start = Instant::now();
                for i in 0u64.. {
                    tokio::time::sleep_until(start + gap * (i as u32 + 1)).await;
                    if tx.send(Bytes::from(sse(i))).await.is_err() {
                        return;
                    }
                }
            });
            streaming("text/event-stream", Fed::Task(rx))
        }
        ("sse-huge", _) => {
            let (tx, rx) = mpsc::channel(16);
            tokio::spawn(async move {
                let _ = tx.send(Bytes::from_static(b"data: ")).await;
                let block = Bytes::from(vec![b'x'; 64 << 10]);
                // 64 MiB at most: the client gives up long before.
                for _ in 0..1024 {
                    if tx.send(block.clone()).await.is_err() {
                        return;
                    }
                }
            });
            streaming("text/event-stream", Fed::Task(rx))
        }
        _ => return None,
    })
}
