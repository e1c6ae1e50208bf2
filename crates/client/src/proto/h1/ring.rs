//! barrage's HTTP/1.1 engine on a completion-based runtime (`-io ring`):
//! a connection is a monoio `TcpStream` (under rustls for https://,
//! `transport/ring_tls.rs`), whose sends and receives are io_uring
//! operations on the worker thread's ring, entered by the
//! thread as it parks (no epoll, no readiness wake-up before a read).
//! The request is the same [`Wire`], the answer is read by the same
//! [`Framer`] and stamped with the same [`Stamps`] as on tokio
//! ([`super::conn`]); monoio takes buffers by value, so a connection owns
//! its read buffer and lends it to each receive.

use std::{
    cell::{Cell, RefCell},
    io,
    sync::Arc,
};

use monoio::net::TcpStream;

use super::{
    conn::ExchangeError,
    later::{self, Got},
    Fed, Framer, Stamps, Wire,
};
use crate::transport::{opened::Opened, ring_tls::RingStream};

/// A connection's read buffer as it starts; it doubles when a read fills
/// it. A receive in the ring owns its buffer while the answer is awaited,
/// so this is held by every waiting request: at 2 KiB, 4.46 KiB of RSS per
/// held connection (18,000 at once), at 512 bytes 3.20.
const READ_START: usize = 512;

/// Most a connection's first read of an answer asks for, however large
/// its answers were.
const READ_MOST: usize = 16 << 10;

/// Send buffers kept per thread for reuse.
const SPARES: usize = 64;

/// Answers awaited on a thread above which a receive waits for the socket
/// to be readable before it lends a buffer (one more entry in the ring
/// per answer, no buffer held while the server takes its time): 18,000
/// held connections each held a 512-byte buffer, 0.5 of their 3.2 KiB.
const POLL_FIRST_ABOVE: usize = 256;

thread_local! {
    static SEND_BUFS: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    /// Answers this thread awaits now.
    static AWAITED: Cell<usize> = const { Cell::new(0) };
}

/// An answer counted in [`AWAITED`] while it is awaited.
struct Awaited;

impl Awaited {
    fn count() -> Self {
        AWAITED.set(AWAITED.get() + 1);
        Awaited
    }

    /// Whether so many are awaited that a receive should poll first.
    fn crowded() -> bool {
        AWAITED.get() > POLL_FIRST_ABOVE
    }
}

impl Drop for Awaited {
    fn drop(&mut self) {
        AWAITED.set(AWAITED.get() - 1);
    }
}

/// An open HTTP/1.1 connection on the ring.
pub struct RingConn {
    stream: RingStream,
    /// Lent to each receive; empty between answers.
    buf: Vec<u8>,
    /// How large a read starts: doubled when a read fills it, halved when
    /// one takes less than a quarter, within [`READ_START`] and
    /// [`READ_MOST`]. A pipelined batch's ten answers then come in one
    /// read rather than four reads growing from 512 bytes each batch.
    want: usize,
    served: bool,
    open: bool,
    opened: Arc<Opened>,
    /// Its socket stamps arrivals ([`later`]): plain TCP only.
    stamped: bool,
    /// The next answer may wait for the thread's next wake ([`later`]).
    may_wait: bool,
    /// When its last request waiting for a wake was written (a
    /// [`Stamps`] count, taken before the write).
    writing: u64,
}

impl RingConn {
    /// A connection over `stream`, nothing sent yet.
    pub(crate) fn new(stream: RingStream, opened: Arc<Opened>) -> Self {
        let stamped = stream.plain_fd().is_some_and(later::stamp_arrivals);
        RingConn {
            stream,
            buf: Vec::new(),
            want: READ_START,
            served: false,
            open: true,
            opened,
            stamped,
            may_wait: false,
            writing: 0,
        }
    }

    /// Lets its next answer wait for the thread's next wake ([`later`]):
    /// an open-model request whose `-timeout` is far longer than the wait.
    pub fn may_wait(&mut self, yes: bool) {
        self.may_wait = yes;
    }

    /// What opening it cost, and its ends.
    pub(crate) fn opened(&self) -> &Arc<Opened> {
        &self.opened
    }

    /// Whether it may carry another request.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Whether it has answered a request before.
    pub fn reused(&self) -> bool {
        self.served
    }

    /// Writes `requests` (a wire and a sequence number each) in one send
    /// and reads the first answer into `framer`; `stamps` tell when its
    /// head and end were read. Pipelined, the others follow through
    /// [`RingConn::read_next`], from the bytes this read left.
    pub async fn exchange(
        &mut self,
        requests: &[(&Wire, u64)],
        framer: &mut Framer,
        stamps: &mut Stamps,
    ) -> Result<(), ExchangeError> {
        let mut out = SEND_BUFS.with_borrow_mut(|b| b.pop()).unwrap_or_default();
        for (wire, seq) in requests {
            wire.write_to(*seq, &mut out);
            if wire.body_apart() {
                out.extend_from_slice(wire.body());
            }
        }
        // Whether the answer waits for the thread's next wake, and which.
        let wake = match std::mem::take(&mut self.may_wait) && self.stamped {
            true => later::soon(),
            false => None,
        };
        if wake.is_some() {
            self.writing = Stamps::now();
        }
        let (sent, mut out) = self.stream.write_all(out).await;
        out.clear();
        SEND_BUFS.with_borrow_mut(|b| {
            if b.len() < SPARES && out.capacity() <= 64 << 10 {
                b.push(out);
            }
        });
        if let Err(e) = sent {
            self.open = false;
            return Err(ExchangeError::Io(e));
        }
        if let Some(wake) = wake {
            if let Some(done) = self.read_later(wake, framer, stamps).await {
                return done;
            }
        }
        self.read_next(framer, stamps).await
    }

    /// Waits for the thread's next wake, then reads what came of the
    /// answer without waiting: `Some` if it was whole (or failed), else
    /// the rest is read through the ring.
    async fn read_later(
        &mut self,
        wake: u64,
        framer: &mut Framer,
        stamps: &mut Stamps,
    ) -> Option<Result<(), ExchangeError>> {
        later::next_wake(wake).await;
        let fd = self.stream.plain_fd()?;
        let mut buf = std::mem::take(&mut self.buf);
        let had = buf.capacity() > 0;
        buf.clear();
        buf.reserve(self.want);
        match later::recv_now(fd, &mut buf) {
            Ok(Got::Nothing) => {
                later::found(false);
                // No buffer held while the answer is awaited, if none was.
                self.buf = if had { buf } else { Vec::new() };
                None
            }
            Ok(Got::End) => {
                self.buf = buf;
                Some(self.ended(framer))
            }
            Err(e) => {
                self.open = false;
                Some(Err(ExchangeError::Io(e)))
            }
            Ok(Got::Bytes(n, at)) => {
                let full = n == buf.capacity();
                self.fit(n, buf.capacity());
                // Never before the request went (the wall clock stepped).
                let at = if at == 0 { 0 } else { at.max(self.writing) };
                let done = self.take(buf, framer, stamps, at);
                later::found(done.is_some());
                if done.is_none() && full {
                    self.buf.reserve(n.saturating_mul(2).min(256 << 10));
                }
                done
            }
        }
    }

    /// The answer's end at the stream's end.
    fn ended(&mut self, framer: &mut Framer) -> Result<(), ExchangeError> {
        self.open = false;
        match framer.eof() {
            Ok(()) => Ok(()),
            Err(_) if !framer.started() => Err(ExchangeError::Eof),
            Err(e) => Err(ExchangeError::Frame(e)),
        }
    }

    /// The next read's size after one of `n` bytes into `cap`.
    fn fit(&mut self, n: usize, cap: usize) {
        if n == cap {
            self.want = (self.want * 2).min(READ_MOST);
        } else if n < cap / 4 {
            self.want = (self.want / 2).max(READ_START);
        }
    }

    /// Reads the next answer into `framer`: first what an earlier read
    /// left (a pipelined batch's next answers), then the socket.
    pub async fn read_next(
        &mut self,
        framer: &mut Framer,
        stamps: &mut Stamps,
    ) -> Result<(), ExchangeError> {
        if !self.buf.is_empty() {
            let left = std::mem::take(&mut self.buf);
            if let Some(done) = self.take(left, framer, stamps, 0) {
                return done;
            }
        }
        let _awaited = Awaited::count();
        loop {
            if Awaited::crowded() && self.buf.capacity() == 0 {
                if let Err(e) = self.stream.readable().await {
                    self.open = false;
                    return Err(ExchangeError::Io(e));
                }
            }
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            if buf.capacity() == 0 {
                buf.reserve(self.want);
            }
            let (got, buf) = self.stream.read(buf).await;
            match got {
                Err(e) => {
                    self.open = false;
                    return Err(ExchangeError::Io(e));
                }
                Ok(0) => return self.ended(framer),
                Ok(n) => {
                    let full = n == buf.capacity();
                    self.fit(n, buf.capacity());
                    if let Some(done) = self.take(buf, framer, stamps, 0) {
                        return done;
                    }
                    if full {
                        // A long answer: larger reads, fewer entries.
                        self.buf.reserve(n.saturating_mul(2).min(256 << 10));
                    }
                }
            }
        }
    }

    /// Feeds `data` to `framer`, in at `at` (a [`Stamps`] count; 0: now);
    /// `Some` when the answer ended (or failed). Bytes past its end stay
    /// in the connection's buffer: the next pipelined answer's, or the
    /// server's mistake.
    fn take(
        &mut self,
        mut data: Vec<u8>,
        framer: &mut Framer,
        stamps: &mut Stamps,
        at: u64,
    ) -> Option<Result<(), ExchangeError>> {
        let had_head = framer.head_done();
        let fed = framer.feed(&data);
        let head_now = !had_head && framer.head_done();
        let now = || if at == 0 { Stamps::now() } else { at };
        if head_now {
            stamps.head = now();
        }
        match fed {
            Ok(Fed::More) => {
                data.clear();
                self.buf = data;
                None
            }
            Ok(Fed::Complete(n)) => {
                stamps.end = if head_now { stamps.head } else { now() };
                if !framer.reusable() {
                    self.open = false;
                }
                self.served = true;
                data.drain(..n);
                if data.is_empty() && data.capacity() > self.want {
                    // Nothing kept past a long answer's buffer.
                    data = Vec::new();
                }
                self.buf = data;
                Some(Ok(()))
            }
            Err(e) => {
                self.open = false;
                self.buf = Vec::new();
                Some(Err(ExchangeError::Frame(e)))
            }
        }
    }

    /// Whether bytes past the last answer wait (with no request pipelined
    /// behind it, the server's mistake: the connection is not reused).
    pub fn has_leftover(&self) -> bool {
        !self.buf.is_empty()
    }
}

/// Opens a plain TCP connection to `addr`, with what the connect took: a
/// non-blocking `connect`, which on loopback and other near hosts is done
/// at once; one still in progress is waited for through the ring (a poll
/// for writing, then the socket's error). (A second connect through the
/// ring, `IORING_OP_CONNECT`, on a new socket, as first written here,
/// opened two connections to the server for each one used.)
/// An error comes with the step that failed as Go names it (`socket`,
/// `connect`).
pub(crate) async fn connect(
    addr: std::net::SocketAddr,
) -> Result<(TcpStream, u64), (&'static str, io::Error)> {
    let began = std::time::Instant::now();
    let connecting = connect_now(addr)?;
    let on_connect = |e| ("connect", e);
    let stream = match connecting {
        Ok(s) => TcpStream::from_std(s).map_err(on_connect)?,
        Err(pending) => {
            let stream = TcpStream::from_std(pending).map_err(on_connect)?;
            stream.writable(false).await.map_err(on_connect)?;
            if let Some(e) = socket_error(&stream).map_err(on_connect)? {
                return Err(on_connect(e));
            }
            stream
        }
    };
    stream.set_nodelay(true).map_err(on_connect)?;
    Ok((stream, crate::transport::opened::nanos(began)))
}

/// The error a finished non-blocking connect left on `stream` (`SO_ERROR`).
fn socket_error(stream: &TcpStream) -> io::Result<Option<io::Error>> {
    use std::os::fd::AsRawFd;
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `err` and `len` are valid for the call; the descriptor is
    // the stream's, open while it lives.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut err as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((err != 0).then(|| io::Error::from_raw_os_error(err)))
}

/// A non-blocking connect to `addr`: `Ok` with the stream if it is already
/// connected, `Err` with it if the connect is still in progress.
type Connecting = Result<std::net::TcpStream, std::net::TcpStream>;

/// Starts a non-blocking connect to `addr`; an error names its step.
fn connect_now(addr: std::net::SocketAddr) -> Result<Connecting, (&'static str, io::Error)> {
    use std::os::fd::{FromRawFd, OwnedFd};
    let (domain, raw, len) = sockaddr(addr);
    // SAFETY: a plain call; the descriptor is owned at once below.
    let fd = unsafe {
        libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(("socket", io::Error::last_os_error()));
    }
    // SAFETY: a fresh descriptor owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: `raw` holds a socket address of `len` bytes.
    let r = unsafe {
        libc::connect(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            (&raw as *const libc::sockaddr_storage).cast(),
            len,
        )
    };
    if r == 0 {
        return Ok(Ok(std::net::TcpStream::from(fd)));
    }
    match io::Error::last_os_error() {
        e if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(Err(std::net::TcpStream::from(fd))),
        e => Err(("connect", e)),
    }
}

/// `addr` as the kernel takes it: its family, the address, its length.
fn sockaddr(addr: std::net::SocketAddr) -> (libc::c_int, libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is a valid value.
    let mut raw: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        std::net::SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in and aligned for it.
            unsafe { std::ptr::write((&mut raw as *mut libc::sockaddr_storage).cast(), sin) };
            (
                libc::AF_INET,
                raw,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        }
        std::net::SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in6 and aligned for it.
            unsafe { std::ptr::write((&mut raw as *mut libc::sockaddr_storage).cast(), sin6) };
            (
                libc::AF_INET6,
                raw,
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        }
    }
}
