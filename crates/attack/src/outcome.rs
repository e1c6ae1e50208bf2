//! How an attack ended, or why it could not start: [`AttackError`],
//! [`StopReason`], [`AttackReport`].

use std::io;

use thiserror::Error;

use barrage_client::TlsError;

/// How far behind its schedule the generator may be at the end of
/// `-duration` and still send what was due: past it, sending stops and
/// the rest is counted as dropped (a host that cannot keep the rate ran
/// a 1 s attack for 30 s). Half a second: a stall that long at the very
/// end of a healthy run (a busy 2-core CI machine) is rare, and lag
/// shows any shorter one.
pub const LATE_GRACE_NS: u64 = 500_000_000;

/// Why an attack could not start.
#[derive(Debug, Error)]
pub enum AttackError {
    /// A TLS flag names a bad file.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The runtime or a thread could not be started.
    #[error("cannot start the attack: {0}")]
    Start(#[from] io::Error),
}

/// Why the attack ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The schedule (`-duration`, `-requests`) is complete.
    Done,
    /// [`Stopper::stop`] was called (a signal).
    Stopped,
    /// `-lazy` targets ran out.
    TargetsExhausted,
    /// A lazy target did not parse (see [`AttackReport::target_error`]).
    BadTarget,
    /// The sink failed (see [`AttackReport::output_error`]).
    OutputFailed,
    /// [`Stopper::abandon`] was called (a second signal): requests still
    /// in flight were dropped, so `scheduled - written` have no record.
    Abandoned,
}

/// What happened, for the CLI's exit code.
#[derive(Debug)]
pub struct AttackReport {
    /// Requests scheduled (each produced one Hit for the sink).
    pub scheduled: u64,
    /// Hits the sink accepted.
    pub written: u64,
    /// Why it ended.
    pub reason: StopReason,
    /// The sink's first error; later hits were dropped.
    pub output_error: Option<io::Error>,
    /// A `-lazy` target that did not parse.
    pub target_error: Option<crate::SourceError>,
    /// Requests due before the end of `-duration` that were never sent:
    /// the generator was more than [`LATE_GRACE_NS`] behind at
    /// the end.
    pub dropped: u64,
    /// `-event-filter`'s path, when it matched no event in any answer.
    pub unmatched: Option<String>,
}

impl AttackReport {
    /// The warnings of the run's end: requests never sent, an
    /// `-event-filter` that matched nothing.
    pub fn warnings(&self) -> Vec<String> {
        let unmatched = self.unmatched.as_ref().map(|path| {
            format!(
                "warning: -event-filter {path} matched no event in {} answers: a misspelt path, or answers that hold none (-llm openai reads OpenAI-style chunks)",
                self.written
            )
        });
        self.dropped_warning()
            .into_iter()
            .chain(unmatched)
            .collect()
    }

    /// The warning for requests never sent, when some were.
    pub fn dropped_warning(&self) -> Option<String> {
        (self.dropped > 0).then(|| format!(
            "warning: {} requests due before the end of -duration were never sent: this host fell over {}ms behind the schedule, so sending stopped at the end (they are in the stream as dropped; barrage doctor sizes a plan)",
            self.dropped,
            LATE_GRACE_NS / 1_000_000
        ))
    }

    /// What a stop by signal left: the first finishes what is in flight,
    /// the second abandons it.
    pub fn interrupted(&self) -> Option<String> {
        match self.reason {
            StopReason::Stopped => Some(format!(
                "interrupted: {} requests sent, {} results written",
                self.scheduled, self.written
            )),
            StopReason::Abandoned => Some(format!(
                "interrupted again: {} requests in flight abandoned, {} results written",
                self.scheduled.saturating_sub(self.written),
                self.written
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_says_what_it_left() {
        let mut r = AttackReport {
            scheduled: 14,
            written: 1,
            reason: StopReason::Abandoned,
            output_error: None,
            target_error: None,
            dropped: 0,
            unmatched: None,
        };
        assert_eq!(
            r.interrupted().as_deref(),
            Some("interrupted again: 13 requests in flight abandoned, 1 results written")
        );
        assert!(r.dropped_warning().is_none());
        r.reason = StopReason::Done;
        r.dropped = 2;
        assert!(r.interrupted().is_none());
        assert!(r
            .dropped_warning()
            .unwrap()
            .starts_with("warning: 2 requests due"));
    }
}
