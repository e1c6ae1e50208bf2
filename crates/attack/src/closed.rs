//! The closed model (`-rate 0` / `infinity` with `-max-workers N`): N
//! workers, each sending its next request as soon as its last one is done.
//!
//! There is no clock to keep, so instead of the pacer handing out every
//! request (two cross-thread wake-ups each), the workers take numbered
//! tickets from a shared counter on their own threads. Sequence numbers
//! stay contiguous: a ticket is only issued while the attack is open, and
//! every issued ticket is sent.

use std::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Instant,
};

use crate::{client::Prepared, Due, Pacer, StopReason, Stopper, TargetSource};

/// Set in the ticket counter once no more tickets are issued.
const CLOSED: u64 = 1 << 63;

/// Hands out sequence numbers and targets to closed-model workers.
pub(crate) struct Tickets {
    next: AtomicU64,
    pacer: Pacer,
    start: Instant,
    stopper: Stopper,
    fixed: Vec<Arc<Prepared>>,
    lazy: Option<Mutex<Box<dyn TargetSource>>>,
    outcome: Mutex<(Option<StopReason>, Option<String>)>,
}

impl Tickets {
    pub(crate) fn fixed(
        targets: Vec<Arc<Prepared>>,
        pacer: Pacer,
        start: Instant,
        stopper: Stopper,
    ) -> Self {
        Self::new(targets, None, pacer, start, stopper)
    }

    pub(crate) fn lazy(
        source: Box<dyn TargetSource>,
        pacer: Pacer,
        start: Instant,
        stopper: Stopper,
    ) -> Self {
        Self::new(Vec::new(), Some(Mutex::new(source)), pacer, start, stopper)
    }

    fn new(
        fixed: Vec<Arc<Prepared>>,
        lazy: Option<Mutex<Box<dyn TargetSource>>>,
        pacer: Pacer,
        start: Instant,
        stopper: Stopper,
    ) -> Self {
        Tickets {
            next: AtomicU64::new(0),
            pacer,
            start,
            stopper,
            fixed,
            lazy,
            outcome: Mutex::new((None, None)),
        }
    }

    fn close(&self, reason: StopReason, error: Option<String>) {
        self.next.fetch_or(CLOSED, Ordering::SeqCst);
        let mut o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        if o.0.is_none() {
            *o = (Some(reason), error);
        }
    }

    /// The end of the schedule or a stop, checked before issuing `seq`.
    fn over(&self, seq: u64) -> bool {
        if self.stopper.is_stopped() {
            self.close(StopReason::Stopped, None);
            return true;
        }
        if self.pacer.due(seq, self.start.elapsed().as_nanos() as u64) == Due::Stop {
            self.close(StopReason::Done, None);
            return true;
        }
        false
    }

    /// The next request to send, or `None` when the attack is over.
    pub(crate) fn take(&self) -> Option<(u64, Arc<Prepared>)> {
        if let Some(source) = &self.lazy {
            let mut src = source.lock().unwrap_or_else(|p| p.into_inner());
            let seq = self.next.load(Ordering::SeqCst);
            if seq & CLOSED != 0 || self.over(seq) {
                return None;
            }
            let target = match src
                .next_target()
                .and_then(|t| t.map(Prepared::new).transpose())
            {
                Ok(Some(t)) => Arc::new(t),
                Ok(None) => {
                    self.close(StopReason::TargetsExhausted, None);
                    return None;
                }
                Err(e) => {
                    self.close(StopReason::BadTarget, Some(e));
                    return None;
                }
            };
            self.next.store(seq + 1, Ordering::SeqCst);
            return Some((seq, target));
        }
        loop {
            let seq = self.next.load(Ordering::SeqCst);
            if seq & CLOSED != 0 || self.over(seq) {
                return None;
            }
            if self
                .next
                .compare_exchange(seq, seq + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                let target = self.fixed[(seq % self.fixed.len() as u64) as usize].clone();
                return Some((seq, target));
            }
        }
    }

    /// Tickets issued (each one was sent), why it ended, and a bad lazy
    /// target's error.
    pub(crate) fn finish(&self) -> (u64, StopReason, Option<String>) {
        let issued = self.next.load(Ordering::SeqCst) & !CLOSED;
        let o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        (issued, o.0.unwrap_or(StopReason::Done), o.1.clone())
    }
}
