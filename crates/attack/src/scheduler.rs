use std::{
    io,
    sync::{
        mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError},
        Arc,
    },
    thread,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use barrage_model::Hit;
use thiserror::Error;
use tokio::{runtime::Runtime, sync::Semaphore};

use crate::{
    client::{Client, Prepared},
    AttackConfig, ClientConfig, Due, HitSink, Pacer, Stopper, Targets, TlsError,
};

/// Longest a finished hit waits in the sink's buffer before a flush, so
/// `attack | report -every 1s` stays live.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Hits queued between the workers and the writer thread. When the output
/// is slower than this, workers wait (the lag shows in later hits).
const QUEUE: usize = 16 * 1024;

/// Why an attack could not start.
#[derive(Debug, Error)]
pub enum AttackError {
    /// A TLS flag names a bad file.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The runtime or a thread could not be started.
    #[error("cannot start the attack: {0}")]
    Start(#[from] io::Error),
}

/// Why the attack ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The schedule (`-duration`, `-requests`) is complete.
    Done,
    /// [`Stopper::stop`] was called (a signal).
    Stopped,
    /// `-lazy` targets ran out.
    TargetsExhausted,
    /// A lazy target did not parse (see [`AttackReport::target_error`]).
    BadTarget,
    /// The sink failed (see [`AttackReport::output_error`]).
    OutputFailed,
}

/// What happened, for the CLI's exit code.
#[derive(Debug)]
pub struct AttackReport {
    /// Requests scheduled (each produced one Hit for the sink).
    pub scheduled: u64,
    /// Hits the sink accepted.
    pub written: u64,
    /// Why it ended.
    pub reason: StopReason,
    /// The sink's first error; later hits were dropped.
    pub output_error: Option<io::Error>,
    /// A `-lazy` target that did not parse.
    pub target_error: Option<String>,
}

/// Maps the monotonic clock to unix nanoseconds, fixed at the start so that
/// scheduled and actual times share one timeline.
#[derive(Clone, Copy)]
struct Clock {
    start: Instant,
    start_unix: i64,
}

impl Clock {
    fn new() -> Self {
        let start_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        Clock {
            start: Instant::now(),
            start_unix,
        }
    }

    fn unix(&self, at: Instant) -> i64 {
        self.start_unix + at.saturating_duration_since(self.start).as_nanos() as i64
    }
}

/// A configured attack, ready to run: runtime started, client built (so
/// TLS mistakes surface before any request).
pub struct Attack {
    config: AttackConfig,
    runtime: Runtime,
    client: Arc<Client>,
}

impl Attack {
    /// Starts the runtime and builds the client.
    pub fn new(config: AttackConfig, client: ClientConfig) -> Result<Self, AttackError> {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.enable_all().thread_name("barrage-worker");
        if config.cpus > 0 {
            builder.worker_threads(config.cpus);
        }
        let runtime = builder.build()?;
        let client = {
            let _guard = runtime.enter();
            Arc::new(Client::new(&client)?)
        };
        Ok(Attack {
            config,
            runtime,
            client,
        })
    }

    /// Runs the attack to its end on this thread (the pacer), with the sink
    /// on a writer thread. Every scheduled request reaches the sink.
    pub fn run(
        self,
        mut targets: Targets,
        sink: Box<dyn HitSink>,
        stopper: Stopper,
    ) -> Result<AttackReport, AttackError> {
        let (tx, rx) = mpsc::sync_channel::<Hit>(QUEUE);
        let writer = {
            let stopper = stopper.clone();
            thread::Builder::new()
                .name("barrage-writer".into())
                .spawn(move || write_hits(rx, sink, stopper))?
        };
        let pacer = Pacer::new(self.config.rate, self.config.duration, self.config.requests);
        let slots = self.config.max_workers.map(|n| {
            Arc::new(Semaphore::new(
                n.clamp(1, Semaphore::MAX_PERMITS as u64) as usize
            ))
        });
        let name: Arc<str> = self.config.name.as_str().into();
        let clock = Clock::new();
        let mut target_error = None;
        let mut seq = 0u64;
        let reason = loop {
            if stopper.is_stopped() {
                break StopReason::Stopped;
            }
            let elapsed = clock.start.elapsed().as_nanos() as u64;
            let due = pacer.due(seq, elapsed);
            if due == Due::Stop {
                break StopReason::Done;
            }
            let target = match targets.get(seq) {
                Ok(Some(t)) => t,
                Ok(None) => break StopReason::TargetsExhausted,
                Err(e) => {
                    target_error = Some(e);
                    break StopReason::BadTarget;
                }
            };
            if let Due::At(offset) = due {
                if !stopper.sleep_until(clock.start + Duration::from_nanos(offset)) {
                    break StopReason::Stopped;
                }
            }
            let slot = match &slots {
                None => None,
                Some(sem) => match sem.clone().try_acquire_owned() {
                    Ok(p) => Some(p),
                    Err(_) => {
                        let sem = sem.clone();
                        let waited = self.runtime.block_on(async {
                            tokio::select! {
                                p = sem.acquire_owned() => p.ok(),
                                _ = stopper.stopped() => None,
                            }
                        });
                        match waited {
                            Some(p) => Some(p),
                            None => break StopReason::Stopped,
                        }
                    }
                },
            };
            let scheduled = match due {
                Due::At(offset) => clock.start_unix + offset as i64,
                _ => {
                    // Closed model: the request is scheduled when a worker frees up.
                    let now = Instant::now();
                    if pacer.due(seq, now.duration_since(clock.start).as_nanos() as u64)
                        == Due::Stop
                    {
                        break StopReason::Done;
                    }
                    clock.unix(now)
                }
            };
            let client = self.client.clone();
            let tx = tx.clone();
            let name = name.clone();
            self.runtime.spawn(async move {
                let hit = hit(&client, &target, seq, scheduled, clock, &name).await;
                drop(slot);
                deliver(&tx, hit);
            });
            seq += 1;
        };
        drop(tx);
        // The writer ends when the last in-flight request has delivered.
        let (written, output_error) = writer
            .join()
            .unwrap_or((0, Some(io::Error::other("writer thread failed"))));
        self.runtime.shutdown_timeout(Duration::from_millis(200));
        let reason = if output_error.is_some() {
            StopReason::OutputFailed
        } else {
            reason
        };
        Ok(AttackReport {
            scheduled: seq,
            written,
            reason,
            output_error,
            target_error,
        })
    }
}

/// Sends one request and describes it as a Hit.
async fn hit(
    client: &Client,
    target: &Prepared,
    seq: u64,
    scheduled: i64,
    clock: Clock,
    name: &str,
) -> Hit {
    let sent = Instant::now();
    let result = client.send(target, seq).await;
    let latency = sent.elapsed().as_nanos() as u64;
    let mut hit = Hit {
        attack: name.to_string(),
        seq,
        scheduled,
        timestamp: clock.unix(sent),
        latency,
        bytes_out: target.body.len() as u64,
        method: target.method_text.clone(),
        url: target.url_text.clone(),
        ..Hit::default()
    };
    match result {
        Ok(r) => {
            hit.code = r.code;
            hit.bytes_in = r.bytes_in;
            hit.body = r.body;
            hit.headers = r.headers;
            if !hit.is_success() {
                hit.error = barrage_model::status::error_text(r.code);
            }
        }
        Err(e) => hit.error = e,
    }
    hit
}

/// Queues a hit for the writer, waiting (off the async scheduler) when the
/// queue is full. A gone writer means the attack is already failing.
fn deliver(tx: &SyncSender<Hit>, hit: Hit) {
    match tx.try_send(hit) {
        Ok(()) | Err(TrySendError::Disconnected(_)) => {}
        Err(TrySendError::Full(hit)) => {
            tokio::task::block_in_place(|| {
                let _ = tx.send(hit);
            });
        }
    }
}

/// The writer thread: hands hits to the sink, flushes within
/// [`FLUSH_INTERVAL`] of the first unflushed hit, and on a sink error stops
/// the attack and drains the rest so that workers never block.
fn write_hits(
    rx: Receiver<Hit>,
    mut sink: Box<dyn HitSink>,
    stopper: Stopper,
) -> (u64, Option<io::Error>) {
    let mut written = 0u64;
    let mut error: Option<io::Error> = None;
    let mut flush_at: Option<Instant> = None;
    loop {
        let got = match flush_at {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        match got {
            Ok(hit) => {
                if error.is_none() {
                    match sink.write(&hit) {
                        Ok(()) => {
                            written += 1;
                            flush_at.get_or_insert_with(|| Instant::now() + FLUSH_INTERVAL);
                        }
                        Err(e) => {
                            error = Some(e);
                            stopper.stop();
                        }
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if flush_at.is_some_and(|at| Instant::now() >= at) {
            flush_at = None;
            if error.is_none() {
                if let Err(e) = sink.flush() {
                    error = Some(e);
                    stopper.stop();
                }
            }
        }
    }
    if error.is_none() {
        if let Err(e) = sink.flush() {
            error = Some(e);
        }
    }
    (written, error)
}
