//! Time as the attack keeps it: the clock that maps the monotonic clock to
//! unix nanoseconds, the tick the time-keeping threads wake at, the batch
//! they hand over, and a request the pacer has scheduled. Shared by the
//! attack, the hands, the scheduler and the writer, which is why it is
//! its own file (issue 30: they and `attack.rs` imported each other).

use std::{
    sync::Arc,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use barrage_client::PreparedTarget;

/// The threads keeping time (the pacer thread, or the worker threads)
/// wake at most once per tick between them (counted from when they meant
/// to wake); requests that fall due meanwhile go out together (each still
/// keeps its exact `scheduled`). Bounds the wake-ups for the clock to
/// 3,333/s at the cost of ≤ 300 µs of lag. Measured
/// at 20,000/s against nginx: 200 µs ticks cost ~25% more CPU per
/// request; 500 µs ticks ~15% less than 300, but the bursts of 10 doubled
/// the p50 the server showed (0.08-0.10 ms to 0.17-0.19 ms: nginx
/// queueing the burst).
pub(crate) const TICK: Duration = Duration::from_micros(300);

/// Most requests handed to the runtime in one batch (the pacer's, or a
/// worker thread's between looks at its sockets).
pub(crate) const MAX_BATCH: usize = 1024;

/// Maps the monotonic clock to unix nanoseconds, fixed at the start so that
/// scheduled and actual times share one timeline.
#[derive(Clone, Copy)]
pub(crate) struct Clock {
    pub(crate) start: Instant,
    pub(crate) start_unix: i64,
}

impl Clock {
    /// Starting now, or at `at` (unix ns, `-start-at`) if that is later.
    pub(crate) fn new(at: Option<i64>) -> Self {
        let now = Instant::now();
        let now_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        match at {
            Some(at) if at > now_unix => Clock {
                start: now + Duration::from_nanos((at - now_unix) as u64),
                start_unix: at,
            },
            _ => Clock {
                start: now,
                start_unix: now_unix,
            },
        }
    }

    pub(crate) fn unix(&self, at: Instant) -> i64 {
        self.start_unix + at.saturating_duration_since(self.start).as_nanos() as i64
    }
}

/// A request the pacer has scheduled (and counted); it will be sent.
pub(crate) struct Scheduled {
    pub(crate) target: Arc<PreparedTarget>,
    pub(crate) seq: u64,
    pub(crate) scheduled: i64,
    pub(crate) slot: Option<tokio::sync::OwnedSemaphorePermit>,
}
