//! A gRPC call's exchange (unary or server-streaming) on an HTTP/2 connection (the call's
//! framing and status are `grpc.rs`'s).

use bytes::Bytes;

use crate::proto::hyper::h2::Sender;
use crate::proto::hyper::{chain, Fail};
use crate::transport::opened::Linked;

/// Sends a gRPC call (`req`, `-timeout` added as `grpc-timeout`) over
/// HTTP/2 and reads its answer.
pub(crate) async fn call<O: crate::core::observe::Observe>(
    shape: &crate::core::shape::Shape,
    mut sender: Linked<Sender>,
    mut req: http::Request<http_body_util::Full<Bytes>>,
    fail: Fail<'_>,
    obs: O,
) -> Result<crate::Response, crate::Failure> {
    let streaming = shape.grpc_streams.contains(req.uri().path());
    if let Some(t) = shape.timeout {
        req.headers_mut()
            .insert("grpc-timeout", crate::proto::grpc::timeout_header(t));
    }
    sender.ready().await.map_err(|e| fail(&chain(&e)))?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| fail(&chain(&e)))?;
    let head_at = std::time::Instant::now();
    let a = crate::proto::grpc::read(
        resp,
        shape.max_message,
        shape.max_body,
        shape.keep_headers,
        streaming,
        &|e| fail(&chain(e)),
        obs,
    )
    .await;
    Ok(crate::Response {
        code: a.code,
        bytes_in: a.bytes_in,
        body: a.body,
        headers: a.headers,
        error: a.error,
        head_at: Some(head_at),
        end_at: None,
        status: None,
        proto: barrage_model::Proto::Http2,
        link: None,
        events: None,
    })
}
