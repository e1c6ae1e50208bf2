//! The clock of `-io ring`'s loops: the monotonic clock read, and sleeps
//! that are reads of a timerfd through the thread's ring (monoio's own
//! timer keeps whole milliseconds; barrage's tick is 300 µs).

use std::{
    os::fd::{AsRawFd, FromRawFd, OwnedFd},
    time::{Duration, Instant},
};

use barrage_client::h1::later;

use crate::{clock::TICK, scheduler::Waits, Stopper};

/// A loop's clock: [`crate::hands::Clockwork`]'s rules (sleeps a [`TICK`]
/// apart; ticks taken in turn by `lanes` loops), its timer in the ring.
pub(crate) struct RingClock {
    start: Instant,
    stopper: Stopper,
    timer: Option<Timer>,
    last_wake: Instant,
    lane: u64,
    lanes: u64,
    /// The timer repeats every `lanes` ticks (armed once).
    repeating: bool,
    /// A loop sleeping until each request: the timer repeating at the
    /// spacing of its last two sleeps, as (first expiry, spacing,
    /// expiries read), and the last sleep's end.
    spaced: Option<(Instant, Duration, u32)>,
    last_at: Option<Instant>,
}

/// Latest a repeating timer may wake after the request it is read for
/// (each expiry drifts 1 ns later than the pacer's spacing; past this it
/// is armed again).
const SPACED_DRIFT: Duration = Duration::from_micros(20);

/// A timerfd as a file of the ring, and a buffer for its count.
struct Timer {
    fd: OwnedFd,
    file: monoio::fs::File,
    buf: Option<Vec<u8>>,
}

impl Timer {
    fn new() -> std::io::Result<Timer> {
        // SAFETY: a plain call; the descriptor is owned below.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: `dup` of a descriptor this timer owns; its copy is the
        // ring's file's.
        let copy = unsafe { libc::dup(fd.as_raw_fd()) };
        if copy < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `copy` is a fresh descriptor owned by nothing else.
        let file = monoio::fs::File::from_std(unsafe { std::fs::File::from_raw_fd(copy) })?;
        Ok(Timer {
            fd,
            file,
            buf: Some(vec![0; 8]),
        })
    }

    /// Arms it: first at `first` (on the monotonic clock), then every
    /// `every` (zero: once).
    fn arm(&self, first: Instant, every: Duration) -> bool {
        let at = monotonic(first);
        let spec = libc::itimerspec {
            it_interval: timespec(every),
            it_value: at,
        };
        // SAFETY: `spec` outlives the call; no old value is asked for.
        unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            ) == 0
        }
    }

    /// Waits for its next expiry (at once if it expired since the last):
    /// how many expiries passed since the last read (0 if the read failed).
    async fn expiry(&mut self) -> u32 {
        let buf = self.buf.take().unwrap_or_else(|| vec![0; 8]);
        let (got, buf) = self.file.read_at(buf, 0).await;
        let n = match (got, buf.get(..8)) {
            (Ok(8), Some(b)) => u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])),
            _ => 0,
        };
        self.buf = Some(buf);
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

/// `at` as the monotonic clock's time (an `Instant` is that clock).
fn monotonic(at: Instant) -> libc::timespec {
    let now = Instant::now();
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let base = Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
    let target = if at >= now {
        base + (at - now)
    } else {
        base.saturating_sub(now - at)
    };
    // Never zero: a zero value disarms the timer.
    timespec(target.max(Duration::from_nanos(1)))
}

fn timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    }
}

impl RingClock {
    /// A clock counted from `start` for a loop that sleeps until each
    /// request is due.
    pub(crate) fn new(start: Instant, stopper: Stopper) -> Self {
        RingClock {
            start,
            stopper,
            timer: None,
            last_wake: Instant::now(),
            lane: 0,
            lanes: 1,
            repeating: false,
            spaced: None,
            last_at: None,
        }
    }

    /// A clock for loop `lane` of `lanes` taking turns by tick, its timer
    /// armed once to repeat every `lanes` ticks.
    pub(crate) fn ticking(start: Instant, stopper: Stopper, lane: u64, lanes: u64) -> Self {
        let mut c = RingClock::new(start, stopper);
        c.lane = lane;
        c.lanes = lanes.max(1);
        let every = TICK.saturating_mul(c.lanes.try_into().unwrap_or(u32::MAX));
        let first = c.own_tick(c.now());
        c.repeating = c.timer().is_some_and(|t| t.arm(first, every));
        c
    }

    fn timer(&mut self) -> Option<&mut Timer> {
        if self.timer.is_none() {
            self.timer = Timer::new().ok();
        }
        self.timer.as_mut()
    }

    /// This loop's first tick at or after `offset` (ns from the start).
    fn own_tick(&self, offset: u64) -> Instant {
        let tick = TICK.as_nanos() as u64;
        let j = offset.div_ceil(tick);
        let j = j + (self.lane + self.lanes - j % self.lanes) % self.lanes;
        self.start + Duration::from_nanos(j.saturating_mul(tick))
    }

    /// Sleeps until `at` on the timer (armed once for it), or the stop.
    async fn sleep_until(&mut self, at: Instant) {
        if at <= Instant::now() {
            return;
        }
        let stopper = self.stopper.clone();
        self.spaced = None;
        match self.timer() {
            Some(t) if t.arm(at, Duration::ZERO) => {
                super::first::first_of(t.expiry(), stopper.stopped()).await;
            }
            // No timerfd here: monoio's own timer (whole milliseconds).
            _ => {
                let sleep = monoio::time::sleep_until(at.into());
                super::first::first_of(sleep, stopper.stopped()).await;
            }
        }
    }

    /// Sleeps until `at`, a request's time, or the stop. Requests evenly
    /// spaced (a constant rate) find the timer already armed, repeating
    /// at their spacing: no `timerfd_settime` per request (at 2,000/s it
    /// was one of four calls a request).
    async fn sleep_spaced(&mut self, at: Instant) {
        let prev = self.last_at.replace(at);
        if at <= Instant::now() {
            return;
        }
        let (first, every, read) = match self.spaced {
            Some((first, every, read))
                if (at..=at + SPACED_DRIFT).contains(&(first + every.saturating_mul(read))) =>
            {
                (first, every, read)
            }
            _ => {
                // Armed again: to repeat at this spacing, 1 ns longer so
                // that it never wakes before a request.
                let every = prev
                    .filter(|p| at > *p && at - *p <= Duration::from_secs(1))
                    .map(|p| at - p + Duration::from_nanos(1));
                match (every, self.timer()) {
                    (Some(every), Some(t)) if t.arm(at, every) => (at, every, 0),
                    _ => return self.sleep_until(at).await,
                }
            }
        };
        let stopper = self.stopper.clone();
        let mut n = 0;
        if let Some(t) = self.timer.as_mut() {
            super::first::first_of(async { n = t.expiry().await }, stopper.stopped()).await;
        }
        self.spaced = Some((first, every, read.saturating_add(n)));
    }
}

impl Waits for RingClock {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    async fn until(&mut self, offset: u64) {
        let at = self.start + Duration::from_nanos(offset);
        let wake = at.max(self.last_wake + TICK);
        // Answers of this thread wait for the wake (`later`).
        let _wake = later::sleeping_until(wake);
        self.sleep_spaced(wake).await;
        self.last_wake = wake;
    }

    async fn look_later(&mut self) {
        // monoio's own timer (whole milliseconds): the loop's timerfd may
        // repeat at its tick, which a one-off arming would end.
        let look = Duration::from_nanos(crate::scheduler::PAUSED_LOOK);
        super::first::first_of(monoio::time::sleep(look), self.stopper.stopped()).await;
    }

    async fn tick_after(&mut self, offset: u64) {
        let at = self.own_tick(offset);
        let _wake = later::sleeping_until(at);
        if !self.repeating {
            return self.sleep_until(at).await;
        }
        let stopper = self.stopper.clone();
        if let Some(t) = self.timer.as_mut() {
            super::first::first_of(t.expiry(), stopper.stopped()).await;
        }
    }
}

/// The closed model's clock on a ring thread: read, never slept on, as
/// [`crate::hands::Unpaced`]; a loop paused by live control (`-control`,
/// a collector's orders) looks again on monoio's timer.
pub(crate) struct RingUnpaced {
    pub(crate) start: Instant,
    pub(crate) stopper: Stopper,
}

impl Waits for RingUnpaced {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    async fn until(&mut self, _: u64) {}

    async fn tick_after(&mut self, _: u64) {}

    async fn look_later(&mut self) {
        let look = Duration::from_nanos(crate::scheduler::PAUSED_LOOK);
        super::first::first_of(monoio::time::sleep(look), self.stopper.stopped()).await;
    }
}
