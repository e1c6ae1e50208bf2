//! [`Link`]: the connection a request went on, and what opening it cost.

use std::net::SocketAddr;

/// The connection a request went on: what opening it cost, if this
/// request opened it, and its two ends. A record has one when the attack
/// measured it (stream format 5 and later; older streams, CSV and
/// vegeta's formats have none, which reports show as absent, not as 0).
///
/// A connection's costs are carried once, by the first request answered
/// on it (on HTTP/2 and HTTP/3, where many share it, whichever is answered
/// first); every later request on it has `reused` set and zero costs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Link {
    /// Whether the connection carried a request before this one.
    pub reused: bool,
    /// Looking the host name up, nanoseconds (0 for an address, or one
    /// the `-dns-ttl` cache held).
    pub dns: u64,
    /// The TCP connect (or Unix socket connect; a proxy's `CONNECT`
    /// included; QUIC's handshake, TLS in it, for HTTP/3), nanoseconds.
    pub connect: u64,
    /// The TLS handshake, nanoseconds (0 without TLS).
    pub tls: u64,
    /// Where the connection went (`None` over a Unix socket).
    pub remote: Option<SocketAddr>,
    /// Where it came from (`None` over a Unix socket).
    pub local: Option<SocketAddr>,
}

impl Link {
    /// Whether this request opened the connection (so its costs are the
    /// connection's).
    pub fn is_new(&self) -> bool {
        !self.reused
    }

    /// `self` followed by `next` on the same request (a redirect's hop, or
    /// a request sent again after a kept connection turned out closed):
    /// the costs of both, new if either opened a connection, and the
    /// addresses of the last.
    pub fn then(self, next: Link) -> Link {
        Link {
            reused: self.reused && next.reused,
            dns: self.dns + next.dns,
            connect: self.connect + next.connect,
            tls: self.tls + next.tls,
            remote: next.remote,
            local: next.local,
        }
    }
}
