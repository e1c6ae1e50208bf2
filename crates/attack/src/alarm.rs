//! Sleeps to the microsecond inside a worker thread's tokio runtime.
//!
//! tokio's timers have millisecond resolution (its driver's `epoll_wait`
//! takes whole milliseconds), too coarse for a schedule with requests 50 µs
//! apart. A timerfd registered with the runtime's reactor ends the same
//! `epoll_wait` when it expires (timerfds take no timer slack), so a worker
//! thread keeps its own schedule: no pacer thread has to wake it for each
//! request (see [`crate::tickets::Tickets`]).

use std::time::Instant;

/// One worker thread's timer.
pub(crate) struct Alarm {
    #[cfg(target_os = "linux")]
    fd: Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>>,
}

impl Alarm {
    /// A timer for the current runtime (call it on the runtime's thread).
    /// Without a timerfd it falls back to tokio's timers.
    pub(crate) fn new() -> Self {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::{FromRawFd, OwnedFd};
            // SAFETY: timerfd_create takes two integers and returns a new
            // descriptor (or -1), which OwnedFd then owns.
            let raw = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            let fd = (raw >= 0)
                .then(|| unsafe { OwnedFd::from_raw_fd(raw) })
                .and_then(|fd| {
                    // SAFETY: the AsyncFd owns the OwnedFd, whose descriptor
                    // stays open and the same until the AsyncFd is dropped.
                    unsafe {
                        tokio::io::unix::AsyncFd::register_with_interest(
                            fd,
                            tokio::io::Interest::READABLE,
                        )
                    }
                    .ok()
                });
            Alarm { fd }
        }
        #[cfg(not(target_os = "linux"))]
        Alarm {}
    }

    /// Arms the timer to expire at `first` and then every `every`, for
    /// [`Alarm::expiry`] (until the next `sleep_until`). False when there
    /// is no timerfd.
    pub(crate) fn repeat(&self, first: Instant, every: std::time::Duration) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            use std::os::fd::AsRawFd;
            let left = first.saturating_duration_since(Instant::now());
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: every.as_secs() as libc::time_t,
                    tv_nsec: every.subsec_nanos() as libc::c_long,
                },
                it_value: libc::timespec {
                    tv_sec: left.as_secs() as libc::time_t,
                    // Never zero: an all-zero it_value disarms the timer.
                    tv_nsec: left.subsec_nanos().max(1) as libc::c_long,
                },
            };
            // SAFETY: `spec` is a valid itimerspec; the old value is not
            // asked for.
            return unsafe {
                libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut())
            } == 0;
        }
        let _ = (first, every);
        false
    }

    /// Returns at the repeating timer's next expiry, or at once if one
    /// passed since the last call (see [`Alarm::repeat`]).
    pub(crate) async fn expiry(&self) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            use std::os::fd::AsRawFd;
            // The expiry count must be read: while it is not zero the
            // descriptor stays readable and later expiries raise no new
            // edge. An expiry between the read and `clear_ready` raises
            // one, which `clear_ready` leaves set (tokio compares event
            // ticks).
            if let Ok(mut ready) = fd.readable().await {
                let mut count = 0u64;
                // SAFETY: reads at most 8 bytes into a u64 that outlives
                // the call.
                unsafe { libc::read(fd.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
                ready.clear_ready();
            }
        }
    }

    /// Returns at `deadline` or later (never earlier). Dropping it midway
    /// (a stop) leaves nothing behind but a spurious wake-up, which the
    /// next sleep ignores.
    pub(crate) async fn sleep_until(&self, deadline: Instant) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            use std::os::fd::AsRawFd;
            loop {
                let now = Instant::now();
                if now >= deadline {
                    return;
                }
                let left = deadline - now;
                let spec = libc::itimerspec {
                    it_interval: libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    },
                    it_value: libc::timespec {
                        tv_sec: left.as_secs() as libc::time_t,
                        // Never zero: an all-zero it_value disarms the timer.
                        tv_nsec: left.subsec_nanos().max(1) as libc::c_long,
                    },
                };
                // SAFETY: `spec` is a valid itimerspec; the old value is not
                // asked for.
                let armed = unsafe {
                    libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut())
                };
                if armed != 0 {
                    break;
                }
                // Each expiry wakes the reactor (it registers edge-triggered),
                // so the expiry count is never read: one system call less per
                // sleep. A wake-up for an older expiry only loops.
                match fd.readable().await {
                    Ok(mut ready) => ready.clear_ready(),
                    Err(_) => break,
                }
            }
        }
        tokio::time::sleep_until(deadline.into()).await;
    }
}

#[cfg(test)]
mod tests {
    use std::{future::Future, time::Duration};

    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn never_wakes_early_and_keeps_waking() {
        runtime().block_on(async {
            let alarm = Alarm::new();
            #[cfg(target_os = "linux")]
            assert!(alarm.fd.is_some(), "no timerfd");
            // Many short sleeps in a row: each expiry must wake the next
            // wait (a lost edge would hang here).
            let mut at = Instant::now();
            for _ in 0..200 {
                at += Duration::from_micros(250);
                alarm.sleep_until(at).await;
                assert!(Instant::now() >= at);
            }
        });
    }

    #[test]
    fn a_repeating_timer_keeps_waking_never_early() {
        runtime().block_on(async {
            let alarm = Alarm::new();
            let every = Duration::from_micros(300);
            let first = Instant::now() + Duration::from_millis(1);
            assert!(alarm.repeat(first, every), "no timerfd");
            // Each expiry must raise a new wake-up (an unread expiry count
            // leaves the descriptor readable and raises none: this hung),
            // and none may come before its time; missed ones (this thread
            // off the CPU) are one wake-up, not a burst.
            let mut woken = 0u32;
            let watchdog = tokio::time::timeout(Duration::from_secs(10), async {
                while woken < 50 {
                    alarm.expiry().await;
                    woken += 1;
                    let now = Instant::now();
                    assert!(now >= first + every * (woken - 1), "early at {woken}");
                }
            })
            .await;
            assert!(watchdog.is_ok(), "stopped waking after {woken}");
        });
    }

    #[test]
    fn a_dropped_sleep_leaves_the_next_on_time() {
        runtime().block_on(async {
            let alarm = Alarm::new();
            let far = Instant::now() + Duration::from_millis(2);
            // Abandon a sleep (as a stop does), let its expiry pass, then
            // sleep again: the stale wake-up must not end the new sleep early.
            let _ = tokio::time::timeout(Duration::from_micros(100), alarm.sleep_until(far)).await;
            std::thread::sleep(Duration::from_millis(3));
            let next = Instant::now() + Duration::from_millis(5);
            alarm.sleep_until(next).await;
            assert!(Instant::now() >= next);
        });
    }

    #[test]
    fn past_deadlines_return_at_once() {
        let rt = runtime();
        let _guard = rt.enter();
        let alarm = Alarm::new();
        let now = Instant::now();
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        for past in [now - Duration::from_millis(1), now] {
            let mut sleep = std::pin::pin!(alarm.sleep_until(past));
            assert!(
                sleep.as_mut().poll(&mut cx).is_ready(),
                "a deadline already past needs no wake-up"
            );
        }
    }
}
