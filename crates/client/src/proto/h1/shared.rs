//! A pipelined HTTP/1.1 connection shared by the requests queued on it
//! (`-pipeline N` in the open model), as the pool keeps it: where to queue
//! a request and how many answers it owes. Its task is in
//! `client/queued.rs`; the pool holds these without knowing the client.

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

use tokio::sync::{mpsc, oneshot};

use crate::{PreparedTarget, Response};

/// A request queued on a shared connection, and where its answer goes.
pub(crate) struct Queued {
    pub(crate) target: Arc<PreparedTarget>,
    pub(crate) seq: u64,
    pub(crate) reply: oneshot::Sender<Result<Response, crate::Failure>>,
}

/// A shared connection, as the pool keeps it: where to queue requests
/// and how many answers it owes.
#[derive(Clone)]
pub(crate) struct SharedConn {
    pub(crate) tx: mpsc::UnboundedSender<Queued>,
    pub(crate) owed: Arc<AtomicUsize>,
}

impl SharedConn {
    /// Answers outstanding.
    pub(crate) fn owed(&self) -> usize {
        self.owed.load(Ordering::Acquire)
    }

    /// Whether its task still runs (the connection is open).
    pub(crate) fn is_open(&self) -> bool {
        !self.tx.is_closed()
    }
}
