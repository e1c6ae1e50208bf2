//! Answers read at the thread's next wake (`-io ring`'s open model): a
//! request sent, its connection reads nothing until the loop that paces
//! the thread wakes for its next requests, then takes the answer with one
//! `recvmsg` and the kernel's time of its arrival (`SO_TIMESTAMPNS`),
//! rather than waking the thread for each answer. The answer's end is
//! when its last byte reached the socket, not when the thread read it.
//!
//! Only when the loop's next wake is near ([`most`]); an answer not yet
//! whole then is read through the ring as before, and a thread whose
//! answers keep coming late stops waiting for a while ([`LATE_RUN`]).
//! `BARRAGE_RING_LATER` sets how near (`off`, or `2ms`, `60ms`, `1s`).

use std::{
    cell::{Cell, RefCell},
    future::Future,
    io,
    os::fd::RawFd,
    task::{Poll, Waker},
    time::{Duration, Instant},
};

use super::Stamps;

/// Farthest off the next wake may be for an answer to wait for it, by
/// default.
const MOST: Duration = Duration::from_millis(2);

/// Where [`most`] is set other than [`MOST`].
pub const ENV: &str = "BARRAGE_RING_LATER";

/// Farthest off the next wake may be for an answer to wait for it
/// (`None`: answers never wait): [`ENV`], else [`MOST`].
pub fn most() -> Option<Duration> {
    static MOST_SET: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    *MOST_SET.get_or_init(|| match std::env::var(ENV) {
        Ok(v) if v == "off" => None,
        Ok(v) => Some(duration(&v).unwrap_or(MOST)),
        Err(_) => Some(MOST),
    })
}

/// `2ms`, `500us`, `1s` (what [`ENV`] takes).
fn duration(v: &str) -> Option<Duration> {
    let at = v.find(|c: char| !c.is_ascii_digit())?;
    let n: u64 = v[..at].parse().ok()?;
    match &v[at..] {
        "us" | "µs" => Some(Duration::from_micros(n)),
        "ms" => Some(Duration::from_millis(n)),
        "s" => Some(Duration::from_secs(n)),
        _ => None,
    }
}

/// Answers found not yet in, in a row, after which a thread reads at
/// once; it tries waiting again every [`RETRY_EVERY`] requests.
const LATE_RUN: u32 = 8;
const RETRY_EVERY: u32 = 64;

thread_local! {
    /// When the thread's pacing loop wakes next, while it sleeps.
    static NEXT_WAKE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Wakes of the loop so far.
    static WAKES: Cell<u64> = const { Cell::new(0) };
    /// Reads waiting for the next wake.
    static WAITING: RefCell<Vec<Waker>> = const { RefCell::new(Vec::new()) };
    /// Answers not in at the wake, in a row; requests since.
    static LATE: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
}

/// The thread's pacing loop goes to sleep until `at`: the reads that wait
/// go on when the returned guard drops (the loop woke, or its sleep was
/// given up).
pub fn sleeping_until(at: Instant) -> Wake {
    NEXT_WAKE.set(Some(at));
    Wake(())
}

/// A pacing loop's sleep ([`sleeping_until`]).
pub struct Wake(());

impl Drop for Wake {
    fn drop(&mut self) {
        NEXT_WAKE.set(None);
        WAKES.set(WAKES.get().wrapping_add(1));
        for w in WAITING.with_borrow_mut(std::mem::take) {
            w.wake();
        }
    }
}

/// Whether a read may wait for the loop's next wake (it is near, and the
/// thread's answers have not kept coming late): the wakes so far, for
/// [`next_wake`].
pub(super) fn soon() -> Option<u64> {
    let most = most()?;
    let at = NEXT_WAKE.get()?;
    let (late, since) = LATE.get();
    if late >= LATE_RUN {
        LATE.set((late, since.wrapping_add(1)));
        if since % RETRY_EVERY != 0 {
            return None;
        }
    }
    (at.saturating_duration_since(Instant::now()) <= most).then(|| WAKES.get())
}

/// Whether the answer was in at the wake (a run of answers that were not
/// stops the waiting).
pub(super) fn found(whole: bool) {
    let (late, since) = LATE.get();
    LATE.set(if whole { (0, 0) } else { (late + 1, since) });
}

/// Until the loop's first wake after `wakes` ([`soon`]'s count: a
/// request written as the loop woke reads at once).
pub(super) fn next_wake(start: u64) -> impl Future<Output = ()> {
    std::future::poll_fn(move |cx| {
        if WAKES.get() != start {
            return Poll::Ready(());
        }
        WAITING.with_borrow_mut(|w| w.push(cx.waker().clone()));
        Poll::Pending
    })
}

/// Asks the kernel to stamp what reaches `fd` with its arrival
/// (`SO_TIMESTAMPNS`).
pub(crate) fn stamp_arrivals(fd: RawFd) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: `on` outlives the call; `fd` is an open socket.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    r == 0
}

/// What one non-blocking `recvmsg` got.
pub(super) enum Got {
    /// Nothing yet.
    Nothing,
    /// `n` bytes, the last of them in at the stamp ([`Stamps`]' count; 0:
    /// the kernel gave none).
    Bytes(usize, u64),
    /// The end of the stream.
    End,
}

/// Reads what waits on `fd` into `buf`'s free room, without waiting.
pub(super) fn recv_now(fd: RawFd, buf: &mut Vec<u8>) -> io::Result<Got> {
    let room = buf.spare_capacity_mut();
    let mut iov = libc::iovec {
        iov_base: room.as_mut_ptr().cast(),
        iov_len: room.len(),
    };
    // Room for one control message of a timespec (u64s: aligned for it).
    let mut control = [0u64; 8];
    // SAFETY: an all-zero msghdr is a valid value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` points at `iov` (the buffer's free room) and
    // `control`, both alive for the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock => Ok(Got::Nothing),
            _ => Err(e),
        };
    }
    if n == 0 {
        return Ok(Got::End);
    }
    let n = n as usize;
    // SAFETY: the kernel wrote `n` bytes into the free room.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(Got::Bytes(n, arrival(&msg)))
}

/// The kernel's stamp in `msg` (the wall clock) as a [`Stamps`] count
/// (the monotonic clock): now, less how long ago the stamp was.
fn arrival(msg: &libc::msghdr) -> u64 {
    // SAFETY: `msg` is the header recvmsg filled; the macros walk its
    // control buffer within `msg_controllen`.
    let mut c = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !c.is_null() {
        // SAFETY: `c` is a control message header within the buffer.
        let h = unsafe { &*c };
        if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SCM_TIMESTAMPNS {
            // SAFETY: this message's data is a timespec (unaligned read).
            let ts: libc::timespec = unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(c).cast()) };
            return ago(ts);
        }
        // SAFETY: as above.
        c = unsafe { libc::CMSG_NXTHDR(msg, c) };
    }
    0
}

/// Wall-clock time `ts` on the [`Stamps`] count.
fn ago(ts: libc::timespec) -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
    let ns = |t: libc::timespec| (t.tv_sec as i128) * 1_000_000_000 + t.tv_nsec as i128;
    let back = (ns(now) - ns(ts)).clamp(0, i128::from(u64::MAX)) as u64;
    Stamps::now().saturating_sub(back).max(1)
}

#[cfg(test)]
mod tests;
