//! `-io ring`: worker threads on monoio, each parking in `io_uring_enter`
//! with its own ring ([`RingWorkers`]), running the same scheduler loop
//! ([`crate::scheduler::drive`]) over the same tickets as tokio's workers,
//! with the clock's tick in the ring ([`RingClock`]: a timerfd read) and
//! each request sent by one of the thread's workers, tasks that live as
//! long as requests keep coming ([`RingSpawn`]), or by the loop itself
//! ([`RingInline`]), its record handed to the same writer.
//!
//! Loops are made on their thread from a `Send` recipe ([`Recipe`]), as
//! monoio's tasks are not `Send`; a stop or an abandon reaches a thread
//! through tokio's runtime-agnostic channels (monoio's `sync` feature
//! wakes a parked ring from another thread).

use std::{
    future::Future,
    pin::Pin,
    rc::Rc,
    thread::{self, JoinHandle},
};

use barrage_client::{ClientConfig, RingClient};
use tokio::sync::{mpsc, oneshot, Semaphore};

use std::sync::Arc;

use first::first_of;

use crate::{
    clock::Scheduled,
    hands::Lanes,
    scheduler::{drive, Take},
    tickets::Tickets,
    writer::RequestContext,
    AttackError, Stopper,
};

mod clock;
mod first;
mod hands;
pub(crate) use clock::{RingClock, RingUnpaced};
pub(crate) use hands::{RingInline, RingSpawn};

/// Submission entries per thread's ring.
const ENTRIES: u32 = 4096;

/// A loop as its thread makes it: given the thread's client, its future.
pub(crate) type Recipe =
    Box<dyn FnOnce(Rc<RingClient>) -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// One loop for a thread, and who is told when it ends.
type Job = (Recipe, oneshot::Sender<()>);

struct Lane {
    jobs: mpsc::UnboundedSender<Job>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// The `-io ring` worker threads of an attack (`-cpus`).
pub(crate) struct RingWorkers {
    lanes: Vec<Lane>,
}

impl RingWorkers {
    /// Whether a ring runtime can be had here (a probe: a runtime built and
    /// dropped on a thread of its own).
    pub(crate) fn available() -> Result<(), std::io::Error> {
        thread::spawn(|| build().map(drop))
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the ring probe panicked")))
    }

    /// Starts `n` threads (at least one), each with its ring and client;
    /// with `paced`, threads that wake for the clock.
    pub(crate) fn start(
        n: usize,
        cfg: &ClientConfig,
        paced: bool,
        stopper: &Stopper,
    ) -> Result<Self, AttackError> {
        let mut lanes = Vec::with_capacity(n.max(1));
        // The certificates read once for all threads.
        let tls = barrage_client::RingTls::new(cfg)?;
        for i in 0..n.max(1) {
            let (jobs, mut todo) = mpsc::unbounded_channel::<Job>();
            let (stop, stopped) = oneshot::channel::<()>();
            let (cfg, stopper, tls) = (cfg.clone(), stopper.clone(), tls.clone());
            let thread = thread::Builder::new()
                .name(format!("barrage-ring-{i}"))
                .spawn(move || {
                    if paced {
                        crate::timeslice::prefer_short_slices();
                    }
                    crate::writer::batch_on_this_thread();
                    let Ok(mut rt) = build() else { return };
                    rt.block_on(async move {
                        let client = Rc::new(RingClient::new(&cfg, tls.as_ref()));
                        let work = async {
                            while let Some((recipe, done)) = todo.recv().await {
                                let job = recipe(client.clone());
                                monoio::spawn(async move {
                                    job.await;
                                    crate::writer::hand_over();
                                    let _ = done.send(());
                                });
                            }
                            // No more loops: wait for the stop.
                            std::future::pending::<()>().await
                        };
                        let abandoned = stopper.abandoned();
                        first_of(first_of(work, stopped), abandoned).await;
                        // Requests still waiting keep no hold on the
                        // writer's queue (monoio drops no task).
                        hands::abandon().await;
                    });
                })
                .map_err(AttackError::Start)?;
            lanes.push(Lane {
                jobs,
                stop: Some(stop),
                thread: Some(thread),
            });
        }
        Ok(RingWorkers { lanes })
    }

    /// How many threads there are.
    pub(crate) fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Runs `recipe` on thread `lane % len`; the receiver ends with it.
    pub(crate) fn run(&self, lane: usize, recipe: Recipe) -> oneshot::Receiver<()> {
        let (done, ended) = oneshot::channel();
        let _ = self.lanes[lane % self.lanes.len()]
            .jobs
            .send((recipe, done));
        ended
    }

    /// Opens `conns` connections to each of `uris`' hosts ahead of the
    /// attack, spread over the threads: the future ends when all are open
    /// (or failed), or after `most`.
    pub(crate) fn warm(
        &self,
        uris: &[http::Uri],
        conns: usize,
        most: std::time::Duration,
    ) -> impl Future<Output = ()> {
        let n = self.lanes.len();
        let opened: Vec<_> = (0..n)
            .map(|i| {
                let share = conns / n + usize::from(i < conns % n);
                let uris = uris.to_vec();
                self.run(
                    i,
                    Box::new(move |client: Rc<RingClient>| {
                        Box::pin(async move {
                            for uri in &uris {
                                client.warm(uri, share).await;
                            }
                        })
                    }),
                )
            })
            .collect();
        async move {
            let all = async {
                for o in opened {
                    let _ = o.await;
                }
            };
            let _ = tokio::time::timeout(most, all).await;
        }
    }

    /// Stops every thread (its requests still in flight are dropped) and
    /// waits for it.
    pub(crate) fn shutdown(&mut self) {
        for lane in &mut self.lanes {
            if let Some(stop) = lane.stop.take() {
                let _ = stop.send(());
            }
        }
        for lane in &mut self.lanes {
            if let Some(t) = lane.thread.take() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for RingWorkers {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A thread's runtime: an io_uring driver (the thread parks in
/// `io_uring_enter`), monoio's timer (`-timeout`'s deadlines sleep on it).
fn build() -> std::io::Result<monoio::Runtime<monoio::time::TimeDriver<monoio::IoUringDriver>>> {
    let with = |flags: fn(&mut io_uring_monoio::Builder)| {
        let mut b = io_uring_monoio::IoUring::builder();
        flags(&mut b);
        monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
            .with_entries(ENTRIES)
            .uring_builder(b)
            .enable_timer()
            .build()
    };
    // Completions' work (a receive retried once its data came) runs when
    // the thread enters the ring, not at once on its own: run at once, it
    // took the socket's lock while the server's side of loopback held it
    // (11% of the thread's time spinning at 20,000/s). Kernels before 6.1
    // lack it: cooperative task work, then none.
    let asked = std::env::var("BARRAGE_RING_TASKRUN").unwrap_or_default();
    let defer = || {
        with(|b| {
            b.setup_single_issuer().setup_defer_taskrun();
        })
    };
    let coop = || {
        with(|b| {
            b.setup_coop_taskrun();
        })
    };
    match asked.as_str() {
        "coop" => coop(),
        "none" => with(|_| {}),
        _ => defer(),
    }
    .or_else(|_| coop())
    .or_else(|_| with(|_| {}))
}

/// Where the pacer thread's batches go on ring threads (`-lazy`): each
/// batch to the next thread, each request (with its `-max-workers` slot,
/// if any) to that thread's workers ([`hands::fly`]).
pub(crate) fn lanes<'a>(ring: &'a RingWorkers, ctx: &Arc<RequestContext>) -> Lanes<'a> {
    let (ctx, mut next) = (ctx.clone(), 0usize);
    Lanes::Other(Box::new(move |jobs: Vec<Scheduled>| {
        next = next.wrapping_add(1);
        let ctx = ctx.clone();
        let recipe: Recipe = Box::new(move |client: Rc<RingClient>| {
            Box::pin(async move {
                let clock = ctx.clock;
                hands::adopt(ctx);
                // No loop of its own here hands records over.
                hands::hand_over_on_deadline();
                for job in jobs {
                    hands::fly(&client, clock, job);
                }
            })
        });
        drop(ring.run(next, recipe));
    }))
}

/// Waits until no ring thread has a request in flight (the pacer
/// thread's, [`dispatch`]ed), their records handed over.
pub(crate) async fn drained(ring: &RingWorkers) {
    let ends: Vec<_> = (0..ring.len())
        .map(|i| ring.run(i, Box::new(|_| Box::pin(hands::drain()))))
        .collect();
    for e in ends {
        let _ = e.await;
    }
}

/// Runs `n` loops over `tickets` on the ring threads, in turn: the open
/// model's (`peak`: its highest rate a second; one loop a thread, taking
/// turns by tick above one request a tick; `slots`: `-max-workers`) or
/// the closed model's; the future ends with the last of them.
pub(crate) fn run_loops(
    ring: &RingWorkers,
    n: usize,
    (peak, slots): (Option<f64>, Option<Arc<Semaphore>>),
    ctx: &Arc<RequestContext>,
    tickets: &Arc<Tickets>,
    stopper: &Stopper,
) -> impl Future<Output = ()> {
    let lanes = ring.len() as u64;
    let paced = peak.is_some();
    let sparse = peak.is_some_and(|p| p <= 1.0 / crate::clock::TICK.as_secs_f64());
    let ended: Vec<_> = (0..n)
        .map(|i| {
            let (ctx, tickets, stopper) = (ctx.clone(), tickets.clone(), stopper.clone());
            if !paced {
                // A recipe of its own: a closed loop's future is held for
                // the whole attack by each of up to 18,000 loops, and one
                // future for both models is as large as the larger.
                // Its loop made before its future, which then holds only
                // what it uses (1,296 -> 1,272 bytes, under the allocator's
                // 1,280 class).
                let recipe: Recipe = Box::new(move |client: Rc<RingClient>| {
                    let (clock, start) = (ctx.clock, ctx.clock.start);
                    hands::adopt(ctx);
                    let mut waits = RingUnpaced { start, stopper };
                    let mut hand = RingInline::new(client, clock);
                    Box::pin(async move { drive(&tickets, Take::Now, &mut waits, &mut hand).await })
                });
                return ring.run(i, recipe);
            }
            let slots = slots.clone();
            let recipe: Recipe = Box::new(move |client: Rc<RingClient>| {
                Box::pin(async move {
                    let (clock, start) = (ctx.clock, ctx.clock.start);
                    hands::adopt(ctx);
                    let mut hand = RingSpawn::new(client, clock, slots, stopper.clone());
                    if sparse {
                        let mut waits = RingClock::new(start, stopper);
                        drive(&tickets, Take::Due, &mut waits, &mut hand).await;
                    } else {
                        let mut waits = RingClock::ticking(start, stopper, i as u64 % lanes, lanes);
                        drive(&tickets, Take::Ticks, &mut waits, &mut hand).await;
                    }
                    hand.drain().await;
                })
            });
            ring.run(i, recipe)
        })
        .collect();
    async move {
        for e in ended {
            let _ = e.await;
        }
    }
}
