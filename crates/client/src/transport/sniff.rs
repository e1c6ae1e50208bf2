//! What a connection's first answer shows about the server, worded as Go
//! words it: an HTTP/1.x answer on a TLS connection is "server gave HTTP
//! response to HTTPS client", not rustls's "received corrupt message of
//! type InvalidContentType"; on an h2c connection it is an HTTP/1.x
//! server, not h2's "frame with invalid size".

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Go's text for an HTTP answer to a TLS handshake (`net/http`).
pub(crate) const HTTP_TO_HTTPS: &str = "http: server gave HTTP response to HTTPS client";
/// The text for an HTTP/1.x answer to HTTP/2's preface (`-h2c`).
pub(crate) const HTTP1_TO_H2C: &str =
    "http2: server gave HTTP/1.x response to HTTP/2 (-h2c) client";
/// The text for any other answer to HTTP/2's preface that does not begin
/// with the SETTINGS frame every HTTP/2 server sends first.
pub(crate) const NOT_H2C: &str =
    "http2: server's first bytes are not an HTTP/2 SETTINGS frame (it does not speak -h2c)";

/// What the first read is expected to be.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A TLS handshake: only an HTTP/1.x answer is worded here (rustls
    /// words the rest).
    Tls,
    /// HTTP/2's SETTINGS frame (`-h2c`).
    H2c,
}

/// A stream whose first read is checked: when the server answers in
/// HTTP/1.x (or, for h2c, not with a SETTINGS frame), the read fails with
/// Go's words for it instead.
pub(crate) struct Sniff<S> {
    inner: S,
    /// Until the first bytes are in.
    expect: Option<Expect>,
}

impl<S> Sniff<S> {
    pub(crate) fn new(inner: S, expect: Expect) -> Self {
        Sniff {
            inner,
            expect: Some(expect),
        }
    }
}

/// Why `first` (a server's first bytes) is not what `expect` wants.
fn wrong(expect: Expect, first: &[u8]) -> Option<&'static str> {
    if first.starts_with(b"HTTP/") {
        return Some(match expect {
            Expect::Tls => HTTP_TO_HTTPS,
            Expect::H2c => HTTP1_TO_H2C,
        });
    }
    // A frame header: 3 bytes of length, then its type (4: SETTINGS).
    (expect == Expect::H2c && first.len() >= 4 && first[3] != 4).then_some(NOT_H2C)
}

impl<S: AsyncRead + Unpin> AsyncRead for Sniff<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let Some(expect) = self.expect else {
            return Pin::new(&mut self.inner).poll_read(cx, buf);
        };
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let new = &buf.filled()[before..];
            if !new.is_empty() {
                self.expect = None;
                if let Some(says) = wrong(expect, new) {
                    buf.set_filled(before);
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, says)));
                }
            }
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Sniff<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
