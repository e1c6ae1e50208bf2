//! The one scheduler loop ([`drive`]): every mode of an attack takes its
//! requests from [`Tickets`] (sequence number, target, due time), waits as
//! its [`Take`] says, and hands each request to a [`Hand`] that sends it.
//!
//! | mode | runs on | take | hand |
//! |---|---|---|---|
//! | closed model (`-rate 0`) | each of `-max-workers` loops on the worker threads | the next ticket, at once | [`crate::hands::Inline`]: send and wait for the answer (`-pipeline N`: N at a time) |
//! | open model up to one request per tick | each worker thread | the next ticket, then sleep until it is due | [`crate::hands::Spawn`]: a task of its own on this thread |
//! | open model above that | each worker thread | every ticket due by this thread's tick, then sleep to its next tick | [`crate::hands::Spawn`] |
//! | `-lazy`, or `-max-workers` on tokio's threads | the pacer thread | the next ticket, then sleep until it is due | [`crate::hands::Dispatch`]: a `-max-workers` slot, then batches to the least busy worker thread (or the next `-io ring` thread) |
//!
//! `-io ring`'s threads run the same loops (`crate::ring`): its own hands,
//! its clock on the ring's timerfd, `-max-workers` a slot taken as a
//! request comes due.
//!
//! Stopping is the tickets' (no ticket is issued after a stop; one due
//! after the stop's cut-off is given back), so it is made in one place.

use std::{future::Future, sync::Arc};

use barrage_client::PreparedTarget;

use crate::{
    clock::MAX_BATCH,
    tickets::{Next, Tickets},
    Due,
};

/// How a loop takes its tickets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Take {
    /// The next ticket as soon as the last is handed over (the closed
    /// model).
    Now,
    /// The next ticket, then a sleep until it is due.
    Due,
    /// Every ticket due by now, then a sleep until this loop's next tick.
    Ticks,
}

/// How a loop waits: the clock it reads and sleeps on. Its futures need
/// not be `Send`: `-io ring`'s live on one thread (tokio's loops are
/// `Send` through their concrete types).
pub(crate) trait Waits {
    /// Nanoseconds since the schedule's start.
    fn now(&self) -> u64;
    /// Sleeps until `offset` (ns since the start; a real clock keeps wake-ups
    /// a tick apart) or the stop.
    fn until(&mut self, offset: u64) -> impl Future<Output = ()>;
    /// Sleeps until this loop's first tick at or after `offset`, or the
    /// stop.
    fn tick_after(&mut self, offset: u64) -> impl Future<Output = ()>;
    /// Sleeps [`PAUSED_LOOK`] while the schedule is paused (`-control`):
    /// on tokio's timer, where the closed model's clock does not sleep;
    /// `-io ring`'s threads have no tokio timer.
    fn look_later(&mut self) -> impl Future<Output = ()> {
        tokio::time::sleep(std::time::Duration::from_nanos(PAUSED_LOOK))
    }
}

/// Where a due request goes.
pub(crate) trait Hand {
    /// Sends (or queues) request `seq` for `target`, due at `offset` ns
    /// after the start (`None`: now, the closed model). False when it was
    /// not sent (the stop came while it waited for a slot): the ticket is
    /// then given back.
    fn send(
        &mut self,
        seq: u64,
        target: Arc<PreparedTarget>,
        offset: Option<u64>,
    ) -> impl Future<Output = bool>;
    /// Sends what is queued: before the loop sleeps, and at its end.
    fn flush(&mut self) -> impl Future<Output = ()>;
}

/// The scheduler loop: takes every ticket it can from `tickets`, waits as
/// `take` says on `waits`, and hands each to `hand`, until the tickets end
/// (the schedule is over, the targets ran out, or the attack stopped).
/// (An async block: an async fn keeps its arguments twice, and every
/// loop of the attack holds this future.)
#[allow(clippy::manual_async_fn)]
pub(crate) fn drive<'a, W: Waits, H: Hand>(
    tickets: &'a Tickets,
    take: Take,
    waits: &'a mut W,
    hand: &'a mut H,
) -> impl std::future::Future<Output = ()> + 'a {
    async move {
        // Ticks: tickets due by this horizon are taken before the next sleep.
        let mut horizon = waits.now();
        // Ticks: tickets taken since the loop last let its runtime read answers.
        let mut taken = 0usize;
        // -control: a change wakes a loop asleep on the line it replaced.
        let mut changes = tickets.changes();
        loop {
            if let Some(c) = &mut changes {
                // Seen (an atomic read): a change after this wakes the sleep
                // below.
                c.mark_unchanged();
            }
            let (seq, target, offset) = match take {
                Take::Now | Take::Due => {
                    let Some(ticket) = tickets.take() else {
                        break;
                    };
                    let Ok((seq, target, due)) = ticket else {
                        hand.flush().await;
                        changed(&mut changes, waits, u64::MAX).await;
                        continue;
                    };
                    if take == Take::Due {
                        let offset = match due {
                            Due::At(offset) => offset,
                            Due::Now | Due::Stop | Due::Paused => waits.now(),
                        };
                        if offset > waits.now() {
                            hand.flush().await;
                            // Sleeps boxed (one allocation per sleep, not per
                            // request at high rates): a loop's future is held
                            // for the whole attack, and the closed model's
                            // 18,000 loops, which never sleep, would each carry
                            // room for it.
                            Box::pin(waits.until(offset)).await;
                        }
                        if !tickets.goes_out(offset) {
                            continue;
                        }
                        (seq, target, Some(offset))
                    } else {
                        (seq, target, None)
                    }
                }
                Take::Ticks => {
                    if taken == MAX_BATCH {
                        // A loop catching up after a long stall lets the
                        // answers already in be read between batches.
                        taken = 0;
                        hand.flush().await;
                        tokio::task::yield_now().await;
                        horizon = waits.now();
                    }
                    match tickets.take_due_by(horizon) {
                        None => break,
                        Some(Next::Later(offset)) => {
                            taken = 0;
                            hand.flush().await;
                            match &mut changes {
                                None => Box::pin(waits.tick_after(offset)).await,
                                Some(_) => changed(&mut changes, waits, offset).await,
                            }
                            horizon = waits.now();
                            continue;
                        }
                        Some(Next::Paused) => {
                            taken = 0;
                            hand.flush().await;
                            changed(&mut changes, waits, u64::MAX).await;
                            horizon = waits.now();
                            continue;
                        }
                        Some(Next::Take(seq, target, offset)) => {
                            taken += 1;
                            if !tickets.goes_out(offset) {
                                continue;
                            }
                            (seq, target, Some(offset))
                        }
                    }
                }
            };
            if !hand.send(seq, target, offset).await {
                tickets.give_back();
                if !tickets.is_stopped() {
                    // Not a stop: the end of -duration came (and its grace)
                    // while this ticket waited for a slot.
                    tickets.expire(1);
                }
                break;
            }
        }
        hand.flush().await;
    }
}

/// Sleeps until this loop's tick after `offset` (`u64::MAX`: paused, for
/// [`PAUSED_LOOK`], so that a stop is seen) or a live control change,
/// whichever comes first.
async fn changed<W: Waits>(
    changes: &mut Option<tokio::sync::watch::Receiver<u64>>,
    waits: &mut W,
    offset: u64,
) {
    let Some(c) = changes else {
        return Box::pin(waits.tick_after(offset)).await;
    };
    if offset == u64::MAX {
        let look = Box::pin(waits.look_later());
        tokio::select! {
            _ = c.changed() => {}
            () = look => {}
        }
    } else {
        tokio::select! {
            _ = c.changed() => {}
            () = Box::pin(waits.tick_after(offset)) => {}
        }
    }
}

/// How often a paused loop looks again without a change, ns.
pub(crate) const PAUSED_LOOK: u64 = 50_000_000;

#[cfg(test)]
mod tests;
