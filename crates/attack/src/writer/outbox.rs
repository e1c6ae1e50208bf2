//! A worker thread's outbox: the records it finished, handed to the
//! writer in batches (one queue operation a batch, not one a record).

use std::{
    cell::RefCell,
    sync::mpsc::{SyncSender, TrySendError},
    task::{Poll, Waker},
};

use super::Finished;

/// Finished requests on their way to the writer, one worker thread's at a
/// time.
pub(crate) type Batch = Vec<Finished>;

/// Most records a worker thread keeps before it hands them over.
const OUTBOX_MAX: usize = 64;

/// What a worker thread has finished and not yet handed to the writer,
/// and the queue to hand it to: held only while there is something to
/// hand over, so that the queue closes once the last record is out.
struct Outbox {
    /// Whether this thread's runtime hands over before it sleeps (a
    /// worker thread: see [`hand_over`]); elsewhere each record goes at
    /// once.
    batching: bool,
    done: Batch,
    tx: Option<SyncSender<Batch>>,
    /// Who is woken when a record comes into an empty outbox
    /// ([`waiting`]).
    watcher: Option<Waker>,
}

thread_local! {
    static OUTBOX: RefCell<Outbox> = const {
        RefCell::new(Outbox {
            batching: false,
            done: Vec::new(),
            tx: None,
            watcher: None,
        })
    };
}

/// Makes the records finished on this thread wait in its outbox until
/// [`hand_over`] (which its runtime calls before it sleeps) or until
/// there are [`OUTBOX_MAX`]: one queue operation a batch instead of one a
/// record (at 330,000 records/s the writer spent half its time on the
/// queue, spinning on slots being written; at 20,000/s it woke 457 times
/// a second, 7% of the attack's CPU).
pub(crate) fn batch_on_this_thread() {
    OUTBOX.with_borrow_mut(|o| o.batching = true);
}

/// Queues a finished request for the writer: on a worker thread into its
/// outbox, elsewhere at once.
pub(crate) fn deliver(tx: &SyncSender<Batch>, done: Finished) {
    let full = OUTBOX.with_borrow_mut(|o| {
        if !o.batching {
            return Some((vec![done], tx.clone()));
        }
        if o.done.is_empty() {
            if let Some(w) = o.watcher.take() {
                w.wake();
            }
        }
        o.done.push(done);
        if o.tx.is_none() {
            o.tx = Some(tx.clone());
        }
        if o.done.len() >= OUTBOX_MAX {
            o.take()
        } else {
            None
        }
    });
    if let Some((batch, tx)) = full {
        send(&tx, batch);
    }
}

/// Hands this thread's outbox to the writer. A worker thread's runtime
/// calls it before it sleeps, so a record waits no longer than its thread
/// stays busy (or [`OUTBOX_MAX`] records).
pub(crate) fn hand_over() {
    if let Some((batch, tx)) = OUTBOX.with_borrow_mut(|o| o.take()) {
        send(&tx, batch);
    }
}

/// Ends once this thread's outbox holds a record: for a runtime with no
/// hook before it sleeps (monoio's, `-io ring`), whose thread then hands
/// the batch over on a deadline of its own.
pub(crate) fn waiting() -> impl std::future::Future<Output = ()> {
    std::future::poll_fn(|cx| {
        OUTBOX.with_borrow_mut(|o| {
            if o.done.is_empty() {
                o.watcher = Some(cx.waker().clone());
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        })
    })
}

impl Outbox {
    /// What is waiting, and the queue for it (which this outbox then no
    /// longer holds open).
    fn take(&mut self) -> Option<(Batch, SyncSender<Batch>)> {
        let tx = self.tx.take()?;
        // The next batch sized as this one (one record a batch at low
        // rates, where the thread sleeps between requests).
        let room = self.done.len().clamp(4, OUTBOX_MAX);
        let batch = std::mem::replace(&mut self.done, Vec::with_capacity(room));
        Some((batch, tx))
    }
}

/// Sends a batch to the writer, waiting when the queue is full. A gone
/// writer means the attack is already failing.
fn send(tx: &SyncSender<Batch>, batch: Batch) {
    match tx.try_send(batch) {
        Ok(()) | Err(TrySendError::Disconnected(_)) => {}
        Err(TrySendError::Full(batch)) => {
            // The output is slower than the requests: block this worker
            // thread until the writer catches up (its other requests wait,
            // and their lateness shows in the records that follow).
            let _ = tx.send(batch);
        }
    }
}
