//! The attack: starts the worker threads, opens connections ahead, makes
//! the tickets, sends them (`attack/sends.rs`: the worker threads' lanes,
//! the closed model's loops, ring's threads, or the pacer thread for
//! `-lazy` and `-max-workers`) and sums up how it ended.

use std::{
    io,
    sync::{mpsc, Arc},
    thread,
    time::{Duration, Instant},
};

use tokio::{runtime::Runtime, sync::Semaphore};

use barrage_client::{Client, PreparedTarget};

use crate::{
    clock::Clock,
    outcome::{AttackError, AttackReport, StopReason},
    tickets::{since, Lane, Tickets},
    workers::Workers,
    writer::{Batch, RequestContext, WakeOnDrop, WriterThread},
    AttackConfig, HitSink, Stopper, Targets,
};
use barrage_client::ClientConfig;

mod sends;

/// Most distinct hosts whose connections are opened before the attack.
const WARM_HOSTS: usize = 16;

/// Requests per second above which connections are opened ahead.
const WARM_MIN_RATE: f64 = 1000.0;

/// Longest the attack waits for those connections before it starts.
const WARM_TIMEOUT: Duration = Duration::from_secs(1);
/// How long the warm-up waits for its first connection before it gives up
/// (a handshake that hangs would otherwise hold the start for
/// [`WARM_TIMEOUT`]).
const WARM_FIRST: Duration = Duration::from_millis(250);

/// Requests per second one worker thread is given in the open model
/// (`-cpus` not set): fewer threads than cores where the rate allows. Every
/// thread sleeps and wakes on its own, and at 20,000/s against nginx two
/// threads cost 7.3 µs of CPU a request where one costs 6.4 (context
/// switches 0.7 vs 0.4 a request; 3 runs each, 2,000/s: 30.9 vs 25.9 µs,
/// 10,000/s and 40,000/s: the same within 3%). At 60,000/s one thread
/// fell behind (lag p99 0.56 ms) where two did not; a thread at this rate
/// is busy ~20% of its time.
const RATE_PER_THREAD: f64 = 30_000.0;

/// How many worker threads an attack gets when `-cpus` is not set: in the
/// closed model one per core (each loop sends as fast as it can); in the
/// open model one per [`RATE_PER_THREAD`] of the peak rate, at most one
/// per core. Without keep-alive every request opens a connection (a
/// handshake's CPU, TLS's most of all), so then one per core as well.
fn auto_threads(config: &AttackConfig, client: &ClientConfig, cores: usize) -> usize {
    let pacer = config.pacer(config.rate, config.stages.clone(), 0);
    let paced = pacer.is_paced() || config.mix_peak.is_some() || config.recorded.is_some();
    if !paced || !client.keepalive {
        return cores;
    }
    let peak = config.mix_peak.unwrap_or_else(|| pacer.peak_per_second());
    let need = (peak / RATE_PER_THREAD).ceil();
    if need.is_finite() && need < cores as f64 {
        (need as usize).max(1)
    } else {
        cores
    }
}

/// Most closed-model worker loops (`-max-workers` with `-rate 0`).
const MAX_CLOSED_WORKERS: u64 = 1 << 20;

/// A configured attack, ready to run: runtime started, client built (so
/// TLS mistakes surface before any request).
pub struct Attack {
    pub(crate) config: AttackConfig,
    pub(crate) workers: Workers,
    /// Drives the pacer's waits for a worker slot (`-max-workers`).
    local: Runtime,
    pub(crate) watch: crate::watch::Watch,
    /// What the writer says of the run at its end.
    pub(crate) facts: crate::writer::Facts,
    /// Requests due before the end of `-duration` and never sent.
    pub(crate) dropped: u64,
    /// Live control, once asked for ([`Attack::control`]).
    pub(crate) control: Option<crate::Control>,
    /// `-event-filter`, to say when it matched nothing.
    event_filter: Option<String>,
    /// `-io ring`: its client's flags, threads and whether it is paced.
    ring: Option<(ClientConfig, usize, bool)>,
}

/// What an attack sent, for [`Attack::finish`]'s sum.
pub(crate) enum Sent {
    /// Its tickets taken.
    Tickets(u64),
    /// A flow's steps sent, read once the workers have stopped.
    Steps,
}

impl From<u64> for Sent {
    fn from(n: u64) -> Self {
        Sent::Tickets(n)
    }
}

impl Attack {
    /// Starts the worker threads (`-cpus`, by default as [`auto_threads`] says) and builds
    /// their clients.
    pub fn new(config: AttackConfig, client: ClientConfig) -> Result<Self, AttackError> {
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        let cpus = if config.cpus > 0 {
            config.cpus
        } else {
            auto_threads(&config, &client, cores)
        };
        // More threads than requests in flight would only split the pool.
        let cpus = config
            .max_workers
            .map_or(cpus, |w| cpus.min(w.max(1) as usize));
        // Each thread has its own pool; under a -max-connections cap one
        // thread's idle connections could starve another's requests.
        let cpus = if client.max_connections > 0 { 1 } else { cpus };
        // The closed model keeps no clock: its workers stay busy, and short
        // slices only cost them context switches (~3% of throughput).
        let paced = config.rate != barrage_model::Rate::Max
            || config.stages.is_some()
            || config.mix_peak.is_some()
            || config.recorded.is_some();
        // -io ring: its own threads, started with the run (they need its
        // stop); tokio's keep one thread for what the pacer hands them.
        let ring =
            (client.io == barrage_client::IoMode::Ring).then(|| (client.clone(), cpus, paced));
        let workers = Workers::start(if ring.is_some() { 1 } else { cpus }, &client, paced)?;
        let local = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Attack {
            config,
            workers,
            local,
            watch: Default::default(),
            facts: Default::default(),
            dropped: 0,
            control: None,
            ring,
            event_filter: client
                .stream
                .as_ref()
                .and_then(|s| s.filter.as_ref())
                .map(|f| f.0.clone()),
        })
    }

    /// Whether `-io ring` can run here: a ring runtime set up and dropped.
    pub fn ring_available() -> Result<(), io::Error> {
        crate::ring::RingWorkers::available()
    }

    /// Live control of this attack's schedule (`-control`): orders change
    /// it from the first request not yet taken, each leaving a marker in
    /// the stream. Not for `-hold`.
    pub fn control(&mut self) -> crate::Control {
        self.control.get_or_insert_with(Default::default).clone()
    }

    /// A handle on the count of requests sent, live while [`Attack::run`]
    /// runs.
    pub fn watch(&self) -> crate::watch::Watch {
        self.watch.clone()
    }

    /// Runs the attack to its end on this thread (the pacer), with the sink
    /// on a writer thread. Every scheduled request reaches the sink.
    pub fn run(
        mut self,
        targets: Targets,
        sink: Box<dyn HitSink>,
        stopper: Stopper,
    ) -> Result<AttackReport, AttackError> {
        let (tx, writer) = self.spawn_writer(sink, &stopper)?;
        let mut pacer = self
            .config
            .pacer(self.config.rate, self.config.stages.clone(), 0);
        if let (Some(speed), Targets::Fixed(all)) = (self.config.recorded, &targets) {
            let offsets: Vec<u64> = all.iter().map(|t| t.at.unwrap_or(0)).collect();
            pacer = pacer.with_recording(&offsets, speed);
        }
        let slots = self.config.max_workers.map(|n| {
            Arc::new(Semaphore::new(
                n.clamp(1, Semaphore::MAX_PERMITS as u64) as usize
            ))
        });
        // Connections opened ahead only where opening them on demand
        // would make the first requests late: at a few hundred a second a
        // connect (~50 µs on loopback) fits between requests, and a server
        // that serves one connection at a time (Python's http.server,
        // embedded devices) waits on a connection opened ahead while the
        // request goes out on another (issue 15).
        let peak = self
            .config
            .mix_peak
            .unwrap_or_else(|| pacer.peak_per_second());
        let warm = pacer.is_paced() && peak > WARM_MIN_RATE;
        let ring = self.ring.take();
        let ring = ring.map(|(c, n, w)| crate::ring::RingWorkers::start(n, &c, w, &stopper));
        let ring = ring.transpose()?;
        match (&targets, warm) {
            (Targets::Fixed(all), true) => self.warm(all, ring.as_ref()),
            (Targets::Groups(groups), true) => {
                let all: Vec<_> = groups.iter().flat_map(|g| g.targets.clone()).collect();
                self.warm(&all, ring.as_ref())
            }
            _ => {}
        }
        // -start-at: nothing goes out before it (the connections are
        // already open).
        let flow = match &targets {
            Targets::Flow(plan) => Some(plan.clone()),
            _ => None,
        };
        let flowing = flow.is_some();
        let Some(ctx) = self.wait_for_start(tx, &writer, &stopper, flow) else {
            return Ok(self.finish(writer, 0, StopReason::Stopped, None));
        };
        let clock = ctx.clock;
        let now = since(clock.start);
        let paced = pacer.is_paced() || matches!(targets, Targets::Groups(_));
        let tickets = match targets {
            Targets::Fixed(all) => Tickets::fixed(all, pacer, now, stopper.clone()),
            Targets::Lazy(src) => Tickets::lazy(src, pacer, now, stopper.clone()),
            // A session's ticket carries its first step (the session runs
            // the rest: `crate::session`).
            Targets::Flow(plan) => {
                let first = plan
                    .steps
                    .iter()
                    .map(|s| s.prepared.clone())
                    .take(1)
                    .collect();
                Tickets::fixed(first, pacer, now, stopper.clone())
            }
            Targets::Groups(groups) => {
                let lanes = groups
                    .into_iter()
                    .enumerate()
                    .map(|(i, g)| {
                        Lane::new(g.targets, self.config.pacer(g.rate, g.stages, i as u64))
                    })
                    .collect();
                Tickets::lanes(lanes, now, stopper.clone())
            }
        };
        let tickets = Arc::new(match self.control {
            Some(_) => tickets.steered(),
            None => tickets,
        });
        if let Some(c) = &self.control {
            c.run(tickets.clone(), clock.start_unix);
        }
        if ctx.flow.is_none() {
            let _ = self.watch.0.set(tickets.clone());
        }
        let _ = ctx.returned.set(tickets.returns());
        let schedule = paced.then_some(peak);
        self.send_all(&tickets, &ctx, ring, slots, schedule, &stopper)?;
        let (dropped, exact) = tickets.dropped();
        if dropped > 0 {
            // Unique to this run (its start and shard), so that merged
            // streams keep each attacker's count.
            let value = format!(
                "{}{dropped} start={} shard={}",
                if exact { "" } else { "~" },
                ctx.clock.start_unix,
                self.config
                    .shard
                    .map_or("-".to_string(), |(i, n)| format!("{i}/{n}"))
            );
            self.facts
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(("dropped".into(), value));
            self.dropped = dropped;
        }
        drop(ctx);
        let (sent, reason, error) = tickets.finish();
        // A flow's tickets are sessions: what it sent is their requests,
        // counted once its workers have stopped (a session taken just
        // before the stop sends its first step after it).
        let sent = if flowing {
            Sent::Steps
        } else {
            Sent::Tickets(sent)
        };
        Ok(self.finish(writer, sent, reason, error))
    }

    /// Waits for `-start-at`, then the requests' shared context; `None`
    /// when the attack was stopped before its start (the queue is closed
    /// and the writer woken to end).
    pub(crate) fn wait_for_start(
        &self,
        tx: mpsc::SyncSender<Batch>,
        writer: &WriterThread,
        stopper: &Stopper,
        flow: Option<Arc<crate::FlowPlan>>,
    ) -> Option<Arc<RequestContext>> {
        let clock = Clock::new(self.config.start_at);
        if clock.start > Instant::now() && !stopper.sleep_until(clock.start) {
            drop(tx);
            writer.0.thread().unpark();
            return None;
        }
        Some(Arc::new(RequestContext {
            tx,
            clock,
            stopper: stopper.clone(),
            returned: std::sync::OnceLock::new(),
            steps: self.watch.2.clone(),
            flow,
            end: match &self.config.stages {
                Some(s) => Some(Duration::from_nanos(s.duration_ns())),
                None => self.config.duration,
            }
            .map(|d| clock.start + d),
            grace: self.config.grace,
            _writer: WakeOnDrop(writer.0.thread().clone()),
        }))
    }

    /// Opens `-workers` connections (capped by `-max-workers`) to each of
    /// the first hosts, spread over the worker threads, before the clock
    /// starts: otherwise the first milliseconds of a fast attack open them
    /// all at once and go out late. Bounded by [`WARM_TIMEOUT`]. With
    /// `-io ring`, on its threads.
    fn warm(&mut self, targets: &[Arc<PreparedTarget>], ring: Option<&crate::ring::RingWorkers>) {
        let conns = self
            .config
            .workers
            .min(self.config.max_workers.unwrap_or(u64::MAX)) as usize;
        let uris = hosts(targets, WARM_HOSTS);
        if let Some(r) = ring {
            return self.local.block_on(r.warm(&uris, conns, WARM_TIMEOUT));
        }
        let (tx, mut opened) = tokio::sync::mpsc::unbounded_channel();
        let mut left = 0usize;
        for _ in 0..conns {
            let (handle, client) = self.workers.next();
            for uri in &uris {
                let (client, uri, tx) = (client.clone(), uri.clone(), tx.clone());
                left += 1;
                handle.spawn(async move { tx.send(client.warm(&uri).await) });
            }
        }
        drop(tx);
        // A warm-up only helps a target that answers: stop at the first
        // failure, or when no connection is up after WARM_FIRST (a
        // handshake that hangs), instead of holding the start for
        // WARM_TIMEOUT (issue 22). Connections still opening finish in
        // the background.
        let start = tokio::time::Instant::now();
        self.local.block_on(async {
            let mut any = false;
            while left > 0 {
                let until = start + if any { WARM_TIMEOUT } else { WARM_FIRST };
                match tokio::time::timeout_at(until, opened.recv()).await {
                    Ok(Some(true)) => any = true,
                    _ => return,
                }
                left -= 1;
            }
        });
    }

    /// Waits for the writer (it ends when the last in-flight request has
    /// delivered its hit), stops the workers and sums up. On
    /// [`Stopper::abandon`] the worker runtimes are dropped first, and with
    /// them the requests in flight and their hold on the writer's queue:
    /// the writer then writes what had finished and ends.
    pub(crate) fn finish(
        &mut self,
        (writer, ended, stopper): WriterThread,
        sent: impl Into<Sent>,
        mut reason: StopReason,
        target_error: Option<crate::SourceError>,
    ) -> AttackReport {
        loop {
            if stopper.is_abandoned() {
                self.workers.shutdown();
                reason = StopReason::Abandoned;
                break;
            }
            match ended.recv_timeout(ABANDON_POLL) {
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                _ => break,
            }
        }
        let (written, events, output_error) =
            writer
                .join()
                .unwrap_or((0, 0, Some(io::Error::other("writer thread failed"))));
        self.workers.shutdown();
        let scheduled = match sent.into() {
            Sent::Tickets(n) => n,
            Sent::Steps => self.watch.2.load(std::sync::atomic::Ordering::SeqCst),
        };
        let reason = match reason {
            _ if output_error.is_some() => StopReason::OutputFailed,
            // -until's answer came, and no signal after it: the run's own end.
            StopReason::Stopped if stopper.is_met() && !stopper.is_signalled() => StopReason::Done,
            reason => reason,
        };
        AttackReport {
            scheduled,
            written,
            reason,
            output_error,
            target_error,
            dropped: self.dropped,
            unmatched: self
                .event_filter
                .clone()
                .filter(|_| written > 0 && events == 0),
        }
    }

    /// Runs `n` loops made by `make` (given their number and their
    /// thread's client), spread over the worker threads in turn, and waits
    /// for all of them (or for `stopper` to be abandoned).
    pub(crate) fn run_loops<F, L>(&mut self, stopper: &Stopper, n: usize, mut make: F)
    where
        F: FnMut(u64, Arc<Client>) -> L,
        L: std::future::Future<Output = ()> + Send + 'static,
    {
        let mut loops = Vec::with_capacity(n);
        for i in 0..n {
            let (handle, client) = self.workers.next();
            loops.push(handle.spawn(make(i as u64, client.clone())));
        }
        self.local.block_on(until_abandoned(stopper, async {
            for l in loops {
                let _ = l.await;
            }
        }));
    }
}

/// Runs `work` to its end, or until `stopper` is abandoned.
async fn until_abandoned(stopper: &Stopper, work: impl std::future::Future<Output = ()>) {
    tokio::select! {
        () = work => {}
        () = stopper.abandoned() => {}
    }
}

/// The distinct hosts (scheme and authority) of `targets`, at most `most`,
/// each as one of its URLs.
pub(crate) fn hosts(targets: &[Arc<PreparedTarget>], most: usize) -> Vec<http::Uri> {
    let mut uris: Vec<http::Uri> = Vec::new();
    for t in targets {
        let same =
            |u: &http::Uri| u.scheme() == t.uri.scheme() && u.authority() == t.uri.authority();
        if uris.len() < most && !uris.iter().any(same) {
            uris.push(t.uri.clone());
        }
    }
    uris
}

/// How often the wait for the writer looks for [`Stopper::abandon`].
const ABANDON_POLL: Duration = Duration::from_millis(10);

#[cfg(test)]
mod tests {
    use super::*;

    fn threads(
        rate: &str,
        stages: Option<&str>,
        shard: Option<(u64, u64)>,
        keepalive: bool,
    ) -> usize {
        let config = AttackConfig {
            rate: rate.parse().unwrap(),
            stages: stages.map(|s| s.parse().unwrap()),
            shard,
            ..AttackConfig::default()
        };
        let client = ClientConfig {
            keepalive,
            ..ClientConfig::default()
        };
        auto_threads(&config, &client, 8)
    }

    #[test]
    fn the_open_model_gets_a_thread_per_slice_of_its_peak_rate() {
        assert_eq!(threads("50", None, None, true), 1);
        assert_eq!(threads("20000", None, None, true), 1);
        assert_eq!(threads("30000", None, None, true), 1);
        assert_eq!(threads("30001", None, None, true), 2);
        assert_eq!(threads("100000", None, None, true), 4);
        // At most one per core.
        assert_eq!(threads("1000000", None, None, true), 8);
        // A ramp is sized for its peak; a shard for its own share.
        assert_eq!(threads("10", Some("10s:1000,10s:70000"), None, true), 3);
        assert_eq!(threads("70000", None, Some((0, 3)), true), 1);
    }

    #[test]
    fn the_closed_model_and_no_keepalive_get_every_core() {
        assert_eq!(threads("0", None, None, true), 8);
        assert_eq!(threads("infinity", None, None, true), 8);
        assert_eq!(threads("1000", None, None, false), 8);
    }
}
