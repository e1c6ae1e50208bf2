//! `-hold`'s run ([`crate::Attack::run_hold`]): the opens on the one
//! schedule, each held by a [`crate::hold::Holding`].

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use barrage_client::PreparedTarget;

use crate::{
    outcome::{AttackError, AttackReport, StopReason},
    AttackConfig, Due, HitSink, Stopper,
};

impl crate::Attack {
    /// `-hold`: opens `hold.connections` WebSocket connections to
    /// `targets` (in turn) at the attack's rate and holds them until its
    /// duration ends or it is stopped; see [`Hold`](crate::Hold).
    pub fn run_hold(
        mut self,
        targets: Vec<Arc<PreparedTarget>>,
        hold: crate::Hold,
        sink: Box<dyn HitSink>,
        stopper: Stopper,
    ) -> Result<AttackReport, AttackError> {
        let (tx, writer) = self.spawn_writer(sink, &stopper)?;
        let Some(ctx) = self.wait_for_start(tx, &writer, &stopper, None) else {
            return Ok(self.finish(writer, 0, StopReason::Stopped, None));
        };
        let clock = ctx.clock;
        let seqs = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counts = self.watch.1.clone();
        let end = self.config.duration.map(|d| clock.start + d);
        // The one schedule of every attack: the k-th open of this process
        // is due when the k-th request would be, so -stages ramps the opens
        // and -shard i/n opens connections i, i + n, … of the -hold N that
        // all shards hold together.
        let pacer = AttackConfig {
            requests: Some(hold.connections),
            ..self.config.clone()
        }
        .pacer(self.config.rate, self.config.stages.clone(), 0);
        let lanes = self.workers.len() as u64;
        let targets = Arc::new(targets);
        self.run_loops(&stopper, lanes as usize, |lane, client| {
            let (ctx, seqs, stopper, targets, counts, pacer) = (
                ctx.clone(),
                seqs.clone(),
                stopper.clone(),
                targets.clone(),
                counts.clone(),
                pacer.clone(),
            );
            async move {
                let mut held = Vec::new();
                for k in (lane..).step_by(lanes.max(1) as usize) {
                    let elapsed = clock.start.elapsed().as_nanos() as u64;
                    let due = match pacer.due(k, elapsed) {
                        Due::At(at) => clock.start + Duration::from_nanos(at),
                        Due::Now => Instant::now(),
                        Due::Stop | Due::Paused => break,
                    };
                    // An open due at the end would be held for nothing.
                    if end.is_some_and(|e| due >= e) {
                        break;
                    }
                    tokio::select! {
                        biased;
                        () = stopper.stopped() => break,
                        () = tokio::time::sleep_until(due.into()) => {}
                    }
                    let i = pacer.global(k);
                    let holding = crate::hold::Holding {
                        client: client.clone(),
                        target: targets[(i % targets.len() as u64) as usize].clone(),
                        ctx: ctx.clone(),
                        seqs: seqs.clone(),
                        counts: counts.clone(),
                        every: hold.every,
                        end,
                        stopper: stopper.clone(),
                    };
                    held.push(tokio::spawn(holding.run(due)));
                }
                for h in held {
                    let _ = h.await;
                }
            }
        });
        drop(ctx);
        // Records owed: opens and messages started (a record is numbered
        // when it ends) and the server's closes, so that a second Ctrl-C
        // counts the opens and messages it abandons.
        let sent = self
            .watch
            .1
            .sent
            .load(std::sync::atomic::Ordering::SeqCst)
            .max(seqs.load(std::sync::atomic::Ordering::SeqCst));
        let reason = if stopper.is_stopped() {
            StopReason::Stopped
        } else {
            StopReason::Done
        };
        Ok(self.finish(writer, sent, reason, None))
    }
}
