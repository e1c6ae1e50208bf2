//! barrage-client: how a request goes. The scheduler (`barrage-attack`)
//! decides when; it hands a due request to a [`Client`] and gets a
//! [`Response`] (or a transport error worded as Go's) back.
//!
//! The rooms, each named by its folder (see `ARCHITECTURE.md`):
//!
//! - `core/`: what every protocol shares and none owns: the prepared
//!   target ([`PreparedTarget`]), one request as an exchange takes it, the
//!   answer ([`Response`]), how answers are read, the error ([`Failure`]).
//!   It imports nothing from `proto/`, `send/` or `events/`.
//! - `transport/`: a stream to a host: DNS (the system's resolver or
//!   `-resolvers`, cached for `-dns-ttl`), `-connect-to`, `-laddr`, Unix
//!   sockets, proxies (`HTTP_PROXY`, `CONNECT`), TLS with rustls (ALPN
//!   picks HTTP/2 or HTTP/1.1), QUIC for HTTP/3, io_uring (`-io uring`).
//! - `proto/`: a room per protocol and the one match on protocol:
//!   barrage's own HTTP/1.1 engine ([`h1`]: requests encoded once, answers
//!   framed by a pure reader on `httparse`, pipelining), hyper's HTTP/1.1
//!   and HTTP/2, HTTP/3 (quinn and h3), gRPC (unary and streaming, over
//!   HTTP/2; descriptors from `-proto-set`, `-proto` or reflection) and
//!   WebSocket (tungstenite's codec).
//! - `pool.rs`: connections kept per host, one shared HTTP/2 or HTTP/3
//!   connection, `-max-connections`.
//! - `send/`: the policy above one exchange ([`Client`]): `-timeout`,
//!   redirects as Go follows them, stale retries, the closed model's kept
//!   connection, `-pipeline`, `-check`.
//! - `events/`: `-stream`: answers cut into events (SSE, NDJSON, chunks,
//!   gRPC and WebSocket messages), each stamped ([`Tape`], [`Taped`]).
//! - `reflect.rs`: gRPC server reflection, a client of the client asked
//!   before the attack.
//! - `flow/`: a session step's checks ([`Checks`]), `:extract`
//!   ([`Extract`]), cookies ([`SessionState`]).
//!
//! ```no_run
//! use barrage_client::{Client, ClientConfig, PreparedTarget, Shared};
//! use barrage_model::Target;
//! let cfg = ClientConfig::default();
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! let shared = Shared::new(&cfg).unwrap();
//! let client = rt.block_on(async { Client::sharing(&cfg, &shared) });
//! let target = std::sync::Arc::new(PreparedTarget::new(Target { method: "GET".into(), url: "http://127.0.0.1:8080/".into(), ..Target::default() }).unwrap());
//! let response = rt.block_on(client.send(&target, 0));
//! ```
#![deny(missing_docs)]

mod config;
mod core;
mod events;
mod flow;
mod pool;
mod proto;
mod reflect;
mod send;
mod transport;

pub use self::core::error::Failure;
pub use self::core::response::Response;
pub use self::core::target::{PreparedTarget, TargetGroup, ATTACK_HEADER, SEQ_HEADER};
pub use config::{
    ClientConfig, ConnectTo, DnsSelect, H1Engine, StepNeeds, WsFrame, DEFAULT_CONNECTIONS,
    DEFAULT_MAX_HEADER_BYTES, DEFAULT_PIPELINE, DEFAULT_REDIRECTS, DEFAULT_TIMEOUT, MAX_HEAD_BYTES,
    MAX_KEPT_BODY,
};
pub use events::{
    ask_usage, ask_usage_in, size_class, BadStream, Llm, LlmUsage, Stamps, StreamMode, StreamSpec,
    Tape, Taped,
};
pub use flow::check::{BadCheck, Check, Checks, Seen, Step, CHECK_BODY_BYTES};
pub use flow::extract::{BadExtract, Extract, NotExtracted, MAX_VALUE_BYTES};
pub use flow::step::{SessionState, StepReads, MAX_COOKIES};
pub use proto::grpc::{
    frame as grpc_frame, is_json as grpc_is_json, prepare_body as grpc_prepare_body,
    status_name as grpc_status_name, GrpcStreams, Prepared as GrpcPrepared, ProtoSet,
    DEFAULT_MAX_MESSAGE, GRPC_FAILED, GRPC_METHOD,
};
pub use proto::h1;
pub use proto::ws::{Held as WsHeld, WS_OK};
pub use reflect::{
    reflect as grpc_reflect, ReflectError as GrpcReflectError, Reflector as GrpcReflector,
};
pub use send::{Client, LoopState, RingClient, Shared};
pub use transport::opened::Via;
pub use transport::proxy::Proxies;
pub use transport::ring_tls::RingTls;
pub use transport::tls::{handshake_failure as tls_failure, TlsError};
pub use transport::uring::{IoMode, IO_ENV};
