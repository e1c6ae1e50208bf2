//! [`Wire`]: a request encoded once as bytes, the cache a prepared target
//! and a redirect's request keep for the engine that writes bytes
//! (barrage's HTTP/1.1: `proto/h1/wire.rs` builds and writes it).

use bytes::Bytes;

/// A request encoded once (see the module docs).
#[derive(Debug, Clone)]
pub struct Wire {
    /// Request line and headers, through `X-Barrage-Seq: `.
    pub(crate) head: Box<[u8]>,
    /// The body as it goes on the wire (chunk-framed with `-chunked`).
    pub(crate) body: Bytes,
    /// Whether the request is HEAD (its answer has no body).
    pub head_request: bool,
    /// Whether the method may be sent again on a new connection when a
    /// reused one turns out closed before answering (Go's rule:
    /// GET, HEAD, OPTIONS, TRACE).
    pub replayable: bool,
}
