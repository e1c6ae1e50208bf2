//! How an attack ended, or why it could not start: [`AttackError`],
//! [`StopReason`], [`AttackReport`].

use std::io;

use thiserror::Error;

use barrage_client::TlsError;

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
    /// the generator was more than [`crate::LATE_GRACE_NS`] behind at
    /// the end.
    pub dropped: u64,
}
