//! `-hold N`: N WebSocket connections opened at `-rate` a second and held
//! for `-duration`, each sending its target's message (a ping without a
//! body) at once and then every `-hold-every`, and recording the reply.
//! Every connection's open is a record of its own (code 101 and the
//! upgrade's time, or the failure), bounded by `-timeout` like any
//! request, so that each scheduled connection leaves exactly one record
//! for its open whatever happens after (issue 29). A connection that the
//! server closes is a record too; at the end (or on a stop) each held
//! connection is closed with a close frame, within [`CLOSE_WAIT`].

use std::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use barrage_client::{Client, Failure, PreparedTarget, Response};

use crate::{
    writer::{deliver, record, RequestContext},
    Stopper,
};

/// How long a held connection's close frame may take to go out at the
/// end: a server that never reads must not hold the end of the attack.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// Live counts of a `-hold` attack, for the progress line.
#[derive(Debug, Default)]
pub struct HoldCounts {
    /// Opens and messages sent so far.
    pub sent: AtomicU64,
    /// Connections open now.
    pub held: AtomicU64,
}

/// What `-hold` asks.
#[derive(Debug, Clone, Copy)]
pub struct Hold {
    /// Connections to hold.
    pub connections: u64,
    /// How often each sends its message (`None`: never; it is only held).
    pub every: Option<Duration>,
}

/// Targets `-hold` cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotHoldable {
    /// Not read up front.
    #[error("-hold takes targets read up front, without placeholders or -lazy")]
    NotFixed,
    /// Not a WebSocket URL.
    #[error("-hold holds WebSocket connections; {0} is not ws:// or wss://")]
    NotWs(String),
}

impl crate::Targets {
    /// Whether `-hold` can hold these: read up front, each a WebSocket's.
    pub fn holdable(&self) -> Result<(), NotHoldable> {
        let crate::Targets::Fixed(all) = self else {
            return Err(NotHoldable::NotFixed);
        };
        match all.iter().find(|t| !t.ws) {
            Some(t) => Err(NotHoldable::NotWs(t.url_shown().to_string())),
            None => Ok(()),
        }
    }
}

/// One held connection's life, from its open (due at `due`) to its end.
pub(crate) struct Holding {
    pub(crate) client: Arc<Client>,
    pub(crate) target: Arc<PreparedTarget>,
    pub(crate) ctx: Arc<RequestContext>,
    pub(crate) seqs: Arc<AtomicU64>,
    pub(crate) counts: Arc<HoldCounts>,
    pub(crate) every: Option<Duration>,
    pub(crate) end: Option<Instant>,
    pub(crate) stopper: Stopper,
}

enum Event {
    Stop,
    Due,
    Closed(Response),
}

impl Holding {
    /// One record: its result, when it was due and when it went out.
    fn emit(&self, result: Result<Response, Failure>, due: Instant, sent: Instant) {
        let seq = self.seqs.fetch_add(1, Ordering::SeqCst);
        let latency = sent.elapsed().as_nanos() as u64;
        let clock = &self.ctx.clock;
        let done = record(
            self.target.clone(),
            seq,
            clock.unix(due),
            clock.unix(sent),
            sent,
            latency,
            result,
        );
        deliver(&self.ctx.tx, done);
    }

    /// `-timeout`'s words for what did not come in time.
    fn timed_out(what: &str, t: Duration) -> Failure {
        Failure::from(format!(
            "websocket: timeout after {} (-timeout) {what}",
            barrage_model::duration::format(t.as_nanos() as i64)
        ))
    }

    /// One message and its reply, within `-timeout`.
    async fn exchange(&self, held: &mut barrage_client::WsHeld) -> Result<Response, Failure> {
        self.counts.sent.fetch_add(1, Ordering::Relaxed);
        let r = match self.client.timeout() {
            None => held.exchange(&self.target).await,
            Some(t) => tokio::time::timeout(t, held.exchange(&self.target))
                .await
                .unwrap_or_else(|_| Err(Self::timed_out("waiting for the reply", t))),
        };
        self.client.judged(r)
    }

    /// Opens the connection within `-timeout`: the held connection, or the
    /// record of a failed open.
    async fn open(&self) -> Result<barrage_client::WsHeld, Result<Response, Failure>> {
        self.counts.sent.fetch_add(1, Ordering::Relaxed);
        let open = Box::pin(self.client.ws_hold(&self.target));
        match self.client.timeout() {
            None => open.await,
            Some(t) => match tokio::time::timeout(t, open).await {
                Ok(opened) => opened,
                Err(_) => Err(Err(Self::timed_out("waiting for the upgrade", t))),
            },
        }
    }

    pub(crate) async fn run(self, due: Instant) {
        let sent = Instant::now();
        let mut held = match self.open().await {
            Ok(h) => h,
            Err(record) => return self.emit(record, due, sent),
        };
        // The open's own record: the upgrade answered (101), its time the
        // handshake's. `-check`s judge replies, not the open.
        let opened = Instant::now();
        self.emit(
            Ok(Response {
                code: barrage_client::WS_OK,
                head_at: Some(opened),
                end_at: Some(opened),
                link: Some(held.link().into()),
                ..Response::default()
            }),
            due,
            sent,
        );
        self.counts.held.fetch_add(1, Ordering::Relaxed);
        self.hold(&mut held).await;
        self.counts.held.fetch_sub(1, Ordering::Relaxed);
        if held.is_open() {
            let _ = tokio::time::timeout(CLOSE_WAIT, held.close()).await;
        }
    }

    /// Holds the open connection until the end, a stop, or its break;
    /// the first message goes at once, then one every `-hold-every`
    /// while one is due before the end.
    async fn hold(&self, held: &mut barrage_client::WsHeld) {
        let mut next = self.every.map(|_| Instant::now());
        loop {
            let deadline = match (next, self.end) {
                (Some(n), Some(e)) => Some(n.min(e)),
                (n, e) => n.or(e),
            };
            let event = tokio::select! {
                biased;
                () = self.stopper.stopped() => Event::Stop,
                r = held.idle_until(deadline.map(tokio::time::Instant::from_std)) => match r {
                    Some(end) => Event::Closed(end),
                    None if self.end.is_some_and(|e| Instant::now() >= e) => Event::Stop,
                    None => Event::Due,
                },
            };
            match event {
                Event::Stop => return,
                Event::Closed(end) => {
                    // Not a request, but an event a person must see: the
                    // server ended a held connection (counted as sent so
                    // that "in flight" stays true).
                    held.broken();
                    self.counts.sent.fetch_add(1, Ordering::Relaxed);
                    return self.emit(Ok(end), Instant::now(), Instant::now());
                }
                Event::Due => {
                    let due = next.unwrap_or_else(Instant::now);
                    let sent = Instant::now();
                    // Boxed: a held connection's future is kept for as
                    // long as it is held, and the exchange's state is only
                    // needed while a message is out.
                    let r = Box::pin(self.exchange(held)).await;
                    // A failed -check is a failed record; the connection
                    // goes on (issue 29). A broken one ends.
                    let broke = match &r {
                        Err(_) => true,
                        Ok(r) => r
                            .error
                            .as_ref()
                            .is_some_and(|e| !e.starts_with(barrage_model::CHECK_FAILED)),
                    };
                    self.emit(r, due, sent);
                    if broke {
                        held.broken();
                        return;
                    }
                    next = next.zip(self.every).map(|(n, e)| n + e);
                }
            }
        }
    }
}
