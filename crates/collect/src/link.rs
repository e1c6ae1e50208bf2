//! One connection between an attacker and the collector: plain TCP, or
//! TLS through rustls on the same blocking socket, read with a timeout so
//! that one thread can both stream and listen.

use std::{
    io::{self, Read, Write},
    net::TcpStream,
    path::Path,
    sync::Arc,
    time::Duration,
};

use rustls::{
    pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer, ServerName},
    ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection, StreamOwned,
};

/// A connection, either way.
pub enum Link {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS, the attacker's end.
    Client(Box<StreamOwned<ClientConnection, TcpStream>>),
    /// TLS, the collector's end.
    Server(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Link {
    /// The socket beneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Link::Plain(s) => s,
            Link::Client(s) => &s.sock,
            Link::Server(s) => &s.sock,
        }
    }

    /// Reads wait at most `t` (then fail with `WouldBlock` or `TimedOut`).
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.tcp().set_read_timeout(t)
    }

    /// Closes both ways (TLS says close_notify first).
    pub fn close(&mut self) {
        match self {
            Link::Plain(_) => {}
            Link::Client(s) => {
                s.conn.send_close_notify();
                let _ = s.flush();
            }
            Link::Server(s) => {
                s.conn.send_close_notify();
                let _ = s.flush();
            }
        }
        let _ = self.tcp().shutdown(std::net::Shutdown::Both);
    }
}

/// Whether an error only says that a read timed out.
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Link::Plain(s) => s.read(buf),
            Link::Client(s) => s.read(buf),
            Link::Server(s) => s.read(buf),
        }
    }
}

impl Write for Link {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Link::Plain(s) => s.write(buf),
            Link::Client(s) => s.write(buf),
            Link::Server(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Link::Plain(s) => s.flush(),
            Link::Client(s) => s.flush(),
            Link::Server(s) => s.flush(),
        }
    }
}

/// Why TLS for a collect link could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetup {
    /// A PEM file that could not be read, named with its flag.
    #[error("{at}: {why}")]
    File {
        /// The flag and file (`-tls-cert cert.pem`), or the file.
        at: String,
        /// What rustls said.
        why: rustls::pki_types::pem::Error,
    },
    /// A PEM file without a certificate.
    #[error("{at}: no certificate in it{hint}")]
    Empty {
        /// The flag and file, or the file.
        at: String,
        /// What the file should be.
        hint: &'static str,
    },
    /// rustls refused a certificate, a key or the protocol versions.
    #[error("{at}{why}")]
    Refused {
        /// The flags or file (with `: `), or nothing.
        at: String,
        /// What rustls said.
        why: rustls::Error,
    },
}

/// The collector's TLS: a certificate chain and its key, PEM files.
pub fn server_tls(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, TlsSetup> {
    let at = |flag: &str, p: &Path| format!("{flag} {}", p.display());
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|c| c.collect::<Result<_, _>>())
        .map_err(|why| TlsSetup::File {
            at: at("-tls-cert", cert),
            why,
        })?;
    if chain.is_empty() {
        return Err(TlsSetup::Empty {
            at: at("-tls-cert", cert),
            hint: "",
        });
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|why| TlsSetup::File {
        at: at("-tls-key", key),
        why,
    })?;
    let refused = |at: &str| {
        let at = at.to_string();
        move |why| TlsSetup::Refused { at, why }
    };
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(refused(""))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(refused("-tls-cert/-tls-key: "))?;
    Ok(Arc::new(config))
}

/// The attacker's TLS: the system's roots, or the CA in `ca` (PEM) when
/// given (a collector's own certificate, for example).
pub fn client_tls(ca: Option<&Path>) -> Result<Arc<ClientConfig>, TlsSetup> {
    let mut roots = RootCertStore::empty();
    match ca {
        Some(path) => {
            let at = path.display().to_string();
            let file = |why| TlsSetup::File {
                at: at.clone(),
                why,
            };
            for cert in CertificateDer::pem_file_iter(path).map_err(file)? {
                let cert = cert.map_err(file)?;
                roots.add(cert).map_err(|why| TlsSetup::Refused {
                    at: format!("{at}: "),
                    why,
                })?;
            }
            if roots.is_empty() {
                return Err(TlsSetup::Empty {
                    at,
                    hint: " (a PEM file of the collector's CA)",
                });
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        }
    }
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|why| TlsSetup::Refused {
                at: String::new(),
                why,
            })?
            .with_root_certificates(roots)
            .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Opens the attacker's end: TCP to `addr` (`host:port`), then TLS when
/// `tls` is given, named as `host`.
pub fn connect(addr: &str, tls: Option<&Arc<ClientConfig>>, timeout: Duration) -> io::Result<Link> {
    use std::net::ToSocketAddrs;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for a in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(sock) => {
                sock.set_nodelay(true)?;
                let Some(config) = tls else {
                    return Ok(Link::Plain(sock));
                };
                let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
                let host = host.trim_start_matches('[').trim_end_matches(']');
                let name = ServerName::try_from(host.to_string())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                let conn = ClientConnection::new(config.clone(), name).map_err(io::Error::other)?;
                return Ok(Link::Client(Box::new(StreamOwned::new(conn, sock))));
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The collector's end of an accepted socket.
pub fn accept(sock: TcpStream, tls: Option<&Arc<ServerConfig>>) -> io::Result<Link> {
    sock.set_nodelay(true)?;
    match tls {
        None => Ok(Link::Plain(sock)),
        Some(config) => {
            let conn = ServerConnection::new(config.clone()).map_err(io::Error::other)?;
            Ok(Link::Server(Box::new(StreamOwned::new(conn, sock))))
        }
    }
}
