//! The attack's self-audit (issue 63): about once a second the writer
//! thread reads what each of the process's threads did ([`Sampler`]) and
//! writes it into the stream as a [`barrage_model::Audit`], the raw matter
//! of a report's verdict on the generator. Reading `/proc/self/task` for a
//! dozen threads takes tens of microseconds a second.

use std::{
    collections::HashMap,
    fs,
    time::{Duration, Instant},
};

use barrage_model::Audit;

/// How often a sample is taken.
pub(crate) const AUDIT_EVERY: Duration = Duration::from_secs(1);

/// Events of a streamed answer stamped closer than this were read at
/// one time (one read, or frames decoded from one read): their gap is
/// barrage's reading, not the server's writing. A stamp is one clock
/// read; frames of one read are stamped a few microseconds apart.
const STACKED_NS: u64 = 50_000;

/// One thread's counters when last read: user and system CPU (clock
/// ticks), time on a CPU and time waiting on a run queue (ns).
#[derive(Clone, Copy, Default)]
struct Counters {
    user: u64,
    sys: u64,
    run: u64,
    wait: u64,
}

/// Takes the self-audit's samples.
pub(crate) struct Sampler {
    last: HashMap<u32, Counters>,
    at: Instant,
    next: Instant,
    tick_ns: u64,
    /// Gaps between streamed answers' events written since the last
    /// sample, and those under [`STACKED_NS`].
    gaps: u64,
    stacked: u64,
}

impl Sampler {
    /// Starts counting from now.
    pub(crate) fn start() -> Sampler {
        // SAFETY: sysconf only reads a configuration value.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let now = Instant::now();
        let mut s = Sampler {
            last: HashMap::new(),
            at: now,
            next: now + AUDIT_EVERY,
            tick_ns: 1_000_000_000 / u64::try_from(hz).ok().filter(|&h| h > 0).unwrap_or(100),
            gaps: 0,
            stacked: 0,
        };
        s.last = threads();
        s
    }

    /// Counts the gaps between a streamed answer's events (`stamps`, ns
    /// from one base; written with its record), and those too short to
    /// be the server's: events stamped together, read at one time.
    pub(crate) fn streamed(&mut self, stamps: &barrage_client::Stamps) {
        let mut last = None;
        for at in stamps.iter() {
            if let Some(before) = last {
                self.gaps += 1;
                self.stacked += u64::from(at.saturating_sub(before) < STACKED_NS);
            }
            last = Some(at);
        }
    }

    /// Whether a sample is due.
    pub(crate) fn due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// The sample of the span since the last one, with the requests
    /// `sent` and the records `written` so far.
    pub(crate) fn take(&mut self, sent: u64, written: u64) -> Audit {
        let now = Instant::now();
        let span = now.duration_since(self.at).as_nanos() as u64;
        let counters = threads();
        let mut a = Audit {
            at: barrage_model::time::now_ns(),
            span,
            threads: counters.len() as u32,
            sent,
            written,
            gaps: std::mem::take(&mut self.gaps),
            stacked: std::mem::take(&mut self.stacked),
            ..Audit::default()
        };
        for (tid, c) in &counters {
            let before = self.last.get(tid).copied().unwrap_or_default();
            let user = c.user.saturating_sub(before.user) * self.tick_ns;
            let sys = c.sys.saturating_sub(before.sys) * self.tick_ns;
            a.cpu_user += user;
            a.cpu_sys += sys;
            // schedstat's time on a CPU is in ns; without it, the ticks.
            let run = match c.run {
                0 => user + sys,
                r => r.saturating_sub(before.run),
            };
            a.cpu_max = a.cpu_max.max(run);
            a.wait_max = a.wait_max.max(c.wait.saturating_sub(before.wait));
        }
        self.last = counters;
        self.at = now;
        while self.next <= now {
            self.next += AUDIT_EVERY;
        }
        a
    }
}

/// Every thread of this process and its counters now.
fn threads() -> HashMap<u32, Counters> {
    let mut out = HashMap::new();
    let Ok(dir) = fs::read_dir("/proc/self/task") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|t| t.parse::<u32>().ok()) else {
            continue;
        };
        let path = e.path();
        let Some((user, sys)) = fs::read_to_string(path.join("stat"))
            .ok()
            .as_deref()
            .and_then(stat_times)
        else {
            continue;
        };
        let (run, wait) = fs::read_to_string(path.join("schedstat"))
            .ok()
            .as_deref()
            .and_then(schedstat)
            .unwrap_or((0, 0));
        out.insert(
            tid,
            Counters {
                user,
                sys,
                run,
                wait,
            },
        );
    }
    out
}

/// `utime` and `stime` (clock ticks) of a `/proc/…/stat` line: the 14th
/// and 15th fields, counted after the command's closing parenthesis (the
/// command may hold spaces and parentheses).
fn stat_times(line: &str) -> Option<(u64, u64)> {
    let rest = &line[line.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// The time on a CPU and the time waiting on a run queue (ns) of a
/// `/proc/…/schedstat` line.
fn schedstat(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_times_are_read_after_the_command_whatever_it_holds() {
        let line =
            "4242 (barrage (w) 1) S 1 4242 4242 0 -1 4194560 1133 0 0 0 77 23 0 0 20 0 9 0 1 2 3";
        assert_eq!(stat_times(line), Some((77, 23)));
        assert_eq!(schedstat("123456 789 10\n"), Some((123456, 789)));
        assert_eq!(stat_times("garbage"), None);
    }

    /// This thread's CPU time, ns.
    fn own_cpu() -> u64 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: writes the thread's CPU clock into `t`.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    }

    #[test]
    fn a_busy_thread_shows_as_the_busiest() {
        let mut s = Sampler::start();
        // 200 ms of this thread's own CPU, however long the machine
        // takes to give it.
        let from = own_cpu();
        let mut x = 0u64;
        while own_cpu() - from < 200_000_000 {
            x = x.wrapping_mul(31).wrapping_add(1);
        }
        std::hint::black_box(x);
        let a = s.take(5, 3);
        assert!(a.threads >= 1);
        assert!(a.cpu_max >= 180_000_000, "{a:?}");
        assert!(a.cpu_user + a.cpu_sys >= 150_000_000, "{a:?}");
        assert_eq!(a.in_flight(), 2);
    }
}
