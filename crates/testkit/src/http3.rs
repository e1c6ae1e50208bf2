//! An HTTP/3 test server (quinn + h3) on a loopback UDP port, with the
//! same routes as [`Server`](crate::Server)'s HTTP/1.1 and HTTP/2, and
//! faults of its own:
//!
//! - `/h3/reset`: the request's stream reset with `H3_REQUEST_CANCELLED`;
//! - `/h3/refuse`: refused, reset with `H3_REQUEST_REJECTED`;
//! - `/h3/close`: the whole connection closed (`CONNECTION_CLOSE` with
//!   `H3_INTERNAL_ERROR`, 0x102);
//! - `/h3/endless`: a 200 whose body never ends.
//! - `/h3/long`, `/h3/short`: a 200 whose body is longer (1 MiB for a
//!   content-length of 10) or shorter (10 bytes for 100) than its head says.
//!
//! [`H3Server::silent`] binds a UDP port that never answers,
//! [`H3Server::garbage`] one that answers every datagram with bytes that
//! are no QUIC.

use std::{
    net::{SocketAddr, UdpSocket},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    thread,
};

use bytes::{Buf, Bytes};
use http_body_util::BodyExt;
use tokio::sync::oneshot;

use crate::{
    server::{route, State},
    Received, TestCert,
};

/// Counts that only HTTP/3 has.
#[derive(Default)]
struct Streams {
    /// Requests being answered now, and the most at once.
    now: AtomicU64,
    most: AtomicU64,
    /// TLS sessions taken for 0-RTT (single use).
    early: AtomicU64,
}

/// A loopback HTTP/3 server on UDP port 0, stopped when dropped.
pub struct H3Server {
    addr: SocketAddr,
    state: Arc<State>,
    streams: Arc<Streams>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
    /// [`H3Server::silent`]'s socket, held so nobody else takes the port.
    _silent: Option<UdpSocket>,
}

impl H3Server {
    /// HTTP/3 with `cert`, at most 100 concurrent streams per connection.
    pub fn start(cert: &TestCert) -> Self {
        Self::with_streams(cert, 100)
    }

    /// HTTP/3 with `cert`, allowing `streams` concurrent requests per
    /// connection.
    pub fn with_streams(cert: &TestCert, streams: u32) -> Self {
        let state = Arc::new(State::default());
        let counts = Arc::new(Streams::default());
        let (stop_tx, stop_rx) = oneshot::channel();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let mut tls = cert.quic_server_config();
        tls.session_storage = Arc::new(Counting {
            inner: rustls::server::ServerSessionMemoryCache::new(1024),
            counts: counts.clone(),
        });
        let (st, ct) = (state.clone(), counts.clone());
        let thread = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("test server runtime");
            rt.block_on(serve(st, ct, tls, streams, addr_tx, stop_rx));
        });
        let addr = addr_rx.recv().expect("test server started");
        H3Server {
            addr,
            state,
            streams: counts,
            stop: Some(stop_tx),
            thread: Some(thread),
            _silent: None,
        }
    }

    /// A UDP port on loopback that reads nothing and answers nothing: a
    /// host that does not speak QUIC.
    pub fn silent() -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind loopback UDP");
        H3Server {
            addr: socket.local_addr().expect("local addr"),
            state: Arc::default(),
            streams: Arc::default(),
            stop: None,
            thread: None,
            _silent: Some(socket),
        }
    }

    /// A UDP port on loopback that answers every datagram with bytes that
    /// are no QUIC packet.
    pub fn garbage() -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind loopback UDP");
        let addr = socket.local_addr().expect("local addr");
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let answer = socket.try_clone().expect("clone UDP socket");
        answer
            .set_read_timeout(Some(std::time::Duration::from_millis(50)))
            .expect("read timeout");
        let thread = thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while stop_rx.try_recv() == Err(oneshot::error::TryRecvError::Empty) {
                if let Ok((_, from)) = answer.recv_from(&mut buf) {
                    let _ = answer.send_to(b"\x00\x00garbage, not QUIC\r\n", from);
                }
            }
        });
        H3Server {
            addr,
            state: Arc::default(),
            streams: Arc::default(),
            stop: Some(stop_tx),
            thread: Some(thread),
            _silent: Some(socket),
        }
    }

    /// The UDP address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:PORT` and `path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{}", self.addr, path)
    }

    /// Requests received so far.
    pub fn count(&self) -> u64 {
        self.state.count.load(Ordering::SeqCst)
    }

    /// QUIC connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// The most requests answered at once.
    pub fn most_at_once(&self) -> u64 {
        self.streams.most.load(Ordering::SeqCst)
    }

    /// Handshakes that took a session for 0-RTT.
    pub fn early_data_sessions(&self) -> u64 {
        self.streams.early.load(Ordering::SeqCst)
    }

    /// The first 10,000 requests received, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.state.received_all()
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// rustls's session cache, counting the sessions taken: rustls takes a
/// session (single use) only to accept 0-RTT, and reads one otherwise.
#[derive(Debug)]
struct Counting {
    inner: Arc<rustls::server::ServerSessionMemoryCache>,
    counts: Arc<Streams>,
}

impl std::fmt::Debug for Streams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Streams")
    }
}

impl rustls::server::StoresServerSessions for Counting {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        self.inner.put(key, value)
    }
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.get(key)
    }
    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        let v = self.inner.take(key);
        if v.is_some() {
            self.counts.early.fetch_add(1, Ordering::SeqCst);
        }
        v
    }
    fn can_cache(&self) -> bool {
        true
    }
}

async fn serve(
    state: Arc<State>,
    counts: Arc<Streams>,
    tls: rustls::ServerConfig,
    streams: u32,
    addr_tx: std::sync::mpsc::Sender<SocketAddr>,
    mut stop: oneshot::Receiver<()>,
) {
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).expect("TLS 1.3 for QUIC");
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(streams.into());
    config.transport_config(Arc::new(transport));
    let endpoint = quinn::Endpoint::server(config, "127.0.0.1:0".parse().expect("loopback"))
        .expect("bind loopback UDP port 0");
    let _ = addr_tx.send(endpoint.local_addr().expect("local addr"));
    loop {
        let incoming = tokio::select! {
            i = endpoint.accept() => i,
            _ = &mut stop => break,
        };
        let Some(incoming) = incoming else { break };
        let (state, counts) = (state.clone(), counts.clone());
        tokio::spawn(async move {
            let Ok(connecting) = incoming.accept() else {
                return;
            };
            // 0.5-RTT: the server's side of 0-RTT (always accepted).
            let conn = match connecting.into_0rtt() {
                Ok((conn, _)) => conn,
                Err(connecting) => match connecting.await {
                    Ok(conn) => conn,
                    Err(_) => return,
                },
            };
            state.connections.fetch_add(1, Ordering::SeqCst);
            serve_conn(state, counts, conn).await;
        });
    }
    endpoint.close(0u32.into(), b"bye");
}

type Stream = h3::server::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

async fn serve_conn(state: Arc<State>, counts: Arc<Streams>, conn: quinn::Connection) {
    let quic = conn.clone();
    let Ok(mut h3) = h3::server::builder()
        .build::<_, Bytes>(h3_quinn::Connection::new(conn))
        .await
    else {
        return;
    };
    while let Ok(Some(resolver)) = h3.accept().await {
        let (state, counts, quic) = (state.clone(), counts.clone(), quic.clone());
        tokio::spawn(async move {
            let Ok((req, stream)) = resolver.resolve_request().await else {
                return;
            };
            let now = counts.now.fetch_add(1, Ordering::SeqCst) + 1;
            counts.most.fetch_max(now, Ordering::SeqCst);
            answer(&state, &quic, req, stream).await;
            counts.now.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// Reads the request's body, then answers it by the shared routes, or
/// breaks it by an `/h3/` fault route.
async fn answer(
    state: &State,
    quic: &quinn::Connection,
    req: http::Request<()>,
    mut stream: Stream,
) {
    let mut body = Vec::new();
    while let Ok(Some(mut chunk)) = stream.recv_data().await {
        while chunk.has_remaining() {
            let c = chunk.chunk();
            body.extend_from_slice(c);
            let n = c.len();
            chunk.advance(n);
        }
    }
    let (mut parts, ()) = req.into_parts();
    match parts.uri.path() {
        "/h3/reset" => return stream.stop_stream(h3::error::Code::H3_REQUEST_CANCELLED),
        "/h3/refuse" => return stream.stop_stream(h3::error::Code::H3_REQUEST_REJECTED),
        "/h3/close" => return quic.close(0x102u32.into(), b"closing on request"),
        // A head that lies about its body (RFC 9114 §4.1.2: malformed):
        // content-length 10 and a mebibyte, or 100 and 10 bytes.
        "/h3/long" | "/h3/short" => {
            let (said, sent) = if parts.uri.path() == "/h3/long" {
                (10, 1 << 20)
            } else {
                (100, 10)
            };
            let head = http::Response::builder()
                .status(200)
                .header("content-length", said)
                .body(())
                .expect("a head");
            if stream.send_response(head).await.is_ok()
                && stream
                    .send_data(Bytes::from(vec![b'x'; sent]))
                    .await
                    .is_ok()
            {
                let _ = stream.finish().await;
            }
            return;
        }
        "/h3/endless" => {
            let ok = http::Response::builder()
                .status(200)
                .body(())
                .expect("a head");
            if stream.send_response(ok).await.is_ok() {
                let chunk = Bytes::from(vec![b'x'; 16 << 10]);
                while stream.send_data(chunk.clone()).await.is_ok() {}
            }
            return;
        }
        _ => {}
    }
    parts.version = http::Version::HTTP_3;
    let Ok(resp) = route(state, parts, body).await else {
        return;
    };
    let (head, mut body) = resp.into_parts();
    if stream
        .send_response(http::Response::from_parts(head, ()))
        .await
        .is_err()
    {
        return;
    }
    // Each frame as it comes (a streamed route's events keep their gaps).
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            if !data.is_empty() && stream.send_data(data).await.is_err() {
                return;
            }
        }
    }
    let _ = stream.finish().await;
}
