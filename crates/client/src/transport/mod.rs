//! How bytes reach a server, whatever the protocol on top: dialing
//! (`dial.rs`: TCP, Unix sockets, `-connect-to`, `-laddr`, DNS through
//! `dns.rs`), proxies (`proxy.rs`), TLS (`tls.rs`, with Go's wording of
//! handshake failures), the first bytes' check (`sniff.rs`: an HTTP/1.x
//! answer to https or `-h2c`) and QUIC (`quic.rs`, for HTTP/3).
//! `connect.rs` opens a host's transport and says what it will speak;
//! the protocol rooms (`proto/`) take the stream or QUIC connection.
//! `uring/` moves a stream's bytes through io_uring (`-io uring`);
//! `ring_tls.rs` is https:// on `-io ring`'s monoio threads.

pub(crate) mod connect;
pub(crate) mod dial;
pub(crate) mod dns;
pub(crate) mod opened;
pub(crate) mod proxy;
pub(crate) mod quic;
pub(crate) mod ring_tls;
pub(crate) mod sniff;
pub(crate) mod tls;
pub(crate) mod uring;
