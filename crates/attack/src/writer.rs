//! Requests from send to record: [`send`] sends one and makes its
//! [`Finished`]; the writer thread ([`write_hits`]) turns each into a
//! [`Hit`] for the sink and flushes at least every [`FLUSH_INTERVAL`].

use std::{
    io,
    sync::{
        mpsc::{Receiver, SyncSender, TryRecvError},
        Arc,
    },
    thread,
    time::{Duration, Instant},
};

use barrage_client::PreparedTarget;
use barrage_model::Hit;

use crate::{clock::Clock, HitSink, Stopper};

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

/// The longest the writer thread sleeps when the queue is empty: at lower
/// rates it sleeps longer, up to this, so that a wake-up finds about
/// [`WRITER_WAKE_RECORDS`] records. Every wake-up costs a context switch
/// (at 20,000/s against nginx, 457 wake-ups a second were 7% of the
/// attack's CPU for 44 records each). Well under [`FLUSH_INTERVAL`].
const WRITER_POLL_MAX: Duration = Duration::from_millis(20);

/// Records a writer wake-up aims to find.
const WRITER_WAKE_RECORDS: u32 = 512;

/// What every request task shares. Its fields drop in this order: when
/// the last task lets go of it, the queue closes and then the writer is
/// woken to see that at once.
pub(crate) struct RequestContext {
    pub(crate) tx: SyncSender<Batch>,
    pub(crate) clock: Clock,
    /// The attack's stop: a request still waiting for its `-mix` group's
    /// slot then goes out no more.
    pub(crate) stopper: crate::Stopper,
    /// Where such a request gives its ticket back ([`crate::tickets::Tickets::returns`]).
    pub(crate) returned: std::sync::OnceLock<Arc<std::sync::atomic::AtomicU64>>,
    /// A flow's attack (`-format flow`): each ticket is a session.
    pub(crate) flow: Option<Arc<crate::flow_plan::FlowPlan>>,
    /// A flow's requests sent, for the progress line.
    pub(crate) steps: Arc<std::sync::atomic::AtomicU64>,
    /// The schedule's end (`-duration`, or its stages'): past it, a
    /// session sends no further step.
    pub(crate) end: Option<Instant>,
    /// `-grace`: how long past the end (or a first stop) a session may
    /// go on to finish.
    pub(crate) grace: std::time::Duration,
    pub(crate) _writer: WakeOnDrop,
}

/// Wakes a thread sleeping in `park_timeout` when dropped.
pub(crate) struct WakeOnDrop(pub(crate) thread::Thread);

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        self.0.unpark();
    }
}

/// A finished request on its way to the writer thread: the client's
/// answer as it came, with what the schedule knows of it. The writer
/// describes it as a [`Hit`] (the method, URL and attack name are copied
/// there into one reused Hit, and only when the target changes), so a
/// request allocates none of them and no field is copied twice.
pub(crate) struct Finished {
    target: Arc<PreparedTarget>,
    seq: u64,
    scheduled: i64,
    timestamp: i64,
    latency: u64,
    first_byte: u64,
    /// `-stream`: nanoseconds from the send to its events' base (their
    /// stamps stay as the client kept them, about 2 bytes an event, and
    /// become offsets from the send, 8 bytes an event, only as the
    /// writer writes them: records waiting for the writer held 8 KiB
    /// each for 1,000 events, about 1 KiB an open stream in
    /// scripts/bench's streams cell).
    events_shift: u64,
    /// The answer, its error settled: a status outside [200, 400) has its
    /// text there.
    result: Result<barrage_client::Response, barrage_client::Failure>,
    /// A flow's request: its session and step.
    pub(crate) session: Option<barrage_model::SessionMark>,
}

impl Finished {
    /// Whether it is a success: no error (a status outside [200, 400)
    /// is one: its text is the record's error).
    pub(crate) fn ok(&self) -> bool {
        self.result.as_ref().is_ok_and(|r| r.error.is_none())
    }

    /// Its error with each of `values` (a session's extracted and fed
    /// values, of 3 bytes or more) left out: a record's error reaches
    /// reports and Prometheus labels, a token must not.
    pub(crate) fn redact(&mut self, values: &[String]) {
        let error = match &mut self.result {
            Ok(r) => match &mut r.error {
                Some(e) => e,
                None => return,
            },
            Err(f) => &mut f.0,
        };
        for v in values.iter().filter(|v| v.len() >= 3) {
            if error.contains(v.as_str()) {
                *error = error.replace(v.as_str(), "{{…}}");
            }
        }
    }

    /// Fills `hit` with what this request's answer says (the target's
    /// and schedule's fields are the writer's); its stream's reads are
    /// counted in `audit`.
    fn describe(self, hit: &mut Hit, audit: &mut crate::audit::Sampler) {
        hit.seq = self.seq;
        hit.scheduled = self.scheduled;
        hit.timestamp = self.timestamp;
        hit.latency = self.latency;
        hit.first_byte = self.first_byte;
        hit.session = self.session;
        hit.events.clear();
        let r = match self.result {
            Ok(r) => r,
            Err(f) => {
                hit.code = 0;
                hit.proto = barrage_model::Proto::Unknown;
                hit.link = None;
                hit.bytes_in = 0;
                hit.error = f.0;
                hit.body = Vec::new();
                hit.headers = Vec::new();
                hit.event_count = 0;
                hit.event_malformed = 0;
                hit.tokens = None;
                return;
            }
        };
        hit.code = r.code;
        hit.proto = r.proto;
        hit.link = r.link.map(|v| v.link());
        hit.bytes_in = r.bytes_in;
        hit.error = r.error.unwrap_or_default();
        hit.body = r.body;
        hit.headers = r.headers;
        let (count, malformed) = match r.events {
            Some(ev) => {
                let taped = ev.1;
                // To whole microseconds, as the result stream keeps them,
                // in the record's own buffer (reused record to record).
                let shift = self.events_shift;
                hit.events.extend(
                    taped
                        .stamps
                        .iter()
                        .map(|at| (at + shift + 500) / 1000 * 1000),
                );
                audit.streamed(&taped.stamps);
                hit.tokens = taped.tokens.map(|t| *t);
                if let (Some(t), Some(a)) = (&mut hit.tokens, self.target.asked) {
                    t.asked_input = a.input;
                    t.asked_output = a.output;
                }
                (taped.count, taped.malformed)
            }
            None => {
                hit.tokens = None;
                (0, 0)
            }
        };
        hit.event_count = count;
        hit.event_malformed = malformed;
    }
}

/// The record of a request sent at `sent` that ended now with `result`.
pub(crate) fn answered(
    target: Arc<PreparedTarget>,
    seq: u64,
    scheduled: i64,
    clock: Clock,
    sent: Instant,
    result: Result<barrage_client::Response, barrage_client::Failure>,
) -> Finished {
    let latency = took(&result, sent);
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

/// The record of a pipelined request of a batch written at `sent` (its
/// time on the attack's clock `at`), answered (or failed) at `end`.
pub(crate) fn in_batch(
    (target, seq): (&Arc<PreparedTarget>, u64),
    at: i64,
    sent: Instant,
    end: Instant,
    result: Result<barrage_client::Response, barrage_client::Failure>,
) -> Finished {
    let latency = end.saturating_duration_since(sent).as_nanos() as u64;
    record(target.clone(), seq, at, at, sent, latency, result)
}

/// Nanoseconds from `sent` to the end of `result`: its last byte, where
/// the engine noted when that was read (no clock read more), else now.
pub(crate) fn took(
    result: &Result<barrage_client::Response, barrage_client::Failure>,
    sent: Instant,
) -> u64 {
    let end = match result {
        Ok(r) => r.end_at.unwrap_or_else(Instant::now),
        Err(_) => Instant::now(),
    };
    end.saturating_duration_since(sent).as_nanos() as u64
}

/// A request's outcome as the record the writer describes.
pub(crate) fn record(
    target: Arc<PreparedTarget>,
    seq: u64,
    scheduled: i64,
    timestamp: i64,
    sent: Instant,
    latency: u64,
    mut result: Result<barrage_client::Response, barrage_client::Failure>,
) -> Finished {
    let since = |at: Instant| at.saturating_duration_since(sent).as_nanos() as u64;
    let (mut first_byte, mut events_shift) = (0, 0);
    if let Ok(r) = &mut result {
        first_byte = r.head_at.map_or(0, since).min(latency);
        // Stamps count from the tape's making, just after the send.
        events_shift = r.events.as_ref().map_or(0, |ev| since(ev.0));
        if r.error.is_none() && !((200..400).contains(&r.code) || (r.code == 101 && target.ws)) {
            // The server's own status line where the engine kept it
            // ("503 Backend Down", as Go's Status), else the code's
            // standard text.
            r.error = Some(
                r.status
                    .take()
                    .unwrap_or_else(|| barrage_model::status::error_text(r.code)),
            );
        }
    }
    Finished {
        target,
        seq,
        scheduled,
        timestamp,
        latency,
        first_byte,
        events_shift,
        result,
        session: None,
    }
}

mod outbox;
pub(crate) use outbox::{batch_on_this_thread, deliver, hand_over, waiting, Batch};

/// The writer thread, word of its end, and the stopper that may abandon
/// the wait for it.
pub(crate) type WriterThread = (
    thread::JoinHandle<(u64, u64, Option<io::Error>)>,
    std::sync::mpsc::Receiver<()>,
    Stopper,
);

/// What the writer puts in the stream beside the records, and the count
/// its self-audit reads.
pub(crate) struct Beside {
    /// Requests sent so far.
    pub(crate) sent: Box<dyn Fn() -> u64 + Send>,
    /// `-scrape`'s samples.
    pub(crate) samples: Option<Receiver<barrage_model::ServerSample>>,
    /// `-control`'s markers made since the last call.
    pub(crate) markers: Box<dyn Fn() -> Vec<barrage_model::Marker> + Send>,
}

/// The writer thread: hands hits to the sink, flushes within
/// [`FLUSH_INTERVAL`] of the first unflushed hit, and on a sink error stops
/// the attack and drains the rest so that workers never block.
pub(crate) fn write_hits(
    rx: Receiver<Batch>,
    name: String,
    mut sink: Box<dyn HitSink>,
    stopper: Stopper,
    facts: Facts,
    beside: Beside,
) -> (u64, u64, Option<io::Error>) {
    let Beside {
        sent,
        samples,
        markers,
    } = beside;
    let mut audit = crate::audit::Sampler::start();
    let mut hit = Hit {
        attack: name.clone(),
        ..Hit::default()
    };
    let mut last_target: Option<Arc<PreparedTarget>> = None;
    let mut written = 0u64;
    // Events counted in all, for `-event-filter`'s word at the end.
    let mut events = 0u64;
    let mut error: Option<io::Error> = None;
    let mut flush_at: Option<Instant> = None;
    let mut poll = WRITER_POLL;
    // Records since the last sleep.
    let mut awake = 0usize;
    loop {
        let mut got = 0usize;
        let mut closed = false;
        while got < 4096 {
            let batch = match rx.try_recv() {
                Ok(batch) => batch,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    closed = true;
                    break;
                }
            };
            got += batch.len();
            // -control's markers before the records of their lines.
            for m in markers() {
                if error.is_none() {
                    if let Err(e) = sink.marker(&m) {
                        error = Some(e);
                        stopper.stop();
                    }
                }
            }
            for done in batch {
                if error.is_some() {
                    break;
                }
                if !last_target
                    .as_ref()
                    .is_some_and(|t| Arc::ptr_eq(t, &done.target))
                {
                    hit.method.clone_from(&done.target.method_text);
                    hit.url.clone_from(&done.target.url_text);
                    hit.name.clone_from(&done.target.name);
                    match &done.target.group {
                        Some(g) => hit.attack.clone_from(&g.name),
                        None => hit.attack.clone_from(&name),
                    }
                    hit.bytes_out = done.target.message_len() as u64;
                    last_target = Some(done.target.clone());
                }
                done.describe(&mut hit, &mut audit);
                events = events.saturating_add(hit.event_count);
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
        // -scrape's samples, as they come.
        for x in samples.iter().flat_map(|r| r.try_iter()) {
            if error.is_none() {
                if let Err(e) = sink.sample(&x) {
                    error = Some(e);
                    stopper.stop();
                }
            }
        }
        // -control's markers, as they are made.
        for m in markers() {
            if error.is_none() {
                if let Err(e) = sink.marker(&m) {
                    error = Some(e);
                    stopper.stop();
                }
            }
        }
        if error.is_none() && audit.due(Instant::now()) {
            if let Err(e) = sink.audit(&audit.take(sent(), written)) {
                error = Some(e);
                stopper.stop();
            }
        }
        awake += got;
        if got == 0 {
            // Half or twice as long as the last sleep at most, as the
            // records it found ask.
            let found = u32::try_from(awake).unwrap_or(u32::MAX).max(1);
            poll = (poll * WRITER_WAKE_RECORDS / found).clamp(poll / 2, poll * 2);
            poll = poll.clamp(WRITER_POLL, WRITER_POLL_MAX);
            awake = 0;
            // Woken early when the queue closes (see RequestContext).
            thread::park_timeout(poll);
        }
    }
    // -scrape's samples taken before the end (the scraper ends once the
    // writer does).
    for x in samples.iter().flat_map(|r| r.try_iter()) {
        if error.is_none() {
            error = sink.sample(&x).err();
        }
    }
    for m in markers() {
        if error.is_none() {
            error = sink.marker(&m).err();
        }
    }
    if error.is_none() {
        // The last span, however short, so that every second is counted.
        error = sink.audit(&audit.take(sent(), written)).err();
    }
    if error.is_none() {
        // The run's facts known only at its end (the queue closes once
        // the schedule is over, so they are final).
        let facts = std::mem::take(&mut *facts.lock().unwrap_or_else(|p| p.into_inner()));
        for (k, v) in facts {
            if let Err(e) = sink.meta(&k, &v) {
                error = Some(e);
                break;
            }
        }
    }
    if error.is_none() {
        if let Err(e) = sink.flush() {
            error = Some(e);
        }
    }
    (written, events, error)
}

/// Facts about the run for the writer to put in the stream at its end.
pub(crate) type Facts = Arc<std::sync::Mutex<Vec<(String, String)>>>;

#[cfg(test)]
mod tests {
    /// A record waiting for the writer carries the client's answer whole
    /// (no second copy of its fields): 248 bytes, where the copy it
    /// replaced was 328.
    #[test]
    fn a_waiting_record_stays_small() {
        let size = std::mem::size_of::<super::Finished>();
        assert!(size <= 248, "Finished is {size} bytes");
    }
}
