//! `barrage serve`: answers any method and path with 200 and a fixed body
//! (after an optional delay), over HTTP/1.1 or h2c, but for a few paths:
//! `/status/N` answers N, `/delay/MS` waits MS ms first, `/size/N` sends N
//! bytes, `/echo` sends back the request's body; `/login`, `/me`, `/form-login`, `/home` and
//! `/items` are a small app with sessions ([`crate::App`]). With a
//! capacity, at most that many answers a second are 200s and the rest
//! 503s at once, so that `barrage sweep` has a limit to find.

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
use http_body_util::Full;
use hyper::{body::Incoming, service::service_fn, Request, Response};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};

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
        let (body, delay) = (options.body, options.delay);
        let app = Arc::new(crate::App::default());
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let (body, capacity, app) = (body.clone(), capacity.clone(), app.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let admitted = capacity.as_ref().is_none_or(|c| c.admit());
                    respond(req, body.clone(), delay, admitted, app.clone())
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

async fn respond(
    req: Request<Incoming>,
    body: Bytes,
    delay: Duration,
    admitted: bool,
    app: Arc<crate::App>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if !admitted {
        let mut resp = Response::new(Full::new(Bytes::from_static(b"over capacity\n")));
        *resp.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
        return Ok(resp);
    }
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let path = req.uri().path().to_string();
    let (head, req_body) = req.into_parts();
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if let Some(r) = app.route(&head, &segs) {
        let (head, text) = r.into_parts();
        return Ok(Response::from_parts(head, Full::new(Bytes::from(text))));
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
            tokio::time::sleep(Duration::from_millis(ms.min(60_000))).await;
            (hyper::StatusCode::OK, body)
        }
        ("size", Some(n)) => (
            hyper::StatusCode::OK,
            Bytes::from(vec![b'x'; n.min(MAX_SIZE) as usize]),
        ),
        ("echo", _) => {
            use http_body_util::BodyExt;
            let sent = req_body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            (hyper::StatusCode::OK, sent)
        }
        _ => (hyper::StatusCode::OK, body),
    };
    let mut resp = Response::new(Full::new(answer));
    *resp.status_mut() = status;
    Ok(resp)
}
