//! What the worker threads run: the open model's lanes, which keep the
//! schedule on the worker threads themselves ([`keep_time`] up to one
//! request per tick, [`keep_ticks`] above), and the closed model's
//! pipelined loop ([`pipelined`]); each request goes out through
//! [`send`].

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use barrage_client::{Client, LoopState, PreparedTarget};

use crate::{
    alarm::Alarm,
    attack::{Scheduled, MAX_BATCH, TICK},
    tickets::{Next, Tickets},
    writer::{deliver, record, RequestContext},
    Due, Stopper,
};

/// One worker thread's share of the open model: take a ticket, sleep until
/// it is due (at least [`TICK`] after the last wake-up, so that a thread
/// catching up sends what fell due meanwhile together), send it on its own
/// task, repeat.
pub(crate) async fn keep_time(
    client: Arc<Client>,
    ctx: Arc<RequestContext>,
    tickets: Arc<Tickets>,
    stopper: Stopper,
) {
    let alarm = Alarm::new();
    let start = ctx.clock.start;
    let mut last_wake = Instant::now();
    while let Some((seq, target, due)) = tickets.take() {
        let offset = match due {
            Due::At(offset) => offset,
            Due::Now | Due::Stop => start.elapsed().as_nanos() as u64,
        };
        let at = start + Duration::from_nanos(offset);
        if at > Instant::now() {
            let wake = at.max(last_wake + TICK);
            tokio::select! {
                biased;
                _ = stopper.stopped() => {}
                _ = alarm.sleep_until(wake) => {}
            }
            last_wake = wake;
        }
        if tickets.goes_out(offset) {
            spawn_ticket(&client, &ctx, seq, target, offset);
        }
    }
}

/// Sends a worker thread's ticket, due at `offset` (ns from the start), on
/// its own task.
fn spawn_ticket(
    client: &Arc<Client>,
    ctx: &Arc<RequestContext>,
    seq: u64,
    target: Arc<PreparedTarget>,
    offset: u64,
) {
    let job = Scheduled {
        target,
        seq,
        scheduled: ctx.clock.start_unix + offset as i64,
        slot: None,
    };
    // Boxed: tokio moves a task's future by value into and out of its cell
    // (spawn, done, dropped), and `run`'s is 432 bytes: 3 copies of it per
    // request were 2-3% of the open model's instructions (callgrind at
    // 500/s: ~25.8k -> ~25.3k per request).
    tokio::spawn(Box::pin(send(client.clone(), ctx.clone(), job)));
}

/// One worker thread's share of the open model above one request per
/// [`TICK`]. The schedule is cut into ticks (`start + j × TICK`); of
/// `lanes` worker threads, thread `lane` owns the ticks with
/// `j % lanes == lane` and wakes at each (at these rates every tick has a
/// request due), on a timer armed once that repeats every `lanes` ticks.
/// Awake, it sends every ticket due by then, including any that another
/// thread left behind. Between them the threads wake once per tick, and no
/// thread wakes another: the pacer thread's wake-up and its hand-over
/// cost more (20,000/s against nginx, 4 alternating runs: 21.7-23.6 ->
/// 18.5-20.6 µs of CPU per request; 5,000/s: 42.9-54.9 -> 36.9-46.7 µs;
/// lag p99 unchanged at ~0.3 ms). Re-arming the timer for each wake-up
/// instead cost as much as the pacer thread.
pub(crate) async fn keep_ticks(
    client: Arc<Client>,
    ctx: Arc<RequestContext>,
    tickets: Arc<Tickets>,
    stopper: Stopper,
    lane: u64,
    lanes: u64,
) {
    let alarm = Alarm::new();
    let start = ctx.clock.start;
    let lanes = lanes.max(1);
    // This thread's first tick at or after `offset` (ns from the start).
    let own_tick = |offset: u64| {
        let tick = TICK.as_nanos() as u64;
        let j = offset.div_ceil(tick);
        let j = j + (lane + lanes - j % lanes) % lanes;
        start + Duration::from_nanos(j.saturating_mul(tick))
    };
    let every = TICK.saturating_mul(lanes.try_into().unwrap_or(u32::MAX));
    let repeating = alarm.repeat(own_tick(start.elapsed().as_nanos() as u64), every);
    loop {
        let now = start.elapsed().as_nanos() as u64;
        let mut taken = 0;
        let next = loop {
            // A thread catching up after a long stall lets the answers
            // already in be read between batches.
            if taken == MAX_BATCH {
                break None;
            }
            match tickets.take_due_by(now) {
                None => return,
                Some(Next::Later(offset)) => break Some(offset),
                Some(Next::Take(seq, target, offset)) => {
                    taken += 1;
                    if tickets.goes_out(offset) {
                        spawn_ticket(&client, &ctx, seq, target, offset);
                    }
                }
            }
        };
        let Some(next) = next else {
            tokio::task::yield_now().await;
            continue;
        };
        tokio::select! {
            biased;
            _ = stopper.stopped() => {}
            _ = alarm.expiry(), if repeating => {}
            _ = alarm.sleep_until(own_tick(next)), if !repeating => {}
        }
    }
}

/// One scheduled request, from send to its record in the writer's queue.
pub(crate) async fn send(client: Arc<Client>, ctx: Arc<RequestContext>, job: Scheduled) {
    let done =
        crate::writer::request(&client, job.target, job.seq, job.scheduled, ctx.clock, None).await;
    drop(job.slot);
    deliver(&ctx.tx, done);
}

/// A closed-model loop with `-pipeline N`: takes up to N tickets (to one
/// host), writes them at once on its connection, and records each answer
/// as it arrives; then the next batch (wrk's pipelining, as its Lua
/// scripts do it).
pub(crate) async fn pipelined(
    client: &Client,
    ctx: &RequestContext,
    tickets: &Tickets,
    serial: &mut LoopState,
) {
    let n = client.pipeline();
    let mut batch: Vec<(Arc<PreparedTarget>, u64)> = Vec::with_capacity(n);
    loop {
        batch.clear();
        while batch.len() < n {
            match tickets.take() {
                Some((seq, target, _)) => batch.push((target, seq)),
                None => break,
            }
        }
        if batch.is_empty() {
            return;
        }
        let sent = Instant::now();
        let scheduled = ctx.clock.unix(sent);
        let answers = client.send_pipelined(&batch, serial).await;
        for ((target, seq), piped) in batch.drain(..).zip(answers) {
            let latency = piped.done.saturating_duration_since(sent).as_nanos() as u64;
            let done = record(
                target,
                seq,
                scheduled,
                ctx.clock.unix(sent),
                sent,
                latency,
                piped.result,
            );
            deliver(&ctx.tx, done);
        }
    }
}
