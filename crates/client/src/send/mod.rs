//! The policy above one exchange ([`Client`]): the `-timeout`, redirects
//! (Go's rules: [`carry`], `redirect`), a kept connection found closed
//! sent again, the closed model's kept connection ([`LoopState`]),
//! `-pipeline`'s queues, `-stream`'s tape around an exchange and the
//! `-check` verdict on every answer.

use std::{pin::Pin, sync::Arc, time::Duration};

use http::{HeaderValue, Uri};
use tokio::time::Sleep;
use tokio_rustls::TlsConnector;

use crate::{
    core::ask::{Ask, Hop},
    core::key::Key,
    core::observe::{Observe, Unobserved},
    core::response::Step,
    core::shape::Shape,
    core::target::PreparedTarget,
    events::OnTask,
    pool::Pool,
    proto::h1::Limits,
    proto::Conn,
    transport::{dial::Dial, quic::QuicConfig, tls},
    ClientConfig, Response, TlsError,
};

pub(crate) mod carry;
mod deadlines;
mod pipeline;
mod queued;
pub(crate) mod redirect;
mod ring;
#[cfg(test)]
mod sizes;
mod taped;
mod timed;
pub(crate) mod words;

use redirect::{after, follow};
pub use ring::RingClient;
use words::{failed, timed_out};

/// Most times a request is sent again because the reused connection it
/// went out on turned out closed by the server before answering (Go's
/// transport retries such requests too, for GET, HEAD, OPTIONS and TRACE).
const MAX_STALE_RETRIES: u32 = 8;

/// The HTTP client of one worker thread: barrage's HTTP/1.1 engine (or
/// hyper's) and hyper's HTTP/2 over its own connection pool
/// (`pool::Pool`), rustls for TLS.
pub struct Client {
    pub(crate) pool: Arc<Pool>,
    /// How requests are built and answers read, whatever the protocol.
    shape: Shape,
    /// `-pipeline`.
    pipeline: usize,
    /// Whether [`Client::send`] queues onto shared connections when
    /// `pipeline` > 1 (barrage's engine, keep-alive).
    queue: bool,
    timeout: Option<Duration>,
    redirects: i64,
    /// A flow's jar follows its steps' redirects (`send_step`), up to this
    /// many; the exchange then follows none.
    pub(crate) step_redirects: Option<i64>,
    /// `-check`, with what the record keeps after them: the exchanges read
    /// up to `shape.max_body` bytes (and headers with `keep_headers`),
    /// which the checks may raise above `-max-body` and `-keep-headers`.
    pub(crate) checks: Option<Arc<crate::Checks>>,
    /// `-stream`: answers read event by event, on a tape per request.
    pub(crate) stream: Option<Arc<crate::StreamSpec>>,
    pub(crate) record_body: i64,
    pub(crate) record_headers: bool,
    /// WebSocket targets' connections.
    ws: crate::proto::ws::Ws,
    /// `-pipeline`'s shared connections (the open model).
    queues: queued::Queues,
    /// Whether a [`LoopState`] loop may keep its connection between requests:
    /// with keep-alive and no `-max-connections` (under the cap, loops
    /// keeping theirs would leave the others waiting).
    pub(crate) hold: bool,
}

/// What a loop that sends one request after another (the closed model)
/// keeps between its requests.
pub struct LoopState {
    /// One timer for `-timeout`, pushed out per request: pushing a
    /// registered timer further out is an atomic store, where a timer per
    /// request enters and leaves tokio's timer wheel (580 instructions per
    /// request, 2.8% of the closed model's).
    timer: Pin<Box<Sleep>>,
    /// The HTTP/1.1 connection of its last request.
    kept: HeldConn,
}

impl LoopState {
    /// Nothing kept yet.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        LoopState {
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            kept: HeldConn::default(),
        }
    }
}

/// A loop's last HTTP/1.1 connection, reused for its next request to the
/// same host without the pool's lock and lookups (470 instructions per
/// request); given back to the pool when the loop moves to another host.
#[derive(Default)]
pub(crate) struct HeldConn {
    /// The host of `conn`, or of the last one (kept to compare without
    /// cloning a key per request).
    pub(crate) key: Option<Key>,
    pub(crate) conn: Option<Conn>,
}

/// How `cfg` has requests built and answers read, whatever the protocol
/// (both clients: tokio's and `-io ring`'s).
pub(crate) fn shape(cfg: &ClientConfig) -> Shape {
    let attack = (!cfg.name.is_empty())
        .then(|| HeaderValue::from_str(&cfg.name).ok())
        .flatten();
    let record_body = record_body(cfg);
    let checks = cfg.checks.as_ref().filter(|c| !c.0.is_empty());
    let kept_body = match checks {
        Some(c) if c.need_body() => record_body.max(crate::CHECK_BODY_BYTES),
        _ if cfg.step_reads.body => record_body.max(crate::CHECK_BODY_BYTES),
        _ => record_body,
    };
    let all_headers =
        cfg.keep_headers || cfg.step_reads.headers || checks.is_some_and(|c| c.need_headers());
    let keep_headers = all_headers || cfg.step_reads.cookies;
    Shape {
        limits: Limits {
            head_bytes: u32::try_from(cfg.max_header_bytes).unwrap_or(u32::MAX),
            keep_body: kept_body,
            keep_headers,
            // Only the jar reads them: barrage's HTTP/1.1 engine keeps the
            // Set-Cookie (and Location) lines alone (two strings a header
            // for the rest were ~4% of a flow step's CPU).
            jar_only: !all_headers,
            stream: cfg.stream.as_ref().is_some_and(|s| s.http),
        },
        keepalive: cfg.keepalive,
        chunked: cfg.chunked,
        attack,
        max_body: kept_body,
        keep_headers,
        // A flow's jar follows redirects itself: hyper's paths then keep a
        // 3xx's headers, its Location among them.
        follow: cfg.redirects >= 0 && step_redirects(cfg).is_none(),
        timeout: cfg.timeout,
        max_message: cfg.grpc_max_message,
        grpc_streams: cfg.grpc_streams.clone(),
        ws_frame: cfg.ws_frame,
        ws_max_message: crate::proto::ws::max_message(cfg),
        ws_events: cfg.ws_events,
    }
}

/// `-max-body` as a record keeps it.
fn record_body(cfg: &ClientConfig) -> i64 {
    match cfg.max_body {
        n if n < 0 => crate::MAX_KEPT_BODY,
        n => n.min(crate::MAX_KEPT_BODY),
    }
}

/// A flow's jar follows its steps' redirects itself, up to this many.
fn step_redirects(cfg: &ClientConfig) -> Option<i64> {
    (cfg.step_reads.cookies && cfg.redirects >= 0).then_some(cfg.redirects)
}

/// What the clients of one attack's worker threads share: the TLS
/// configuration (certificates read and parsed once), the
/// `-max-connections` cap, and how connections are dialed (one DNS cache,
/// one turn for `-connect-to` and `-laddr`).
pub struct Shared {
    tls: TlsConnector,
    /// For WebSocket's upgrades: ALPN http/1.1 only.
    tls_h1: TlsConnector,
    open_limit: Option<Arc<tokio::sync::Semaphore>>,
    dial: Arc<Dial>,
    /// `-http3`'s QUIC configuration.
    quic: Option<QuicConfig>,
}

impl Shared {
    /// Reads the TLS files `cfg` names; the error names the flag.
    pub fn new(cfg: &ClientConfig) -> Result<Self, TlsError> {
        let mut h1 = cfg.clone();
        h1.http2 = false;
        Ok(Shared {
            tls: Client::tls(cfg)?,
            tls_h1: Client::tls(&h1)?,
            open_limit: Client::open_limit(cfg),
            dial: Arc::new(Dial::new(cfg)),
            quic: cfg.http3.then(|| QuicConfig::new(cfg)).transpose()?,
        })
    }
}

impl Client {
    /// The TLS side of `cfg` (certificates read and parsed once), to share
    /// between the clients of one attack.
    pub(crate) fn tls(cfg: &ClientConfig) -> Result<TlsConnector, TlsError> {
        let mut tls = tls::client_config(cfg)?;
        tls.alpn_protocols = if cfg.http2 {
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        } else {
            vec![b"http/1.1".to_vec()]
        };
        Ok(TlsConnector::from(Arc::new(tls)))
    }

    /// The `-max-connections` cap, to share between the clients of one
    /// attack (`None`: unlimited).
    fn open_limit(cfg: &ClientConfig) -> Option<Arc<tokio::sync::Semaphore>> {
        (cfg.max_connections > 0)
            .then(|| Arc::new(tokio::sync::Semaphore::new(cfg.max_connections)))
    }

    /// A client for one worker thread, sharing with the others what
    /// [`Shared`] holds. Call it inside the thread's runtime.
    pub fn sharing(cfg: &ClientConfig, shared: &Shared) -> Self {
        let pool = Arc::new(
            Pool::new(
                shared.tls.clone(),
                shared.tls_h1.clone(),
                cfg.h2c,
                cfg.keepalive,
                cfg.connections,
                shared.open_limit.clone(),
                shared.dial.clone(),
                cfg.h1_engine,
            )
            .with_max_header_bytes(cfg.max_header_bytes)
            .with_quic(shared.quic.clone(), cfg.h3_streams),
        );
        let record_body = record_body(cfg);
        let checks = cfg.checks.clone().filter(|c| !c.0.is_empty());
        let step_redirects = step_redirects(cfg);
        Client {
            pool,
            shape: shape(cfg),
            pipeline: cfg.pipeline.max(1),
            queue: cfg.h1_engine == crate::H1Engine::Own && cfg.keepalive,
            timeout: cfg.timeout,
            redirects: match step_redirects {
                Some(_) => -1,
                None => cfg.redirects,
            },
            step_redirects,
            stream: cfg.stream.clone().map(|mut s| {
                if let Some(c) = &checks {
                    s.patterns = c.event_patterns();
                }
                Arc::new(s)
            }),
            checks,
            record_body,
            record_headers: cfg.keep_headers,
            queues: queued::Queues::default(),
            ws: crate::proto::ws::Ws::new(
                shared.dial.clone(),
                shared.tls_h1.clone(),
                shared.open_limit.clone(),
                cfg,
            ),
            hold: cfg.keepalive && cfg.max_connections == 0,
        }
    }

    /// Opens an idle connection to `uri`'s host ahead of the attack;
    /// false when it could not (the requests will record why).
    pub async fn warm(&self, uri: &Uri) -> bool {
        match Key::of(uri) {
            Ok(key) => self.pool.warm(&key).await,
            Err(_) => false,
        }
    }

    /// Sends `target` as hit `seq`, follows redirects, reads the whole body.
    /// Errors are the transport's, worded like Go's: `Get "url": …`.
    // An async block, not an async fn: see `send_serial`.
    #[allow(clippy::manual_async_fn)]
    pub fn send<'a>(
        &'a self,
        target: &'a Arc<PreparedTarget>,
        seq: u64,
    ) -> impl std::future::Future<Output = Result<Response, crate::Failure>> + Send + 'a {
        async move {
            if self.pipeline > 1 && self.queue && !target.ws {
                let r = self
                    .limited(target, Box::pin(self.send_queued(target, seq)))
                    .await;
                return self.judged(r);
            }
            if let Some(tape) = self.tape_for(target) {
                // Boxed: a streamed request's tape stays out of every other
                // request's future (held small: see send/sizes.rs).
                let exchange = Box::pin(self.exchange(target, seq, None, OnTask));
                let r = Box::pin(self.taped(target, tape, exchange)).await;
                return self.judged(r);
            }
            // Boxed: the exchange's state machine is several KiB, and moving it
            // by value through every spawn showed as 10% memmove in the profile.
            let exchange = Box::pin(self.exchange(target, seq, None, Unobserved));
            let r = self.limited(target, exchange).await;
            self.judged(r)
        }
    }

    /// A WebSocket connection of its own for `target`, held open by the
    /// caller (`-hold`); `Err` is the record of a failed open.
    pub async fn ws_hold(
        &self,
        target: &PreparedTarget,
    ) -> Result<crate::WsHeld, Result<Response, crate::Failure>> {
        self.ws.hold(target, self.shape.max_body).await
    }

    /// `-timeout` (`None`: none).
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// `result` after the `-check`s: a response that fails one gets its
    /// error; then the body and headers are cut to what the record keeps.
    /// Every send path calls it; `-hold`'s replies go through it too.
    pub fn judged(
        &self,
        result: Result<Response, crate::Failure>,
    ) -> Result<Response, crate::Failure> {
        let Some(checks) = &self.checks else {
            return result;
        };
        result.map(|mut r| {
            // 101: a WebSocket reply (an HTTP answer's final status is
            // never 1xx).
            if r.error.is_none() && ((200..400).contains(&r.code) || r.code == crate::WS_OK) {
                r.error = match &r.events {
                    Some(e) => {
                        let seen = crate::Seen {
                            count: e.1.count,
                            matched: &e.1.matched,
                        };
                        checks.verdict_streamed(r.code, &r.body, &r.headers, &seen)
                    }
                    None => checks.verdict(r.code, &r.body, &r.headers),
                };
            }
            r.body.truncate(self.record_body.max(0) as usize);
            if !self.record_headers {
                r.headers = Vec::new();
            }
            r
        })
    }

    /// The `-timeout` for `target`: its `-mix` group's, else the attack's.
    pub(crate) fn timeout_for(&self, target: &PreparedTarget) -> Option<Duration> {
        target.timeout_or(self.timeout)
    }

    /// `exchange` under `-timeout`.
    // An async block, not an async fn: see `send_serial`.
    #[allow(clippy::manual_async_fn)]
    pub(crate) fn limited<'a>(
        &'a self,
        target: &'a PreparedTarget,
        exchange: impl std::future::Future<Output = Result<Response, crate::Failure>> + Send + 'a,
    ) -> impl std::future::Future<Output = Result<Response, crate::Failure>> + Send + 'a {
        async move {
            match self.timeout_for(target) {
                // The timeout is looked up again for its error rather than
                // kept across the wait (16 bytes a waiting request).
                Some(t) => match tokio::time::timeout(t, exchange).await {
                    Ok(r) => r,
                    Err(_) => Err(timed_out(
                        target,
                        self.timeout_for(target).unwrap_or_default(),
                    )),
                },
                None => exchange.await,
            }
        }
    }

    /// [`Client::send`] for a loop that sends one request after another
    /// (the closed model), with what it keeps between them: see [`LoopState`].
    // An async fn would keep its arguments twice in its future.
    #[allow(clippy::manual_async_fn)]
    pub fn send_serial<'a>(
        &'a self,
        target: &'a PreparedTarget,
        seq: u64,
        serial: &'a mut LoopState,
    ) -> impl std::future::Future<Output = Result<Response, crate::Failure>> + Send + 'a {
        // An async block rather than an async fn, and the WebSocket path
        // boxed: a closed-model loop holds this future for the whole
        // attack (18,000 loops in the held-connections cell), and an
        // async fn keeps its arguments twice.
        async move {
            let LoopState { timer, kept } = serial;
            let kept = if self.hold { Some(kept) } else { None };
            if let Some(tape) = self.tape_for(target) {
                // Boxed, as in `send`: the tape stays out of the loop's
                // future.
                let streamed = Box::pin(async move {
                    let exchange = Box::pin(self.exchange(target, seq, kept, OnTask));
                    let timed = self.on_timer(target, timer.as_mut(), exchange);
                    let r = crate::events::scoped(tape.clone(), timed).await;
                    words::streamed(r, &tape)
                });
                return self.judged(streamed.await);
            }
            let exchange = Box::pin(self.exchange(target, seq, kept, Unobserved));
            let r = self.on_timer(target, timer.as_mut(), exchange).await;
            self.judged(r)
        }
    }

    /// `kept`'s connection if it goes to `key` and can take a request; one
    /// to another host goes back to the pool.
    fn take_kept(&self, kept: &mut HeldConn, key: &Key) -> Option<Conn> {
        let conn = kept.conn.take()?;
        match &kept.key {
            Some(k) if k == key => conn.is_ready().then_some(conn),
            Some(k) => {
                self.pool.put(k, conn);
                None
            }
            None => None,
        }
    }

    // An async fn would keep its arguments twice in its future.
    #[allow(clippy::manual_async_fn)]
    pub(crate) fn exchange<'a, O: Observe + 'a>(
        &'a self,
        target: &'a PreparedTarget,
        seq: u64,
        mut kept: Option<&'a mut HeldConn>,
        obs: O,
    ) -> impl std::future::Future<Output = Result<Response, crate::Failure>> + Send + 'a {
        // An async block, not an async fn: see `send_serial`.
        async move {
            // A redirect's request, boxed: a request's future is held as long
            // as it waits for its answer, so what only redirects need stays
            // out of it (18,000 held connections: see the engine's notes).
            let mut hop: Option<Box<Hop>> = None;
            let mut stale = 0u32;
            loop {
                // The target's own key, built once; a redirect's is built
                // with its hop.
                let key = match &hop {
                    Some(h) => h
                        .key
                        .as_ref()
                        .map_err(|e| failed(hop.as_deref(), target, e)),
                    None => target.key.as_ref().map_err(|e| failed(None, target, e)),
                }?;
                let conn = match kept.as_deref_mut().and_then(|k| self.take_kept(k, key)) {
                    Some(conn) => conn,
                    None => Box::pin(self.pool.get(key))
                        .await
                        .map_err(|e| failed(hop.as_deref(), target, &e))?,
                };
                // The exchange names its connection in the response. A
                // redirect's hops before this one are summed in its boxed
                // `Hop`; a request sent again after a kept connection turned
                // out closed keeps only the connection it went out on last
                // (the closed one was reused: it cost nothing).
                let ask = Ask {
                    target,
                    hop: hop.as_deref(),
                    key,
                    dial: self.pool.dial(),
                    seq,
                    retry: stale < MAX_STALE_RETRIES,
                };
                // What is kept across the exchange is `ask` alone: the
                // request's parts, its key and its error's wording are
                // looked up in it again after (a waiting request's
                // future: 18,000 held connections).
                let answer = match conn.exchange(&self.shape, &ask, obs.clone()).await {
                    Step::Again => {
                        stale += 1;
                        continue;
                    }
                    Step::Done(r) => return r.map(|r| after(hop.as_deref(), r)),
                    Step::Answer(a) => a,
                };
                let (key, fail) = (ask.key, |e: &dyn std::fmt::Display| ask.fail(e));
                let crate::core::response::Answer {
                    code,
                    location,
                    response,
                    conn,
                } = answer;
                let (method, uri, body) = ask.parts();
                // A redirect is followed (its body was read, so the connection
                // can be reused); a 3xx without a Location is the answer.
                if let Some(loc) = location.filter(|_| self.redirects >= 0) {
                    if let Some(conn) = conn {
                        self.keep(kept.as_deref_mut(), key, conn);
                    }
                    let request = (method, uri, body);
                    let link = response.link.as_ref();
                    let next = follow(
                        self.redirects,
                        target,
                        hop.as_deref(),
                        request,
                        code,
                        &loc,
                        link,
                    );
                    hop = Some(next.map_err(|e| fail(&e))?);
                    continue;
                }
                if let (Some(conn), None) = (conn, &response.error) {
                    self.keep(kept, key, conn);
                }
                return Ok(after(hop.as_deref(), response));
            }
        }
    }

    /// Gives a connection whose response was read back: to the loop that
    /// keeps it (`kept`), or to the pool.
    fn keep(&self, kept: Option<&mut HeldConn>, key: &Key, conn: Conn) {
        match kept {
            Some(k) => {
                if k.key.as_ref() != Some(key) {
                    k.key = Some(key.clone());
                }
                k.conn = Some(conn);
            }
            None => self.pool.put(key, conn),
        }
    }
}
