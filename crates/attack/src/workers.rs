use std::{
    io,
    sync::Arc,
    thread::{self, JoinHandle},
    time::Duration,
};

use tokio::{runtime::Handle, sync::oneshot};

use crate::{AttackError, Client, ClientConfig};

/// One worker thread: a single-threaded tokio runtime with its own client
/// and connection pool. Tasks never migrate between threads, so a request
/// costs no cross-thread wake-ups (a multi-threaded runtime's workers
/// parking and waking each other were the largest cost in the profile).
struct Lane {
    handle: Handle,
    client: Arc<Client>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// The worker threads of an attack (`-cpus`), fed round-robin.
pub(crate) struct Workers {
    lanes: Vec<Lane>,
    next: usize,
}

impl Workers {
    /// Starts `n` worker threads (at least one), each with a client.
    pub(crate) fn start(n: usize, cfg: &ClientConfig) -> Result<Self, AttackError> {
        let mut lanes = Vec::with_capacity(n.max(1));
        // One -max-connections cap for the whole attack, not per thread.
        let open_limit = Client::open_limit(cfg);
        for i in 0..n.max(1) {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let client = {
                let _guard = rt.enter();
                Arc::new(Client::sharing(cfg, open_limit.clone())?)
            };
            let handle = rt.handle().clone();
            if let Some(timeout) = cfg.timeout {
                handle.spawn(keep_timer_armed(timeout));
            }
            let (stop, stopped) = oneshot::channel::<()>();
            let thread = thread::Builder::new()
                .name(format!("barrage-worker-{i}"))
                .spawn(move || {
                    let _ = rt.block_on(stopped);
                    rt.shutdown_timeout(Duration::from_millis(200));
                })
                .map_err(|e: io::Error| AttackError::Start(e))?;
            lanes.push(Lane {
                handle,
                client,
                stop: Some(stop),
                thread: Some(thread),
            });
        }
        Ok(Workers { lanes, next: 0 })
    }

    /// The next worker in turn: its runtime and its client.
    pub(crate) fn next(&mut self) -> (&Handle, &Arc<Client>) {
        let lane = &self.lanes[self.next % self.lanes.len()];
        self.next = self.next.wrapping_add(1);
        (&lane.handle, &lane.client)
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
