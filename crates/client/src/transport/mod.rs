//! How bytes reach a server, whatever the protocol on top: dialing
//! (`dial.rs`: TCP, Unix sockets, `-connect-to`, `-laddr`, DNS through
//! `dns.rs`), proxies (`proxy.rs`), TLS (`tls.rs`, with Go's wording of
//! handshake failures) and the first bytes' check (`sniff.rs`: an HTTP/1.x
//! answer to https or `-h2c`). The protocol rooms (`h1/`, `ws/`, hyper's
//! HTTP/2 in `pool.rs`) take a stream from here.

pub(crate) mod dial;
pub(crate) mod dns;
pub(crate) mod proxy;
pub(crate) mod sniff;
pub(crate) mod tls;
