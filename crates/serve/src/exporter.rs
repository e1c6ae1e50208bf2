//! `attack -prometheus-addr`: vegeta's Prometheus exporter. While the
//! attack runs, `GET /metrics` on that address answers with what the
//! records written so far add up to, in Prometheus's text format and
//! vegeta's names: `request_seconds` (a histogram with Prometheus's default
//! buckets), `request_bytes_in`, `request_bytes_out` (by method, url and
//! status) and `request_fail_count` (by method, url, code and message;
//! vegeta registers it but never counts, barrage counts every record with
//! an error).
//!
//! The records are added ([`Exporter::add`]) on the attack's writer
//! thread, as they are written; the server has a thread of its own. What
//! is counted and how it is written is `barrage_metrics::Prometheus`'s.

use std::{
    convert::Infallible,
    io,
    net::SocketAddr,
    sync::{Arc, Mutex},
    thread,
};

use barrage_metrics::Prometheus;
use barrage_model::Hit;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{body::Incoming, server::conn::http1, service::service_fn, Request, Response};
use hyper_util::rt::TokioIo;

/// The exporter: its totals and the server thread answering scrapes.
pub struct Exporter {
    totals: Arc<Mutex<Prometheus>>,
    addr: SocketAddr,
}

impl Exporter {
    /// Binds `addr` (before any request is sent, so a taken port is said
    /// at once) and serves scrapes on a thread of its own until the
    /// process ends.
    pub fn start(addr: SocketAddr) -> io::Result<Exporter> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let totals = Arc::new(Mutex::new(Prometheus::default()));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let shared = totals.clone();
        thread::Builder::new()
            .name("barrage-metrics".into())
            .spawn(move || rt.block_on(serve(listener, shared)))?;
        Ok(Exporter { totals, addr })
    }

    /// Where it listens (the port chosen, for `:0`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Adds a record to the totals.
    pub fn add(&self, hit: &Hit) {
        self.totals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(hit);
    }
}

async fn serve(listener: std::net::TcpListener, totals: Arc<Mutex<Prometheus>>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let totals = totals.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let totals = totals.clone();
                async move { Ok::<_, Infallible>(answer(&req, &totals)) }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn answer(req: &Request<Incoming>, totals: &Mutex<Prometheus>) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::new()));
    if req.uri().path() != "/metrics" && req.uri().path() != "/" {
        *resp.status_mut() = hyper::StatusCode::NOT_FOUND;
        return resp;
    }
    let text = totals.lock().unwrap_or_else(|p| p.into_inner()).render();
    *resp.body_mut() = Full::new(Bytes::from(text));
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    resp
}
