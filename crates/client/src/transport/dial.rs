//! How a connection is opened: where to (`-unix-socket`, `-connect-to`, a
//! proxy), from where (`-laddr`), and how host names become addresses
//! (`-dns-ttl`, `-resolvers`). TLS and HTTP come after, in the pool.

use std::{
    collections::HashMap,
    io,
    net::{IpAddr, SocketAddr},
    path::PathBuf,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::{lookup_host, TcpSocket, UnixStream},
};

use crate::{
    core::key::Key,
    transport::{
        opened::{nanos, Opened},
        proxy::{Proxies, ProxyUrl},
    },
};

/// A connection's byte stream, whatever carries it (TCP, a Unix socket,
/// TLS over either, a proxy's tunnel).
pub(crate) trait Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Stream for T {}

/// A boxed [`Stream`].
pub(crate) type BoxStream = Box<dyn Stream>;

/// A host name's addresses and when they were looked up.
type Resolved = (Arc<[SocketAddr]>, Instant);

pub(crate) type HostPort = (String, u16);

/// Addresses used in turn: the next is `next % len`.
#[derive(Default)]
struct RoundRobin {
    to: Vec<HostPort>,
    next: AtomicUsize,
}

/// Where connections go when not to the URL's host:port (`-unix-socket`,
/// `-connect-to`), from where (`-laddr`), and how host names become
/// addresses (`-dns-ttl`, `-resolvers`). One per attack, shared by the
/// worker threads' pools.
pub(crate) struct Dial {
    /// `-laddr`: local addresses, used in turn for new connections.
    laddrs: Vec<IpAddr>,
    next_laddr: AtomicUsize,
    unix_socket: Option<PathBuf>,
    /// For each mapped host:port, where to instead, taken in turn.
    connect_to: HashMap<HostPort, RoundRobin>,
    /// `-dns-ttl` (`None`: no cache; zero: for the whole attack).
    dns_ttl: Option<Duration>,
    /// Addresses looked up, and when.
    dns: Mutex<HashMap<HostPort, Resolved>>,
    /// `-resolvers` (empty: the system's resolver).
    resolvers: crate::transport::dns::Resolvers,
    /// `-dns-select`: which of a name's addresses a new connection tries
    /// first.
    select: crate::DnsSelect,
    /// `-dns-select rr`: each host's next turn.
    turns: Mutex<HashMap<HostPort, usize>>,
    /// `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`, `-proxy-header`.
    proxies: Option<Proxies>,
    /// Longest a TCP connect (or a proxy's `CONNECT`) may take (`-timeout`).
    connect_timeout: Option<Duration>,
    /// `-io uring`, where this process may use it: streams go through the
    /// thread's ring.
    uring: bool,
}

impl Dial {
    pub(crate) fn new(cfg: &crate::ClientConfig) -> Self {
        let mut connect_to: HashMap<HostPort, RoundRobin> = HashMap::new();
        for m in &cfg.connect_to {
            connect_to
                .entry(m.from.clone())
                .or_default()
                .to
                .push(m.to.clone());
        }
        Dial {
            uring: cfg.io.resolve().0,
            laddrs: cfg.laddr.clone(),
            next_laddr: AtomicUsize::new(0),
            unix_socket: cfg.unix_socket.clone(),
            connect_to,
            dns_ttl: cfg.dns_ttl,
            dns: Mutex::default(),
            resolvers: crate::transport::dns::Resolvers::new(cfg.resolvers.clone()),
            select: cfg.dns_select,
            turns: Mutex::default(),
            // vegeta's h2c transport and a Unix socket dial no proxy.
            proxies: cfg
                .proxies
                .clone()
                .filter(|_| cfg.unix_socket.is_none() && !cfg.h2c),
            connect_timeout: cfg.timeout,
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
    pub(crate) async fn resolve(&self, host: &str, port: u16) -> io::Result<Arc<[SocketAddr]>> {
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
            self.resolvers.lookup(host, port).await?.into()
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

    /// Where among `addrs` (a host's, in the resolver's order) a new
    /// connection starts trying (`-dns-select`); the others follow in turn
    /// when a connect fails.
    fn first(&self, host: &str, port: u16, addrs: &[SocketAddr]) -> usize {
        let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        first_address(self.select, &mut turns, host, port, addrs.len())
    }

    /// The local address for the next connection (`-laddr`, in turn):
    /// the next of those of the destination's family, or of all when none
    /// is (the bind then says what is wrong).
    fn laddr(&self, v6: bool) -> Option<IpAddr> {
        if self.laddrs.is_empty() {
            return None;
        }
        let n = self.next_laddr.fetch_add(1, Ordering::Relaxed);
        let fit = || self.laddrs.iter().filter(|ip| ip.is_ipv6() == v6);
        match fit().count() {
            0 => Some(self.laddrs[n % self.laddrs.len()]),
            count => fit().nth(n % count).copied(),
        }
    }

    /// Opens the byte stream for a connection to `key`: a Unix socket, TCP
    /// to the host (or its `-connect-to` destination), or a proxy's
    /// tunnel for TLS (plain HTTP goes to the proxy itself, which takes
    /// absolute URLs). TLS is the caller's. Errors are worded as Go's.
    pub(crate) async fn open(&self, key: &Key) -> Result<(BoxStream, Opened), crate::Failure> {
        self.open_via(key, key.tls).await
    }

    /// [`Dial::open`] with a proxy's tunnel for plain connections too
    /// (WebSocket: after the upgrade the bytes are not HTTP a proxy
    /// could forward).
    pub(crate) async fn open_tunneled(
        &self,
        key: &Key,
    ) -> Result<(BoxStream, Opened), crate::Failure> {
        self.open_via(key, true).await
    }

    /// The stream, with what its lookup and connect took and its ends.
    async fn open_via(
        &self,
        key: &Key,
        tunnel: bool,
    ) -> Result<(BoxStream, Opened), crate::Failure> {
        if let Some(path) = &self.unix_socket {
            let began = Instant::now();
            let stream = self
                .limited(UnixStream::connect(path))
                .await
                .map_err(|e| format!("dial unix {}: connect: {}", path.display(), go_error(&e)))?;
            let opened = Opened::new(0, nanos(began), None, None);
            return Ok((
                self.carry(stream, |s| s.into_std().map(Into::into))?,
                opened,
            ));
        }
        let proxy = self.proxy(key);
        let (host, port) = match proxy {
            Some(p) => (p.host.as_str(), p.port),
            None => self.address(key),
        };
        // Go's words for a failure on the way to a proxy.
        let via = if proxy.is_some() {
            "proxyconnect tcp: "
        } else {
            ""
        };
        let began = Instant::now();
        let addrs = self
            .resolve(host, port)
            .await
            .map_err(|e| format!("{via}dial tcp: lookup {host}: {}", lookup_error(&e)))?;
        // An address needs no lookup: no DNS time, not the parse's.
        let dns = match host.parse::<IpAddr>() {
            Ok(_) => 0,
            Err(_) => nanos(began),
        };
        let connecting = Instant::now();
        let mut last_err = format!("{via}dial tcp: lookup {host}: no addresses");
        let mut stream = None;
        let first = self.first(host, port, &addrs);
        for i in 0..addrs.len() {
            let addr = addrs[(first + i) % addrs.len()];
            let socket = if addr.is_ipv4() {
                TcpSocket::new_v4()
            } else {
                TcpSocket::new_v6()
            };
            let socket =
                socket.map_err(|e| format!("dial tcp {addr}: socket: {}", go_error(&e)))?;
            if let Some(ip) = self.laddr(addr.is_ipv6()) {
                no_port_at_bind(&socket);
                socket
                    .bind(SocketAddr::new(ip, 0))
                    .map_err(|e| format!("dial tcp {addr}: bind {ip}: {}", go_error(&e)))?;
            }
            match self.limited(socket.connect(addr)).await {
                Ok(s) => {
                    stream = Some((s, addr));
                    break;
                }
                Err(e) => last_err = format!("{via}dial tcp {addr}: connect: {}", go_error(&e)),
            }
        }
        let (mut stream, remote) = stream.ok_or(last_err)?;
        let _ = stream.set_nodelay(true);
        // The address connected to is the remote end (no getpeername);
        // the local one is the kernel's choice (getsockname).
        let (remote, local) = (Some(remote), stream.local_addr().ok());
        if let (Some(p), true) = (proxy, tunnel) {
            if let Some(proxies) = &self.proxies {
                let tunnel = proxies.connect(&mut stream, key, p);
                match self.connect_timeout {
                    Some(t) => tokio::time::timeout(t, tunnel).await.unwrap_or_else(|_| {
                        Err(crate::Failure::from("proxyconnect tcp: i/o timeout"))
                    })?,
                    None => tunnel.await?,
                }
            }
        }
        let opened = Opened::new(dns, nanos(connecting), remote, local);
        Ok((
            self.carry(stream, |s| s.into_std().map(Into::into))?,
            opened,
        ))
    }

    /// `stream` as a connection's stream: through the thread's io_uring
    /// ring with `-io uring` where the thread can have one, else as it is
    /// (on tokio's epoll reactor).
    fn carry<S: Stream>(
        &self,
        stream: S,
        fd: impl FnOnce(S) -> io::Result<std::os::fd::OwnedFd>,
    ) -> Result<BoxStream, crate::Failure> {
        if !(self.uring && crate::transport::uring::usable_here()) {
            return Ok(Box::new(stream));
        }
        let fd = fd(stream).map_err(|e| format!("io_uring: {}", go_error(&e)))?;
        Ok(Box::new(crate::transport::uring::UringStream::new(fd)))
    }

    /// Where a QUIC connection for `key` goes (the host or its
    /// `-connect-to` destination, looked up; the first address), and the
    /// `-laddr` it goes from. Errors are worded as Go's.
    /// `-dns-select` picks among the host's addresses. The lookup's time
    /// comes with them, nanoseconds.
    pub(crate) async fn udp_address(
        &self,
        key: &Key,
    ) -> Result<(SocketAddr, Option<IpAddr>, u64), crate::Failure> {
        let (host, port) = self.address(key);
        let began = Instant::now();
        let addrs = self
            .resolve(host, port)
            .await
            .map_err(|e| format!("dial udp: lookup {host}: {}", lookup_error(&e)))?;
        // An IP literal is no lookup: no DNS time (a record showed one).
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok();
        let dns = if literal { 0 } else { nanos(began) };
        if addrs.is_empty() {
            return Err(format!("dial udp: lookup {host}: no addresses").into());
        }
        let to = addrs[self.first(host, port, &addrs)];
        Ok((to, self.laddr(to.is_ipv6()), dns))
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
}

/// Where among a host's `n` addresses a new connection starts trying
/// under `select` (`-dns-select`); `turns` keeps each host's next turn
/// for round-robin. Both clients' dialers use it (tokio's, `-io ring`'s).
pub(crate) fn first_address(
    select: crate::DnsSelect,
    turns: &mut HashMap<HostPort, usize>,
    host: &str,
    port: u16,
    n: usize,
) -> usize {
    if n < 2 {
        return 0;
    }
    match select {
        crate::DnsSelect::First => 0,
        crate::DnsSelect::Random => fastrand::usize(..n),
        crate::DnsSelect::RoundRobin => {
            let turn = match turns.get_mut(&(host.to_string(), port)) {
                Some(t) => t,
                None => turns.entry((host.to_string(), port)).or_insert(0),
            };
            let at = *turn % n;
            *turn = turn.wrapping_add(1);
            at
        }
    }
}

/// Asks the kernel to choose a bound socket's port at `connect`, not at
/// `bind` (`IP_BIND_ADDRESS_NO_PORT`): a port chosen at `bind` must be free
/// toward every destination, so each `-laddr` address shares one pool of
/// ~28k ports among all of them; chosen at `connect`, a port need only be
/// free toward this destination. Best effort: kernels before 4.2 lack it,
/// and the bind then works as before.
pub(crate) fn no_port_at_bind(socket: &TcpSocket) {
    use std::os::fd::AsRawFd;
    let one: libc::c_int = 1;
    // SAFETY: a valid socket descriptor and a c_int of the size given.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// A system error as Go words it ("connection refused"), not as Rust does
/// ("Connection refused (os error 111)"): vegeta users match on the text.
/// Running out of descriptors names the limit, which is what to raise.
pub(crate) fn go_error(e: &io::Error) -> String {
    let text = e.to_string();
    let text = match (e.raw_os_error(), text.rfind(" (os error ")) {
        (Some(_), Some(i)) => &text[..i],
        _ => &text[..],
    };
    let mut chars = text.chars();
    let mut out: String = chars
        .next()
        .map(|first| first.to_lowercase().chain(chars).collect())
        .unwrap_or_default();
    if e.raw_os_error() == Some(libc::EMFILE) {
        if let Some(limit) = descriptor_limit() {
            out.push_str(&format!(" (limit {limit})"));
        }
    }
    out
}

/// This process's soft limit on open descriptors.
fn descriptor_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    ok.then_some(lim.rlim_cur)
}

/// A failed lookup as Go words it: "no such host" for a name that does not
/// exist (getaddrinfo says "Name or service not known").
pub(crate) fn lookup_error(e: &io::Error) -> String {
    let text = go_error(e);
    if text.contains("Name or service not known")
        || text.contains("No address associated with hostname")
    {
        "no such host".to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn local_addresses_are_used_in_turn_by_family() {
        let cfg = crate::ClientConfig {
            laddr: vec![
                "127.0.0.2".parse().unwrap(),
                "::1".parse().unwrap(),
                "127.0.0.3".parse().unwrap(),
            ],
            ..Default::default()
        };
        let d = Dial::new(&cfg);
        let v4: Vec<String> = (0..4)
            .map(|_| d.laddr(false).unwrap().to_string())
            .collect();
        assert_eq!(v4, ["127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3"]);
        assert_eq!(d.laddr(true).unwrap().to_string(), "::1");
        assert!(Dial::new(&crate::ClientConfig::default())
            .laddr(false)
            .is_none());
    }

    /// With `IP_BIND_ADDRESS_NO_PORT`, a bound socket has no port until
    /// it connects (the kernel then picks one free toward that
    /// destination); without it, `bind` takes a port for every
    /// destination at once.
    #[test]
    fn a_bound_socket_gets_its_port_at_connect() {
        use std::os::fd::AsRawFd;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let to = server.local_addr().unwrap();
            let socket = TcpSocket::new_v4().unwrap();
            no_port_at_bind(&socket);
            let mut on: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: a valid socket and a c_int of the size given.
            let got = unsafe {
                libc::getsockopt(
                    socket.as_raw_fd(),
                    libc::IPPROTO_IP,
                    libc::IP_BIND_ADDRESS_NO_PORT,
                    (&mut on as *mut libc::c_int).cast(),
                    &mut len,
                )
            };
            assert_eq!((got, on), (0, 1));
            socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
            assert_eq!(socket.local_addr().unwrap().port(), 0, "no port at bind");
            let stream = socket.connect(to).await.unwrap();
            let local = stream.local_addr().unwrap();
            assert_eq!(local.ip().to_string(), "127.0.0.2");
            assert_ne!(local.port(), 0);

            let plain = TcpSocket::new_v4().unwrap();
            plain.bind("127.0.0.2:0".parse().unwrap()).unwrap();
            assert_ne!(plain.local_addr().unwrap().port(), 0, "a port at bind");
        });
    }

    #[test]
    fn system_errors_read_as_in_go() {
        let refused = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(go_error(&refused), "connection refused");
        let missing = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(go_error(&missing), "no such file or directory");
        assert_eq!(go_error(&io::Error::other("i/o timeout")), "i/o timeout");
        let emfile = go_error(&io::Error::from_raw_os_error(libc::EMFILE));
        assert!(
            emfile.starts_with("too many open files (limit "),
            "{emfile}"
        );
    }
}
