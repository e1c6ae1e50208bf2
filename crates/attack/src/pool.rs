use std::{
    collections::{HashMap, VecDeque},
    hash::{BuildHasherDefault, Hasher},
    io,
    net::{IpAddr, SocketAddr},
    path::PathBuf,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::Uri;
use http_body_util::Full;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::{lookup_host, TcpSocket, UnixStream},
    sync::{oneshot, Notify, OwnedSemaphorePermit, Semaphore},
};
use tokio_rustls::TlsConnector;

use crate::proxy::{Proxies, ProxyUrl};

/// A connection ready for one request (HTTP/1.1) or many at once (HTTP/2).
pub(crate) enum Conn {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

/// Most connections a worker thread opens at once; requests beyond wait
/// for one of them or for a connection given back. On loopback a connection
/// takes ~50 µs to open, so this still opens hundreds of thousands a
/// second when a slow server needs them; `-workers` opens them up front.
const MAX_CONNECTING: usize = 16;

/// Where a connection goes: scheme, host and port.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Key {
    pub tls: bool,
    pub host: String,
    pub port: u16,
}

impl Key {
    pub(crate) fn of(uri: &Uri) -> Result<Key, String> {
        let tls = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            other => return Err(format!("unsupported scheme {other:?}")),
        };
        let host = uri
            .host()
            .ok_or("missing host")?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        Ok(Key { tls, host, port })
    }
}

/// Where connections go when not to the URL's host:port (`-unix-socket`,
/// `-connect-to`), from where (`-laddr`), and how host names become
/// addresses (`-dns-ttl`, `-resolvers`).
#[derive(Default)]
pub(crate) struct Dial {
    pub laddr: Option<IpAddr>,
    pub unix_socket: Option<PathBuf>,
    /// For each mapped host:port, where to instead, taken in turn.
    connect_to: HashMap<HostPort, Turns>,
    /// `-dns-ttl` (`None`: no cache; zero: for the whole attack).
    dns_ttl: Option<Duration>,
    /// Addresses looked up, and when.
    dns: Mutex<HashMap<HostPort, Looked>>,
    /// `-resolvers` (empty: the system's resolver).
    resolvers: Vec<SocketAddr>,
    /// `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`, `-proxy-header`.
    proxies: Option<Proxies>,
}

/// A host name's addresses and when they were looked up.
type Looked = (Arc<[SocketAddr]>, Instant);

type HostPort = (String, u16);

/// Addresses used in turn: the next is `next % len`.
#[derive(Default)]
struct Turns {
    to: Vec<HostPort>,
    next: AtomicUsize,
}

impl Dial {
    pub(crate) fn new(cfg: &crate::ClientConfig) -> Self {
        let mut connect_to: HashMap<HostPort, Turns> = HashMap::new();
        for m in &cfg.connect_to {
            connect_to
                .entry(m.from.clone())
                .or_default()
                .to
                .push(m.to.clone());
        }
        Dial {
            laddr: cfg.laddr,
            unix_socket: cfg.unix_socket.clone(),
            connect_to,
            dns_ttl: cfg.dns_ttl,
            dns: Mutex::default(),
            resolvers: cfg.resolvers.clone(),
            // vegeta's h2c transport and a Unix socket dial no proxy.
            proxies: cfg
                .proxies
                .clone()
                .filter(|_| cfg.unix_socket.is_none() && !cfg.h2c),
        }
    }

    /// The proxy that connections to `key` go through, if any.
    pub(crate) fn proxy(&self, key: &Key) -> Option<&ProxyUrl> {
        self.proxies.as_ref()?.for_key(key)
    }

    /// `host`'s addresses: IP literals as they are, names looked up (on
    /// tokio's blocking pool) or taken from the cache while fresh, so that
    /// a burst of new connections does not look the same name up hundreds
    /// of times.
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Arc<[SocketAddr]>> {
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(Arc::new([SocketAddr::new(ip, port)]));
        }
        let key = (host.to_string(), port);
        if let Some(ttl) = self.dns_ttl {
            let cache = self.dns.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((addrs, at)) = cache.get(&key) {
                if ttl.is_zero() || at.elapsed() < ttl {
                    return Ok(addrs.clone());
                }
            }
        }
        let addrs: Arc<[SocketAddr]> = if self.resolvers.is_empty() {
            lookup_host((host, port)).await?.collect()
        } else {
            crate::dns::lookup(host, port, &self.resolvers)
                .await?
                .into()
        };
        if self.dns_ttl.is_some() && !addrs.is_empty() {
            let mut cache = self.dns.lock().unwrap_or_else(|p| p.into_inner());
            cache.insert(key, (addrs.clone(), Instant::now()));
        }
        Ok(addrs)
    }

    /// The host and port a new connection for `key` goes to.
    fn address<'a>(&'a self, key: &'a Key) -> (&'a str, u16) {
        if !self.connect_to.is_empty() {
            if let Some(t) = self.connect_to.get(&(key.host.clone(), key.port)) {
                let (host, port) = &t.to[t.next.fetch_add(1, Ordering::Relaxed) % t.to.len()];
                return (host, *port);
            }
        }
        (&key.host, key.port)
    }
}

/// How long an idle HTTP/1.1 connection is kept unused before it is closed,
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
    idle: VecDeque<(http1::SendRequest<Full<Bytes>>, Instant)>,
    h2: Option<http2::SendRequest<Full<Bytes>>>,
}

/// Connections per host, opened on demand: idle HTTP/1.1 connections are
/// reused (up to `-connections` kept per host), an HTTP/2 connection is
/// shared by every request until the server closes it (GOAWAY), and
/// `-max-connections` caps how many are open at once.
pub(crate) struct Pool {
    hosts: Mutex<HashMap<Key, HostPool, BuildHasherDefault<Fnv>>>,
    tls: TlsConnector,
    h2c: bool,
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
    /// Shared by the worker threads' pools: one DNS cache and one turn
    /// for `-connect-to` per attack.
    dial: Arc<Dial>,
    /// Longest a TCP connect may take (`-timeout`): an attempt outlives a
    /// request that gave up on it, and holds one of the few attempt slots.
    connect_timeout: Option<Duration>,
    /// [`IDLE_TIMEOUT`] (shorter in tests).
    idle_timeout: Duration,
}

impl Pool {
    pub(crate) fn new(
        tls: TlsConnector,
        h2c: bool,
        keepalive: bool,
        max_idle: usize,
        open_limit: Option<Arc<Semaphore>>,
        dial: Arc<Dial>,
        connect_timeout: Option<Duration>,
    ) -> Self {
        Pool {
            hosts: Mutex::new(HashMap::default()),
            tls,
            h2c,
            keepalive,
            max_idle,
            open_limit,
            given_back: Notify::new(),
            connecting: AtomicUsize::new(0),
            attempt_ended: Notify::new(),
            dial,
            connect_timeout,
            idle_timeout: IDLE_TIMEOUT,
        }
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
    pub(crate) async fn get(self: &Arc<Self>, key: &Key) -> Result<Conn, String> {
        loop {
            if let Some(c) = self.reuse(key) {
                return Ok(c);
            }
            if self.connecting.load(Ordering::Acquire) >= MAX_CONNECTING {
                let given_back = self.given_back.notified();
                let ended = self.attempt_ended.notified();
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
                        return r.unwrap_or_else(|_| Err("connection attempt cancelled".into()));
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

    /// Opens a connection on its own task; the receiver gets it, or the
    /// pool does when the receiver is gone.
    fn open(
        self: &Arc<Self>,
        key: &Key,
        permit: Option<OwnedSemaphorePermit>,
    ) -> oneshot::Receiver<Result<Conn, String>> {
        self.connecting.fetch_add(1, Ordering::AcqRel);
        let (tx, rx) = oneshot::channel();
        let (pool, key) = (self.clone(), key.clone());
        tokio::spawn(async move {
            let result = pool.connect(&key, permit).await;
            pool.connecting.fetch_sub(1, Ordering::AcqRel);
            pool.attempt_ended.notify_one();
            if let Err(Ok(Conn::H1(mut sender))) = tx.send(result) {
                // Nobody waits for it: keep it once it can take a request.
                if sender.ready().await.is_ok() {
                    pool.put(&key, sender);
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
        if let Some(h2) = &host.h2 {
            if !h2.is_closed() {
                return Some(Conn::H2(h2.clone()));
            }
            host.h2 = None;
        }
        while let Some((c, _)) = host.idle.pop_back() {
            if c.is_ready() {
                return Some(Conn::H1(c));
            }
        }
        None
    }

    /// The proxy that connections to `key` go through, if any.
    pub(crate) fn proxy(&self, key: &Key) -> Option<&ProxyUrl> {
        self.dial.proxy(key)
    }

    /// Opens a connection to `key` ahead of the first request and leaves
    /// it idle (`-workers`); failures are left for the requests to record.
    pub(crate) async fn warm(&self, key: &Key) {
        if !self.keepalive {
            return;
        }
        // An HTTP/2 connection is stored as the host's shared one by connect().
        let permit = match &self.open_limit {
            None => None,
            // Never wait for the cap here: warming is only a head start.
            Some(limit) => match limit.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) => return,
            },
        };
        if let Ok(Conn::H1(mut sender)) = Box::pin(self.connect(key, permit)).await {
            if sender.ready().await.is_ok() {
                self.put(key, sender);
            }
        }
    }

    /// Gives an HTTP/1.1 connection back after its response was read.
    pub(crate) fn put(&self, key: &Key, conn: http1::SendRequest<Full<Bytes>>) {
        if !self.keepalive || !conn.is_ready() {
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
                    h2: None,
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

    async fn connect(
        &self,
        key: &Key,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Result<Conn, String> {
        if let Some(path) = &self.dial.unix_socket {
            let stream = self
                .limited(UnixStream::connect(path))
                .await
                .map_err(|e| format!("dial unix {}: connect: {}", path.display(), go_error(&e)))?;
            return self.secure(key, stream, permit).await;
        }
        let proxy = self.dial.proxy(key);
        let (host, port) = match proxy {
            Some(p) => (p.host.as_str(), p.port),
            None => self.dial.address(key),
        };
        // Go's words for a failure on the way to a proxy.
        let via = if proxy.is_some() {
            "proxyconnect tcp: "
        } else {
            ""
        };
        let addrs = self
            .dial
            .resolve(host, port)
            .await
            .map_err(|e| format!("{via}dial tcp: lookup {host}: {}", lookup_error(&e)))?;
        let mut last_err = format!("{via}dial tcp: lookup {host}: no addresses");
        let mut stream = None;
        for &addr in addrs.iter() {
            let socket = if addr.is_ipv4() {
                TcpSocket::new_v4()
            } else {
                TcpSocket::new_v6()
            };
            let socket =
                socket.map_err(|e| format!("dial tcp {addr}: socket: {}", go_error(&e)))?;
            if let Some(ip) = self.dial.laddr {
                socket
                    .bind(SocketAddr::new(ip, 0))
                    .map_err(|e| format!("dial tcp {addr}: bind {ip}: {}", go_error(&e)))?;
            }
            match self.limited(socket.connect(addr)).await {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last_err = format!("{via}dial tcp {addr}: connect: {}", go_error(&e)),
            }
        }
        let mut stream = stream.ok_or(last_err)?;
        let _ = stream.set_nodelay(true);
        if let (Some(p), true) = (proxy, key.tls) {
            if let Some(proxies) = &self.dial.proxies {
                self.limited_tunnel(proxies.connect(&mut stream, key, p))
                    .await?;
            }
        }
        self.secure(key, stream, permit).await
    }

    /// A `CONNECT` through a proxy, given up after `-timeout`.
    async fn limited_tunnel(
        &self,
        tunnel: impl std::future::Future<Output = Result<(), String>>,
    ) -> Result<(), String> {
        match self.connect_timeout {
            Some(t) => tokio::time::timeout(t, tunnel)
                .await
                .unwrap_or_else(|_| Err("proxyconnect tcp: i/o timeout".into())),
            None => tunnel.await,
        }
    }

    /// `connect`, given up after `-timeout`.
    async fn limited<S>(
        &self,
        connect: impl std::future::Future<Output = io::Result<S>>,
    ) -> io::Result<S> {
        match self.connect_timeout {
            Some(t) => tokio::time::timeout(t, connect)
                .await
                .unwrap_or_else(|_| Err(io::Error::other("i/o timeout"))),
            None => connect.await,
        }
    }

    /// TLS over `stream` for https:// (named by the URL's host), then the
    /// HTTP handshake.
    async fn secure<S>(
        &self,
        key: &Key,
        stream: S,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Result<Conn, String>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        if key.tls {
            let name = ServerName::try_from(key.host.clone())
                .map_err(|e| format!("bad server name {}: {e}", key.host))?;
            let tls = self
                .tls
                .connect(name, stream)
                .await
                .map_err(|e| format!("tls: {}", tls_error(&e)))?;
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            self.handshake(key, TokioIo::new(tls), h2, permit).await
        } else {
            self.handshake(key, TokioIo::new(stream), self.h2c, permit)
                .await
        }
    }

    async fn handshake<T>(
        &self,
        key: &Key,
        io: TokioIo<T>,
        h2: bool,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Result<Conn, String>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        if h2 {
            let (sender, conn) = http2::handshake(TokioExecutor::new(), io)
                .await
                .map_err(|e| format!("http2 handshake: {e}"))?;
            tokio::spawn(async move {
                let _ = conn.await;
                drop(permit);
            });
            if self.keepalive {
                let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
                hosts.entry(key.clone()).or_default().h2 = Some(sender.clone());
            }
            Ok(Conn::H2(sender))
        } else {
            let (sender, conn) = http1::handshake(io)
                .await
                .map_err(|e| format!("http1 handshake: {e}"))?;
            tokio::spawn(async move {
                let _ = conn.await;
                drop(permit);
            });
            Ok(Conn::H1(sender))
        }
    }
}

/// FNV-1a: the pool is looked up twice per request with keys of a few
/// dozen bytes that no attacker chooses, so SipHash's cost buys nothing.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A system error as Go words it ("connection refused"), not as Rust does
/// ("Connection refused (os error 111)"): vegeta users match on the text.
fn go_error(e: &io::Error) -> String {
    let text = e.to_string();
    let text = match (e.raw_os_error(), text.rfind(" (os error ")) {
        (Some(_), Some(i)) => &text[..i],
        _ => &text[..],
    };
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A failed lookup as Go words it: "no such host" for a name that does not
/// exist (getaddrinfo says "Name or service not known").
fn lookup_error(e: &io::Error) -> String {
    let text = go_error(e);
    if text.contains("Name or service not known")
        || text.contains("No address associated with hostname")
    {
        "no such host".to_string()
    } else {
        text
    }
}

/// rustls errors, worded for people ("invalid peer certificate: UnknownIssuer").
fn tls_error(e: &std::io::Error) -> String {
    match e.get_ref() {
        Some(inner) => inner.to_string(),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use barrage_testkit::Server;

    fn idle(pool: &Pool, key: &Key) -> usize {
        let hosts = pool.hosts.lock().unwrap();
        hosts.get(key).map_or(0, |h| h.idle.len())
    }

    async fn ready(pool: &Arc<Pool>, key: &Key) -> http1::SendRequest<Full<Bytes>> {
        match pool.get(key).await {
            Ok(Conn::H1(mut sender)) => {
                sender.ready().await.unwrap();
                sender
            }
            Ok(Conn::H2(_)) => panic!("HTTP/2 on plain HTTP"),
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
            let mut pool = Pool::new(tls, false, true, 100, None, Arc::default(), None);
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
            let mut e = ready(&pool, &key).await;
            let req = http::Request::get("/")
                .header(http::header::HOST, key.host.as_str())
                .body(Full::new(Bytes::new()))
                .unwrap();
            assert_eq!(e.send_request(req).await.unwrap().status(), 200);
            e.ready().await.unwrap();
            pool.put(&key, e);
            assert_eq!(idle(&pool, &key), 1);
            assert_eq!(server.connections(), 3, "no connection opened again");
        });
    }

    #[test]
    fn names_are_looked_up_again_only_when_stale() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dial = |ttl| {
            let cfg = crate::ClientConfig {
                dns_ttl: ttl,
                ..Default::default()
            };
            Dial::new(&cfg)
        };
        // Addresses no lookup gives (TEST-NET-1; nothing connects to them).
        let planted: Arc<[SocketAddr]> = Arc::new(["192.0.2.1:80".parse().unwrap()]);
        let stale = Instant::now().checked_sub(Duration::from_secs(60)).unwrap();
        let key = ("localhost".to_string(), 80);
        let plant = |d: &Dial| {
            d.dns
                .lock()
                .unwrap()
                .insert(key.clone(), (planted.clone(), stale));
        };
        rt.block_on(async {
            // -dns-ttl 0: kept for the whole attack, however old.
            let d = dial(Some(Duration::ZERO));
            plant(&d);
            assert_eq!(&*d.resolve("localhost", 80).await.unwrap(), &*planted);

            // A TTL: older than it, looked up again (localhost: from the
            // hosts file) and the fresh answer kept.
            let d = dial(Some(Duration::from_secs(1)));
            plant(&d);
            let got = d.resolve("localhost", 80).await.unwrap();
            assert!(
                !got.is_empty() && got.iter().all(|a| a.ip().is_loopback()),
                "{got:?}"
            );
            let (kept, at) = d.dns.lock().unwrap()[&key].clone();
            assert!(at > stale);
            assert_eq!(&*kept, &*got);
            assert_eq!(&*d.resolve("localhost", 80).await.unwrap(), &*got);

            // -dns-ttl -1: nothing kept.
            let d = dial(None);
            plant(&d);
            let got = d.resolve("localhost", 80).await.unwrap();
            assert!(got.iter().all(|a| a.ip().is_loopback()), "{got:?}");
            assert_eq!(d.dns.lock().unwrap()[&key].1, stale, "not replaced");

            // IP literals: neither looked up nor kept.
            let d = dial(Some(Duration::ZERO));
            let got = d.resolve("127.0.0.1", 8080).await.unwrap();
            assert_eq!(&*got, &["127.0.0.1:8080".parse::<SocketAddr>().unwrap()]);
            assert!(d.dns.lock().unwrap().is_empty());
        });
    }

    #[test]
    fn system_errors_read_as_in_go() {
        let refused = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(go_error(&refused), "connection refused");
        let missing = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(go_error(&missing), "no such file or directory");
        assert_eq!(go_error(&io::Error::other("i/o timeout")), "i/o timeout");
    }
}
