//! Armed receives: one multishot receive per connection, its arrivals in
//! the thread's provided buffers (`pool.rs`), read out in order, each
//! buffer given back once read.

#[cfg(test)]
use std::cell::Cell;
use std::{io, os::fd::RawFd, task::Waker};

use io_uring::{cqueue, opcode, types};

use super::{with, GROUP, MULTI};

/// A receive armed on `fd` (multishot, into the thread's provided
/// buffers) until its stream drops or the socket ends: its bytes arrive
/// without a new entry per answer, and it holds no buffer while it waits.
/// `None` where the thread has no provided buffers.
pub(in crate::transport::uring) fn arm(fd: RawFd, waker: &Waker) -> Option<io::Result<u32>> {
    if !MULTI.get() {
        return None;
    }
    with(|d| {
        d.pool.as_ref()?;
        let i = d.slot(Vec::new(), Some(waker.clone()));
        if let Some(slot) = d.slots.get_mut(i) {
            slot.multi = true;
        }
        let entry = opcode::RecvMulti::new(types::Fd(fd), GROUP)
            .build()
            .user_data(u64::from(i));
        Some(d.push(&entry).inspect_err(|_| d.free(i)).map(|()| i))
    })
    .flatten()
}

/// What reading an armed receive gave.
pub(in crate::transport::uring) enum Got {
    /// Nothing yet: the task is woken when something comes.
    Pending,
    /// Bytes, put into the caller's buffer.
    Read,
    /// The peer closed (end of stream); the receive is over.
    Closed,
    /// A failure (an errno); the receive is over.
    Failed(i32),
    /// The receive ended with nothing to say (the kernel stopped it, or
    /// the buffers ran out): receive again, armed or with a buffer of its
    /// own as `plain` says.
    Again { plain: bool },
}

/// Reads armed receive `i`'s next bytes into `out`, from byte `at` of its
/// first completion not wholly read (`at` moves on). A receive that is
/// over has its slot freed.
pub(in crate::transport::uring) fn read_armed(
    i: u32,
    at: &mut usize,
    out: &mut tokio::io::ReadBuf<'_>,
    waker: &Waker,
) -> Got {
    with(|d| {
        let Some(slot) = d.slots.get_mut(i) else {
            return Got::Failed(libc::EIO);
        };
        let Some(&(res, flags)) = slot.got.first() else {
            if slot.ended {
                d.free(i);
                return Got::Again { plain: false };
            }
            if !slot.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                slot.waker = Some(waker.clone());
            }
            return Got::Pending;
        };
        if res <= 0 {
            // The last completion (an error or the end never says more).
            slot.got.remove(0);
            slot.ended = true;
            d.free(i);
            return match -res {
                0 => Got::Closed,
                libc::ENOBUFS => {
                    #[cfg(test)]
                    STARVED.set(STARVED.get() + 1);
                    Got::Again { plain: true }
                }
                libc::EINVAL => {
                    // A kernel without multishot receives.
                    MULTI.set(false);
                    Got::Again { plain: true }
                }
                e => Got::Failed(e),
            };
        }
        let (Some(bid), Some(pool)) = (cqueue::buffer_select(flags), &mut d.pool) else {
            return Got::Failed(libc::EIO);
        };
        let n = res as usize;
        let k = (n - *at).min(out.remaining());
        out.put_slice(pool.bytes(bid, *at, k));
        *at += k;
        if *at == n {
            slot.got.remove(0);
            pool.give(bid);
            *at = 0;
        }
        Got::Read
    })
    .unwrap_or(Got::Failed(libc::EIO))
}

/// Turns armed receives off for rings this thread sets up from now on
/// (the tests' way to run the one-shot receives).
#[cfg(test)]
pub(in crate::transport::uring) fn without_armed_receives() {
    MULTI.set(false);
}

#[cfg(test)]
thread_local! {
    /// Armed receives on this thread that ran out of provided buffers.
    pub(in crate::transport::uring) static STARVED: Cell<usize> = const { Cell::new(0) };
}

/// Receives in flight on this thread: how many are armed, and the bytes
/// of the buffers one-shot receives hold.
#[cfg(test)]
pub(in crate::transport::uring) fn held() -> (usize, usize) {
    with(|d| {
        let live = d.slots.iter().filter(|s| s.send_from.is_none());
        live.fold((0, 0), |(armed, bytes), s| {
            if s.multi {
                (armed + usize::from(!s.ended && !s.orphan), bytes)
            } else {
                (armed, bytes + s.buf.capacity())
            }
        })
    })
    .unwrap_or_default()
}
