//! hyper's HTTP/1.1 (`-h1-engine hyper`): its handshake over a transport
//! stream and one exchange on its connection.

use std::sync::Arc;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
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

/// A handle to one of hyper's HTTP/1.1 connections.
pub(crate) type Sender = http1::SendRequest<Full<Bytes>>;

/// hyper's HTTP/1.1 handshake over `stream`; the connection runs on a task
/// of its own, holding `permit` (`-max-connections`) until it closes.
pub(crate) async fn handshake(
    stream: BoxStream,
    permit: Option<OwnedSemaphorePermit>,
    opened: Arc<Opened>,
) -> Result<Linked<Sender>, crate::Failure> {
    let (sender, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("http1 handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
        drop(permit);
    });
    Ok(Linked {
        inner: sender,
        opened,
    })
}

/// Sends `req` on `sender` and reads its answer; the connection comes
/// back with it.
pub(crate) async fn exchange<O: Observe>(
    shape: &Shape,
    mut sender: Linked<Sender>,
    req: Request<Full<Bytes>>,
    fail: Fail<'_>,
    obs: O,
) -> Result<Answer<Linked<Sender>>, crate::Failure> {
    sender.ready().await.map_err(|e| fail(&chain(&e)))?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| fail(&chain(&e)))?;
    let mut answer = read(shape, resp, fail, obs).await;
    if answer.response.error.is_none() {
        answer.conn = Some(sender);
    }
    Ok(answer)
}
