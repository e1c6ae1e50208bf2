//! [`Shape`]: what every protocol's exchange takes from the client's
//! configuration, read once when a worker thread's client is made.

use std::time::Duration;

use http::HeaderValue;

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
    pub(crate) grpc_streams: std::sync::Arc<GrpcStreams>,
    /// `-ws-frame`.
    pub(crate) ws_frame: WsFrame,
    /// `-ws-max-message` (with `-ws-events`, at most `-max-event-bytes`).
    pub(crate) ws_max_message: usize,
    /// `-ws-events`: server messages a request waits for (0: its reply).
    pub(crate) ws_events: u32,
}

/// The limits a response is read under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most bytes of a head (status line and header lines), and of a
    /// chunked body's trailers (`-max-header-bytes`). A `u32`, as the
    /// scan's place in a cut head is: the framer is held by a waiting
    /// request's future (see `send/sizes.rs`).
    pub head_bytes: u32,
    /// Body bytes kept (`-max-body`; -1 keeps all).
    pub keep_body: i64,
    /// Whether header lines are kept (`-keep-headers`).
    pub keep_headers: bool,
    /// With `keep_headers`: keep only `Set-Cookie` and `Location` lines
    /// (a flow's cookie jar, which follows its redirects).
    pub jar_only: bool,
    /// `-stream`: the body is also cut into events, on the request's
    /// tape (a flag here, not a field of the framer: an exchange's future
    /// holds the framer).
    pub stream: bool,
}

/// The paths (`/pkg.Service/Method`) of the server-streaming methods
/// among the attack's targets, as their descriptors said when the targets
/// were prepared; the calls of any other path are read as unary.
#[derive(Debug, Default)]
pub struct GrpcStreams(std::sync::RwLock<std::collections::HashSet<String>>);

impl GrpcStreams {
    /// Notes that `path` is a server-streaming method.
    pub fn insert(&self, path: &str) {
        if let Ok(mut set) = self.0.write() {
            set.insert(path.to_string());
        }
    }

    /// Whether `path` is a server-streaming method.
    pub fn contains(&self, path: &str) -> bool {
        self.0.read().is_ok_and(|set| set.contains(path))
    }
}

/// How messages are sent (`-ws-frame`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WsFrame {
    /// Text frames (the body must be UTF-8).
    #[default]
    Text,
    /// Binary frames.
    Binary,
}

impl std::str::FromStr for WsFrame {
    type Err = crate::Failure;
    fn from_str(s: &str) -> Result<Self, crate::Failure> {
        match s {
            "text" => Ok(WsFrame::Text),
            "binary" => Ok(WsFrame::Binary),
            other => Err(format!("unknown frame type {other:?} (use text or binary)").into()),
        }
    }
}
