//! barrage-testkit (dev-only): real HTTP servers on loopback port 0 for
//! barrage's tests, each on its own thread and runtime so that tests drive
//! the real `barrage` binary against them and then ask the server what it
//! received.
//!
//! Routes (one server serves all of them, HTTP/1.1 and h2c on the same
//! port, or HTTP/1.1 and h2 over TLS):
//!
//! | path | answer |
//! |---|---|
//! | `/` | 200 `hello\n` |
//! | `/status/N` | status N |
//! | `/sleep/MS` | 200 after MS milliseconds |
//! | `/delay/US` | 200 after US microseconds (a thread's sleep: precise) |
//! | `/redirect/N` | 302 to `/redirect/N-1`; `/redirect/0` is 200 |
//! | `/bytes/N` | 200 with an N-byte body |
//! | `/login`, `/me`, `/items`, `/items/M` | a stateful app for flows: see [`AppTally`] |
//! | anything else | 404 |
//!
//! [`RawServer`] misbehaves below HTTP (resets, truncated or endless
//! bodies, stalls, closes); [`Blackhole`] never completes a TCP handshake;
//! [`Relay`] cuts a sender's connection to a collector;
//! [`OtlpReceiver`] takes OTLP/HTTP metrics and decodes them;
//! [`ProxyServer`] is a forward proxy (plain requests and `CONNECT`
//! tunnels); [`TestCert`] makes self-signed, expired,
//! wrong-name and CA-signed certificates; [`Child`] runs the real binary,
//! decodes its stream as it arrives, signals it and reports its peak RSS.
//!
//! ```no_run
//! let server = barrage_testkit::Server::http();
//! // ... run barrage against server.url("/") ...
//! assert_eq!(server.count(), 0);
//! ```
#![deny(missing_docs)]

#[cfg(test)]
mod app;
mod blackhole;
mod capacity;
mod child;
mod dns;
mod events;
mod grpc;
mod http3;
mod otlp;
mod pacer;
mod proxy;
mod raw;
mod reflection;
mod relay;
mod server;
mod stoppable;
mod tls;
mod ws;

pub use barrage_serve::AppTally;
pub use blackhole::Blackhole;
pub use capacity::CapacityServer;
pub use child::{Child, ChildResult, Hung};
pub use dns::DnsServer;
pub use http3::H3Server;
pub use otlp::{OtlpPoint, OtlpReceiver};
pub use proxy::{ProxyMode, ProxyRequest, ProxyServer};
pub use raw::{RawServer, Script, SequentialServer};
pub use reflection::echo_descriptor_set;
pub use relay::Relay;
pub use server::{Received, Server};
pub use tls::TestCert;
pub use ws::WsServer;

/// The proxy variables barrage reads (as Go does). Runs of barrage in
/// tests remove them, so that a proxy set where the tests run cannot take
/// requests for the tests' made-up names (`barrage.test`) off the machine.
pub const PROXY_VARS: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
];
