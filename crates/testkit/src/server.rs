use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    thread,
    time::Duration,
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, service::service_fn, Request, Response, StatusCode};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::UnixListener,
    sync::oneshot,
};
use tokio_rustls::{rustls::HandshakeKind, TlsAcceptor};

use crate::TestCert;

/// Requests whose details are kept (the count goes on beyond this).
const KEEP: usize = 10_000;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Received {
    /// Method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// HTTP version, e.g. `HTTP/1.1`, `HTTP/2.0`.
    pub version: String,
    /// Headers (names lower case).
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Received {
    /// The value of header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) count: AtomicU64,
    pub(crate) connections: AtomicU64,
    pub(crate) resumed: AtomicU64,
    pub(crate) received: Mutex<Vec<Received>>,
    /// The addresses TCP connections came from.
    peers: Mutex<std::collections::BTreeSet<std::net::IpAddr>>,
    /// When each TCP connection was accepted (unix ns), and from where.
    accepted: Mutex<Vec<(i64, SocketAddr)>>,
    /// Each TLS handshake's client, start and end (unix ns).
    handshakes: Mutex<Vec<(SocketAddr, i64, i64)>>,
    /// The stateful app's sessions and items.
    app: barrage_serve::App,
}

/// How a [`Server`] listens and greets: where, TLS, and the delays that
/// make a connection's costs known.
#[derive(Clone, Default)]
struct Setup {
    /// Where to listen (`None`: 127.0.0.1, port 0).
    bind: Option<SocketAddr>,
    unix: Option<std::path::PathBuf>,
    tls: Option<TlsAcceptor>,
    goaway_after: Option<u64>,
    /// Waited after accepting, before the TLS handshake.
    tls_delay: Duration,
    /// Whether the first client's SYN is dropped: see [`Server::slow_connect`].
    slow_connect: bool,
}

/// Unix nanoseconds now.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

impl State {
    /// The first 10,000 requests received, in arrival order.
    pub(crate) fn received_all(&self) -> Vec<Received> {
        self.received.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// A loopback server on port 0, stopped when dropped.
pub struct Server {
    addr: SocketAddr,
    scheme: &'static str,
    state: Arc<State>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Server {
    /// HTTP/1.1 and h2c (prior knowledge) on one port.
    pub fn http() -> Self {
        Self::start(None, None)
    }

    /// As [`Server::http`], on `addr` (such as `127.0.0.2:PORT`: several
    /// loopback addresses on one port, for a name with several); `None`
    /// when it is taken.
    pub fn http_at(addr: SocketAddr) -> Option<Self> {
        std::net::TcpListener::bind(addr).ok()?;
        Some(Self::with(Setup {
            bind: Some(addr),
            ..Setup::default()
        }))
    }

    /// HTTPS with `cert` whose handshake starts `tls_delay` after the
    /// connection is accepted, so that a client's TLS time is known to
    /// be at least that.
    pub fn https_delayed(cert: &TestCert, tls_delay: Duration) -> Self {
        Self::with(Setup {
            tls: Some(TlsAcceptor::from(cert.server_config())),
            tls_delay,
            ..Setup::default()
        })
    }

    /// As [`Server::http`], but the first client's connect takes about a
    /// second: the listen queue holds one connection and starts full (the
    /// server's own, accepted 100 ms later), so the kernel drops the
    /// client's SYN and the client sends it again after its initial
    /// retransmission timeout (1 s on Linux). A delayed `accept` alone
    /// would not do: the kernel completes a TCP handshake before any
    /// `accept`. [`Server::accepted`] tells when each connection came.
    pub fn slow_connect() -> Self {
        Self::with(Setup {
            slow_connect: true,
            ..Setup::default()
        })
    }

    /// As [`Server::http`], but each connection is shut down gracefully
    /// after `n` requests: an HTTP/2 GOAWAY, or `Connection: close` on
    /// HTTP/1.1.
    pub fn http_goaway_after(n: u64) -> Self {
        Self::start(None, Some(n))
    }

    /// HTTPS with `cert` (ALPN h2 and http/1.1).
    pub fn https(cert: &TestCert) -> Self {
        Self::start(Some(TlsAcceptor::from(cert.server_config())), None)
    }

    /// As [`Server::http`], listening on the Unix socket `path` instead
    /// (its [`Server::url`] names a TCP port nobody listens on).
    pub fn http_unix(path: &std::path::Path) -> Self {
        Self::start_on(Some(path.to_path_buf()), None, None)
    }

    fn start(tls: Option<TlsAcceptor>, goaway_after: Option<u64>) -> Self {
        Self::start_on(None, tls, goaway_after)
    }

    fn start_on(
        unix: Option<std::path::PathBuf>,
        tls: Option<TlsAcceptor>,
        goaway_after: Option<u64>,
    ) -> Self {
        Self::with(Setup {
            unix,
            tls,
            goaway_after,
            ..Setup::default()
        })
    }

    fn with(setup: Setup) -> Self {
        let state = Arc::new(State::default());
        let (stop_tx, stop_rx) = oneshot::channel();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let scheme = if setup.tls.is_some() { "https" } else { "http" };
        let st = state.clone();
        let thread = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("test server runtime");
            rt.block_on(serve(st, setup, addr_tx, stop_rx));
        });
        let addr = addr_rx.recv().expect("test server started");
        Server {
            addr,
            scheme,
            state,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// An absolute URL for `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{}", self.scheme, self.addr, path)
    }

    /// Requests received so far.
    pub fn count(&self) -> u64 {
        self.state.count.load(Ordering::SeqCst)
    }

    /// What the stateful app (`/login`, `/me`, `/items`) answered.
    pub fn app(&self) -> barrage_serve::AppTally {
        self.state.app.tally()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// TLS handshakes so far that resumed an earlier session.
    pub fn resumed_handshakes(&self) -> u64 {
        self.state.resumed.load(Ordering::SeqCst)
    }

    /// Requests received over `version` (e.g. `HTTP/1.1`, `HTTP/2.0`), of
    /// the first 10,000.
    pub fn count_version(&self, version: &str) -> usize {
        self.received()
            .iter()
            .filter(|r| r.version == version)
            .count()
    }

    /// The addresses TCP connections came from, sorted.
    pub fn peer_ips(&self) -> Vec<std::net::IpAddr> {
        self.state
            .peers
            .lock()
            .map(|p| p.iter().copied().collect())
            .unwrap_or_default()
    }

    /// The first 10,000 requests received, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.state.received_all()
    }

    /// Each TLS handshake's client, and when it began and ended (unix ns).
    pub fn handshakes(&self) -> Vec<(SocketAddr, i64, i64)> {
        self.state
            .handshakes
            .lock()
            .map(|h| h.clone())
            .unwrap_or_default()
    }

    /// When each TCP connection of a client was accepted (unix ns), and
    /// where from, in order.
    pub fn accepted(&self) -> Vec<(i64, SocketAddr)> {
        self.state
            .accepted
            .lock()
            .map(|a| a.clone())
            .unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(
    state: Arc<State>,
    setup: Setup,
    addr_tx: std::sync::mpsc::Sender<SocketAddr>,
    mut stop: oneshot::Receiver<()>,
) {
    let Setup {
        bind,
        unix,
        tls,
        goaway_after,
        tls_delay,
        slow_connect,
    } = setup;
    let bind = bind.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
    let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
    let _ = socket.set_reuseaddr(true);
    socket.bind(bind).expect("bind the test server's address");
    // A queue of one (Linux: full when it holds more than the backlog).
    let listener = socket
        .listen(if slow_connect { 0 } else { 1024 })
        .expect("listen");
    let addr = listener.local_addr().expect("local addr");
    // The server's own connection fills the queue; it is taken off 100 ms
    // later, before the client's SYN is sent again.
    let plug = if slow_connect {
        let plug = tokio::net::TcpStream::connect(addr).await.expect("plug");
        Some(plug)
    } else {
        None
    };
    let _ = addr_tx.send(addr);
    if let Some(plug) = plug {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let _ = listener.accept().await;
        drop(plug);
    }
    if let Some(path) = unix {
        let _ = std::fs::remove_file(&path);
        let unix = UnixListener::bind(&path).expect("bind unix socket");
        loop {
            let accepted = tokio::select! {
                a = unix.accept() => a,
                _ = &mut stop => return,
            };
            let Ok((stream, _)) = accepted else { continue };
            tokio::spawn(serve_conn(
                state.clone(),
                stream,
                tls.clone(),
                goaway_after,
                None,
            ));
        }
    }
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut stop => return,
        };
        let Ok((stream, peer)) = accepted else {
            continue;
        };
        if let Ok(mut p) = state.peers.lock() {
            p.insert(peer.ip());
        }
        if let Ok(mut a) = state.accepted.lock() {
            a.push((unix_now(), peer));
        }
        let _ = stream.set_nodelay(true);
        let (state, tls) = (state.clone(), tls.clone());
        tokio::spawn(async move {
            if !tls_delay.is_zero() {
                tokio::time::sleep(tls_delay).await;
            }
            serve_conn(state, stream, tls, goaway_after, Some(peer)).await
        });
    }
}

/// Serves one accepted connection (TCP or Unix socket).
async fn serve_conn<S>(
    state: Arc<State>,
    stream: S,
    tls: Option<TlsAcceptor>,
    goaway_after: Option<u64>,
    peer: Option<SocketAddr>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    state.connections.fetch_add(1, Ordering::SeqCst);
    let st = state.clone();
    let served = Arc::new(AtomicU64::new(0));
    let enough = Arc::new(tokio::sync::Notify::new());
    let (n, e) = (served.clone(), enough.clone());
    let service = service_fn(move |req| {
        if goaway_after.is_some_and(|limit| n.fetch_add(1, Ordering::SeqCst) + 1 == limit) {
            e.notify_one();
        }
        handle(state.clone(), req)
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    match tls {
        None => {
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = enough.notified() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        }
        Some(acceptor) => {
            let began = unix_now();
            let accepted = acceptor.accept(stream).await;
            if let (Some(peer), Ok(mut h), true) = (peer, st.handshakes.lock(), accepted.is_ok()) {
                h.push((peer, began, unix_now()));
            }
            if let Ok(s) = accepted {
                if s.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed) {
                    st.resumed.fetch_add(1, Ordering::SeqCst);
                }
                let _ = builder.serve_connection(TokioIo::new(s), service).await;
            }
        }
    }
}

fn reply(status: u16, body: impl Into<Bytes>) -> Response<crate::grpc::Body> {
    let mut r = Response::new(Full::new(body.into()).boxed());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r
}

async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Response<crate::grpc::Body>, &'static str> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    route(&state, parts, body).await
}

/// The test server's answer to a request read whole: the routes every
/// protocol's server shares (HTTP/1.1, HTTP/2, HTTP/3). The request is
/// counted and kept in `state`.
pub(crate) async fn route(
    state: &State,
    parts: http::request::Parts,
    body: Vec<u8>,
) -> Result<Response<crate::grpc::Body>, &'static str> {
    let path = parts
        .uri
        .path_and_query()
        .map_or("/".to_string(), |p| p.to_string());
    state.count.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut r) = state.received.lock() {
        if r.len() < KEEP {
            r.push(Received {
                method: parts.method.to_string(),
                path: path.clone(),
                version: format!("{:?}", parts.version),
                headers: parts
                    .headers
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.to_string(),
                            String::from_utf8_lossy(v.as_bytes()).into_owned(),
                        )
                    })
                    .collect(),
                body: body.clone(),
            });
        }
    }
    if crate::grpc::is_grpc(&parts.headers) {
        return crate::grpc::answer(parts.uri.path(), &parts.headers, &body).await;
    }
    let segs: Vec<&str> = parts
        .uri
        .path()
        .trim_start_matches('/')
        .split('/')
        .collect();
    if let Some(r) = crate::events::route(&segs) {
        return Ok(r);
    }
    if let Some(r) = state.app.route(&parts, &segs) {
        let (head, body) = r.into_parts();
        return Ok(Response::from_parts(
            head,
            Full::new(Bytes::from(body)).boxed(),
        ));
    }
    let num = |i: usize| segs.get(i).and_then(|s| s.parse::<u64>().ok());
    Ok(match (segs.first().copied().unwrap_or(""), num(1)) {
        ("", _) => reply(200, "hello\n"),
        ("status", Some(n)) => reply(n as u16, format!("status {n}\n")),
        ("sleep", Some(ms)) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            reply(200, "slept\n")
        }
        // A precise wait (tokio's timer rounds up to whole ms): a thread
        // sleeps, so 1000 and 1100 µs differ by 100 µs, not by 1 ms.
        ("delay", Some(us)) => {
            let d = Duration::from_micros(us.min(10_000_000));
            let _ = tokio::task::spawn_blocking(move || std::thread::sleep(d)).await;
            reply(200, "waited\n")
        }
        ("redirect", Some(0)) => reply(200, "landed\n"),
        ("redirect", Some(n)) => {
            let mut r = reply(302, "");
            if let Ok(v) = format!("/redirect/{}", n - 1).parse() {
                r.headers_mut().insert(hyper::header::LOCATION, v);
            }
            r
        }
        // Redirects (`/goto/307?/x`: a 307) to its query, as it is.
        ("goto", Some(code)) => {
            let mut r = reply(code as u16, "");
            if let Some(v) = parts.uri.query().and_then(|q| q.parse().ok()) {
                r.headers_mut().insert(hyper::header::LOCATION, v);
            }
            r
        }
        ("bytes", Some(n)) => reply(200, vec![b'x'; n as usize]),
        // The request's body back, with its method in `X-Seen-Method`.
        ("echo", _) => {
            let mut r = reply(200, body);
            if let Ok(v) = parts.method.as_str().parse() {
                r.headers_mut().insert("x-seen-method", v);
            }
            r
        }
        // Answers, then closes the connection (HTTP/1.1).
        ("close", _) => {
            let mut r = reply(200, "bye\n");
            r.headers_mut().insert(
                hyper::header::CONNECTION,
                hyper::header::HeaderValue::from_static("close"),
            );
            r
        }
        _ => reply(404, "not found\n"),
    })
}
