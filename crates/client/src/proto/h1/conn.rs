//! One HTTP/1.1 connection of the engine: a byte stream and a few words
//! of state. Reads land in a buffer owned by the worker thread; the
//! connection keeps bytes only while a response is partly received (in
//! its [`Framer`]) or, pipelined, when a read brought the start of the
//! next answer.

use std::{
    cell::RefCell,
    future::poll_fn,
    io::{self, IoSlice},
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Instant,
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{
    framer::{Fed, FrameError, Framer},
    wire::Wire,
};
use crate::core::observe::{Observe, Unobserved};
use crate::transport::{dial::BoxStream, opened::Opened};

/// The worker thread's read buffer.
const READ_BUF: usize = 64 * 1024;

/// Request buffers kept per thread for reuse (each is emptied after its
/// write, so a waiting connection holds none).
const SPARE_WRITE_BUFS: usize = 64;

/// A write buffer back to the thread's spares (emptied; none kept when
/// it never grew, or grew past 64 KiB).
fn give_back(mut buf: Vec<u8>) {
    if buf.capacity() == 0 || buf.capacity() > 64 * 1024 {
        return;
    }
    buf.clear();
    WRITE_BUFS.with_borrow_mut(|b| {
        if b.len() < SPARE_WRITE_BUFS {
            b.push(buf);
        }
    });
}

thread_local! {
    static READ: RefCell<Box<[u8]>> = RefCell::new(vec![0; READ_BUF].into_boxed_slice());
    static WRITE_BUFS: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Why an exchange failed.
#[derive(Debug)]
pub enum ExchangeError {
    /// Reading or writing failed.
    Io(io::Error),
    /// The response could not be read.
    Frame(FrameError),
    /// The connection closed before any of the response came.
    Eof,
}

impl std::fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeError::Io(e) => f.write_str(&crate::transport::dial::go_error(e)),
            ExchangeError::Frame(e) => e.fmt(f),
            ExchangeError::Eof => f.write_str("EOF"),
        }
    }
}

/// When a response's head and the response were read, each kept as
/// nanoseconds after a base of the process's, plus one (0: not yet): 16
/// bytes where two `Option<Instant>` took 32, in a waiting request's
/// future (see `send/sizes.rs`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Stamps {
    pub(super) head: u64,
    pub(super) end: u64,
}

/// The instant [`Stamps`] count from: the first time one is taken.
fn stamps_base() -> Instant {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

impl Stamps {
    /// Now, as a stamp (the base is read first, so never before it).
    pub(super) fn now() -> u64 {
        let base = stamps_base();
        Instant::now().saturating_duration_since(base).as_nanos() as u64 + 1
    }

    fn at(stamp: u64) -> Option<Instant> {
        let ns = stamp.checked_sub(1)?;
        Some(stamps_base() + std::time::Duration::from_nanos(ns))
    }

    /// When the final response's head (status line and headers) was read.
    pub fn head(&self) -> Option<Instant> {
        Self::at(self.head)
    }

    /// When its last byte was.
    pub fn end(&self) -> Option<Instant> {
        Self::at(self.end)
    }
}

/// An exchange's requests on their way out: the head (and a body small
/// enough to go with it) in a buffer of the thread's, a larger body from
/// its wire as it is, and what broke the write.
struct Outgoing<'a> {
    buf: Vec<u8>,
    body: &'a [u8],
    written: usize,
    total: usize,
    flushed: bool,
    error: Option<io::Error>,
}

impl<'a> Outgoing<'a> {
    /// `requests` encoded in one buffer; a lone request's large body
    /// stays apart, written from its wire.
    fn of(requests: &[(&'a Wire, u64)]) -> Self {
        let mut buf = WRITE_BUFS.with_borrow_mut(|b| b.pop()).unwrap_or_default();
        let alone = requests.len() == 1;
        for (wire, seq) in requests {
            wire.write_to(*seq, &mut buf);
            if wire.body_apart() && !alone {
                buf.extend_from_slice(wire.body());
            }
        }
        let body: &[u8] = match requests {
            [(wire, _)] if wire.body_apart() => wire.body(),
            _ => &[],
        };
        Outgoing {
            total: buf.len() + body.len(),
            buf,
            body,
            written: 0,
            flushed: false,
            error: None,
        }
    }
}

/// An open HTTP/1.1 connection.
pub struct Conn {
    io: BoxStream,
    /// Bytes read past the last complete response: with pipelining, the
    /// start of the next answer; otherwise the server's mistake.
    leftover: Vec<u8>,
    /// How much of `leftover` the answers read so far took: a pipelined
    /// batch's answers are read out of it in turn, in place (cutting each
    /// off the front copied the rest once per answer: 7 KB a batch of 10).
    left_at: usize,
    /// Whether it has read a response.
    served: bool,
    /// Whether it may carry another request.
    open: bool,
    /// Its place under `-max-connections`, given up when it closes.
    _permit: Option<tokio::sync::OwnedSemaphorePermit>,
    /// What opening it cost, and its ends.
    opened: Arc<Opened>,
}

impl Conn {
    /// A connection over `io`, nothing sent yet.
    pub(crate) fn new(
        io: BoxStream,
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
        opened: Arc<Opened>,
    ) -> Self {
        Conn {
            io,
            leftover: Vec::new(),
            left_at: 0,
            served: false,
            open: true,
            _permit: permit,
            opened,
        }
    }

    /// What opening it cost, and its ends.
    pub(crate) fn opened(&self) -> &Arc<Opened> {
        &self.opened
    }

    /// Whether it may carry another request.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Whether it has answered a request before (a reused connection the
    /// server closed while idle may be retried on a new one).
    pub fn reused(&self) -> bool {
        self.served
    }

    /// Writes `requests` (each a wire and its sequence number) in one
    /// write and reads the first answer into `framer`; `stamps` tell when
    /// its head and its end were read. With more than one (pipelined), the
    /// others are answered through [`Conn::read_next`]. A response sent
    /// before the request was fully written (an early 413, say) is read,
    /// and the connection is then closed.
    pub fn exchange<'a>(
        &'a mut self,
        requests: &[(&'a Wire, u64)],
        framer: &'a mut Framer,
        stamps: &'a mut Stamps,
    ) -> impl std::future::Future<Output = Result<(), ExchangeError>> + Send + 'a {
        self.exchange_observed(requests, framer, stamps, Unobserved)
    }

    /// [`Conn::exchange`], telling `obs` what the answer brings
    /// (`-stream`). `obs` is moved in: [`Unobserved`] adds nothing to the
    /// future.
    pub(crate) fn exchange_observed<'a, O: Observe + 'a>(
        &'a mut self,
        requests: &[(&'a Wire, u64)],
        framer: &'a mut Framer,
        stamps: &'a mut Stamps,
        obs: O,
    ) -> impl std::future::Future<Output = Result<(), ExchangeError>> + Send + 'a {
        // A poll function over the write's state, built here, rather than
        // an async block: its closure's borrows of its own locals were 80
        // of 176 bytes, and a request's future is held while it waits
        // (18,000 held connections).
        let mut out = Outgoing::of(requests);
        poll_fn(move |cx| {
            let r = self.poll_exchange(cx, &mut out, framer, stamps, &obs);
            if r.is_ready() {
                if out.written < out.total || out.error.is_some() {
                    self.open = false;
                }
                give_back(std::mem::take(&mut out.buf));
            }
            r
        })
    }

    /// Writes what is left of `out`, then reads the answer.
    fn poll_exchange(
        &mut self,
        cx: &mut Context<'_>,
        out: &mut Outgoing<'_>,
        framer: &mut Framer,
        stamps: &mut Stamps,
        obs: &impl Observe,
    ) -> Poll<Result<(), ExchangeError>> {
        while out.written < out.total && out.error.is_none() {
            let io = Pin::new(&mut self.io);
            let polled = if out.written < out.buf.len() {
                let slices = [
                    IoSlice::new(&out.buf[out.written..]),
                    IoSlice::new(out.body),
                ];
                io.poll_write_vectored(cx, &slices)
            } else {
                io.poll_write(cx, &out.body[out.written - out.buf.len()..])
            };
            match polled {
                Poll::Ready(Ok(0)) => out.error = Some(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => out.written += n,
                Poll::Ready(Err(e)) => out.error = Some(e),
                Poll::Pending => break,
            }
        }
        if out.written == out.total && !out.flushed && out.error.is_none() {
            match Pin::new(&mut self.io).poll_flush(cx) {
                Poll::Ready(Ok(())) => {
                    out.flushed = true;
                    // Written: the buffer goes back to the thread's spares
                    // now, not when the answer comes (a request waiting
                    // for its answer holds no buffer; all is written, so
                    // it is not looked at again).
                    give_back(std::mem::take(&mut out.buf));
                }
                Poll::Ready(Err(e)) => out.error = Some(e),
                Poll::Pending => {}
            }
        }
        match self.poll_response(cx, framer, stamps, obs) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(match out.error.take() {
                // Nothing came back: what broke was the write.
                Some(w) if !framer.started() => ExchangeError::Io(w),
                _ => e,
            })),
            Poll::Pending => match out.error.take() {
                // Not even the head went out: nothing to wait for.
                Some(w) if out.written == 0 => Poll::Ready(Err(ExchangeError::Io(w))),
                Some(w) => {
                    // The rest of an answer may still come.
                    self.open = false;
                    out.error = Some(w);
                    Poll::Pending
                }
                None => Poll::Pending,
            },
        }
    }

    /// Reads the next pipelined answer into `framer`.
    pub async fn read_next(
        &mut self,
        framer: &mut Framer,
        stamps: &mut Stamps,
    ) -> Result<(), ExchangeError> {
        poll_fn(|cx| self.poll_response(cx, framer, stamps, &Unobserved)).await
    }

    /// [`Conn::poll_response`] for a connection driven by hand (a shared,
    /// pipelined one).
    pub(crate) fn poll_answer(
        &mut self,
        cx: &mut Context<'_>,
        framer: &mut Framer,
        stamps: &mut Stamps,
    ) -> Poll<Result<(), ExchangeError>> {
        self.poll_response(cx, framer, stamps, &Unobserved)
    }

    /// Writes some of `bytes` (flushing what a TLS stream holds once all
    /// are out); a failure closes the connection.
    pub(crate) fn poll_write_bytes(
        &mut self,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = match Pin::new(&mut self.io).poll_write(cx, bytes) {
            Poll::Ready(Ok(0)) => Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
            other => other,
        };
        if let Poll::Ready(Ok(n)) = polled {
            if n == bytes.len() {
                // Best effort: a plain socket has nothing to flush, TLS
                // sends its records.
                let _ = Pin::new(&mut self.io).poll_flush(cx);
            }
        }
        if matches!(polled, Poll::Ready(Err(_))) {
            self.open = false;
        }
        polled
    }

    /// Feeds what arrives to `framer` until its response is complete.
    fn poll_response(
        &mut self,
        cx: &mut Context<'_>,
        framer: &mut Framer,
        stamps: &mut Stamps,
        obs: &impl Observe,
    ) -> Poll<Result<(), ExchangeError>> {
        if self.has_leftover() {
            let left = std::mem::take(&mut self.leftover);
            let at = std::mem::take(&mut self.left_at);
            if let Some((done, used)) = self.take(&left[at..], framer, stamps, obs) {
                if at + used < left.len() {
                    // More answers' bytes: kept where they are.
                    self.leftover = left;
                    self.left_at = at + used;
                }
                return Poll::Ready(done);
            }
        }
        loop {
            let polled = READ.with_borrow_mut(|space| {
                let mut rb = ReadBuf::new(space);
                match Pin::new(&mut self.io).poll_read(cx, &mut rb) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(Err(e)) => {
                        self.open = false;
                        Poll::Ready(Some(Err(ExchangeError::Io(e))))
                    }
                    Poll::Ready(Ok(())) if rb.filled().is_empty() => {
                        self.open = false;
                        Poll::Ready(Some(match framer.eof() {
                            Ok(()) => Ok(()),
                            Err(_) if !framer.started() => Err(ExchangeError::Eof),
                            Err(e) => Err(ExchangeError::Frame(e)),
                        }))
                    }
                    Poll::Ready(Ok(())) => {
                        let data = rb.filled();
                        Poll::Ready(self.take(data, framer, stamps, obs).map(|(done, used)| {
                            if used < data.len() {
                                self.leftover.extend_from_slice(&data[used..]);
                            }
                            done
                        }))
                    }
                }
            });
            match polled {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(done)) => return Poll::Ready(done),
                Poll::Ready(None) => continue,
            }
        }
    }

    /// Feeds `data`; `Some` when the response ended (or failed), with how
    /// many bytes of `data` it took (the rest are the next answer's).
    fn take(
        &mut self,
        data: &[u8],
        framer: &mut Framer,
        stamps: &mut Stamps,
        obs: &impl Observe,
    ) -> Option<(Result<(), ExchangeError>, usize)> {
        let had_head = framer.head_done();
        let fed = framer.feed_observed(data, obs);
        if matches!(fed, Ok(Fed::Complete(_))) && framer.streams() {
            obs.finish();
        }
        let head_now = !had_head && framer.head_done();
        if head_now {
            stamps.head = Stamps::now();
        }
        match fed {
            Ok(Fed::More) => None,
            Ok(Fed::Complete(n)) => {
                // Head and end in one read (most answers): one clock read.
                stamps.end = if head_now { stamps.head } else { Stamps::now() };
                if !framer.reusable() {
                    self.open = false;
                }
                self.served = true;
                Some((Ok(()), n))
            }
            Err(e) => {
                self.open = false;
                Some((Err(ExchangeError::Frame(e)), data.len()))
            }
        }
    }

    /// Whether unread bytes are waiting (the start of a pipelined answer;
    /// for a connection about to go idle, the server's mistake).
    pub fn has_leftover(&self) -> bool {
        self.left_at < self.leftover.len()
    }
}
