//! A worker thread's ring: the operations in flight (each with the buffer
//! the kernel reads or writes, kept here until its completion whatever
//! happens to the stream that asked), and the task that enters the ring
//! once a turn and reaps what completed.

use std::{
    cell::{Cell, RefCell},
    io,
    os::fd::{AsFd, AsRawFd, OwnedFd, RawFd},
    task::{Poll, Waker},
};

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use tokio::io::{unix::AsyncFd, Interest};

use super::pool::{Pool, GROUP};

mod armed;
mod table;
pub(super) use armed::{arm, read_armed, Got};
#[cfg(test)]
pub(super) use armed::{held, without_armed_receives, STARVED};

/// Submission entries (completions get twice as many): a turn's
/// operations beyond it are entered early, in more than one call.
const ENTRIES: u32 = 2048;

/// `IORING_RECVSEND_POLL_FIRST` (not exported by the `io-uring` crate).
const POLL_FIRST: u16 = 1;

/// The user data of a cancellation's own completion (ignored).
const CANCEL: u64 = u64::MAX;

/// Send buffers kept for reuse per thread (emptied; at most 64 KiB each).
const SPARES: usize = 256;
/// Receive buffers kept (4 KiB, or 64 KiB after a large body: at most
/// 4 MiB a thread).
const SPARE_RECVS: usize = 64;

/// An operation in flight or completed and not yet taken.
pub(super) struct Slot {
    /// What the kernel reads from (a send) or writes into (a receive).
    buf: Vec<u8>,
    /// Its result once complete: bytes moved, or minus an errno.
    res: Option<i32>,
    /// The task to wake when it completes.
    waker: Option<Waker>,
    /// Its stream is gone: freed when it completes.
    orphan: bool,
    /// A send: from which byte of `buf` it goes. Its task is woken only
    /// when it fails or falls short, or when it waits for the send to be
    /// done (a send wholly done otherwise wakes nobody: a request's send
    /// is looked at when its answer comes). A `u32`, as the ring's send
    /// length is.
    send_from: Option<u32>,
    /// Someone waits for it to be done, however it ends.
    awaited: bool,
    /// An armed (multishot) receive into the thread's provided buffers:
    /// its completions so far, not yet read (result and flags), and
    /// whether the last of them has come.
    multi: bool,
    /// A `Vec`, not a `VecDeque`: one or two wait here at a time, and
    /// the slot is 88 bytes instead of 104 (two a waiting request).
    got: Vec<(i32, u32)>,
    ended: bool,
}

struct Driver {
    ring: IoUring,
    slots: table::Table<Slot>,
    /// Entries pushed since the ring was last entered.
    queued: bool,
    /// The reaping task, woken when the first entry of a turn is pushed.
    reaper: Option<Waker>,
    /// Whether a reaping task lives (on this thread's runtime).
    reaping: bool,
    /// Zeroed receive buffers for reuse, and emptied send buffers.
    spare_recv: Vec<Vec<u8>>,
    spare_send: Vec<Vec<u8>>,
    /// Wakers of a turn's completions, woken once the driver is let go.
    woken: Vec<Waker>,
    /// A turn's completions, taken off the queue (kept for reuse): slot,
    /// result, flags.
    done: Vec<(u32, i32, u32)>,
    /// The provided buffers armed receives take from (`None`: the kernel
    /// has none, or they were turned off; receives are one-shot, each
    /// with a buffer of its own).
    pool: Option<Pool>,
}

thread_local! {
    static DRIVER: RefCell<Option<Driver>> = const { RefCell::new(None) };
    /// Setting up this thread's ring failed: its streams stay on epoll.
    static FAILED: Cell<bool> = const { Cell::new(false) };
    /// Whether receives may be armed (multishot, into provided buffers):
    /// off once the kernel refuses one.
    static MULTI: Cell<bool> = const { Cell::new(true) };
}

/// Whether this thread has a ring and a task reaping it (set up on first
/// use, on the current runtime).
pub(super) fn ready() -> bool {
    if FAILED.get() {
        return false;
    }
    let spawn = DRIVER.with_borrow_mut(|d| {
        if d.is_none() {
            // Completions' task work runs at the thread's next entry to
            // the kernel, with no interrupt while it runs (a sleeping
            // thread is still woken); one thread submits.
            let built = IoUring::builder()
                .setup_coop_taskrun()
                .setup_single_issuer()
                .build(ENTRIES)
                .or_else(|_| IoUring::builder().build(ENTRIES));
            match built {
                Ok(ring) => {
                    // `BARRAGE_URING_RECV=oneshot`: receives one-shot into
                    // buffers of their own, as before armed receives
                    // (scripts/bench runs both, side by side).
                    if std::env::var_os("BARRAGE_URING_RECV").is_some_and(|v| v == "oneshot") {
                        MULTI.set(false);
                    }
                    let pool = MULTI.get().then(|| Pool::new(&ring)).flatten();
                    *d = Some(Driver {
                        pool,
                        ring,
                        slots: table::Table::new(),
                        queued: false,
                        reaper: None,
                        reaping: false,
                        spare_recv: Vec::new(),
                        spare_send: Vec::new(),
                        woken: Vec::new(),
                        done: Vec::new(),
                    })
                }
                Err(_) => return None,
            }
        }
        let d = d.as_mut()?;
        let spawn = !d.reaping;
        d.reaping = true;
        Some(spawn.then(|| d.ring.as_fd().try_clone_to_owned()))
    });
    match spawn {
        None => {
            FAILED.set(true);
            false
        }
        Some(Some(Ok(fd))) => {
            tokio::spawn(reap(RingFd(fd)));
            true
        }
        Some(Some(Err(_))) => {
            with(|d| d.reaping = false);
            FAILED.set(true);
            false
        }
        Some(None) => true,
    }
}

/// Runs `f` on this thread's driver (`None` when it has none).
fn with<R>(f: impl FnOnce(&mut Driver) -> R) -> Option<R> {
    DRIVER
        .try_with(|d| d.try_borrow_mut().ok()?.as_mut().map(f))
        .ok()
        .flatten()
}

fn gone() -> io::Error {
    io::Error::other("io_uring: the thread's ring is gone")
}

impl Driver {
    /// A slot for `buf`, its index the entry's user data.
    fn slot(&mut self, buf: Vec<u8>, waker: Option<Waker>) -> u32 {
        let slot = Slot {
            buf,
            res: None,
            waker,
            orphan: false,
            send_from: None,
            awaited: false,
            multi: false,
            got: Vec::new(),
            ended: false,
        };
        self.slots.insert(slot)
    }

    /// Queues `entry` for the next entering of the ring (entering now if
    /// the submission queue is full).
    fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every entry names memory held in a slot until its
            // completion is reaped (or, with the ring torn down, leaked).
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                break;
            }
            self.ring.submit()?;
        }
        if !self.queued {
            self.queued = true;
            if let Some(w) = &self.reaper {
                w.wake_by_ref();
            }
        }
        Ok(())
    }

    /// Gives a slot's buffer back to the spares.
    fn free(&mut self, i: u32) {
        let Some(slot) = self.slots.remove(i) else {
            return;
        };
        if slot.multi {
            // Buffers it was given and no one read go back to the ring.
            if let Some(pool) = &mut self.pool {
                for (_, flags) in slot.got {
                    if let Some(bid) = cqueue::buffer_select(flags) {
                        pool.give(bid);
                    }
                }
            }
            return;
        }
        self.spare(slot.buf, slot.send_from.is_some());
    }

    /// Keeps a buffer for reuse: a receive's with its length (initialized
    /// bytes), a send's emptied.
    fn spare(&mut self, mut buf: Vec<u8>, sent: bool) {
        if buf.capacity() > 64 * 1024 || buf.capacity() == 0 {
            return;
        }
        let (spares, most) = if sent {
            buf.clear();
            (&mut self.spare_send, SPARES)
        } else {
            (&mut self.spare_recv, SPARE_RECVS)
        };
        if spares.len() < most {
            spares.push(buf);
        }
    }

    /// One turn of the reaping task: enters the ring for what was queued,
    /// then takes every completion.
    fn turn(&mut self, waker: &Waker) {
        if !self.reaper.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.reaper = Some(waker.clone());
        }
        if self.queued {
            // A failure to enter (the kernel busy) is tried again at the
            // next completion.
            if self.ring.submit().is_ok() {
                self.queued = false;
            }
        }
        let mut done = std::mem::take(&mut self.done);
        for cqe in self.ring.completion() {
            if cqe.user_data() != CANCEL {
                done.push((cqe.user_data() as u32, cqe.result(), cqe.flags()));
            }
        }
        for (i, res, flags) in done.drain(..) {
            let Some(slot) = self.slots.get_mut(i) else {
                continue;
            };
            if slot.multi {
                let last = !cqueue::more(flags);
                if slot.orphan {
                    if let (Some(bid), Some(pool)) = (cqueue::buffer_select(flags), &mut self.pool)
                    {
                        pool.give(bid);
                    }
                    if last {
                        slot.ended = true;
                        self.free(i);
                    }
                    continue;
                }
                slot.got.push((res, flags));
                slot.ended |= last;
                if let Some(w) = slot.waker.take() {
                    self.woken.push(w);
                }
                continue;
            }
            slot.res = Some(res);
            let whole = slot
                .send_from
                .is_some_and(|from| res >= 0 && from as usize + res as usize == slot.buf.len());
            if slot.orphan {
                self.free(i);
            } else if whole && !slot.awaited {
                // The stream looks at it when it next reads or writes;
                // its buffer goes back to the spares now, so that a
                // request waiting for its answer holds none (an empty
                // buffer reads as a send wholly done: see `result`).
                let buf = std::mem::take(&mut slot.buf);
                self.spare(buf, true);
            } else if let Some(w) = slot.waker.take() {
                self.woken.push(w);
            }
        }
        self.done = done;
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The kernel may still write into a buffer whose operation has
        // not completed when the ring closes: those are leaked (the
        // provided buffers too, while a receive is armed).
        let mut armed = false;
        for slot in self.slots.drain() {
            if slot.multi {
                armed |= !slot.ended;
            } else if slot.res.is_none() {
                std::mem::forget(slot.buf);
            }
        }
        if armed {
            std::mem::forget(self.pool.take());
        }
    }
}

/// A copy of the ring's descriptor, as the runtime's reactor watches it
/// (its own, so that it stays open as long as the watch, whatever
/// happens to the thread's driver).
struct RingFd(OwnedFd);

impl AsRawFd for RingFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Marks the thread's driver as having no reaper when the task ends (its
/// runtime shut down): the next stream starts another.
struct Alive;

impl Drop for Alive {
    fn drop(&mut self) {
        with(|d| {
            d.reaping = false;
            d.reaper = None;
        });
    }
}

/// The reaping task: enters the ring when woken for queued entries, and
/// takes the completions whenever the ring's descriptor is readable.
async fn reap(fd: RingFd) {
    let _alive = Alive;
    // SAFETY: `RingFd` owns its descriptor, open until the watch ends.
    let Ok(ring) = (unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }) else {
        FAILED.set(true);
        return;
    };
    std::future::poll_fn(|cx| loop {
        let mut woken = with(|d| {
            d.turn(cx.waker());
            std::mem::take(&mut d.woken)
        })
        .unwrap_or_default();
        for w in woken.drain(..) {
            w.wake();
        }
        with(|d| d.woken = woken);
        match ring.poll_read_ready(cx) {
            Poll::Ready(Ok(mut ready)) => ready.clear_ready(),
            Poll::Ready(Err(_)) => return Poll::Ready(()),
            Poll::Pending => return Poll::Pending,
        }
    })
    .await
}

/// A receive of up to `len` bytes on `fd`; `waker` is woken when it
/// completes.
pub(super) fn recv(fd: RawFd, len: usize, waker: &Waker) -> io::Result<u32> {
    with(|d| {
        let buf = match d.spare_recv.iter().position(|b| b.len() >= len) {
            Some(at) => d.spare_recv.swap_remove(at),
            None => vec![0; len],
        };
        let (ptr, n) = (buf.as_ptr().cast_mut(), buf.len() as u32);
        let i = d.slot(buf, Some(waker.clone()));
        // Polled first: a receive is queued with its request's send, so
        // its answer is never there yet (the kernel's first try would
        // fail).
        let entry = opcode::Recv::new(types::Fd(fd), ptr, n)
            .ioprio(POLL_FIRST)
            .build()
            .user_data(u64::from(i));
        d.push(&entry).inspect_err(|_| d.free(i))?;
        Ok(i)
    })
    .unwrap_or_else(|| Err(gone()))
}

/// A send of `data` (copied) on `fd`; `waker` is woken if it fails.
pub(super) fn send(fd: RawFd, data: &[io::IoSlice<'_>], waker: &Waker) -> io::Result<u32> {
    with(|d| {
        let mut buf = d.spare_send.pop().unwrap_or_default();
        for s in data {
            buf.extend_from_slice(s);
        }
        let i = d.slot(buf, Some(waker.clone()));
        d.send_from(i, fd, 0).inspect_err(|_| d.free(i))?;
        Ok(i)
    })
    .unwrap_or_else(|| Err(gone()))
}

impl Driver {
    /// (Re)queues slot `i`'s send from byte `from` of its buffer.
    fn send_from(&mut self, i: u32, fd: RawFd, from: usize) -> io::Result<()> {
        let Some(slot) = self.slots.get_mut(i) else {
            return Err(gone());
        };
        slot.res = None;
        slot.send_from = Some(from as u32);
        slot.awaited = false;
        let rest = &slot.buf[from..];
        // MSG_WAITALL: the kernel sends all of it before completing (a
        // stream socket's short sends are retried in the ring).
        let entry = opcode::Send::new(types::Fd(fd), rest.as_ptr(), rest.len() as u32)
            .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
            .build()
            .user_data(u64::from(i));
        self.push(&entry)
    }
}

/// Sends the rest of slot `i`'s buffer, from byte `from`.
pub(super) fn resend(i: u32, fd: RawFd, from: usize) -> io::Result<()> {
    with(|d| d.send_from(i, fd, from)).unwrap_or_else(|| Err(gone()))
}

/// Slot `i`'s result if it completed, with its buffer's length (0 for
/// a send wholly done, whose buffer went back to the spares); else
/// `waker` is kept to be woken when it does (a send's, with `awaited`,
/// also when it is wholly done).
pub(super) fn result(i: u32, waker: Option<&Waker>, awaited: bool) -> Option<(i32, usize)> {
    with(|d| {
        let slot = d.slots.get_mut(i)?;
        match slot.res {
            Some(res) => Some((res, slot.buf.len())),
            None => {
                slot.awaited |= awaited;
                if let Some(w) = waker {
                    if !slot.waker.as_ref().is_some_and(|k| k.will_wake(w)) {
                        slot.waker = Some(w.clone());
                    }
                }
                None
            }
        }
    })
    .flatten()
}

/// Copies bytes `at..` of slot `i`'s received data (`n` long) into `out`;
/// how many.
pub(super) fn copy_out(i: u32, at: usize, n: usize, out: &mut tokio::io::ReadBuf<'_>) -> usize {
    with(|d| {
        let Some(slot) = d.slots.get(i) else {
            return 0;
        };
        let k = (n - at).min(out.remaining());
        out.put_slice(&slot.buf[at..at + k]);
        k
    })
    .unwrap_or(0)
}

/// Enters the ring now for what is queued (see `UringStream`'s drop).
pub(super) fn enter() {
    with(|d| {
        if d.queued && d.ring.submit().is_ok() {
            d.queued = false;
        }
    });
}

/// Frees slot `i` (its operation completed).
pub(super) fn release(i: u32) {
    with(|d| d.free(i));
}

/// Gives slot `i` up: freed now if complete, else freed when its
/// completion comes (cancelled first with `cancel`).
pub(super) fn abandon(i: u32, cancel: bool) {
    with(|d| {
        let Some(slot) = d.slots.get_mut(i) else {
            return;
        };
        if slot.res.is_some() || (slot.multi && slot.ended) {
            d.free(i);
            return;
        }
        slot.orphan = true;
        slot.waker = None;
        if !cancel {
            return;
        }
        let cancel = opcode::AsyncCancel::new(u64::from(i))
            .build()
            .user_data(CANCEL);
        let _ = d.push(&cancel);
    });
}
