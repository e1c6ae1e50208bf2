//! Where the scheduler's due requests go ([`crate::scheduler::Hand`]), and
//! the real clock it waits on ([`Clockwork`]).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use barrage_client::{Client, LoopState, PreparedTarget};
use tokio::sync::Semaphore;

use crate::{
    alarm::Alarm,
    clock::{Scheduled, MAX_BATCH, TICK},
    scheduler::{Hand, Waits},
    workers::Workers,
    writer::{answered, deliver, in_batch, RequestContext},
    Stopper,
};

/// The monotonic clock, with a timerfd to sleep on ([`Alarm`]): sleeps end
/// early at the stop, and are kept a [`TICK`] apart (counted from when the
/// last was meant to end, not when it did: a late wake-up must not push
/// the next one back), so that a loop catching up sends what fell due
/// meanwhile together.
pub(crate) struct Clockwork {
    /// Made at the first sleep: a loop that never sleeps (the closed
    /// model's, 18,000 of them) holds no timerfd.
    alarm: Option<Alarm>,
    start: Instant,
    stopper: Stopper,
    last_wake: Instant,
    /// For ticks: this loop's number among `lanes`, and whether the alarm
    /// repeats on its own (armed once).
    lane: u64,
    lanes: u64,
    repeating: bool,
}

impl Clockwork {
    /// A clock counted from `start`, for a loop that sleeps until each
    /// request is due. Call it on the runtime's thread.
    pub(crate) fn new(start: Instant, stopper: Stopper) -> Self {
        Clockwork {
            alarm: None,
            start,
            stopper,
            last_wake: Instant::now(),
            lane: 0,
            lanes: 1,
            repeating: false,
        }
    }

    /// A clock for loop `lane` of `lanes` taking turns by tick: loop
    /// `lane` owns the ticks with `j % lanes == lane` (`start + j × TICK`)
    /// and wakes at each, on a timer armed once that repeats every `lanes`
    /// ticks (re-arming it per wake-up cost as much as a pacer thread).
    pub(crate) fn ticking(start: Instant, stopper: Stopper, lane: u64, lanes: u64) -> Self {
        let mut c = Clockwork::new(start, stopper);
        c.lane = lane;
        c.lanes = lanes.max(1);
        let every = TICK.saturating_mul(c.lanes.try_into().unwrap_or(u32::MAX));
        let first = c.own_tick(c.now());
        c.repeating = c.alarm().repeat(first, every);
        c
    }

    /// The timer, made on first use.
    fn alarm(&mut self) -> &Alarm {
        self.alarm.get_or_insert_with(Alarm::new)
    }

    /// This loop's first tick at or after `offset` (ns from the start).
    fn own_tick(&self, offset: u64) -> Instant {
        let tick = TICK.as_nanos() as u64;
        let j = offset.div_ceil(tick);
        let j = j + (self.lane + self.lanes - j % self.lanes) % self.lanes;
        self.start + Duration::from_nanos(j.saturating_mul(tick))
    }
}

impl Waits for Clockwork {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    async fn until(&mut self, offset: u64) {
        let at = self.start + Duration::from_nanos(offset);
        let wake = at.max(self.last_wake + TICK);
        self.alarm();
        let (Some(alarm), stopper) = (&self.alarm, &self.stopper) else {
            return;
        };
        tokio::select! {
            biased;
            _ = stopper.stopped() => {}
            _ = alarm.sleep_until(wake) => {}
        }
        self.last_wake = wake;
    }

    async fn tick_after(&mut self, offset: u64) {
        let at = self.own_tick(offset);
        self.alarm();
        let (Some(alarm), stopper, repeating) = (&self.alarm, &self.stopper, self.repeating) else {
            return;
        };
        tokio::select! {
            biased;
            _ = stopper.stopped() => {}
            _ = alarm.expiry(), if repeating => {}
            _ = alarm.sleep_until(at), if !repeating => {}
        }
    }
}

/// The closed model's clock: it is read, never slept on (each request
/// goes when the last is answered), so its loops carry no timer state.
pub(crate) struct Unpaced(pub(crate) Instant);

impl Waits for Unpaced {
    fn now(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }

    async fn until(&mut self, _: u64) {}

    async fn tick_after(&mut self, _: u64) {}
}

/// The open model on a worker thread: each request a task of its own.
pub(crate) struct Spawn {
    pub(crate) client: Arc<Client>,
    pub(crate) ctx: Arc<RequestContext>,
}

impl Hand for Spawn {
    async fn send(&mut self, seq: u64, target: Arc<PreparedTarget>, offset: Option<u64>) -> bool {
        let offset = offset.unwrap_or(0);
        let job = Scheduled {
            target,
            seq,
            scheduled: self.ctx.clock.start_unix + offset as i64,
            slot: None,
        };
        // Boxed: tokio moves a task's future by value into and out of its
        // cell (spawn, done, dropped), and `send`'s is 432 bytes: 3 copies
        // of it per request were 2-3% of the open model's instructions
        // (callgrind at 500/s: ~25.8k -> ~25.3k per request).
        tokio::spawn(Box::pin(send(self.client.clone(), self.ctx.clone(), job)));
        true
    }

    async fn flush(&mut self) {}
}

/// The closed model: each request sent and its answer awaited before the
/// next; with `-pipeline N`, N at a time on one connection (wrk's
/// pipelining, as its Lua scripts do it).
pub(crate) struct Inline {
    client: Arc<Client>,
    ctx: Arc<RequestContext>,
    state: LoopState,
    batch: Vec<(Arc<PreparedTarget>, u64)>,
}

impl Inline {
    pub(crate) fn new(client: Arc<Client>, ctx: Arc<RequestContext>) -> Self {
        Inline {
            client,
            ctx,
            state: LoopState::new(),
            batch: Vec::new(),
        }
    }
}

impl Hand for Inline {
    // An async fn would keep its arguments twice in its future.
    #[allow(clippy::manual_async_fn)]
    fn send(
        &mut self,
        seq: u64,
        target: Arc<PreparedTarget>,
        _: Option<u64>,
    ) -> impl std::future::Future<Output = bool> {
        // An async block rather than an async fn (which keeps its
        // arguments twice), and the client's path under it trimmed the
        // same way: a closed-model loop's future is held for the whole
        // attack by each loop (18,000 in the held-connections cell); it
        // was 768 bytes, is 456.
        async move {
            if let Some(plan) = self.ctx.flow.clone() {
                let at = self.ctx.clock.unix(Instant::now());
                Box::pin(crate::session::run(&self.client, &self.ctx, &plan, seq, at)).await;
                return true;
            }
            if self.client.pipeline() > 1 {
                self.batch.push((target, seq));
                if self.batch.len() >= self.client.pipeline() {
                    self.flush().await;
                }
                return true;
            }
            let (sent, clock) = (Instant::now(), self.ctx.clock);
            let result = self.client.send_serial(&target, seq, &mut self.state).await;
            let done = answered(target, seq, clock.unix(sent), clock, sent, result);
            deliver(&self.ctx.tx, done);
            true
        }
    }

    async fn flush(&mut self) {
        if !self.batch.is_empty() {
            // Boxed: a loop's future is held for the whole attack, and
            // 18,000 of them should not each carry a pipelined batch's
            // (it was 1.2 of the loop's 1.6 KB, `drive` awaiting `flush`
            // inline).
            Box::pin(self.send_batch()).await;
        }
    }
}

impl Inline {
    /// Sends the pipelined batch and delivers its records.
    async fn send_batch(&mut self) {
        let sent = Instant::now();
        let scheduled = self.ctx.clock.unix(sent);
        let (batch, ctx) = (&self.batch, &self.ctx);
        self.client
            .send_pipelined(batch, &mut self.state, |i, result, end| {
                let (target, seq) = &batch[i];
                deliver(
                    &ctx.tx,
                    in_batch((target, *seq), scheduled, sent, end, result),
                );
            })
            .await;
        self.batch.clear();
    }
}

/// Where the pacer thread's batches go.
pub(crate) enum Lanes<'a> {
    /// Tokio's worker threads, the least busy first.
    Tokio(&'a mut Workers),
    /// Elsewhere (`-io ring`'s threads: `crate::ring::lanes`), each batch
    /// handed to this.
    Other(Box<dyn FnMut(Vec<Scheduled>) + 'a>),
}

/// The pacer thread (`-lazy`, `-max-workers`): a `-max-workers` slot for
/// each request, then batches handed to the least busy worker thread (or
/// the next of `-io ring`'s) with one cross-thread wake-up each.
pub(crate) struct Dispatch<'a> {
    pub(crate) lanes: Lanes<'a>,
    pub(crate) ctx: Arc<RequestContext>,
    pub(crate) slots: Option<Arc<Semaphore>>,
    pub(crate) stopper: Stopper,
    pub(crate) batch: Vec<Scheduled>,
}

impl Hand for Dispatch<'_> {
    async fn send(&mut self, seq: u64, target: Arc<PreparedTarget>, offset: Option<u64>) -> bool {
        let slot = match self.slots.clone() {
            None => None,
            Some(sem) => match sem.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) => {
                    // Waiting for a slot: what is due goes out first.
                    self.flush().await;
                    // Past the end of -duration and its grace, the
                    // wait ends: the ticket and the rest are dropped.
                    let late = self
                        .ctx
                        .end
                        .map(|end| end + std::time::Duration::from_nanos(crate::LATE_GRACE_NS));
                    tokio::select! {
                        p = sem.acquire_owned() => match p {
                            Ok(p) => Some(p),
                            Err(_) => return false,
                        },
                        _ = self.stopper.stopped() => return false,
                        _ = async {
                            match late {
                                Some(t) => tokio::time::sleep_until(t.into()).await,
                                None => std::future::pending().await,
                            }
                        } => return false,
                    }
                }
            },
        };
        let scheduled = match offset {
            Some(o) => self.ctx.clock.start_unix + o as i64,
            None => self.ctx.clock.unix(Instant::now()),
        };
        self.batch.push(Scheduled {
            target,
            seq,
            scheduled,
            slot,
        });
        if self.batch.len() >= MAX_BATCH {
            self.flush().await;
        }
        true
    }

    async fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let workers = match &mut self.lanes {
            Lanes::Tokio(workers) => workers,
            Lanes::Other(hand_over) => return hand_over(std::mem::take(&mut self.batch)),
        };
        let (handle, client, started) = workers.least_behind();
        let ctx = self.ctx.clone();
        let client = client.clone();
        if self.batch.len() == 1 {
            // At low rates every batch is one request: its own task, sent
            // across directly.
            if let Some(job) = self.batch.pop() {
                handle.spawn(Box::pin(async move {
                    drop(started);
                    send(client, ctx, job).await
                }));
            }
            return;
        }
        let jobs = std::mem::take(&mut self.batch);
        self.batch = Vec::with_capacity(jobs.len());
        handle.spawn(async move {
            drop(started);
            for job in jobs {
                tokio::spawn(Box::pin(send(client.clone(), ctx.clone(), job)));
            }
        });
    }
}

/// A `-mix` group's own `-max-workers` slot for a request of `group`:
/// none needed, at once, or when one comes free (the wait shows as its
/// lag: it is stamped when it is sent). `Err` when the stop came while it
/// waited: the request is not sent and its ticket is given back to
/// `returned`. Whichever way it came, a slot after the stop is not used:
/// the group's later requests give up alike, and what it sent stays a
/// prefix of its schedule.
pub(crate) async fn group_slot<'a>(
    group: Option<&'a barrage_client::TargetGroup>,
    stopper: &Stopper,
    returned: Option<&std::sync::atomic::AtomicU64>,
) -> Result<Option<tokio::sync::SemaphorePermit<'a>>, ()> {
    let Some(slots) = group.and_then(|g| g.slots.as_ref()) else {
        return Ok(None);
    };
    let got = match slots.try_acquire() {
        Ok(p) => Some(p),
        Err(_) => tokio::select! {
            p = slots.acquire() => p.ok(),
            () = stopper.stopped() => None,
        },
    };
    if got.is_none() || stopper.is_stopped() {
        if let Some(r) = returned {
            r.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        return Err(());
    }
    Ok(got)
}

/// One scheduled request, from send to its record in the writer's queue.
// An async block, not an async fn: an async fn keeps its arguments
// twice, and this future is held for as long as its request waits
// (18,000 held connections: see the client's future sizes).
#[allow(clippy::manual_async_fn)]
pub(crate) fn send(
    client: Arc<Client>,
    ctx: Arc<RequestContext>,
    job: Scheduled,
) -> impl std::future::Future<Output = ()> + Send {
    async move {
        if let Some(plan) = ctx.flow.clone() {
            Box::pin(crate::session::run(
                &client,
                &ctx,
                &plan,
                job.seq,
                job.scheduled,
            ))
            .await;
            drop(job.slot);
            return;
        }
        // A -mix group's own -max-workers: the request waits for a slot, and
        // the wait shows as its lag (it is stamped when it is sent). A stop
        // while it waits (Ctrl-C, a closed output) sends it no more and gives
        // its ticket back, as the pacer thread does for -max-workers: a
        // group's backlog went out after a closed stdout, 2 a second for
        // seconds (the fault matrix's Mix x Endless x ClosedStdout).
        let group = job.target.group.clone();
        let returned = ctx.returned.get().map(|r| &**r);
        let Ok(_slot) = group_slot(group.as_deref(), &ctx.stopper, returned).await else {
            return;
        };
        // Sent here rather than through a function of its own, whose
        // future kept its own copy of the job (56 bytes a waiting request).
        let sent = Instant::now();
        let result = client.send(&job.target, job.seq).await;
        let done = answered(job.target, job.seq, job.scheduled, ctx.clock, sent, result);
        drop(job.slot);
        deliver(&ctx.tx, done);
    }
}
