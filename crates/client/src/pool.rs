//! Connections per host for one worker thread: idle ones kept for reuse
//! (a connection that carries one request at a time), one shared
//! connection where a protocol carries many requests at once, and the
//! `-max-connections` cap. Protocol-blind: the transport is opened by
//! `transport/connect.rs`, which says what it will speak; the protocols'
//! handshake (`proto/mod.rs`) makes the connection; the pool keeps what
//! it is given, and asks a connection only whether it carries many
//! requests at once ([`Conn::carries_many`], [`Conn::share`]) and whether
//! it is ready.

use std::{
    collections::{HashMap, VecDeque},
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use tokio::sync::{oneshot, Notify, OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsConnector;

use crate::{
    core::key::Key,
    proto::{Conn, Protocols},
    transport::{connect::Connector, dial::Dial, proxy::ProxyUrl, quic::QuicConfig},
    H1Engine,
};

/// Most connections a worker thread opens at once; requests beyond wait
/// for one of them or for a connection given back. On loopback a connection
/// takes ~50 µs to open, so this still opens hundreds of thousands a
/// second when a slow server needs them; `-workers` opens them up front.
const MAX_CONNECTING: usize = 16;

/// How long an idle connection is kept unused before it is closed,
/// the next time another one to its host is given back (so a host keeps the
/// one it used last, however slow the rate). A stall of a few milliseconds at 20,000/s
/// opens hundreds of connections for the requests due meanwhile; kept for
/// ever, each held ~30 KiB of this process (and a slot of the server's) for
/// the rest of the attack: RSS climbed 25 -> 33 MiB over 60 s at 20,000/s
/// on this machine. Go's transport closes idle connections after 90 s.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Default)]
struct HostPool {
    /// Idle connections, least recently given back first: the next request
    /// takes the newest (warm in cache), the oldest is the one to close.
    idle: VecDeque<(Conn, Instant)>,
    /// The connection every request shares (HTTP/2, HTTP/3).
    multiplexed: Option<Conn>,
    /// Whether a multiplexed connection is being opened (HTTP/3: one at
    /// a time), how many attempts were made, and the last one's failure.
    opening: bool,
    attempts: u64,
    failed: Option<(u64, crate::Failure)>,
}

/// Connections per host, opened on demand: idle HTTP/1.1 connections are
/// reused (up to `-connections` kept per host), an HTTP/2 connection is
/// shared by every request until the server closes it (GOAWAY), and
/// `-max-connections` caps how many are open at once.
pub(crate) struct Pool {
    hosts: Mutex<HashMap<Key, HostPool, foldhash::fast::RandomState>>,
    keepalive: bool,
    max_idle: usize,
    open_limit: Option<Arc<Semaphore>>,
    /// Signalled when an idle connection is given back (wakes a request
    /// waiting for one).
    given_back: Notify,
    /// Connections being opened now, at most [`MAX_CONNECTING`].
    connecting: AtomicUsize,
    /// Signalled when a connection attempt ends.
    attempt_ended: Notify,
    /// Signalled (to all) when a multiplexed connection's attempt ends.
    shared_ended: Notify,
    /// Opens a host's transport (its dialer shared by the worker
    /// threads' pools: one DNS cache and one turn for `-connect-to`).
    connector: Connector,
    /// The handshakes of the protocols a transport may carry.
    protocols: Protocols,
    /// [`IDLE_TIMEOUT`] (shorter in tests).
    idle_timeout: Duration,
}

impl Pool {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        tls: TlsConnector,
        tls_h1: TlsConnector,
        h2c: bool,
        keepalive: bool,
        max_idle: usize,
        open_limit: Option<Arc<Semaphore>>,
        dial: Arc<Dial>,
        engine: H1Engine,
    ) -> Self {
        Pool {
            hosts: Mutex::new(HashMap::default()),
            keepalive,
            max_idle,
            open_limit,
            given_back: Notify::new(),
            connecting: AtomicUsize::new(0),
            attempt_ended: Notify::new(),
            shared_ended: Notify::new(),
            connector: Connector::new(tls, tls_h1, h2c, dial),
            protocols: Protocols {
                engine,
                max_header_bytes: crate::config::DEFAULT_MAX_HEADER_BYTES,
                h3_streams: 0,
            },
            idle_timeout: IDLE_TIMEOUT,
        }
    }

    /// With `-http3` (and `-h3-streams`): https:// over QUIC.
    pub(crate) fn with_quic(mut self, quic: Option<QuicConfig>, streams: usize) -> Self {
        self.connector = self.connector.with_quic(quic);
        self.protocols.h3_streams = streams;
        self
    }

    /// With `-max-header-bytes`.
    pub(crate) fn with_max_header_bytes(mut self, n: usize) -> Self {
        self.protocols.max_header_bytes = n;
        self
    }

    /// A connection to `key`: a live idle or shared one, else the first of
    /// a connection given back and one opened for this request (which, if
    /// it loses, goes to the pool). At most [`MAX_CONNECTING`] are being
    /// opened at once, and at the `-max-connections` cap a request waits
    /// for a connection given back or one closing.
    ///
    /// Without the race and the bound, a worker that fell behind (its
    /// responses waiting to be read, so its connections look busy) opened
    /// a connection for every request due meanwhile, and fell further
    /// behind: at 20,000/s on one thread, 8,000 connections and seconds of
    /// lag after a hiccup of a few milliseconds.
    pub(crate) async fn get(self: &Arc<Self>, key: &Key) -> Result<Conn, crate::Failure> {
        loop {
            if let Some(c) = self.reuse(key) {
                return Ok(c);
            }
            if self.multiplexes(key) {
                match Box::pin(self.one_opening(key)).await {
                    Some(r) => return r,
                    None => continue,
                }
            }
            if self.connecting.load(Ordering::Acquire) >= MAX_CONNECTING {
                let given_back = self.given_back.notified();
                let ended = self.attempt_ended.notified();
                // A shared connection kept since the look above wakes
                // only waiters made before it (notify_waiters).
                if let Some(c) = self.reuse(key) {
                    return Ok(c);
                }
                tokio::select! {
                    _ = given_back => {}
                    _ = ended => {}
                }
                continue;
            }
            let permit = match &self.open_limit {
                None => None,
                Some(limit) => match limit.clone().try_acquire_owned() {
                    Ok(p) => Some(p),
                    Err(_) => {
                        let given_back = self.given_back.notified();
                        tokio::select! {
                            p = limit.clone().acquire_owned() => Some(p.map_err(|e| e.to_string())?),
                            _ = given_back => continue,
                        }
                    }
                },
            };
            let mut opened = self.open(key, permit);
            loop {
                let given_back = self.given_back.notified();
                tokio::select! {
                    r = &mut opened => {
                        return r.unwrap_or_else(|_| Err(crate::Failure::from("connection attempt cancelled")));
                    }
                    _ = given_back => {
                        if let Some(c) = self.reuse(key) {
                            return Ok(c);
                        }
                    }
                }
            }
        }
    }

    /// Whether connections to `key` carry every request at once, known
    /// before one is open (HTTP/3; HTTP/2 is known only by ALPN).
    fn multiplexes(&self, key: &Key) -> bool {
        self.keepalive && self.connector.shared_before_open(key)
    }

    /// For a multiplexed protocol: one connection attempt per host at a
    /// time, and the requests that come meanwhile wait for it (without
    /// this, the first burst opened 16 QUIC connections per thread, and
    /// requests waiting for a connection given back, which a multiplexed
    /// one never is, waited for ever). `None`: look again (another's
    /// attempt made a connection); a failed attempt is the error of every
    /// request that waited for it.
    async fn one_opening(self: &Arc<Self>, key: &Key) -> Option<Result<Conn, crate::Failure>> {
        let ended = self.shared_ended.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        let waiting_for = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            let host = hosts.entry(key.clone()).or_default();
            if host.multiplexed.as_ref().and_then(Conn::share).is_some() {
                return None;
            }
            if host.opening {
                Some(host.attempts)
            } else {
                host.opening = true;
                host.attempts += 1;
                None
            }
        };
        if let Some(attempt) = waiting_for {
            ended.await;
            let hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            return match hosts.get(key).and_then(|h| h.failed.as_ref()) {
                Some((n, e)) if *n == attempt => Some(Err(e.clone())),
                _ => None,
            };
        }
        let permit = match &self.open_limit {
            None => None,
            Some(limit) => limit.clone().acquire_owned().await.ok(),
        };
        let opened = self.connect(key, permit).await;
        {
            let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            let host = hosts.entry(key.clone()).or_default();
            host.opening = false;
            host.failed = opened.as_ref().err().map(|e| (host.attempts, e.clone()));
        }
        self.shared_ended.notify_waiters();
        Some(opened)
    }

    /// Opens a connection on its own task; the receiver gets it, or the
    /// pool does when the receiver is gone.
    fn open(
        self: &Arc<Self>,
        key: &Key,
        permit: Option<OwnedSemaphorePermit>,
    ) -> oneshot::Receiver<Result<Conn, crate::Failure>> {
        self.connecting.fetch_add(1, Ordering::AcqRel);
        let (tx, rx) = oneshot::channel();
        let (pool, key) = (self.clone(), key.clone());
        tokio::spawn(async move {
            let result = pool.connect(&key, permit).await;
            pool.connecting.fetch_sub(1, Ordering::AcqRel);
            pool.attempt_ended.notify_one();
            if let Err(Ok(conn)) = tx.send(result) {
                // Nobody waits for it: keep it once it can take a request
                // (a shared one is kept as the host's already).
                if !conn.carries_many() {
                    if let Some(conn) = conn.ready().await {
                        pool.put(&key, conn);
                    }
                }
            }
        });
        rx
    }

    fn reuse(&self, key: &Key) -> Option<Conn> {
        if !self.keepalive {
            return None;
        }
        let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        let host = hosts.get_mut(key)?;
        if let Some(m) = &host.multiplexed {
            if let Some(c) = m.share() {
                return Some(c);
            }
            host.multiplexed = None;
        }
        while let Some((c, _)) = host.idle.pop_back() {
            if c.is_ready() {
                return Some(c);
            }
        }
        None
    }

    /// The proxy that connections to `key` go through, if any.
    pub(crate) fn proxy(&self, key: &Key) -> Option<&ProxyUrl> {
        self.connector.dial().proxy(key)
    }

    /// How connections are dialed (what an exchange asks of the proxies).
    pub(crate) fn dial(&self) -> &Dial {
        self.connector.dial()
    }

    /// Opens a connection to `key` ahead of the first request and leaves
    /// it idle (`-workers`); failures are left for the requests to record.
    /// False when it could not be opened.
    pub(crate) async fn warm(&self, key: &Key) -> bool {
        if !self.keepalive {
            return true;
        }
        // A shared connection is kept as the host's by connect().
        let permit = match &self.open_limit {
            None => None,
            // Never wait for the cap here: warming is only a head start.
            Some(limit) => match limit.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) => return true,
            },
        };
        match Box::pin(self.connect(key, permit)).await {
            Ok(conn) if conn.carries_many() => conn.is_ready(),
            Ok(conn) => match conn.ready().await {
                Some(conn) => {
                    self.put(key, conn);
                    true
                }
                None => false,
            },
            Err(_) => false,
        }
    }

    /// Gives a connection back after its response was read (a shared
    /// one is the host's already: nothing to do).
    pub(crate) fn put(&self, key: &Key, conn: Conn) {
        if !self.keepalive || conn.carries_many() || !conn.is_ready() {
            return;
        }
        let now = Instant::now();
        let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        // One lookup when the host is known (every request but the first).
        let kept = match hosts.get_mut(key) {
            Some(host) if host.idle.len() < self.max_idle => {
                host.idle.push_back((conn, now));
                // Close what has not been needed for the idle timeout
                // (sorted by the time given back: the oldest in front; the
                // one given back now is never among them).
                while let Some((_, at)) = host.idle.front() {
                    if now.duration_since(*at) <= self.idle_timeout {
                        break;
                    }
                    host.idle.pop_front();
                }
                true
            }
            Some(_) => false,
            None if self.max_idle > 0 => {
                let host = HostPool {
                    idle: VecDeque::from([(conn, now)]),
                    ..HostPool::default()
                };
                hosts.insert(key.clone(), host);
                true
            }
            None => false,
        };
        drop(hosts);
        if kept {
            self.given_back.notify_one();
        }
    }

    /// Opens a connection to `key`: its transport, then the handshake of
    /// what the transport carries; a connection every request shares is
    /// kept as the host's.
    async fn connect(
        &self,
        key: &Key,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Result<Conn, crate::Failure> {
        let transport = self.connector.open(key).await?;
        let conn = self
            .protocols
            .handshake(transport, &key.host, permit)
            .await?;
        self.keep_shared(key, &conn);
        Ok(conn)
    }

    /// Keeps a connection that every request shares as `key`'s, and wakes
    /// every request waiting for a connection: a multiplexed one is never
    /// given back, so without this the requests of a burst beyond
    /// [`MAX_CONNECTING`] waited for ever (for their `-timeout`: 68 of 100
    /// at once over HTTP/2 with TLS).
    fn keep_shared(&self, key: &Key, conn: &Conn) {
        if self.keepalive {
            if let Some(shared) = conn.share() {
                let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
                hosts.entry(key.clone()).or_default().multiplexed = Some(shared);
                drop(hosts);
                self.given_back.notify_waiters();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::h1::H1;
    use barrage_testkit::Server;

    fn idle(pool: &Pool, key: &Key) -> usize {
        let hosts = pool.hosts.lock().unwrap();
        hosts.get(key).map_or(0, |h| h.idle.len())
    }

    async fn ready(pool: &Arc<Pool>, key: &Key) -> Conn {
        match pool.get(key).await {
            Ok(conn) if !conn.carries_many() => conn.ready().await.unwrap(),
            Ok(_) => panic!("a multiplexed connection on plain HTTP"),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn idle_connections_unused_for_the_timeout_are_closed_at_the_next_give_back() {
        let server = Server::http();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let cfg = crate::ClientConfig::default();
            let tls = crate::Client::tls(&cfg).unwrap();
            let dial = Arc::new(Dial::new(&cfg));
            let tls_h1 = tls.clone();
            let mut pool = Pool::new(tls, tls_h1, false, true, 100, None, dial, H1Engine::Hyper);
            pool.idle_timeout = Duration::from_millis(100);
            let pool = Arc::new(pool);
            let key = Key::of(&server.url("/").parse().unwrap()).unwrap();

            // Three needed at once: three opened, all kept while fresh.
            let (a, b, c) =
                tokio::join!(ready(&pool, &key), ready(&pool, &key), ready(&pool, &key));
            for s in [a, b, c] {
                pool.put(&key, s);
            }
            assert_eq!(idle(&pool, &key), 3);

            // Then one at a time for longer than the timeout: the two not
            // needed are closed at the next give-back; the one in use stays.
            tokio::time::sleep(Duration::from_millis(150)).await;
            let d = ready(&pool, &key).await;
            assert_eq!(idle(&pool, &key), 2);
            pool.put(&key, d);
            assert_eq!(idle(&pool, &key), 1);

            // The one used last stays however long it waits, and serves.
            tokio::time::sleep(Duration::from_millis(150)).await;
            let Conn::H1(H1::Hyper(mut e)) = ready(&pool, &key).await else {
                panic!("hyper's engine was asked for");
            };
            let req = http::Request::get("/")
                .header(http::header::HOST, key.host.as_str())
                .body(http_body_util::Full::new(bytes::Bytes::new()))
                .unwrap();
            assert_eq!(e.send_request(req).await.unwrap().status(), 200);
            e.ready().await.unwrap();
            pool.put(&key, Conn::H1(H1::Hyper(e)));
            assert_eq!(idle(&pool, &key), 1);
            assert_eq!(server.connections(), 3, "no connection opened again");
        });
    }
}
