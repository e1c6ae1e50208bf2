//! QUIC for HTTP/3 (quinn, rustls): the client configuration (ALPN h3,
//! TLS 1.3, 0-RTT with `-session-tickets`), one UDP endpoint per worker
//! thread and address family, and a connection's handshake with its
//! failures worded.

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    sync::{Arc, OnceLock},
    time::Duration,
};

use quinn::{crypto::rustls::QuicClientConfig, ClientConfig, Endpoint};

use crate::{transport::tls, TlsError};

/// Longest a QUIC handshake may wait for the server's first answer: a
/// host that does not speak QUIC (or drops UDP) never answers at all, and
/// nothing else would say so.
pub(crate) const NO_ANSWER: Duration = Duration::from_secs(5);

/// How long a QUIC connection may go without a packet before it is
/// given up (quinn's default is 30 s too; said here to word it).
const IDLE: Duration = Duration::from_secs(30);

/// The QUIC side of one attack's clients: the configuration every
/// connection uses, built once.
#[derive(Clone)]
pub(crate) struct QuicConfig {
    config: ClientConfig,
    /// `-session-tickets`: resumed handshakes send their first request
    /// in 0-RTT.
    early: bool,
}

impl QuicConfig {
    /// From the TLS flags; the error names the flag.
    pub(crate) fn new(cfg: &crate::ClientConfig) -> Result<Self, TlsError> {
        let mut rustls = tls::client_config(cfg)?;
        rustls.alpn_protocols = vec![b"h3".to_vec()];
        rustls.enable_early_data = cfg.session_tickets;
        let crypto = QuicClientConfig::try_from(rustls)
            .map_err(|e| TlsError::Config(format!("QUIC needs TLS 1.3: {e}")))?;
        let mut config = ClientConfig::new(Arc::new(crypto));
        let mut transport = quinn::TransportConfig::default();
        transport.max_idle_timeout(quinn::IdleTimeout::try_from(IDLE).ok());
        config.transport_config(Arc::new(transport));
        Ok(QuicConfig {
            config,
            early: cfg.session_tickets,
        })
    }
}

/// A worker thread's UDP endpoints (one per address family, bound at the
/// first connection of that family) and the configuration.
pub(crate) struct Quic {
    config: QuicConfig,
    v4: OnceLock<Result<Endpoint, crate::Failure>>,
    v6: OnceLock<Result<Endpoint, crate::Failure>>,
}

impl Quic {
    pub(crate) fn new(config: QuicConfig) -> Self {
        Quic {
            config,
            v4: OnceLock::new(),
            v6: OnceLock::new(),
        }
    }

    /// The endpoint for `to`'s family, bound to `laddr` or any address.
    fn endpoint(&self, to: SocketAddr, laddr: Option<IpAddr>) -> Result<&Endpoint, crate::Failure> {
        let (cell, any) = if to.is_ipv4() {
            (&self.v4, IpAddr::V4(Ipv4Addr::UNSPECIFIED))
        } else {
            (&self.v6, IpAddr::V6(Ipv6Addr::UNSPECIFIED))
        };
        cell.get_or_init(|| {
            let local = SocketAddr::new(laddr.unwrap_or(any), 0);
            let mut e = Endpoint::client(local).map_err(|e| {
                crate::Failure(format!(
                    "dial udp {to}: bind {local}: {}",
                    super::dial::go_error(&e)
                ))
            })?;
            e.set_default_client_config(self.config.config.clone());
            Ok(e)
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    /// A QUIC connection to `to`, for the server `name`: its handshake
    /// done, or in 0-RTT when a session ticket allows (`-session-tickets`);
    /// with the endpoint's local address.
    pub(crate) async fn connect(
        &self,
        to: SocketAddr,
        name: &str,
        laddr: Option<IpAddr>,
    ) -> Result<(quinn::Connection, Option<SocketAddr>), crate::Failure> {
        let endpoint = self.endpoint(to, laddr)?;
        // The endpoint is bound to any address: the local address a
        // record names is the one the route toward `to` takes (it said
        // 0.0.0.0).
        let local = endpoint
            .local_addr()
            .ok()
            .map(|bound| match route_source(to) {
                Some(ip) if bound.ip().is_unspecified() => SocketAddr::new(ip, bound.port()),
                _ => bound,
            });
        let connecting = endpoint
            .connect(to, name)
            .map_err(|e| format!("dial udp {to}: {e}"))?;
        let connecting = if self.config.early {
            match connecting.into_0rtt() {
                Ok((conn, _accepted)) => return Ok((conn, local)),
                Err(connecting) => connecting,
            }
        } else {
            connecting
        };
        match tokio::time::timeout(NO_ANSWER, connecting).await {
            Ok(Ok(conn)) => Ok((conn, local)),
            Ok(Err(e)) => Err(crate::Failure::from(failure(&e, name))),
            Err(_) => Err(crate::Failure::from(format!(
                "no QUIC answer from {to} within {}s",
                NO_ANSWER.as_secs()
            ))),
        }
    }
}

/// The source address the kernel picks toward `to`: a UDP socket
/// connected there (no packet is sent) names it.
fn route_source(to: SocketAddr) -> Option<IpAddr> {
    let any = if to.is_ipv4() {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0)
    } else {
        SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0)
    };
    let s = std::net::UdpSocket::bind(any).ok()?;
    s.connect(to).ok()?;
    s.local_addr().ok().map(|a| a.ip())
}

/// A QUIC connection's end, worded: the server's `CONNECTION_CLOSE` with
/// its code (HTTP/3's by name), a handshake's TLS failure as Go words a
/// certificate's, a timeout.
pub(crate) fn failure(e: &quinn::ConnectionError, host: &str) -> String {
    use quinn::ConnectionError as E;
    match e {
        E::ApplicationClosed(c) => {
            let code = ::h3::error::Code::from(c.error_code.into_inner());
            let reason = String::from_utf8_lossy(&c.reason);
            let hex = c.error_code.into_inner();
            if reason.is_empty() {
                format!("http3: connection closed by server: CONNECTION_CLOSE {code} ({hex:#x})")
            } else {
                format!("http3: connection closed by server: CONNECTION_CLOSE {code} ({hex:#x}): {reason}")
            }
        }
        E::ConnectionClosed(c) => {
            let reason = String::from_utf8_lossy(&c.reason);
            if reason.is_empty() {
                format!(
                    "quic: connection closed by server: CONNECTION_CLOSE {}",
                    c.error_code
                )
            } else {
                format!(
                    "quic: connection closed by server: CONNECTION_CLOSE {}: {reason}",
                    c.error_code
                )
            }
        }
        E::TransportError(t) => {
            let reason = t.reason.as_str();
            match reason.strip_prefix("invalid peer certificate: ") {
                Some(what) => format!(
                    "tls: failed to verify certificate: x509: {}",
                    tls::certificate_words(what, host)
                ),
                None => format!("quic: {t}"),
            }
        }
        E::TimedOut => format!(
            "quic: connection timed out (no packet for {}s)",
            IDLE.as_secs()
        ),
        E::Reset => "quic: connection reset by server (stateless reset)".into(),
        E::VersionMismatch => "quic: the server speaks no QUIC version of ours".into(),
        E::LocallyClosed => "quic: connection closed".into(),
        E::CidsExhausted => "quic: connection IDs exhausted".into(),
    }
}
