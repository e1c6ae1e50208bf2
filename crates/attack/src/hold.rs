//! `-hold N`: N WebSocket connections opened at `-rate` a second and held
//! for `-duration`, each sending its target's message (a ping without a
//! body) every `-hold-every` and recording the reply. A connection that
//! fails to open, or that the server closes, is a record too; at the end
//! (or on a stop) each held connection is closed with a close frame.

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

/// What `-hold` asks.
#[derive(Debug, Clone, Copy)]
pub struct Hold {
    /// Connections to hold.
    pub connections: u64,
    /// How often each sends its message (`None`: never; it is only held).
    pub every: Option<Duration>,
}

/// One held connection's life, from its open (due at `due`) to its end.
pub(crate) struct Holding {
    pub(crate) client: Arc<Client>,
    pub(crate) target: Arc<PreparedTarget>,
    pub(crate) ctx: Arc<RequestContext>,
    pub(crate) seqs: Arc<AtomicU64>,
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

    /// One message and its reply, within `-timeout`.
    async fn exchange(&self, held: &mut barrage_client::WsHeld) -> Result<Response, Failure> {
        let r = match self.client.timeout() {
            None => held.exchange(&self.target).await,
            Some(t) => tokio::time::timeout(t, held.exchange(&self.target))
                .await
                .unwrap_or_else(|_| {
                    Err(Failure::from(format!(
                        "websocket: timeout after {} (-timeout)",
                        barrage_model::duration::format(t.as_nanos() as i64)
                    )))
                }),
        };
        self.client.judged(r)
    }

    pub(crate) async fn run(self, due: Instant) {
        let sent = Instant::now();
        let mut held = match Box::pin(self.client.ws_hold(&self.target)).await {
            Ok(h) => h,
            Err(record) => return self.emit(record, due, sent),
        };
        let mut next = self.every.map(|e| Instant::now() + e);
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
                Event::Stop => return held.close().await,
                Event::Closed(end) => return self.emit(Ok(end), Instant::now(), Instant::now()),
                Event::Due => {
                    let due = next.unwrap_or_else(Instant::now);
                    let sent = Instant::now();
                    // Boxed: a held connection's future is kept for as
                    // long as it is held, and the exchange's state is only
                    // needed while a message is out.
                    let r = Box::pin(self.exchange(&mut held)).await;
                    let broke = r.as_ref().map_or(true, |r| r.error.is_some());
                    self.emit(r, due, sent);
                    if broke {
                        return;
                    }
                    next = next.zip(self.every).map(|(n, e)| n + e);
                }
            }
        }
    }
}
