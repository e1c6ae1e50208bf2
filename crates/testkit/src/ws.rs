//! A WebSocket server on a loopback port (ws, or wss with a test
//! certificate), behaving by path:
//!
//! - `/echo`: each message back; `/delay/MS`: back after MS ms;
//! - `/silent`: never answers; `/close/CODE`: closes with CODE at the
//!   first message; `/refuse`: refuses the upgrade with 400;
//! - `/fragments`: each message back in three fragments;
//! - `/ping`: pings the client before each answer (and counts pongs);
//! - `/feed/N/GAP/FIRST`: N messages `{"n":I}` for each message, the
//!   first FIRST ms after it, then one every GAP ms (`-ws-events`);
//!   `/feed-close/...` closes with 1011 after them; `/push/N/GAP`: N
//!   such messages GAP ms apart as soon as the connection opens;
//! - `/raw/NAME`: answers each message with bytes no good server sends
//!   ([`raw`]: a ping over 125 bytes, a control frame in pieces, text
//!   that is not UTF-8, a close code not allowed on the wire, a flood of
//!   pings before the answer; `pingstorm`: pings without end).
//!
//! It counts connections open now and in all, messages and pongs, and
//! keeps the last upgrade's request headers.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    thread,
    time::Duration,
};

use futures_util::{SinkExt, StreamExt};
use tokio::{net::TcpListener, sync::oneshot};
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::tungstenite::{
    handshake::server::{ErrorResponse, Request, Response},
    protocol::{
        frame::coding::{CloseCode, Data, OpCode},
        frame::Frame,
        CloseFrame,
    },
    Message,
};

use crate::TestCert;

#[derive(Default)]
struct State {
    open: AtomicU64,
    opened: AtomicU64,
    messages: AtomicU64,
    pongs: AtomicU64,
    closes: AtomicU64,
    close_codes: Mutex<Vec<u16>>,
    headers: Mutex<Vec<(String, String)>>,
}

/// The server; stopped when dropped.
pub struct WsServer {
    addr: SocketAddr,
    scheme: &'static str,
    state: Arc<State>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl WsServer {
    /// ws:// on a loopback port.
    pub fn start() -> Self {
        Self::serve(None)
    }

    /// wss:// with `cert`.
    pub fn tls(cert: &TestCert) -> Self {
        let mut config = (*cert.server_config()).clone();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Self::serve(Some(TlsAcceptor::from(Arc::new(config))))
    }

    fn serve(tls: Option<TlsAcceptor>) -> Self {
        let state = Arc::new(State::default());
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let scheme = if tls.is_some() { "wss" } else { "ws" };
        let st = state.clone();
        let thread = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("ws test server runtime");
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                let _ = addr_tx.send(listener.local_addr().expect("addr"));
                loop {
                    let accepted = tokio::select! {
                        a = listener.accept() => a,
                        _ = &mut stop_rx => return,
                    };
                    let Ok((stream, _)) = accepted else { continue };
                    let (st, tls) = (st.clone(), tls.clone());
                    tokio::spawn(async move {
                        match tls {
                            None => connection(st, stream).await,
                            Some(a) => {
                                if let Ok(s) = a.accept(stream).await {
                                    connection(st, s).await;
                                }
                            }
                        }
                    });
                }
            });
        });
        let addr = addr_rx.recv().expect("ws test server started");
        WsServer {
            addr,
            scheme,
            state,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.addr)
    }

    /// Connections open now.
    pub fn open(&self) -> u64 {
        self.state.open.load(Ordering::SeqCst)
    }

    /// Connections upgraded in all.
    pub fn opened(&self) -> u64 {
        self.state.opened.load(Ordering::SeqCst)
    }

    /// Data messages received.
    pub fn messages(&self) -> u64 {
        self.state.messages.load(Ordering::SeqCst)
    }

    /// The codes of the close frames received, in order.
    pub fn close_codes(&self) -> Vec<u16> {
        self.state
            .close_codes
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default()
    }

    /// Pongs received (answers to `/ping`'s pings).
    pub fn pongs(&self) -> u64 {
        self.state.pongs.load(Ordering::SeqCst)
    }

    /// Close frames received from clients.
    pub fn closes(&self) -> u64 {
        self.state.closes.load(Ordering::SeqCst)
    }

    /// The last upgrade request's header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<String> {
        let h = self.state.headers.lock().ok()?;
        h.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }
}

impl Drop for WsServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

// The upgrade callback's `Result<Response, ErrorResponse>` is
// tungstenite's signature.
#[allow(clippy::result_large_err)]
async fn connection<S>(state: Arc<State>, stream: S)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut path = String::new();
    let st = state.clone();
    let callback = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        path = req.uri().path().to_string();
        // The first subprotocol offered is the one chosen.
        if let Some(p) = req.headers().get("sec-websocket-protocol") {
            let first = p
                .to_str()
                .unwrap_or("")
                .split(',')
                .next()
                .unwrap_or("")
                .trim();
            if let Ok(v) = first.parse() {
                resp.headers_mut().insert("sec-websocket-protocol", v);
            }
        }
        if let Ok(mut h) = st.headers.lock() {
            *h = req
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
        }
        if path == "/refuse" {
            let mut r = ErrorResponse::new(Some("no upgrade here".into()));
            *r.status_mut() = http::StatusCode::BAD_REQUEST;
            return Err(r);
        }
        Ok(resp)
    };
    let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(stream, callback).await else {
        return;
    };
    state.open.fetch_add(1, Ordering::SeqCst);
    state.opened.fetch_add(1, Ordering::SeqCst);
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let num = segs.get(1).and_then(|n| n.parse::<u64>().ok());
    let ms =
        |i: usize| Duration::from_millis(segs.get(i).and_then(|n| n.parse().ok()).unwrap_or(0));
    if segs[0] == "push" && feed(&mut ws, num.unwrap_or(0), ms(2), ms(2)).await.is_err() {
        state.open.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    while let Some(Ok(m)) = ws.next().await {
        let reply = match m {
            Message::Text(_) | Message::Binary(_) => {
                state.messages.fetch_add(1, Ordering::SeqCst);
                m
            }
            Message::Pong(_) => {
                state.pongs.fetch_add(1, Ordering::SeqCst);
                continue;
            }
            Message::Close(f) => {
                state.closes.fetch_add(1, Ordering::SeqCst);
                if let (Some(f), Ok(mut codes)) = (f, state.close_codes.lock()) {
                    codes.push(u16::from(f.code));
                }
                break;
            }
            _ => continue,
        };
        let sent = match (segs[0], num) {
            ("silent", _) => continue,
            ("feed", Some(n)) => feed(&mut ws, n, ms(3), ms(2)).await,
            ("feed-close", Some(n)) => {
                let _ = feed(&mut ws, n, ms(3), ms(2)).await;
                let frame = CloseFrame {
                    code: CloseCode::Error,
                    reason: "feed over".into(),
                };
                let _ = ws.send(Message::Close(Some(frame))).await;
                break;
            }
            ("delay", Some(ms)) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ws.send(reply).await
            }
            ("close", Some(code)) => {
                let frame = CloseFrame {
                    code: CloseCode::from(code as u16),
                    reason: "".into(),
                };
                let _ = ws.send(Message::Close(Some(frame))).await;
                break;
            }
            ("fragments", _) => {
                let (op, data) = match &reply {
                    Message::Text(t) => (Data::Text, t.as_bytes().to_vec()),
                    _ => (Data::Binary, reply.clone().into_data().to_vec()),
                };
                let third = data.len().div_ceil(3).max(1);
                let chunks: Vec<&[u8]> = data.chunks(third).collect();
                let mut r = Ok(());
                for (i, c) in chunks.iter().enumerate() {
                    let code = if i == 0 {
                        OpCode::Data(op)
                    } else {
                        OpCode::Data(Data::Continue)
                    };
                    let frame = Frame::message(c.to_vec(), code, i + 1 == chunks.len());
                    r = ws.send(Message::Frame(frame)).await;
                }
                r
            }
            ("ping", _) => {
                let _ = ws.send(Message::Ping(Default::default())).await;
                ws.send(reply).await
            }
            ("raw", _) if segs.get(1) == Some(&"pingstorm") => {
                // Pings without end, 64 KiB of them a write, until the
                // client goes: one connection that would take a thread.
                use tokio::io::AsyncWriteExt;
                let pings = frame(0x89, b"").repeat(32 * 1024);
                while ws.get_mut().write_all(&pings).await.is_ok() {}
                break;
            }
            ("raw", _) => {
                use tokio::io::AsyncWriteExt;
                let bytes = raw(segs.get(1).copied().unwrap_or(""));
                ws.get_mut().write_all(&bytes).await.map_err(Into::into)
            }
            _ => ws.send(reply).await,
        };
        if sent.is_err() {
            break;
        }
    }
    state.open.fetch_sub(1, Ordering::SeqCst);
}

/// Sends `n` messages `{"n":I}`, the first after `first`, then one
/// every `gap`.
async fn feed<S>(
    ws: &mut tokio_tungstenite::WebSocketStream<S>,
    n: u64,
    first: Duration,
    gap: Duration,
) -> Result<(), tokio_tungstenite::tungstenite::Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    // On the pacer's clock, counted from the message that asked.
    let script = (0..n.min(100_000))
        .map(|i| {
            (
                first + gap * i as u32,
                Message::text(format!("{{\"n\":{i}}}")),
            )
        })
        .collect();
    let mut due = crate::pacer::pace(script);
    while let Some(m) = due.recv().await {
        ws.send(m).await?;
    }
    Ok(())
}

/// An unmasked frame as a server sends it: `first` is its first byte
/// (FIN, opcode).
fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![first];
    match payload.len() {
        n @ 0..=125 => out.push(n as u8),
        n @ 126..=65535 => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out
}

/// The bytes `/raw/NAME` answers with.
fn raw(name: &str) -> Vec<u8> {
    match name {
        // A ping of 126 bytes: control frames have at most 125.
        "bigping" => frame(0x89, &[b'p'; 126]),
        // A ping without FIN: control frames are never in pieces.
        "fragping" => frame(0x09, b""),
        // Text that is not UTF-8 (a lone continuation byte's pair).
        "badutf8" => frame(0x81, &[0xc3, 0x28]),
        // Text that ends in the middle of a character.
        "cututf8" => frame(0x81, &[b'a', 0xe2, 0x82]),
        // A euro sign cut between two fragments: good UTF-8.
        "splitutf8" => [frame(0x01, &[0xe2]), frame(0x80, &[0x82, 0xac])].concat(),
        // Close codes that are never sent on the wire.
        "close1005" => frame(0x88, &1005u16.to_be_bytes()),
        "close1006" => frame(0x88, &1006u16.to_be_bytes()),
        "close2999" => frame(0x88, &2999u16.to_be_bytes()),
        // 100,000 pings, then the answer.
        "pingflood" => {
            let mut out = frame(0x89, b"").repeat(100_000);
            out.extend(frame(0x81, b"after the flood"));
            out
        }
        // A 32 MiB binary message.
        "big" => frame(0x82, &vec![b'x'; 32 << 20]),
        _ => frame(0x81, b"unknown raw answer"),
    }
}
