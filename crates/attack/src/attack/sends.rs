//! How an attack's requests go out once its tickets are made: the pacer
//! thread (`-lazy`, and `-max-workers` on tokio's threads), ring's
//! threads' loops, the closed model's loops, or the worker threads keeping
//! the schedule themselves.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::{until_abandoned, Attack, MAX_CLOSED_WORKERS};
use crate::{
    clock::TICK,
    hands::{Clockwork, Dispatch, Inline, Lanes, Spawn, Unpaced},
    outcome::AttackError,
    ring::RingWorkers,
    scheduler::{drive, Take},
    tickets::Tickets,
    writer::RequestContext,
    Stopper,
};

impl Attack {
    /// Sends every ticket's request, in the way the attack's model and
    /// flags call for (`ring`: `-io ring`'s threads; `slots`:
    /// `-max-workers` with a rate; `peak`: the schedule's highest rate a
    /// second, `None` in the closed model); returns when all are sent and
    /// answered, or the attack was stopped or abandoned.
    pub(super) fn send_all(
        &mut self,
        tickets: &Arc<Tickets>,
        ctx: &Arc<RequestContext>,
        ring: Option<RingWorkers>,
        slots: Option<Arc<Semaphore>>,
        peak: Option<f64>,
        stopper: &Stopper,
    ) -> Result<(), AttackError> {
        let paced = peak.is_some();
        let peak = peak.unwrap_or(0.0);
        // -lazy (reading a target may block, and a worker thread must
        // not) or, on tokio's threads, -max-workers (a ticket would hold
        // its slot while it sleeps): this thread is the pacer. The writer
        // keeps the default slice: it is not woken by the clock; in the
        // other models this thread only waits.
        if paced && (!tickets.is_fixed() || (ring.is_none() && slots.is_some())) {
            crate::timeslice::prefer_short_slices();
            crate::timeslice::precise_timers();
            let lanes = match &ring {
                Some(r) => crate::ring::lanes(r, ctx),
                None => Lanes::Tokio(&mut self.workers),
            };
            let mut hand = Dispatch {
                lanes,
                ctx: ctx.clone(),
                slots,
                stopper: stopper.clone(),
                batch: Vec::new(),
            };
            self.local.block_on(until_abandoned(stopper, async {
                let mut waits = Clockwork::new(ctx.clock.start, stopper.clone());
                drive(tickets, Take::Due, &mut waits, &mut hand).await;
                if let Some(r) = &ring {
                    crate::ring::drained(r).await;
                }
            }));
            // Ring threads let the writer's queue go as they end.
            drop(hand);
            drop(ring);
        } else if let Some(ring) = ring {
            // The open model: a loop a thread; the closed: -max-workers.
            let closed = self
                .config
                .max_workers
                .unwrap_or(1)
                .clamp(1, MAX_CLOSED_WORKERS);
            let loops = if paced { ring.len() } else { closed as usize };
            let run = crate::ring::run_loops(
                &ring,
                loops,
                (paced.then_some(peak), slots.filter(|_| paced)),
                ctx,
                tickets,
                stopper,
            );
            self.local.block_on(until_abandoned(stopper, run));
        } else if !paced {
            // The closed model: -max-workers loops spread over the worker
            // threads, each sending its next request when the last is done.
            let loops = self
                .config
                .max_workers
                .unwrap_or(1)
                .clamp(1, MAX_CLOSED_WORKERS);
            self.run_loops(stopper, loops as usize, |_, client| {
                let (ctx, tickets) = (ctx.clone(), tickets.clone());
                async move {
                    let mut waits = Unpaced(ctx.clock.start);
                    let mut hand = Inline::new(client, ctx);
                    drive(&tickets, Take::Now, &mut waits, &mut hand).await
                }
            });
        } else {
            // The open model with fixed targets and no -max-workers: the
            // worker threads keep the schedule themselves. Up to one request
            // per TICK each takes the next ticket, sleeps on its own timer
            // until it is due and sends it: per request one wake-up for the
            // clock and one for the response on the same thread, where the
            // pacer thread cost a wake-up of its own and a cross-thread one
            // to hand the request over (at 2,000/s against nginx, CPU per
            // request 76-80 -> 57-67 µs, lag p99 0.12-0.13 -> 0.09-0.10 ms).
            // Above that, a ticket each would wake every thread for its own
            // (+17% CPU at 5,000/s, +40% at 10,000/s against the pacer);
            // instead they take turns by tick (20,000/s: 21.7-23.6 ->
            // 18.5-20.6 µs; 5,000/s: 42.9-54.9 -> 36.9-46.7 µs; lag p99 the
            // same). A ramp is kept as its highest rate needs.
            let sparse = peak <= 1.0 / TICK.as_secs_f64();
            let lanes = self.workers.len() as u64;
            self.run_loops(stopper, lanes as usize, |lane, client| {
                let (ctx, tickets, stopper) = (ctx.clone(), tickets.clone(), stopper.clone());
                async move {
                    let start = ctx.clock.start;
                    let mut hand = Spawn { client, ctx };
                    if sparse {
                        let mut waits = Clockwork::new(start, stopper);
                        drive(&tickets, Take::Due, &mut waits, &mut hand).await
                    } else {
                        let mut waits = Clockwork::ticking(start, stopper, lane, lanes);
                        drive(&tickets, Take::Ticks, &mut waits, &mut hand).await
                    }
                }
            });
        }
        Ok(())
    }
}
