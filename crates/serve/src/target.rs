//! `barrage serve`: answers any method and path with 200 and a fixed body
//! (after an optional delay), over HTTP/1.1 or h2c, but for a few paths
//! ([`ROUTES`]): `/status/N` answers N, `/delay/MS` waits MS ms first
//! (to within tens of µs), `/size/N` sends N bytes, `/echo` sends back the
//! request's body, `/sse` streams server-sent events and
//! `/v1/chat/completions` an OpenAI-style chat stream; `/login`, `/me`,
//! `/form-login`, `/home` and `/items` are a small app with sessions
//! ([`crate::App`]). With a capacity, at most that many answers a second
//! are 200s and the rest 503s at once, so that `barrage sweep` has a limit
//! to find.

use std::{
    convert::Infallible,
    io,
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::{body::Incoming, service::service_fn, Request, Response};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};

use crate::answer::{query_count, query_duration, whole, Answer, Paced, MAX_EVENTS};

/// Why the target could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Only loopback addresses are served.
    #[error("{0} is not a loopback address (use 127.0.0.1 or [::1])")]
    NotLoopback(SocketAddr),
    /// The runtime or the listener could not start.
    #[error(transparent)]
    Io(io::Error),
}

/// What the target answers.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The body of `GET /`.
    pub body: Bytes,
    /// How long each answer waits.
    pub delay: Duration,
    /// Answers a second served (200); the rest get 503 at once.
    pub capacity: Option<f64>,
    /// With `capacity`: the rest wait in an unbounded queue for their
    /// turn instead (a server whose latency grows past its capacity).
    pub queue: bool,
}

/// A rate limit as a virtual schedule (GCRA): each admitted request
/// moves the next free slot one interval on; a request finding it more
/// than a burst ahead is refused.
struct Capacity {
    start: Instant,
    interval_ns: u64,
    /// Up to 10 ms of requests at once.
    burst_ns: u64,
    next: AtomicU64,
}

impl Capacity {
    fn new(per_second: f64) -> Capacity {
        Capacity {
            start: Instant::now(),
            interval_ns: (1e9 / per_second).max(1.0) as u64,
            burst_ns: 10_000_000,
            next: AtomicU64::new(0),
        }
    }

    /// A queue's turn: how long the request waits for its slot (the
    /// schedule never refuses).
    fn turn(&self) -> Duration {
        let now = self.start.elapsed().as_nanos() as u64;
        let mut next = self.next.load(Ordering::Relaxed);
        loop {
            let from = next.max(now);
            match self.next.compare_exchange_weak(
                next,
                from + self.interval_ns,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Duration::from_nanos(from - now),
                Err(seen) => next = seen,
            }
        }
    }

    fn admit(&self) -> bool {
        let now = self.start.elapsed().as_nanos() as u64;
        let mut next = self.next.load(Ordering::Relaxed);
        loop {
            let from = next.max(now);
            if from - now > self.burst_ns {
                return false;
            }
            match self.next.compare_exchange_weak(
                next,
                from + self.interval_ns,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(seen) => next = seen,
            }
        }
    }
}

/// Serves on `addr` until the process ends; `listening` is called with
/// the bound address (the port chosen, for `:0`).
pub fn run(
    addr: SocketAddr,
    options: Options,
    listening: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    if !addr.ip().is_loopback() {
        return Err(ServeError::NotLoopback(addr));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Io)?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(ServeError::Io)?;
        listening(listener.local_addr().map_err(ServeError::Io)?);
        let capacity = options.capacity.map(|c| Arc::new(Capacity::new(c)));
        let (body, delay, queue) = (options.body, options.delay, options.queue);
        let app = Arc::new(crate::App::default());
        let stats = Arc::new(Stats {
            served: AtomicU64::new(0),
            started: std::time::Instant::now(),
        });
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let (body, capacity, app) = (body.clone(), capacity.clone(), app.clone());
            let stats = stats.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    // Queued: the wait for its turn comes before the delay.
                    let (admitted, wait) = match &capacity {
                        Some(c) if queue => (true, c.turn()),
                        Some(c) => (c.admit(), Duration::ZERO),
                        None => (true, Duration::ZERO),
                    };
                    respond(
                        req,
                        body.clone(),
                        delay + wait,
                        admitted,
                        app.clone(),
                        stats.clone(),
                    )
                });
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// The most bytes `/size/N` answers with.
const MAX_SIZE: u64 = 64 << 20;

/// The routes, as `barrage serve -h` lists them.
pub const ROUTES: &str = "Routes (any other path: 200 and -body):
  /status/N                  answers status N
  /delay/MS                  answers after MS milliseconds
  /delay/LOW-HIGH            answers after a delay drawn evenly from LOW to HIGH ms
                             (a known law: pNN is LOW + NN% of the span)
  /size/N                    N bytes of body
  /echo                      the request's body back
  /sse?n=20&gap=50ms&first=200ms
                             text/event-stream: n events, the first after `first`, then one every `gap`
  /v1/chat/completions /v1/completions
                             an OpenAI-compatible answer with ground truth; with \"stream\": true, server-sent
                             chunks as vLLM sends them: a role chunk, max_tokens (default 16) tokens, a finish
                             chunk, usage as stream_options asks, and [DONE]; query ?first=150ms&gap=15ms,
                             per=N tokens a chunk, role=arrival, finish=last, reasoning=N chunks; each token
                             chunk's write time in a `: barrage-truth` comment before [DONE]
  /login /me /items /form-login /home
                             a small app with sessions (a token, a cookie, items only their maker reads)
  /metrics                   Prometheus text: barrage_serve_requests_total (every other route's
                             requests) and barrage_serve_uptime_seconds, for attack -scrape";

/// What `/metrics` tells of the server.
struct Stats {
    /// Requests to every route but `/metrics`.
    served: AtomicU64,
    /// When it started.
    started: std::time::Instant,
}

impl Stats {
    fn page(&self) -> String {
        format!(
            "# HELP barrage_serve_requests_total Requests answered, /metrics's left out.\n# TYPE barrage_serve_requests_total counter\nbarrage_serve_requests_total {}\n# HELP barrage_serve_uptime_seconds Seconds since the server started.\n# TYPE barrage_serve_uptime_seconds gauge\nbarrage_serve_uptime_seconds {:.6}\n",
            self.served.load(Ordering::Relaxed),
            self.started.elapsed().as_secs_f64()
        )
    }
}

async fn respond(
    req: Request<Incoming>,
    body: Bytes,
    delay: Duration,
    admitted: bool,
    app: Arc<crate::App>,
    stats: Arc<Stats>,
) -> Result<Response<Answer>, Infallible> {
    // The request's head is read: the LLM route's truth counts from here.
    let arrival = tokio::time::Instant::now();
    if req.uri().path() == "/metrics" {
        let mut resp = Response::new(whole(Bytes::from(stats.page())));
        resp.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
        );
        return Ok(resp);
    }
    stats.served.fetch_add(1, Ordering::Relaxed);
    if !admitted {
        let mut resp = Response::new(whole(Bytes::from_static(b"over capacity\n")));
        *resp.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
        return Ok(resp);
    }
    if !delay.is_zero() {
        precise_sleep(delay).await;
    }
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let (head, req_body) = req.into_parts();
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if let Some(r) = app.route(&head, &segs) {
        let (head, text) = r.into_parts();
        return Ok(Response::from_parts(head, whole(Bytes::from(text))));
    }
    match path.as_str() {
        "/sse" => return Ok(sse(&query)),
        "/v1/chat/completions" | "/v1/completions" => {
            let sent = req_body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let completions = path == "/v1/completions";
            return Ok(crate::chat::chat(&query, &sent, completions, arrival));
        }
        _ => {}
    }
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let (first, arg) = (parts.next().unwrap_or(""), parts.next());
    let number = arg.and_then(|a| a.parse::<u64>().ok());
    let (status, answer) = match (first, number) {
        ("status", Some(code)) => match hyper::StatusCode::from_u16(code as u16) {
            Ok(s) if code <= 999 => (s, Bytes::from(format!("status {code}\n"))),
            _ => (
                hyper::StatusCode::BAD_REQUEST,
                Bytes::from_static(b"bad status\n"),
            ),
        },
        ("delay", Some(ms)) => {
            precise_sleep(Duration::from_millis(ms.min(60_000))).await;
            (hyper::StatusCode::OK, body)
        }
        // A latency of known law: uniform from LOW to HIGH ms (its pNN is
        // LOW + NN% of the span), a ground truth for intervals.
        ("delay", None) if arg.and_then(uniform_ms).is_some() => {
            let (low, high) = arg.and_then(uniform_ms).unwrap_or_default();
            let us = fastrand::u64(low * 1000..=high * 1000);
            precise_sleep(Duration::from_micros(us)).await;
            (hyper::StatusCode::OK, body)
        }
        ("size", Some(n)) => (
            hyper::StatusCode::OK,
            Bytes::from(vec![b'x'; n.min(MAX_SIZE) as usize]),
        ),
        ("echo", _) => {
            let sent = req_body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            (hyper::StatusCode::OK, sent)
        }
        _ => (hyper::StatusCode::OK, body),
    };
    let mut resp = Response::new(whole(answer));
    *resp.status_mut() = status;
    Ok(resp)
}

/// `LOW-HIGH` of `/delay/LOW-HIGH`, in ms (at most a minute).
fn uniform_ms(arg: &str) -> Option<(u64, u64)> {
    let (low, high) = arg.split_once('-')?;
    let (low, high) = (low.parse::<u64>().ok()?, high.parse::<u64>().ok()?);
    (low <= high && high <= 60_000).then_some((low, high))
}

/// Sleeps `d` to within tens of µs: tokio's timer rounds up to its
/// millisecond (`/delay/1` took 2.10 ms at p50), so the last millisecond
/// is a thread's sleep, off the runtime's workers.
async fn precise_sleep(d: Duration) {
    let until = Instant::now() + d;
    if d > Duration::from_millis(2) {
        tokio::time::sleep_until((until - Duration::from_millis(2)).into()).await;
    }
    let left = until.saturating_duration_since(Instant::now());
    if !left.is_zero() {
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(left)).await;
    }
}

/// `/sse?n=20&gap=50ms&first=200ms`: `n` events (`id: i`, `data:
/// event i`), the first after `first`, then one every `gap`.
fn sse(query: &str) -> Response<Answer> {
    let n = query_count(query, "n", 20).min(MAX_EVENTS);
    let gap = query_duration(query, "gap", Duration::from_millis(50));
    let first = query_duration(query, "first", Duration::from_millis(200));
    let events = (0..n)
        .map(|i| Bytes::from(format!("id: {i}\ndata: event {i}\n\n")))
        .collect();
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Paced::body(events, first, gap))
        .expect("a head")
}
