//! [`Audit`]: what the generator itself did over one span of an attack,
//! the raw matter of a report's verdict on the generator (issue 63).

/// One sample of the attack's self-audit, written into the stream about
/// once a second: the process's threads' CPU, how long any of them waited
/// for a core, and how many requests had gone out. Times are unix
/// nanoseconds, durations nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Audit {
    /// Where it comes from: empty for the stream's own attack; in a
    /// stream merged by `collect`, the attacker's label.
    pub source: String,
    /// The span's end.
    pub at: i64,
    /// The span's length.
    pub span: u64,
    /// Threads of the process seen.
    pub threads: u32,
    /// The busiest thread's CPU time in the span (user and system).
    pub cpu_max: u64,
    /// All threads' user CPU time in the span.
    pub cpu_user: u64,
    /// All threads' system CPU time in the span.
    pub cpu_sys: u64,
    /// The longest one thread waited on a run queue in the span: time it
    /// was ready to run and another task had its core.
    pub wait_max: u64,
    /// Requests sent by the span's end (sessions' steps too).
    pub sent: u64,
    /// Records handed to the stream by the span's end: `sent - written`
    /// were in flight or on their way to the writer.
    pub written: u64,
    /// Gaps between consecutive events of the streamed answers
    /// (`-stream`) written in the span.
    pub gaps: u64,
    /// Of `gaps`, those under 50 µs: events stamped together, read at one
    /// time (they waited for barrage to read them, or the server wrote
    /// them at once).
    pub stacked: u64,
}

impl Audit {
    /// The busiest thread's share of a core over the span (0 to 1).
    pub fn busiest(&self) -> f64 {
        share(self.cpu_max, self.span)
    }

    /// The longest run-queue wait's share of the span (0 to 1).
    pub fn waited(&self) -> f64 {
        share(self.wait_max, self.span)
    }

    /// The share of the span's event gaps that were stacked (0 without
    /// streamed answers).
    pub fn stacked_share(&self) -> f64 {
        share(self.stacked, self.gaps)
    }

    /// Requests in flight (or queued to the writer) at the span's end.
    pub fn in_flight(&self) -> u64 {
        self.sent.saturating_sub(self.written)
    }
}

fn share(part: u64, span: u64) -> f64 {
    if span == 0 {
        0.0
    } else {
        (part as f64 / span as f64).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_of_the_span_and_never_past_one() {
        let a = Audit {
            span: 1_000_000_000,
            cpu_max: 900_000_000,
            wait_max: 2_000_000_000,
            sent: 10,
            written: 7,
            ..Audit::default()
        };
        assert!((a.busiest() - 0.9).abs() < 1e-9);
        assert_eq!(a.waited(), 1.0);
        assert_eq!(a.in_flight(), 3);
        assert_eq!(Audit::default().busiest(), 0.0);
    }
}
