//! `barrage serve`: a small HTTP/1.1 + h2c target on loopback, so that a
//! newcomer (and the README's first command) can attack something at once.

use std::{convert::Infallible, time::Duration};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{body::Incoming, service::service_fn, Request, Response};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};

use crate::{
    failed::{Failed, Outcome},
    flags::ServeArgs,
};

pub fn run(args: ServeArgs) -> Outcome {
    if !args.addr.ip().is_loopback() {
        return Err(Failed::usage(format!(
            "{} is not a loopback address (use 127.0.0.1 or [::1])",
            args.addr
        )));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Failed::io)?;
    rt.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.addr).await {
            Ok(l) => l,
            Err(e) => return Err(Failed::io(format!("{}: {e}", args.addr))),
        };
        eprintln!("barrage serve: listening on http://{}/", args.addr);
        let body = Bytes::from(args.body);
        let delay = args.delay;
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
    let status = if req.uri().path() == "/" { 200 } else { 404 };
    let mut resp = Response::new(Full::new(if status == 200 {
        body
    } else {
        Bytes::from_static(b"not found\n")
    }));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    Ok(resp)
}
