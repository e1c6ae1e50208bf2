//! Requests from send to record: [`send`] sends one and makes its
//! [`Finished`]; the writer thread ([`write_hits`]) turns each into a
//! [`Hit`] for the sink and flushes at least every [`FLUSH_INTERVAL`].

use std::{
    io,
    sync::{
        mpsc::{Receiver, SyncSender, TryRecvError, TrySendError},
        Arc,
    },
    thread,
    time::{Duration, Instant},
};

use barrage_client::{Client, PreparedTarget};
use barrage_model::Hit;

use crate::{attack::Clock, HitSink, Stopper};

/// Longest a finished hit waits in the sink's buffer before a flush, so
/// `attack | report -every 1s` stays live.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// How long the writer thread sleeps when the queue is empty. Polling
/// (rather than blocking on the queue) spares every worker a wake-up call
/// per hit. Each wake-up encodes what came meanwhile, on a core the
/// worker threads or the server need: at 20 ms a wake-up encoded ~4,000
/// records of a 200,000/s closed model in one go and held a core ~1 ms,
/// which showed in the records themselves (p99 1.19-1.29 ms in 3 runs);
/// at 2 ms the bursts are a tenth (p99 0.39-0.45 ms; p50 and CPU per
/// request within the runs' noise: 5.2 vs 4.7-5.0 µs closed, 12.8 vs
/// 13.5 µs open at 20,000/s).
const WRITER_POLL: Duration = Duration::from_millis(2);

/// What every request task shares. Its fields drop in this order: when
/// the last task lets go of it, the queue closes and then the writer is
/// woken to see that at once.
pub(crate) struct RequestContext {
    pub(crate) tx: SyncSender<Finished>,
    pub(crate) clock: Clock,
    pub(crate) _writer: WakeOnDrop,
}

/// Wakes a thread sleeping in `park_timeout` when dropped.
pub(crate) struct WakeOnDrop(pub(crate) thread::Thread);

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        self.0.unpark();
    }
}

/// A finished request on its way to the writer thread, which describes it
/// as a [`Hit`]: the method, URL and attack name are copied there into one
/// reused Hit (and only when the target changes), so a request allocates
/// none of them.
pub(crate) struct Finished {
    target: Arc<PreparedTarget>,
    seq: u64,
    scheduled: i64,
    timestamp: i64,
    latency: u64,
    first_byte: u64,
    code: u16,
    bytes_in: u64,
    error: String,
    body: Vec<u8>,
    headers: Vec<(String, String)>,
}

/// Sends one request and tells how it went.
pub(crate) async fn request(
    client: &Client,
    target: Arc<PreparedTarget>,
    seq: u64,
    scheduled: i64,
    clock: Clock,
) -> Finished {
    let sent = Instant::now();
    let result = client.send(&target, seq).await;
    answered(target, seq, scheduled, clock, sent, result)
}

/// The record of a request sent at `sent` that ended now with `result`.
fn answered(
    target: Arc<PreparedTarget>,
    seq: u64,
    scheduled: i64,
    clock: Clock,
    sent: Instant,
    result: Result<barrage_client::Response, barrage_client::Failure>,
) -> Finished {
    let latency = sent.elapsed().as_nanos() as u64;
    record(
        target,
        seq,
        scheduled,
        clock.unix(sent),
        sent,
        latency,
        result,
    )
}

/// A request's outcome as the record the writer describes.
pub(crate) fn record(
    target: Arc<PreparedTarget>,
    seq: u64,
    scheduled: i64,
    timestamp: i64,
    sent: Instant,
    latency: u64,
    result: Result<barrage_client::Response, barrage_client::Failure>,
) -> Finished {
    let mut done = Finished {
        target,
        seq,
        scheduled,
        timestamp,
        latency,
        first_byte: 0,
        code: 0,
        bytes_in: 0,
        error: String::new(),
        body: Vec::new(),
        headers: Vec::new(),
    };
    match result {
        Ok(r) => {
            done.first_byte = r
                .head_at
                .map_or(0, |at| at.saturating_duration_since(sent).as_nanos() as u64)
                .min(latency);
            done.code = r.code;
            done.bytes_in = r.bytes_in;
            done.body = r.body;
            done.headers = r.headers;
            if let Some(e) = r.error {
                done.error = e;
            } else if !((200..400).contains(&r.code) || (r.code == 101 && done.target.ws)) {
                // The server's own status line where the engine kept it
                // ("503 Backend Down", as Go's Status), else the code's
                // standard text.
                done.error = r
                    .status
                    .unwrap_or_else(|| barrage_model::status::error_text(r.code));
            }
        }
        Err(e) => done.error = e.0,
    }
    done
}

/// Queues a finished request for the writer, waiting when the queue is
/// full. A gone writer means the attack is already failing.
pub(crate) fn deliver(tx: &SyncSender<Finished>, done: Finished) {
    match tx.try_send(done) {
        Ok(()) | Err(TrySendError::Disconnected(_)) => {}
        Err(TrySendError::Full(hit)) => {
            // The output is slower than the requests: block this worker
            // thread until the writer catches up (its other requests wait,
            // and their lateness shows in the records that follow).
            let _ = tx.send(hit);
        }
    }
}

/// The writer thread: hands hits to the sink, flushes within
/// [`FLUSH_INTERVAL`] of the first unflushed hit, and on a sink error stops
/// the attack and drains the rest so that workers never block.
pub(crate) fn write_hits(
    rx: Receiver<Finished>,
    name: String,
    mut sink: Box<dyn HitSink>,
    stopper: Stopper,
) -> (u64, Option<io::Error>) {
    let mut hit = Hit {
        attack: name,
        ..Hit::default()
    };
    let mut last_target: Option<Arc<PreparedTarget>> = None;
    let mut written = 0u64;
    let mut error: Option<io::Error> = None;
    let mut flush_at: Option<Instant> = None;
    loop {
        let mut got = 0usize;
        let mut closed = false;
        loop {
            match rx.try_recv() {
                Ok(done) => {
                    got += 1;
                    if error.is_some() {
                        continue;
                    }
                    if !last_target
                        .as_ref()
                        .is_some_and(|t| Arc::ptr_eq(t, &done.target))
                    {
                        hit.method.clone_from(&done.target.method_text);
                        hit.url.clone_from(&done.target.url_text);
                        hit.bytes_out = done.target.message_len() as u64;
                        last_target = Some(done.target);
                    }
                    hit.seq = done.seq;
                    hit.scheduled = done.scheduled;
                    hit.timestamp = done.timestamp;
                    hit.latency = done.latency;
                    hit.first_byte = done.first_byte;
                    hit.code = done.code;
                    hit.bytes_in = done.bytes_in;
                    hit.error = done.error;
                    hit.body = done.body;
                    hit.headers = done.headers;
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
                    if got.is_multiple_of(4096) {
                        break;
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    closed = true;
                    break;
                }
            }
        }
        if closed {
            break;
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
        if got == 0 {
            // Woken early when the queue closes (see RequestContext).
            thread::park_timeout(WRITER_POLL);
        }
    }
    if error.is_none() {
        if let Err(e) = sink.flush() {
            error = Some(e);
        }
    }
    (written, error)
}
