//! A connection's byte stream over its thread's ring: at most one receive
//! and one send in flight, each in a slot of the driver.

use std::{
    io,
    os::fd::{AsRawFd, OwnedFd},
    pin::Pin,
    task::{Context, Poll},
    thread::{self, ThreadId},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::driver::{self, Got};

/// The first receive of an exchange: an answer of a few hundred bytes
/// fits, and a connection waiting for a slow answer holds no more.
const FIRST_RECV: usize = 4 * 1024;
/// A receive after one that filled its buffer (a large body).
const BIG_RECV: usize = 64 * 1024;

/// A socket whose reads and writes go through the thread's ring.
pub(crate) struct UringStream {
    fd: OwnedFd,
    /// The receive in flight, or completed with bytes not all read yet.
    recv: Option<u32>,
    /// Whether it is armed (multishot, into the thread's provided
    /// buffers) rather than one-shot into a buffer of its own.
    armed: bool,
    /// The next receive is one-shot (the provided buffers ran out).
    plain_next: bool,
    /// How much of the completed receive (an armed one's first
    /// completion not wholly read) was read.
    recv_at: usize,
    /// The next receive's size.
    recv_len: usize,
    /// The send in flight (or completed and not yet looked at), and how
    /// much of its buffer the kernel took so far.
    send: Option<(u32, usize)>,
    /// A send's failure, for the next read or write.
    failed: Option<io::Error>,
    /// The thread whose ring holds its operations.
    thread: ThreadId,
}

impl UringStream {
    /// `fd` (a connected socket), its operations on this thread's ring
    /// (see [`super::usable_here`]).
    pub(crate) fn new(fd: OwnedFd) -> Self {
        UringStream {
            fd,
            recv: None,
            armed: false,
            plain_next: false,
            recv_at: 0,
            recv_len: FIRST_RECV,
            send: None,
            failed: None,
            thread: thread::current().id(),
        }
    }

    fn moved(&self) -> Option<io::Error> {
        (thread::current().id() != self.thread)
            .then(|| io::Error::other("io_uring: a stream polled on another thread"))
    }

    /// Looks at the send in flight: `Ready` once none is (a failure kept
    /// for the caller), a short send queued again for its rest. `cx`'s
    /// task is woken when it fails or falls short, and with `awaited`
    /// when it is done.
    fn poll_sent(&mut self, cx: &Context<'_>, awaited: bool) -> Poll<()> {
        let Some((i, took)) = self.send else {
            return Poll::Ready(());
        };
        let Some((res, len)) = driver::result(i, Some(cx.waker()), awaited) else {
            return Poll::Pending;
        };
        if res < 0 {
            self.failed = Some(io::Error::from_raw_os_error(-res));
        } else if res > 0 && took + (res as usize) < len {
            let took = took + res as usize;
            match driver::resend(i, self.fd.as_raw_fd(), took) {
                Ok(()) => {
                    self.send = Some((i, took));
                    let _ = driver::result(i, Some(cx.waker()), awaited);
                    return Poll::Pending;
                }
                Err(e) => self.failed = Some(e),
            }
        } else if res == 0 && len > took {
            self.failed = Some(io::ErrorKind::WriteZero.into());
        }
        driver::release(i);
        self.send = None;
        Poll::Ready(())
    }
}

impl AsyncRead for UringStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(e) = this.moved() {
            return Poll::Ready(Err(e));
        }
        if out.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        // A send that failed is what broke the exchange (a short one is
        // sent on; its task woken for it).
        let _ = this.poll_sent(cx, false);
        if let Some(e) = this.failed.take() {
            return Poll::Ready(Err(e));
        }
        loop {
            let Some(i) = this.recv else {
                // Armed once and kept armed: no new entry per answer, no
                // buffer held while the answer is awaited.
                if !std::mem::take(&mut this.plain_next) {
                    if let Some(armed) = driver::arm(this.fd.as_raw_fd(), cx.waker()) {
                        this.recv = Some(armed?);
                        this.armed = true;
                        this.recv_at = 0;
                        continue;
                    }
                }
                let i = driver::recv(this.fd.as_raw_fd(), this.recv_len, cx.waker())?;
                this.recv = Some(i);
                this.armed = false;
                this.recv_at = 0;
                return Poll::Pending;
            };
            if this.armed {
                match driver::read_armed(i, &mut this.recv_at, out, cx.waker()) {
                    Got::Pending => return Poll::Pending,
                    Got::Read => return Poll::Ready(Ok(())),
                    Got::Closed => {
                        this.recv = None;
                        return Poll::Ready(Ok(()));
                    }
                    Got::Failed(e) => {
                        this.recv = None;
                        return Poll::Ready(Err(io::Error::from_raw_os_error(e)));
                    }
                    Got::Again { plain } => {
                        this.recv = None;
                        this.plain_next = plain;
                        continue;
                    }
                }
            }
            return this.read_own(i, cx, out);
        }
    }
}

impl UringStream {
    /// Reads one-shot receive `i` (into a buffer of its own) into `out`.
    fn read_own(
        &mut self,
        i: u32,
        cx: &Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let Some((res, len)) = driver::result(i, Some(cx.waker()), false) else {
            return Poll::Pending;
        };
        if res <= 0 {
            driver::release(i);
            self.recv = None;
            return Poll::Ready(match res {
                0 => Ok(()),
                e => Err(io::Error::from_raw_os_error(-e)),
            });
        }
        let n = res as usize;
        self.recv_at += driver::copy_out(i, self.recv_at, n, out);
        if self.recv_at == n {
            driver::release(i);
            self.recv = None;
            self.recv_at = 0;
            self.recv_len = if n == len { BIG_RECV } else { FIRST_RECV };
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for UringStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[io::IoSlice::new(data)])
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    /// All of `slices` in one send (a request's head and its body).
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        slices: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let Some(e) = this.moved() {
            return Poll::Ready(Err(e));
        }
        if this.poll_sent(cx, true).is_pending() {
            return Poll::Pending;
        }
        if let Some(e) = this.failed.take() {
            return Poll::Ready(Err(e));
        }
        let len: usize = slices.iter().map(|s| s.len()).sum();
        if len == 0 {
            return Poll::Ready(Ok(0));
        }
        // Written behind: reported sent now, its failure the next call's.
        let i = driver::send(this.fd.as_raw_fd(), slices, cx.waker())?;
        this.send = Some((i, 0));
        Poll::Ready(Ok(len))
    }

    fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A plain socket holds nothing back: the send is queued for this
        // turn's entry (waiting for it would cost a wake-up per request).
        Poll::Ready(match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        })
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.poll_sent(cx, true).is_pending() {
            return Poll::Pending;
        }
        if let Some(e) = self.failed.take() {
            return Poll::Ready(Err(e));
        }
        // SAFETY: a plain call on a descriptor this stream owns.
        let r = unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_WR) };
        Poll::Ready(if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        })
    }
}

impl Drop for UringStream {
    fn drop(&mut self) {
        if self.moved().is_some() {
            // Its slots are another thread's: left to that ring.
            return;
        }
        // The descriptor closes after (`fd` drops last); an operation
        // still in flight keeps the socket until it completes. A receive
        // is cancelled; a send, reported done, still goes out.
        let queued = self.recv.is_some() || self.send.is_some();
        if let Some(i) = self.recv.take() {
            driver::abandon(i, true);
        }
        if let Some((i, _)) = self.send.take() {
            driver::abandon(i, false);
        }
        if queued {
            // An entry names the descriptor by number, looked up when the
            // ring is entered: entered now, before the number is closed
            // (and perhaps reused by another connection).
            driver::enter();
        }
    }
}
