//! https:// on `-io ring`: rustls over a monoio stream (the
//! `monoio-rustls` crate), HTTP/1.1 only (ALPN `http/1.1`), so only with
//! `-http2=false`: with HTTP/2 offered, a server would pick it and the ring
//! speaks none. A connection's stream is [`RingStream`], plain or TLS; the
//! handshake's failures read as tokio's path words them (`tls.rs`,
//! `sniff.rs`).

use std::{cell::Cell, io, rc::Rc, sync::Arc};

use monoio::{
    buf::{IoBuf, IoBufMut, IoVecBuf, IoVecBufMut},
    io::{AsyncReadRent, AsyncWriteRent, AsyncWriteRentExt},
    net::TcpStream,
    BufResult,
};
use rustls::pki_types::ServerName;

use super::{
    sniff::HTTP_TO_HTTPS,
    tls::{client_config, handshake_failure, TlsError},
};
use crate::{ClientConfig, Failure};

/// The TLS side of an attack's `-io ring` threads: the certificates read
/// and parsed once, shared by the threads.
#[derive(Clone)]
pub struct RingTls(Arc<rustls::ClientConfig>);

impl RingTls {
    /// `cfg`'s TLS (`-insecure`, `-root-certs`, `-cert`, `-key`, ...) with
    /// ALPN http/1.1 only; `None` with `-http2` (the ring sends no https://
    /// then). The error names the flag.
    pub fn new(cfg: &ClientConfig) -> Result<Option<Self>, TlsError> {
        if cfg.http2 {
            return Ok(None);
        }
        let mut tls = client_config(cfg)?;
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Some(RingTls(Arc::new(tls))))
    }

    /// A connector for one thread.
    pub(crate) fn connector(&self) -> monoio_rustls::TlsConnector {
        monoio_rustls::TlsConnector::from(self.0.clone())
    }
}

/// What a TLS connection's socket showed, kept apart from the stream:
/// `monoio-rustls` hands on only an error's kind (its buffer keeps the
/// error itself), and a failed handshake drops the stream.
#[derive(Default)]
pub(crate) struct Seen {
    /// Whether the server's first bytes were an HTTP/1.x answer.
    http: Cell<bool>,
    /// Whether any bytes came yet.
    first: Cell<bool>,
    /// The socket's last error number.
    errno: Cell<Option<i32>>,
}

/// A TCP stream that tells [`Seen`] what its reads met.
pub(crate) struct Watched {
    inner: TcpStream,
    seen: Rc<Seen>,
}

impl AsyncReadRent for Watched {
    async fn read<T: IoBufMut>(&mut self, mut buf: T) -> BufResult<usize, T> {
        // Where the read writes (the buffer moves, its bytes do not; after
        // it, a buffer may point past what it wrote).
        let at = buf.write_ptr();
        let (got, buf) = self.inner.read(buf).await;
        let n = *got.as_ref().unwrap_or(&0);
        if n > 0 && !self.seen.first.replace(true) {
            // SAFETY: the read wrote `n` bytes at `at`, in the buffer it
            // owns and gave back.
            let first = unsafe { std::slice::from_raw_parts(at, n) };
            self.seen.http.set(first.starts_with(b"HTTP/"));
        }
        self.seen.noted((got, buf))
    }

    async fn readv<T: IoVecBufMut>(&mut self, buf: T) -> BufResult<usize, T> {
        self.seen.noted(self.inner.readv(buf).await)
    }
}

impl AsyncWriteRent for Watched {
    async fn write<T: IoBuf>(&mut self, buf: T) -> BufResult<usize, T> {
        self.seen.noted(self.inner.write(buf).await)
    }

    async fn writev<T: IoVecBuf>(&mut self, buf: T) -> BufResult<usize, T> {
        self.seen.noted(self.inner.writev(buf).await)
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().await
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        self.inner.shutdown().await
    }
}

/// A connection's stream on the ring.
pub(crate) enum RingStream {
    Plain(TcpStream),
    Tls(Box<monoio_rustls::ClientTlsStream<Watched>>, Rc<Seen>),
}

impl RingStream {
    /// TLS over `stream` with `tls`, named by `host`; the failure in Go's
    /// words (as `connect.rs` words tokio's).
    pub(crate) async fn secure(
        tls: &monoio_rustls::TlsConnector,
        host: &str,
        stream: TcpStream,
    ) -> Result<Self, Failure> {
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| Failure(format!("bad server name {host}: {e}")))?;
        let seen = Rc::new(Seen::default());
        let watched = Watched {
            inner: stream,
            seen: seen.clone(),
        };
        match tls.connect(name, watched).await {
            Ok(s) => Ok(RingStream::Tls(Box::new(s), seen)),
            Err(_) if seen.http.get() => Err(Failure::from(HTTP_TO_HTTPS)),
            Err(e) => Err(Failure(handshake_failure(&seen.error(e.into()), host))),
        }
    }

    /// The socket's descriptor, if the stream is plain TCP.
    pub(crate) fn plain_fd(&self) -> Option<std::os::fd::RawFd> {
        match self {
            RingStream::Plain(s) => Some(std::os::fd::AsRawFd::as_raw_fd(s)),
            RingStream::Tls(..) => None,
        }
    }

    /// Reads into `buf`. (TLS's read boxed: inline, its future set the
    /// size of every plain read's too, and a plain request waiting for its
    /// answer held 0.75 KiB more.)
    pub(crate) async fn read(&mut self, buf: Vec<u8>) -> BufResult<usize, Vec<u8>> {
        match self {
            RingStream::Plain(s) => s.read(buf).await,
            RingStream::Tls(s, seen) => seen.mapped(Box::pin(s.read(buf)).await),
        }
    }

    /// Writes all of `buf` (TLS's write boxed, as its read).
    pub(crate) async fn write_all(&mut self, buf: Vec<u8>) -> BufResult<usize, Vec<u8>> {
        match self {
            RingStream::Plain(s) => s.write_all(buf).await,
            RingStream::Tls(s, seen) => seen.mapped(Box::pin(s.write_all(buf)).await),
        }
    }

    /// Waits for the socket to be readable; a TLS stream does not wait
    /// (rustls may hold a decrypted answer already).
    pub(crate) async fn readable(&self) -> io::Result<()> {
        match self {
            RingStream::Plain(s) => s.readable(false).await,
            RingStream::Tls(..) => Ok(()),
        }
    }
}

impl Seen {
    /// `done` as it was, its error's number kept.
    fn noted<T>(&self, done: BufResult<usize, T>) -> BufResult<usize, T> {
        if let Err(e) = &done.0 {
            self.errno.set(e.raw_os_error());
        }
        done
    }

    /// `done` with the socket's own error where only its kind came
    /// through.
    fn mapped<T>(&self, (got, buf): BufResult<usize, T>) -> BufResult<usize, T> {
        (got.map_err(|e| self.error(e)), buf)
    }

    /// `e` with the socket's own error where only its kind came through.
    fn error(&self, e: io::Error) -> io::Error {
        match (e.get_ref(), self.errno.take()) {
            (None, Some(n)) => io::Error::from_raw_os_error(n),
            _ => e,
        }
    }
}
