//! `-io uring`: connections whose reads and writes go through io_uring.
//!
//! Each worker thread has one ring ([`Driver`]). A connection's stream
//! ([`UringStream`]) puts a receive or a send into it and returns; the
//! ring is entered once for everything the thread's tasks queued in a
//! turn, by a task woken when the first of them is queued (tokio's
//! single-threaded scheduler runs it after the tasks already woken, so
//! one `io_uring_enter` carries the turn's sends and receives), and the
//! same task reaps the completions when the ring's descriptor turns
//! readable in the runtime's `epoll_wait`. The engine above sees an
//! `AsyncRead + AsyncWrite` byte stream, as with epoll: TLS, proxies'
//! tunnels, pipelining, `-timeout` and every protocol on a stream keep
//! working unchanged.
//!
//! Writes are written behind: a send is queued and reported done at once
//! (its bytes copied into a buffer the ring owns), so that a turn's sends
//! go into the kernel in one entry. A send that then fails is the next
//! read's or write's error.
//!
//! Receives are armed once per connection (multishot) and stay armed:
//! the kernel puts each arrival into one of the thread's provided buffers
//! ([`pool`]), so no entry is queued per answer and a connection waiting
//! for its answer holds no buffer. Where the kernel has no provided
//! buffers or no multishot receives, or the buffers run out, a receive is
//! one-shot into a buffer of its own.
//!
//! Where a ring cannot be had (a denied or old kernel, a thread with no
//! single-threaded runtime), a connection stays on tokio's epoll stream:
//! never a silent mis-measure.

mod driver;
mod pool;
mod stream;
#[cfg(test)]
mod tests;

pub(crate) use stream::UringStream;

use std::sync::OnceLock;

/// `-io`: how a connection's bytes move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoMode {
    /// tokio's readiness loop (`epoll`): a `read`/`write` per request.
    Epoll,
    /// io_uring: a turn's sends and receives in one `io_uring_enter`.
    Uring,
    /// barrage's HTTP/1.1 engine on monoio: worker threads that park in
    /// `io_uring_enter`, the clock's tick in the ring (`send/ring.rs`,
    /// the attack's `ring.rs`); plain HTTP/1.1 only.
    Ring,
    /// The default: `ring` where it carries the attack (the flags'
    /// `auto_ring`, once the targets are read), else the cheaper of
    /// io_uring and epoll for the attack's model ([`IoMode::settle`]).
    #[default]
    Auto,
}

impl std::str::FromStr for IoMode {
    type Err = crate::Failure;

    fn from_str(v: &str) -> Result<Self, crate::Failure> {
        match v {
            "epoll" => Ok(IoMode::Epoll),
            "uring" | "io_uring" | "io-uring" => Ok(IoMode::Uring),
            "auto" => Ok(IoMode::Auto),
            "ring" => Ok(IoMode::Ring),
            _ => Err(crate::Failure::from(format!(
                "bad -io {v:?} (use uring, epoll, ring or auto)"
            ))),
        }
    }
}

/// The environment variable that overrides `-io` (for running a whole
/// test suite on one back end).
pub const IO_ENV: &str = "BARRAGE_IO";

impl IoMode {
    /// `auto` made `uring` or `epoll` for an attack in the `closed` model
    /// (`-rate 0`) or not. From `scripts/bench` against nginx (medians of
    /// 3, see docs/benchmarks.md): with 50 connections on one thread io_uring
    /// cost 9.9 µs a request against epoll's 12.7 (0.78×), pipelined
    /// 6.1 against 6.1; paced at 20,000/s it cost 21.5 against 19.6
    /// (1.10×: a few requests a turn do not pay for the ring's own
    /// entries and wake-ups), at 2,000/s the same. So the closed model
    /// takes io_uring where this process may use it (silently epoll where
    /// not), the open model epoll.
    pub fn settle(self, closed: bool) -> IoMode {
        match self {
            IoMode::Auto if closed && probe().is_ok() => IoMode::Uring,
            IoMode::Auto => IoMode::Epoll,
            chosen => chosen,
        }
    }

    /// `-io` as asked: the flag, or [`IO_ENV`] where set.
    pub fn asked(self) -> IoMode {
        std::env::var(IO_ENV)
            .ok()
            .and_then(|v| v.parse::<IoMode>().ok())
            .unwrap_or(self)
    }

    /// What `-io` comes to here: whether connections go through io_uring,
    /// and a note for stderr when io_uring was asked for and cannot be had.
    /// [`IO_ENV`] overrides the flag; `auto` not settled is epoll.
    pub fn resolve(self) -> (bool, Option<String>) {
        match self.asked() {
            // -io ring's connections are not tokio's streams.
            IoMode::Epoll | IoMode::Auto | IoMode::Ring => (false, None),
            IoMode::Uring => match probe() {
                Ok(()) => (true, None),
                Err(why) => (
                    false,
                    Some(format!(
                        "barrage: -io uring: io_uring is not available here ({why}); using epoll"
                    )),
                ),
            },
        }
    }
}

/// Why io_uring cannot be used here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoUring {
    /// Setting a ring up, probing it or waiting on it failed.
    #[error("{0}")]
    Os(std::sync::Arc<std::io::Error>),
    /// The kernel lacks an operation barrage needs.
    #[error("the kernel's io_uring has no send or receive")]
    NoOps,
    /// The no-op did not fit in a fresh ring.
    #[error("a fresh ring's submission queue is full")]
    Full,
    /// The no-op did not come back.
    #[error("a no-op did not complete")]
    NoCompletion,
    /// The probe's thread panicked.
    #[error("the io_uring probe failed")]
    Panicked,
}

impl From<std::io::Error> for NoUring {
    fn from(e: std::io::Error) -> Self {
        NoUring::Os(std::sync::Arc::new(e))
    }
}

/// Whether this process may use io_uring: a ring is set up and a no-op
/// goes through it (once per process). A seccomp filter (containers'
/// default), `kernel.io_uring_disabled` or an old kernel fail it.
pub fn probe() -> Result<(), NoUring> {
    static PROBED: OnceLock<Result<(), NoUring>> = OnceLock::new();
    // On a thread of its own: a ring's completions and its teardown are
    // work the kernel does on the thread that set it up, and a blocking
    // call there with a timeout (the collector's link on the main thread)
    // came back EINTR once the probe's ring was gone.
    PROBED
        .get_or_init(|| {
            std::thread::spawn(probe_here)
                .join()
                .unwrap_or(Err(NoUring::Panicked))
        })
        .clone()
}

/// The probe, on the calling thread.
fn probe_here() -> Result<(), NoUring> {
    let mut ring = io_uring::IoUring::new(2)?;
    let mut ops = io_uring::Probe::new();
    ring.submitter().register_probe(&mut ops)?;
    let needed = [
        io_uring::opcode::Send::CODE,
        io_uring::opcode::Recv::CODE,
        io_uring::opcode::AsyncCancel::CODE,
    ];
    if !needed.iter().all(|&op| ops.is_supported(op)) {
        return Err(NoUring::NoOps);
    }
    let nop = io_uring::opcode::Nop::new().build().user_data(7);
    // SAFETY: a no-op names no memory.
    unsafe { ring.submission().push(&nop) }.map_err(|_| NoUring::Full)?;
    ring.submit_and_wait(1)?;
    let done = ring
        .completion()
        .next()
        .map(|c| (c.user_data(), c.result()));
    match done {
        Some((7, res)) if res >= 0 => Ok(()),
        Some((_, res)) => Err(std::io::Error::from_raw_os_error(-res).into()),
        None => Err(NoUring::NoCompletion),
    }
}

/// Whether a stream opened on this thread now can go through io_uring: a
/// single-threaded runtime (tasks never move to another thread's ring)
/// and a ring for the thread.
pub(crate) fn usable_here() -> bool {
    let single = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
    single && driver::ready()
}
