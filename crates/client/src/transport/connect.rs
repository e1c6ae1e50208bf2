//! A connection's transport, opened for a host: a stream (TCP or a Unix
//! socket, TLS for https://, a `CONNECT` tunnel through a proxy) and
//! what it will speak (HTTP/2 by ALPN or `-h2c`, else HTTP/1.1; for
//! ws:// and wss://, a WebSocket upgrade), or a QUIC connection for
//! HTTP/3 (`-http3`). The pool asks for one and hands
//! it to the protocols' handshakes (`proto/mod.rs`) without looking in.

use std::sync::Arc;

use rustls::pki_types::ServerName;
use tokio_rustls::TlsConnector;

use super::{
    dial::{BoxStream, Dial},
    opened::{nanos, Opened},
    quic::{Quic, QuicConfig},
    sniff::{Expect, Sniff},
};
use crate::core::key::Key;

/// What an opened transport carries.
pub(crate) enum Carried {
    /// A byte stream; `h2`: HTTP/2 (ALPN chose it, or `-h2c` asks for
    /// it), else HTTP/1.1.
    Stream { stream: BoxStream, h2: bool },
    /// A QUIC connection: HTTP/3.
    Quic(quinn::Connection),
    /// A byte stream to upgrade to WebSocket (ws://, wss://: TLS with
    /// ALPN http/1.1 only, tunnelled through a proxy when there is one).
    Upgrade(BoxStream),
}

/// An opened transport and what opening it cost.
pub(crate) struct Transport {
    pub(crate) carried: Carried,
    pub(crate) opened: Opened,
}

/// Opens transports for one worker thread's pool.
pub(crate) struct Connector {
    tls: TlsConnector,
    /// For WebSocket's upgrades: ALPN http/1.1 only.
    tls_h1: TlsConnector,
    /// `-h2c`: HTTP/2 without TLS, by prior knowledge.
    h2c: bool,
    dial: Arc<Dial>,
    /// `-http3`: https:// goes over QUIC (this thread's endpoints).
    quic: Option<Quic>,
}

impl Connector {
    pub(crate) fn new(tls: TlsConnector, tls_h1: TlsConnector, h2c: bool, dial: Arc<Dial>) -> Self {
        Connector {
            tls,
            tls_h1,
            h2c,
            dial,
            quic: None,
        }
    }

    /// With `-http3`'s QUIC configuration.
    pub(crate) fn with_quic(mut self, quic: Option<QuicConfig>) -> Self {
        self.quic = quic.map(Quic::new);
        self
    }

    /// How connections are dialed.
    pub(crate) fn dial(&self) -> &Arc<Dial> {
        &self.dial
    }

    /// Whether a connection to `key` will carry every request at once,
    /// known before it is open (QUIC; HTTP/2 is known only by ALPN).
    pub(crate) fn shared_before_open(&self, key: &Key) -> bool {
        self.quic.is_some() && key.tls
    }

    /// Opens a transport to `key`: QUIC for https:// with `-http3`, else
    /// the dialer's stream, with TLS for https:// (named by the URL's
    /// host; ALPN may pick HTTP/2).
    pub(crate) async fn open(&self, key: &Key) -> Result<Transport, crate::Failure> {
        if key.ws {
            let (stream, opened) = self.dial.open_tunneled(key).await?;
            if !key.tls {
                return Ok(Transport {
                    carried: Carried::Upgrade(stream),
                    opened,
                });
            }
            let began = std::time::Instant::now();
            let stream = self.secure(&self.tls_h1, key, stream).await?;
            return Ok(Transport {
                carried: Carried::Upgrade(Box::new(stream)),
                opened: opened.with_tls(nanos(began)),
            });
        }
        if let Some(quic) = self.quic.as_ref().filter(|_| key.tls) {
            let (to, laddr, dns) = self.dial.udp_address(key).await?;
            let began = std::time::Instant::now();
            let (conn, local) = quic.connect(to, &key.host, laddr).await?;
            // QUIC's handshake is one, TLS in it: its time is the connect's.
            let opened = Opened::new(dns, nanos(began), Some(to), local);
            return Ok(Transport {
                carried: Carried::Quic(conn),
                opened,
            });
        }
        let (stream, opened) = self.dial.open(key).await?;
        if key.tls {
            let began = std::time::Instant::now();
            let stream = Sniff::new(stream, Expect::Tls);
            let tls = self.secure(&self.tls, key, stream).await?;
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            return Ok(Transport {
                carried: Carried::Stream {
                    stream: Box::new(tls),
                    h2,
                },
                opened: opened.with_tls(nanos(began)),
            });
        }
        let carried = if self.h2c || key.h2c {
            Carried::Stream {
                stream: Box::new(Sniff::new(stream, Expect::H2c)),
                h2: true,
            }
        } else {
            Carried::Stream { stream, h2: false }
        };
        Ok(Transport { carried, opened })
    }

    /// TLS over `stream` with `tls`, named by the URL's host.
    async fn secure<S>(
        &self,
        tls: &TlsConnector,
        key: &Key,
        stream: S,
    ) -> Result<tokio_rustls::client::TlsStream<S>, crate::Failure>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let name = ServerName::try_from(key.host.clone())
            .map_err(|e| format!("bad server name {}: {e}", key.host))?;
        tls.connect(name, stream)
            .await
            .map_err(|e| super::tls::handshake_failure(&e, &key.host).into())
    }
}
