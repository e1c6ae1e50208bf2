//! `barrage serve`: answers `GET /` with a fixed body (after an optional
//! delay) and anything else with 404, over HTTP/1.1 or h2c.

use std::{convert::Infallible, io, net::SocketAddr, time::Duration};

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

/// Serves on `addr` until the process ends; `listening` is called once
/// the port is bound.
pub fn run(
    addr: SocketAddr,
    body: Bytes,
    delay: Duration,
    listening: impl FnOnce(),
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
        listening();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let body = body.clone();
            tokio::spawn(async move {
                let service =
                    service_fn(move |req: Request<Incoming>| respond(req, body.clone(), delay));
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

async fn respond(
    req: Request<Incoming>,
    body: Bytes,
    delay: Duration,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let found = req.uri().path() == "/";
    let mut resp = Response::new(Full::new(if found {
        body
    } else {
        Bytes::from_static(b"not found\n")
    }));
    if !found {
        *resp.status_mut() = hyper::StatusCode::NOT_FOUND;
    }
    Ok(resp)
}
