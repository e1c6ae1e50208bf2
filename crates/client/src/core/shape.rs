//! [`Shape`]: what every protocol's exchange takes from the client's
//! configuration, read once when a worker thread's client is made.

use std::time::Duration;

use http::HeaderValue;

use crate::proto::h1::Limits;

/// How requests are built and answers read, whatever the protocol.
pub(crate) struct Shape {
    /// How barrage's HTTP/1.1 engine reads responses.
    pub(crate) limits: Limits,
    /// `-keepalive` (false: `Connection: close` on HTTP/1.1).
    pub(crate) keepalive: bool,
    /// `-chunked`.
    pub(crate) chunked: bool,
    /// `-name`, as the `X-Vegeta-Attack` header.
    pub(crate) attack: Option<HeaderValue>,
    /// Body bytes read into a response (`-max-body`, raised by the
    /// `-check`s that read the body; below 0: all).
    pub(crate) max_body: i64,
    /// Whether a response's headers are kept (`-keep-headers`, or a
    /// `-check` on a header).
    pub(crate) keep_headers: bool,
    /// Whether redirects are followed (`-redirects` at 0 or above), so a
    /// 3xx's `Location` is read.
    pub(crate) follow: bool,
    /// `-timeout` (`None`: none); gRPC sends it as `grpc-timeout`.
    pub(crate) timeout: Option<Duration>,
    /// `-grpc-max-message`.
    pub(crate) max_message: usize,
    /// The server-streaming gRPC methods.
    pub(crate) grpc_streams: std::sync::Arc<crate::GrpcStreams>,
    /// `-stream`: answers read event by event.
    pub(crate) stream: Option<std::sync::Arc<crate::StreamSpec>>,
}
