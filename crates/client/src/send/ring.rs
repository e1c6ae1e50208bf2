//! `-io ring`'s client ([`RingClient`]): the policy above one exchange of
//! barrage's HTTP/1.1 engine on monoio (`proto/h1/ring.rs`), for one
//! worker thread that parks in `io_uring_enter`. It keeps tokio's client's
//! rules where it carries them: Go's error words, `-timeout` over the
//! whole request, redirects (Go's rules, `carry.rs`), a kept connection
//! found closed sent again, `-keepalive`, `-connections` and `-pipeline`
//! in the closed model (`send/pipeline.rs`'s batch, over the same
//! [`crate::proto::h1::Pipe`]), https:// with `-http2=false`
//! (`transport/ring_tls.rs`). What it does
//! not carry (proxies, HTTP/2 and 3, gRPC, WebSocket, `-stream`,
//! `-check`, flows, `-connect-to`, `-laddr`, `-unix-socket`,
//! `-max-connections`, `-resolvers`) the flags refuse with `-io ring`
//! ([`RingClient::unsupported`]).

use std::{
    cell::{Cell, RefCell},
    collections::HashMap,
    future::Future,
    net::{IpAddr, SocketAddr, ToSocketAddrs},
    pin::pin,
    rc::Rc,
    sync::Arc,
    task::Poll,
    time::{Duration, Instant},
};

use tokio::sync::{oneshot, Notify};

use super::{
    deadlines::Deadlines,
    pipeline::{answers, ended_at, unanswered, Answered},
    redirect::{after, follow},
    words::timed_out,
    MAX_STALE_RETRIES,
};
use crate::{
    core::{ask::Hop, error::go_failed, key::Key, shape::Shape},
    proto::h1::{
        own::{broken_off, response_of, target_wire, wire},
        ring::{connect, RingConn},
        Framer, Stamps, Wire,
    },
    transport::{
        dial::{first_address, go_error, lookup_error, HostPort},
        opened::{nanos, Claim, Opened},
        ring_tls::{RingStream, RingTls},
    },
    ClientConfig, Failure, PreparedTarget, Response,
};

/// The client of one `-io ring` worker thread: its idle connections and
/// the addresses it looked up. Not `Send`: it lives on its thread.
pub struct RingClient {
    shape: Shape,
    timeout: Option<Duration>,
    /// `-timeout`'s deadlines, one timer for the thread's requests.
    deadlines: Option<Rc<Deadlines>>,
    /// `-mix` groups' own `-timeout`s' deadlines, a queue each.
    group_deadlines: RefCell<Vec<(Duration, Rc<Deadlines>)>>,
    redirects: i64,
    pipeline: usize,
    /// https:// (`-http2=false` only: see [`RingTls`]).
    tls: Option<monoio_rustls::TlsConnector>,
    /// Idle connections kept per host (`-connections`).
    keep: usize,
    /// (foldhash: looked up twice a request; SipHash was 1% of the
    /// thread's samples at 20,000/s.)
    idle: RefCell<HashMap<Key, Vec<RingConn>, foldhash::fast::RandomState>>,
    /// Hosts' addresses and when they were looked up (a name blocks the
    /// thread while it is: `-io ring` is for a load generator's own
    /// targets; `-resolvers` it does not carry).
    addrs: RefCell<HashMap<HostPort, (Addrs, Instant)>>,
    /// `-dns-ttl` (`None`: no cache; zero: for the whole attack).
    dns_ttl: Option<Duration>,
    /// `-dns-select`, and each host's next turn for its round-robin.
    select: crate::DnsSelect,
    turns: RefCell<HashMap<HostPort, usize>>,
    /// Connections being opened, at most [`MAX_CONNECTING`].
    connecting: Cell<usize>,
    /// Woken when a connection is given back, and when an open ends.
    given_back: Notify,
    attempt_ended: Notify,
}

/// Why an https:// request is not sent: the ring speaks no HTTP/2, which
/// `-http2` offers.
const NO_HTTPS: &str = "-io ring sends https:// only with -http2=false (HTTP/1.1 over TLS)";

/// A host's addresses.
type Addrs = Arc<[SocketAddr]>;

/// Most connections a thread opens at once, as tokio's pool
/// (`pool.rs`): requests beyond wait for one of them or for a connection
/// given back. Without it, a thread that fell behind a few milliseconds
/// opened a connection for every request due meanwhile (2,000 to 18,000
/// in 5 s at 20,000/s, connects taking 50 ms to seconds as the server's
/// accept queue overflowed), and fell further behind.
const MAX_CONNECTING: usize = 16;

/// Which of two futures ended first.
enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Polls `a` then `b` until one ends.
async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let (mut a, mut b) = (pin!(a), pin!(b));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(v));
        }
        b.as_mut().poll(cx).map(Either::Right)
    })
    .await
}

impl RingClient {
    /// The client for `cfg` (call [`RingClient::unsupported`] first), with
    /// the attack's TLS ([`RingTls::new`]).
    pub fn new(cfg: &ClientConfig, tls: Option<&RingTls>) -> Self {
        RingClient {
            tls: tls.map(RingTls::connector),
            shape: super::shape(cfg),
            timeout: cfg.timeout,
            deadlines: cfg.timeout.map(Deadlines::new),
            group_deadlines: RefCell::new(Vec::new()),
            redirects: cfg.redirects,
            pipeline: cfg.pipeline.max(1),
            keep: if cfg.keepalive {
                cfg.connections.max(1)
            } else {
                0
            },
            idle: RefCell::new(HashMap::default()),
            addrs: RefCell::new(HashMap::new()),
            dns_ttl: cfg.dns_ttl,
            select: cfg.dns_select,
            turns: RefCell::new(HashMap::new()),
            connecting: Cell::new(0),
            given_back: Notify::new(),
            attempt_ended: Notify::new(),
        }
    }

    /// What in `cfg` this client cannot do, as the flag a user typed.
    pub fn unsupported(cfg: &ClientConfig) -> Option<&'static str> {
        let checks = cfg.checks.as_ref().is_some_and(|c| !c.0.is_empty());
        [
            (cfg.h2c, "-h2c"),
            (cfg.http3, "-http3"),
            (cfg.stream.as_ref().is_some_and(|s| s.http), "-stream"),
            (checks, "-check"),
            (!cfg.connect_to.is_empty(), "-connect-to"),
            (!cfg.laddr.is_empty(), "-laddr"),
            (cfg.unix_socket.is_some(), "-unix-socket"),
            (cfg.proxies.is_some(), "-proxy"),
            (cfg.max_connections > 0, "-max-connections"),
            (!cfg.resolvers.is_empty(), "-resolvers"),
            (cfg.h1_engine == crate::H1Engine::Hyper, "-h1-engine hyper"),
            (
                cfg.step_reads.cookies || cfg.step_reads.body || cfg.step_reads.headers,
                "-format flow",
            ),
        ]
        .into_iter()
        .find_map(|(on, flag)| on.then_some(flag))
    }

    /// Whether the client for `cfg` sends `target`: an HTTP/1.1 request
    /// (not WebSocket, h2c or gRPC) to a host it can dial, over TLS only
    /// with `-http2=false`.
    pub fn carries(cfg: &ClientConfig, target: &PreparedTarget) -> bool {
        !target.grpc
            && target
                .key
                .as_ref()
                .is_ok_and(|k| !(k.ws || k.h2c || (k.tls && cfg.http2)))
    }

    /// `-timeout`.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// `-pipeline`: requests a closed-model loop writes at once.
    pub fn pipeline(&self) -> usize {
        self.pipeline
    }

    /// Sends `batch` (requests with their sequence numbers) pipelined on
    /// one connection and reads their answers in order, as tokio's client
    /// does (`send/pipeline.rs`): `each` is called once per request, in
    /// order, with its index, its outcome and when that was complete; one
    /// `-timeout` over the batch; redirects recorded, not followed. A
    /// batch to more than one host is sent one request after another.
    pub async fn send_pipelined<F>(
        self: &Rc<Self>,
        batch: &[(Arc<PreparedTarget>, u64)],
        mut each: F,
    ) where
        F: FnMut(usize, Result<Response, Failure>, Instant),
    {
        let Some((first, _)) = batch.first() else {
            return;
        };
        let key = match &first.key {
            Ok(k) if batch.iter().all(|(t, _)| t.key.as_ref().ok() == Some(k)) => k,
            _ => {
                for (i, (t, seq)) in batch.iter().enumerate() {
                    let result = self.send(t, *seq).await;
                    let done = ended_at(&result);
                    each(i, result, done);
                }
                return;
            }
        };
        let fail = |t: &PreparedTarget, e: &dyn std::fmt::Display| {
            Failure(go_failed(t.method.as_str(), &t.uri, e))
        };
        let conn = if first.grpc || key.ws || key.h2c {
            Err(Failure::from("-io ring sends HTTP/1.1 requests only"))
        } else if key.tls && self.tls.is_none() {
            Err(Failure::from(NO_HTTPS))
        } else {
            self.get(key).await
        };
        let mut conn = match conn {
            Ok(c) => c,
            Err(e) => {
                for (i, (t, _)) in batch.iter().enumerate() {
                    each(i, Err(fail(t, &e)), Instant::now());
                }
                return;
            }
        };
        let requests: Vec<(&Wire, u64)> = batch
            .iter()
            .map(|(t, seq)| {
                (
                    t.wire.get_or_init(|| target_wire(&self.shape, t, None)),
                    *seq,
                )
            })
            .collect();
        let mut got = Answered::default();
        let timed_out_at = {
            let limits = self.shape.limits;
            let work = answers(&mut conn, batch, &requests, limits, &mut got, &mut each);
            match (&self.deadlines, self.timeout) {
                (Some(d), Some(t)) => d.within(work).await.is_none().then_some(t),
                _ => {
                    work.await;
                    None
                }
            }
        };
        unanswered(batch, &got, timed_out_at, &mut each);
        if timed_out_at.is_none() {
            self.put(key, conn);
        }
    }

    /// Sends `target`'s request `seq` and reads its answer, redirects
    /// followed, within `-timeout`.
    pub async fn send(
        self: &Rc<Self>,
        target: &PreparedTarget,
        seq: u64,
    ) -> Result<Response, Failure> {
        match self.deadlines_for(target) {
            Some((d, t)) => d
                .within(self.exchange(target, seq))
                .await
                .unwrap_or_else(|| Err(timed_out(target, t))),
            None => self.exchange(target, seq).await,
        }
    }

    /// The deadlines `target`'s request is held to, and its `-timeout`:
    /// the attack's, or a `-mix` group's own (a queue each, in order
    /// within it).
    fn deadlines_for(&self, target: &PreparedTarget) -> Option<(Rc<Deadlines>, Duration)> {
        let t = target.timeout_or(self.timeout)?;
        if self.timeout == Some(t) {
            return self.deadlines.clone().map(|d| (d, t));
        }
        let mut groups = self.group_deadlines.borrow_mut();
        let d = match groups.iter().find(|(g, _)| *g == t) {
            Some((_, d)) => d.clone(),
            None => {
                let d = Deadlines::new(t);
                groups.push((t, d.clone()));
                d
            }
        };
        Some((d, t))
    }

    /// Whether `target`'s answer may wait for the thread's next wake
    /// (`proto/h1/later.rs`): its `-timeout`, if any, is far longer than
    /// the wait can be.
    fn may_wait(&self, target: &PreparedTarget) -> bool {
        crate::h1::later::most().is_some_and(|most| {
            target
                .timeout_or(self.timeout)
                .is_none_or(|t| t >= most * 4)
        })
    }

    /// One request and the redirects it leads to.
    async fn exchange(
        self: &Rc<Self>,
        target: &PreparedTarget,
        seq: u64,
    ) -> Result<Response, Failure> {
        let mut hop: Option<Box<Hop>> = None;
        let mut stale = 0u32;
        loop {
            let (method, uri, body) = match hop.as_deref() {
                Some(h) => (&h.method, &h.uri, &h.body),
                None => (&target.method, &target.uri, &target.body),
            };
            let fail = |e: &dyn std::fmt::Display| Failure(go_failed(method.as_str(), uri, e));
            let key = match hop.as_deref() {
                Some(h) => h.key.as_ref(),
                None => target.key.as_ref(),
            }
            .map_err(|e| fail(e))?;
            if key.ws || key.h2c || target.grpc {
                return Err(fail(&"-io ring sends HTTP/1.1 requests only"));
            }
            if key.tls && self.tls.is_none() {
                return Err(fail(&NO_HTTPS));
            }
            let mut conn = self.get(key).await.map_err(|e| fail(&e))?;
            let wire = match hop.as_deref() {
                None => target
                    .wire
                    .get_or_init(|| target_wire(&self.shape, target, None)),
                Some(h) => h.wire.get_or_init(|| {
                    wire(&self.shape, &h.headers, &h.method, &h.uri, &h.body, None)
                }),
            };
            conn.may_wait(self.may_wait(target));
            let claim = Claim::on(conn.opened());
            let mut framer = Framer::new(self.shape.limits, wire.head_request);
            let mut stamps = Stamps::default();
            let sent = conn
                .exchange(&[(wire, seq)], &mut framer, &mut stamps)
                .await;
            if let Err(e) = sent {
                if conn.reused()
                    && !framer.started()
                    && wire.replayable
                    && stale < MAX_STALE_RETRIES
                {
                    stale += 1;
                    continue;
                }
                let mut r = if framer.head_done() {
                    broken_off(framer, stamps, fail(&e).0)
                } else {
                    return Err(fail(&e));
                };
                r.link = Some(claim.answered());
                return Ok(after(hop.as_deref(), r));
            }
            let location = framer.head.location.take().map(Vec::from);
            let mut response = response_of(framer, stamps);
            response.link = Some(claim.answered());
            let code = response.code;
            // A redirect is followed (its body was read: the connection
            // can be reused); a 3xx without a Location is the answer.
            if let Some(loc) = location.filter(|_| self.redirects >= 0) {
                self.put(key, conn);
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
            self.put(key, conn);
            return Ok(after(hop.as_deref(), response));
        }
    }

    /// Opens up to `n` idle connections to `uri`'s host ahead of the
    /// attack (stopping at the first that fails: the requests will say
    /// why).
    pub async fn warm(self: &Rc<Self>, uri: &http::Uri, n: usize) {
        let Ok(key) = Key::of(uri) else { return };
        if key.ws || key.h2c || (key.tls && self.tls.is_none()) {
            return;
        }
        for _ in 0..n.min(self.keep) {
            match self.open(&key).await {
                Ok(c) => self.put(&key, c),
                Err(_) => return,
            }
        }
    }

    /// A connection to `key`'s host: an idle one, else the first of a
    /// connection given back and one opened for this request (which, if it
    /// loses, is kept for the next); at most [`MAX_CONNECTING`] opening.
    async fn get(self: &Rc<Self>, key: &Key) -> Result<RingConn, Failure> {
        loop {
            if let Some(c) = self.idle_conn(key) {
                return Ok(c);
            }
            if self.connecting.get() >= MAX_CONNECTING {
                race(self.given_back.notified(), self.attempt_ended.notified()).await;
                continue;
            }
            self.connecting.set(self.connecting.get() + 1);
            let (tx, mut opened) = oneshot::channel();
            let (me, key2) = (self.clone(), key.clone());
            monoio::spawn(async move {
                let r = me.open(&key2).await;
                me.connecting.set(me.connecting.get() - 1);
                me.attempt_ended.notify_waiters();
                if let Err(Ok(c)) = tx.send(r) {
                    // Its request took a connection given back.
                    me.put(&key2, c);
                }
            });
            loop {
                match race(&mut opened, self.given_back.notified()).await {
                    Either::Left(r) => {
                        return r
                            .unwrap_or_else(|_| Err(Failure::from("connection attempt cancelled")))
                    }
                    Either::Right(()) => {
                        if let Some(c) = self.idle_conn(key) {
                            return Ok(c);
                        }
                    }
                }
            }
        }
    }

    /// An idle connection to `key`'s host, if one is kept.
    fn idle_conn(&self, key: &Key) -> Option<RingConn> {
        self.idle.borrow_mut().get_mut(key)?.pop()
    }

    /// Keeps `conn` for the next request to `key`'s host, if it may carry
    /// one and there is room.
    fn put(&self, key: &Key, conn: RingConn) {
        if !conn.is_open() || conn.has_leftover() || self.keep == 0 {
            return;
        }
        {
            let mut idle = self.idle.borrow_mut();
            match idle.get_mut(key) {
                Some(v) if v.len() < self.keep => v.push(conn),
                Some(_) => return,
                None => {
                    idle.insert(key.clone(), vec![conn]);
                }
            }
        }
        self.given_back.notify_waiters();
    }

    /// A new connection to `key`'s host, its costs measured; the error in
    /// Go's words (`dial tcp 127.0.0.1:1: connect: connection refused`).
    async fn open(&self, key: &Key) -> Result<RingConn, Failure> {
        let began = std::time::Instant::now();
        let addrs = self.lookup(&key.host, key.port)?;
        let dns = match key.host.parse::<IpAddr>() {
            Ok(_) => 0,
            Err(_) => crate::transport::opened::nanos(began),
        };
        let mut last = format!("dial tcp: lookup {}: no addresses", key.host);
        let start = {
            let mut turns = self.turns.borrow_mut();
            first_address(self.select, &mut turns, &key.host, key.port, addrs.len())
        };
        for addr in addrs.iter().cycle().skip(start).take(addrs.len()) {
            match connect(*addr).await {
                Ok((stream, took)) => {
                    let local = stream.local_addr().ok();
                    let opened = Opened::new(dns, took, Some(*addr), local);
                    let Some(tls) = self.tls.as_ref().filter(|_| key.tls) else {
                        let stream = RingStream::Plain(stream);
                        return Ok(RingConn::new(stream, Arc::new(opened)));
                    };
                    let began = Instant::now();
                    let stream = RingStream::secure(tls, &key.host, stream).await?;
                    let opened = opened.with_tls(nanos(began));
                    return Ok(RingConn::new(stream, Arc::new(opened)));
                }
                Err((step, e)) => last = format!("dial tcp {addr}: {step}: {}", go_error(&e)),
            }
        }
        Err(Failure(last))
    }

    /// `host`'s addresses (brackets of an IPv6 literal dropped).
    fn lookup(&self, host: &str, port: u16) -> Result<Addrs, Failure> {
        let name = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = name.parse::<IpAddr>() {
            return Ok(Arc::from([SocketAddr::new(ip, port)]));
        }
        let key = (name.to_string(), port);
        if let Some(ttl) = self.dns_ttl {
            if let Some((addrs, at)) = self.addrs.borrow().get(&key) {
                if ttl.is_zero() || at.elapsed() < ttl {
                    return Ok(addrs.clone());
                }
            }
        }
        let found: Arc<[SocketAddr]> = (name, port)
            .to_socket_addrs()
            .map_err(|e| Failure(format!("dial tcp: lookup {name}: {}", lookup_error(&e))))?
            .collect();
        if self.dns_ttl.is_some() && !found.is_empty() {
            self.addrs
                .borrow_mut()
                .insert(key, (found.clone(), Instant::now()));
        }
        Ok(found)
    }
}
