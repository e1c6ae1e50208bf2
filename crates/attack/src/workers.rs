use std::{
    io,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    thread::{self, JoinHandle},
    time::Duration,
};

use tokio::{runtime::Handle, sync::oneshot};

use barrage_client::{Client, ClientConfig, Shared};

use crate::AttackError;

/// One worker thread: a single-threaded tokio runtime with its own client
/// and connection pool. Tasks never migrate between threads, so a request
/// costs no cross-thread wake-ups (a multi-threaded runtime's workers
/// parking and waking each other were the largest cost in the profile).
struct WorkerThread {
    handle: Handle,
    client: Arc<Client>,
    /// Batches handed to this thread that it has not started yet.
    waiting: Arc<AtomicUsize>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// The worker threads of an attack (`-cpus`), fed round-robin.
pub(crate) struct Workers {
    lanes: Vec<WorkerThread>,
    next: usize,
}

impl Workers {
    /// Starts `n` worker threads (at least one), each with a client; with
    /// `paced`, threads that wake for the clock (see [`crate::timeslice`]).
    pub(crate) fn start(n: usize, cfg: &ClientConfig, paced: bool) -> Result<Self, AttackError> {
        let mut lanes = Vec::with_capacity(n.max(1));
        // One -max-connections cap, one reading of the certificates, one
        // DNS cache and one -connect-to turn for the whole attack.
        let shared = Shared::new(cfg)?;
        for i in 0..n.max(1) {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                // What finished while the thread was busy goes to the
                // writer in one batch before it sleeps.
                .on_thread_park(crate::writer::hand_over)
                .build()?;
            let client = {
                let _guard = rt.enter();
                Arc::new(Client::sharing(cfg, &shared))
            };
            let handle = rt.handle().clone();
            if let Some(timeout) = cfg.timeout {
                handle.spawn(keep_timer_armed(timeout));
            }
            let (stop, stopped) = oneshot::channel::<()>();
            let thread = thread::Builder::new()
                .name(format!("barrage-worker-{i}"))
                .spawn(move || {
                    if paced {
                        crate::timeslice::prefer_short_slices();
                    }
                    crate::writer::batch_on_this_thread();
                    let _ = rt.block_on(stopped);
                    rt.shutdown_timeout(Duration::from_millis(200));
                })
                .map_err(|e: io::Error| AttackError::Start(e))?;
            lanes.push(WorkerThread {
                handle,
                client,
                waiting: Arc::new(AtomicUsize::new(0)),
                stop: Some(stop),
                thread: Some(thread),
            });
        }
        Ok(Workers { lanes, next: 0 })
    }

    /// How many worker threads there are.
    pub(crate) fn len(&self) -> usize {
        self.lanes.len()
    }

    /// The next worker in turn: its runtime and its client.
    pub(crate) fn next(&mut self) -> (&Handle, &Arc<Client>) {
        let lane = &self.lanes[self.next % self.lanes.len()];
        self.next = self.next.wrapping_add(1);
        (&lane.handle, &lane.client)
    }

    /// The worker for the pacer's next batch: the next in turn unless it
    /// has not started its last batch yet (its thread is off the CPU: on a
    /// busy machine, for milliseconds), then the one with the fewest
    /// batches waiting. The returned [`Started`] is to be dropped when the
    /// batch starts.
    pub(crate) fn least_behind(&mut self) -> (&Handle, &Arc<Client>, Started) {
        let n = self.lanes.len();
        let mut best = self.next % n;
        for i in 0..n {
            let at = (self.next + i) % n;
            let waiting = self.lanes[at].waiting.load(Ordering::Relaxed);
            if waiting == 0 {
                best = at;
                break;
            }
            if waiting < self.lanes[best].waiting.load(Ordering::Relaxed) {
                best = at;
            }
        }
        self.next = best.wrapping_add(1);
        let lane = &self.lanes[best];
        lane.waiting.fetch_add(1, Ordering::Relaxed);
        (&lane.handle, &lane.client, Started(lane.waiting.clone()))
    }

    /// Stops every worker thread and waits for it (idle connections close).
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

/// Counts a batch as waiting for its worker until dropped.
pub(crate) struct Started(Arc<AtomicUsize>);

impl Drop for Started {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Keeps a timer due before any request's `-timeout` can be. Tokio wakes
/// its driver through an eventfd whenever a new timer is due earlier than
/// every other; with a request in flight only now and then (low rates),
/// that was each request's timeout: one more system call per request.
async fn keep_timer_armed(timeout: Duration) {
    let period = (timeout / 2).clamp(Duration::from_millis(1), Duration::from_secs(1));
    loop {
        tokio::time::sleep(period).await;
    }
}
