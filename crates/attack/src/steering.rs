//! Live control's state beside the tickets (`attack -control`): the
//! plan of segments the ticket paths read, the markers for the writer,
//! and why an order is refused. The changes themselves are the tickets'
//! (`tickets/retime.rs`).

use std::sync::{Mutex, RwLock};

use barrage_model::Marker;

use crate::pacer::{Line, Segment};

/// Why a control order was refused; the attack goes on as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// A rate of 0 or infinity.
    #[error("a rate must be above 0 and finite (pause stops sending)")]
    Unpaced,
    /// A rate for an attack without one (`-rate 0`).
    #[error("this attack has no rate (the closed model): only pause, resume and stop")]
    Closed,
    /// A rate for `-har-timing`'s replay.
    #[error("-har-timing replays a recording's times: only pause, resume and stop")]
    Recorded,
    /// A rate for a `-mix`, whose groups have rates of their own.
    #[error("a -mix's groups have rates of their own: only pause, resume and stop")]
    Mix,
    /// Pause while paused.
    #[error("already paused")]
    Paused,
    /// Resume while not paused.
    #[error("not paused")]
    NotPaused,
    /// The schedule is over, or the attack not started.
    #[error("the attack is not running")]
    NotRunning,
}

/// What live control changed: every lane's segments, the line each is
/// on (or goes back to on a resume), and whether it is paused.
pub(crate) struct Plan {
    pub(crate) lanes: Vec<Vec<Segment>>,
    pub(crate) lines: Vec<Line>,
    pub(crate) paused: bool,
}

/// Live control's share of the tickets.
pub(crate) struct Retime {
    pub(crate) plan: RwLock<Plan>,
    /// Markers made and not yet written (the writer takes them).
    pub(crate) markers: Mutex<Vec<Marker>>,
    /// Counts the changes; loops sleeping on an old line wake at one.
    pub(crate) changes: tokio::sync::watch::Sender<u64>,
}

impl Retime {
    pub(crate) fn new(lanes: usize) -> Self {
        Retime {
            plan: RwLock::new(Plan {
                lanes: vec![Vec::new(); lanes],
                lines: vec![Line::Base; lanes],
                paused: false,
            }),
            markers: Mutex::default(),
            changes: tokio::sync::watch::channel(0).0,
        }
    }
}

/// The state live control shows: the line in force and whether paused.
#[derive(Debug, Clone, PartialEq)]
pub struct Steering {
    /// The rate or stages in force: the flags' (`None`) or a change's.
    pub line: Option<String>,
    /// Whether the schedule is paused.
    pub paused: bool,
    /// Changes made so far.
    pub changes: u64,
}
