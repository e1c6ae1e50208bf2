//! Where `-io ring`'s due requests go: to the thread's workers, each
//! sending one at a time (the open model: [`fly`]), or sent and awaited in
//! turn by the loop (the closed model). Records
//! go to the writer as tokio's workers' do ([`crate::writer::deliver`]);
//! the thread's batch is handed over when its last request in flight ends
//! and before its loop sleeps, and in the closed model on a deadline
//! (monoio has no hook for parking).
//!
//! The requests' context (and in it the writer's queue) is the thread's,
//! not each task's ([`adopt`]): monoio drops no task with its runtime, so
//! on an abandon (a second Ctrl-C) [`abandon`] lets the writer's queue go
//! while requests still wait, and the writer ends with what finished.

use std::{
    cell::{Cell, RefCell},
    collections::VecDeque,
    rc::Rc,
    sync::Arc,
    task::{Poll, Waker},
    time::{Duration, Instant},
};

use barrage_client::{PreparedTarget, RingClient};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{
    clock::{Clock, Scheduled},
    scheduler::Hand,
    stopper::Stopper,
    writer::{answered, deliver, hand_over, RequestContext},
};

thread_local! {
    /// The attack's request context on this ring thread.
    static CTX: RefCell<Option<Arc<RequestContext>>> = const { RefCell::new(None) };
}

/// Makes `ctx` this thread's request context (a loop starting).
pub(crate) fn adopt(ctx: Arc<RequestContext>) {
    CTX.with_borrow_mut(|c| *c = Some(ctx));
}

/// Lets this thread's hold on the writer's queue go: its context and the
/// batch it has not handed over (what finished goes out first); requests
/// not yet taken are dropped and waiting workers end, while the runtime
/// that drops their connections is still there.
pub(crate) async fn abandon() {
    hand_over();
    DUE.with_borrow_mut(VecDeque::clear);
    retire();
    // Once round the runtime's queue: the woken workers end first (as
    // the scheduler yields, on tokio's threads and these alike).
    tokio::task::yield_now().await;
    let ctx = CTX.with_borrow_mut(Option::take);
    drop(ctx);
}

/// `f` on this thread's context, if it still has one.
fn with_ctx<R>(f: impl FnOnce(&RequestContext) -> R) -> Option<R> {
    CTX.with_borrow(|c| c.as_deref().map(f))
}

thread_local! {
    /// Requests of this thread in flight (the open model's).
    static FLYING: Cell<u64> = const { Cell::new(0) };
}

thread_local! {
    /// Requests due on this thread that no worker has taken yet.
    static DUE: RefCell<VecDeque<Scheduled>> = const { RefCell::new(VecDeque::new()) };
    /// Workers waiting for a request, to be woken one a request.
    static IDLE: RefCell<Vec<Waker>> = const { RefCell::new(Vec::new()) };
    /// Whether waiting workers end rather than wait ([`retire`]).
    static RETIRING: Cell<bool> = const { Cell::new(false) };
}

/// Request `job` on this ring thread: taken by a worker waiting for one,
/// else by a new worker (a task that sends requests one after another
/// until [`retire`]); sent, its record delivered, its `-max-workers` slot
/// let go; the thread's batch handed over when its last request in
/// flight ends (it may park then).
pub(crate) fn fly(client: &Rc<RingClient>, clock: Clock, job: Scheduled) {
    FLYING.set(FLYING.get() + 1);
    RETIRING.set(false);
    DUE.with_borrow_mut(|d| d.push_back(job));
    match IDLE.with_borrow_mut(Vec::pop) {
        Some(waiting) => waiting.wake(),
        None => drop(monoio::spawn(worker(client.clone(), clock))),
    }
}

/// Most workers a thread keeps waiting: past them, a worker with nothing
/// to do ends. Kept all, the workers of a burst (18,000 requests held by a
/// 10 s server) held their memory while the burst's records were made:
/// 0.8 KiB more peak RSS a held request.
const KEPT: usize = 64;

/// The next request due on this thread, waiting for one; `None` once
/// told to [`retire`] with none due, or with [`KEPT`] workers waiting.
fn next_due() -> impl std::future::Future<Output = Option<Scheduled>> {
    std::future::poll_fn(|cx| match DUE.with_borrow_mut(VecDeque::pop_front) {
        Some(job) => Poll::Ready(Some(job)),
        None if RETIRING.get() || IDLE.with_borrow(Vec::len) >= KEPT => Poll::Ready(None),
        None => {
            IDLE.with_borrow_mut(|w| w.push(cx.waker().clone()));
            Poll::Pending
        }
    })
}

/// Lets this thread's waiting workers end (its requests have drained):
/// the next request due starts one anew.
fn retire() {
    RETIRING.set(true);
    for w in IDLE.with_borrow_mut(std::mem::take) {
        w.wake();
    }
}

/// One of a ring thread's workers: a task that sends the requests due,
/// one at a time, as long as there are some (rather than a task a
/// request: its spawn moved the request's whole future into a new
/// allocation each time).
///
/// An async block (an async fn keeps its arguments twice) and the request
/// taken out of its `Option` before the send: 72 bytes that put its task
/// in the allocator's 2,048-byte class rather than its 1,792 one (2.83
/// KiB of peak RSS a held request against 2.06 a task each).
#[allow(clippy::manual_async_fn)]
fn worker(client: Rc<RingClient>, clock: Clock) -> impl std::future::Future<Output = ()> {
    async move {
        loop {
            let Some(job) = next_due().await else { return };
            // A -mix group's own -max-workers, as on tokio's threads (the
            // context looked up only for a group that has one).
            let group = job.target.group.clone().filter(|g| g.slots.is_some());
            let slot = match &group {
                None => Ok(None),
                Some(g) => match with_ctx(|c| (c.stopper.clone(), c.returned.get().cloned())) {
                    Some((stopper, returned)) => {
                        crate::hands::group_slot(Some(g), &stopper, returned.as_deref()).await
                    }
                    None => Err(()),
                },
            };
            if let Ok(slot) = slot {
                let sent = Instant::now();
                let result = client.send(&job.target, job.seq).await;
                let done = answered(job.target, job.seq, job.scheduled, clock, sent, result);
                drop((slot, job.slot));
                with_ctx(|ctx| deliver(&ctx.tx, done));
            }
            FLYING.set(FLYING.get() - 1);
            if FLYING.get() == 0 {
                hand_over();
            }
        }
    }
}

/// Waits for this thread's requests still in flight (their records hold
/// the writer open), looking each millisecond and handing over what
/// finished meanwhile: a `-mix` group's backlog, waiting for its own
/// slots, can keep it for seconds, and `-until` judges records as they
/// come (RingMix x Stall x Until held its records, so -until was met
/// only when the backlog had gone out: 25 s).
pub(crate) async fn drain() {
    while FLYING.get() > 0 {
        monoio::time::sleep(std::time::Duration::from_millis(1)).await;
        hand_over();
    }
    hand_over();
    retire();
}

/// The open model on a ring thread: each request to a worker ([`fly`]).
pub(crate) struct RingSpawn {
    pub(crate) client: Rc<RingClient>,
    pub(crate) clock: Clock,
    /// `-max-workers` with a rate: the attack's slots, one a request in
    /// flight, shared by every thread.
    slots: Option<Arc<Semaphore>>,
    stopper: Stopper,
}

impl RingSpawn {
    pub(crate) fn new(
        client: Rc<RingClient>,
        clock: Clock,
        slots: Option<Arc<Semaphore>>,
        stopper: Stopper,
    ) -> Self {
        RingSpawn {
            client,
            clock,
            slots,
            stopper,
        }
    }

    /// A `-max-workers` slot for the next request: at once, or, what
    /// finished handed over first, when one comes free (the request goes
    /// out late and its lag says so). `None` on a stop or past the end of
    /// `-duration` and its grace: the ticket and the rest are dropped, as
    /// the pacer thread's [`crate::hands::Dispatch`] drops them.
    async fn slot(&self, sem: &Arc<Semaphore>) -> Option<OwnedSemaphorePermit> {
        if let Ok(p) = sem.clone().try_acquire_owned() {
            return Some(p);
        }
        hand_over();
        let late = with_ctx(|c| c.end)
            .flatten()
            .map(|end| end + Duration::from_nanos(crate::LATE_GRACE_NS));
        let mut got = None;
        let acquire = async { got = sem.clone().acquire_owned().await.ok() };
        let give_up = async {
            match late {
                Some(t) => monoio::time::sleep_until(t.into()).await,
                None => std::future::pending().await,
            }
        };
        super::first::first_of(
            super::first::first_of(acquire, self.stopper.stopped()),
            give_up,
        )
        .await;
        got
    }
}

impl Hand for RingSpawn {
    async fn send(&mut self, seq: u64, target: Arc<PreparedTarget>, offset: Option<u64>) -> bool {
        let slot = match &self.slots {
            Some(sem) => match self.slot(sem).await {
                Some(p) => Some(p),
                None => return false,
            },
            None => None,
        };
        let scheduled = self.clock.start_unix + offset.unwrap_or(0) as i64;
        let job = Scheduled {
            target,
            seq,
            scheduled,
            slot,
        };
        fly(&self.client, self.clock, job);
        true
    }

    async fn flush(&mut self) {
        hand_over();
    }
}

impl RingSpawn {
    /// Waits for this thread's requests still in flight ([`drain`]).
    pub(crate) async fn drain(&self) {
        drain().await
    }
}

/// The closed model on a ring thread: each request sent and its answer
/// awaited before the next.
pub(crate) struct RingInline {
    client: Rc<RingClient>,
    clock: Clock,
    /// `-pipeline`'s batch waiting to be written.
    batch: Vec<(Arc<PreparedTarget>, u64)>,
}

/// Longest a closed loop's record waits in its thread's outbox.
const HAND_OVER_AFTER: std::time::Duration = std::time::Duration::from_millis(5);

thread_local! {
    /// Whether this thread hands its outbox over on a deadline.
    static ON_DEADLINE: Cell<bool> = const { Cell::new(false) };
}

/// From now on this thread hands a record over within
/// [`HAND_OVER_AFTER`] of its coming into the outbox. Tokio's workers
/// hand over as they park and monoio has no such hook, so without it
/// records of closed loops whose answers are slow waited for 64 to
/// finish: with two loops and a silent server, 32 s of timeouts before
/// the writer learned that its output had closed. (The open model's
/// loops hand over before each sleep.)
pub(crate) fn hand_over_on_deadline() {
    if !ON_DEADLINE.replace(true) {
        monoio::spawn(async {
            loop {
                crate::writer::waiting().await;
                monoio::time::sleep(HAND_OVER_AFTER).await;
                hand_over();
            }
        });
    }
}

impl RingInline {
    /// A closed loop's hand ([`hand_over_on_deadline`]).
    pub(crate) fn new(client: Rc<RingClient>, clock: Clock) -> Self {
        hand_over_on_deadline();
        RingInline {
            client,
            clock,
            batch: Vec::new(),
        }
    }

    /// Sends the pipelined batch and delivers its records.
    async fn send_batch(&mut self) {
        let sent = Instant::now();
        let scheduled = self.clock.unix(sent);
        let batch = &self.batch;
        self.client
            .send_pipelined(batch, |i, result, end| {
                let (target, seq) = &batch[i];
                let done = crate::writer::in_batch((target, *seq), scheduled, sent, end, result);
                with_ctx(|ctx| deliver(&ctx.tx, done));
            })
            .await;
        self.batch.clear();
    }
}

impl Hand for RingInline {
    // An async block rather than an async fn (which keeps its arguments
    // twice), and the pipelined batch boxed: a closed loop's future is
    // held for the whole attack (18,000 in the held-connections cell).
    #[allow(clippy::manual_async_fn)]
    fn send(
        &mut self,
        seq: u64,
        target: Arc<PreparedTarget>,
        _: Option<u64>,
    ) -> impl std::future::Future<Output = bool> {
        async move {
            if self.client.pipeline() > 1 {
                self.batch.push((target, seq));
                if self.batch.len() >= self.client.pipeline() {
                    Box::pin(self.send_batch()).await;
                }
                return true;
            }
            let (sent, clock) = (Instant::now(), self.clock);
            let result = self.client.send(&target, seq).await;
            let done = answered(target, seq, clock.unix(sent), clock, sent, result);
            with_ctx(|ctx| deliver(&ctx.tx, done));
            true
        }
    }

    async fn flush(&mut self) {
        if !self.batch.is_empty() {
            Box::pin(self.send_batch()).await;
        }
        hand_over();
    }
}
