//! [`Watch`]: a running attack's counts, for progress displays.

use std::sync::Arc;

use crate::tickets::Tickets;

/// A running attack's count of requests sent, for progress displays
/// ([`Attack::watch`]); it reads the tickets' own counters, so the request
/// path does no more work for it.
#[derive(Clone, Default)]
pub struct Watch(
    pub(crate) Arc<std::sync::OnceLock<Arc<Tickets>>>,
    pub(crate) Arc<crate::hold::HoldCounts>,
    /// A flow's requests sent (its tickets are sessions).
    pub(crate) Arc<std::sync::atomic::AtomicU64>,
);

impl Watch {
    /// Requests sent so far (0 before the schedule starts); with `-hold`,
    /// connections opened and messages sent; with a flow, its sessions'
    /// requests.
    pub fn sent(&self) -> u64 {
        use std::sync::atomic::Ordering::Relaxed;
        self.0.get().map_or_else(
            || self.1.sent.load(Relaxed) + self.2.load(Relaxed),
            |t| t.issued(),
        )
    }

    /// Connections held open now (`-hold`; 0 otherwise).
    pub fn held(&self) -> u64 {
        self.1.held.load(std::sync::atomic::Ordering::Relaxed)
    }
}
