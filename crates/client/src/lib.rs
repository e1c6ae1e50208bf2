//! barrage-client: how a request goes. The scheduler (`barrage-attack`)
//! decides when; it hands a due request to a [`Client`] and gets a
//! [`Response`] (or a transport error worded as Go's) back.
//!
//! - Dialing: DNS (the system's resolver or `-resolvers`, cached for
//!   `-dns-ttl`), `-connect-to`, `-laddr` (several, in turn), Unix
//!   sockets, proxies from the environment (`HTTP_PROXY`, `HTTPS_PROXY`
//!   through `CONNECT`).
//! - TLS with rustls; ALPN picks HTTP/2 (hyper) or HTTP/1.1.
//! - HTTP/1.1 with barrage's own engine ([`h1`]): each target's request
//!   encoded once ([`h1::Wire`]), responses framed by a pure reader on
//!   `httparse` ([`h1::Framer`]), reads into a buffer of the worker
//!   thread so a waiting connection holds none, pipelining. hyper's
//!   HTTP/1.1 stays selectable ([`H1Engine::Hyper`]).
//! - A pool per worker thread ([`Client`]): idle HTTP/1.1 connections
//!   reused, one shared HTTP/2 connection per host, `-max-connections`.
//! - Redirects resolved as RFC 3986 says (the `url` crate), a
//!   whole-request `-timeout`, body capture up to `-max-body`.
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

mod carry;
mod check;
mod client;
mod config;
mod conn;
mod error;
mod events;
mod extract;
mod grpc;
pub mod h1;
mod h2;
mod h3;
mod hyper_io;
mod key;
mod pool;
mod response;
mod shape;
mod target;
mod transport;
mod ws;

pub use check::{BadCheck, Check, Checks, Seen, Step, CHECK_BODY_BYTES};
pub use client::{Client, LoopState, SessionState, Shared, StepReads, MAX_COOKIES};
pub use config::{
    ClientConfig, ConnectTo, DnsSelect, H1Engine, StepNeeds, WsFrame, DEFAULT_CONNECTIONS,
    DEFAULT_MAX_HEADER_BYTES, DEFAULT_PIPELINE, DEFAULT_REDIRECTS, DEFAULT_TIMEOUT, MAX_HEAD_BYTES,
    MAX_KEPT_BODY,
};
pub use error::Failure;
pub use events::{size_class, BadStream, Stamps, StreamMode, StreamSpec, Tape, Taped};
pub use extract::{BadExtract, Extract, NotExtracted, MAX_VALUE_BYTES};
pub use grpc::{
    frame as grpc_frame, is_json as grpc_is_json, prepare_body as grpc_prepare_body,
    reflect as grpc_reflect, status_name as grpc_status_name, GrpcStreams,
    Prepared as GrpcPrepared, ProtoSet, ReflectError as GrpcReflectError,
    Reflector as GrpcReflector, DEFAULT_MAX_MESSAGE, GRPC_FAILED, GRPC_METHOD,
};
pub use response::Response;
pub use target::{PreparedTarget, TargetGroup, ATTACK_HEADER, SEQ_HEADER};
pub use transport::opened::Via;
pub use transport::proxy::Proxies;
pub use transport::tls::{handshake_failure as tls_failure, TlsError};
pub use transport::uring::{IoMode, IO_ENV};
pub use ws::{Held as WsHeld, WS_OK};
