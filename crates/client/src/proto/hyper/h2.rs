//! HTTP/2 (hyper's): by ALPN over TLS, or with prior knowledge over plain
//! TCP (`-h2c`, gRPC's `http://` targets). One connection per host and
//! worker thread, shared by every request until the server closes it
//! (GOAWAY); its handshake and one exchange on it.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::sync::OwnedSemaphorePermit;

use crate::{
    core::observe::Observe,
    core::response::Answer,
    core::shape::Shape,
    proto::hyper::{chain, read, Fail},
    transport::{
        dial::BoxStream,
        opened::{Linked, Opened},
    },
};

/// A handle to an HTTP/2 connection, cloned for each request on it.
pub(crate) type Sender = http2::SendRequest<Full<Bytes>>;

/// The HTTP/2 handshake over `stream`, with `-max-header-bytes` as the
/// largest header list an answer may have (SETTINGS_MAX_HEADER_LIST_SIZE;
/// hyper's own default is 16 KiB). The connection runs on a task of its
/// own, holding `permit` (`-max-connections`) until it closes.
pub(crate) async fn handshake(
    stream: BoxStream,
    max_header_bytes: usize,
    permit: Option<OwnedSemaphorePermit>,
    opened: Arc<Opened>,
) -> Result<Linked<Sender>, crate::Failure> {
    let limit = u32::try_from(max_header_bytes).unwrap_or(u32::MAX);
    let (sender, conn) = http2::Builder::new(TokioExecutor::new())
        .max_header_list_size(limit)
        .handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("http2 handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
        drop(permit);
    });
    Ok(Linked {
        inner: sender,
        opened,
    })
}

/// Sends `req` as a stream of `sender`'s connection and reads its answer.
pub(crate) async fn exchange<O: Observe>(
    shape: &Shape,
    mut sender: Linked<Sender>,
    req: Request<Full<Bytes>>,
    fail: Fail<'_>,
    obs: O,
) -> Result<Answer<Infallible>, crate::Failure> {
    sender.ready().await.map_err(|e| fail(&chain(&e)))?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| fail(&chain(&e)))?;
    Ok(read(shape, resp, fail, obs).await)
}
