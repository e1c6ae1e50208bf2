//! WebSocket request–reply (`ws://` and `wss://` targets) with
//! tokio-tungstenite over barrage's own dialer and TLS (ALPN http/1.1, so
//! that the server can upgrade): each request sends the target's body as
//! one message on an open connection and waits for the server's next
//! message. Connections are opened on demand, kept between requests (up
//! to `-connections` idle per host), and closed after each with
//! `-keepalive=false`. A target without a body sends a ping and waits for
//! its pong.

use std::{collections::HashMap, sync::Arc, time::Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsConnector;
use tokio_tungstenite::{
    tungstenite::{
        self,
        client::IntoClientRequest,
        protocol::{frame::coding::CloseCode, CloseFrame, WebSocketConfig},
        Message,
    },
    WebSocketStream,
};

use crate::{dial::BoxStream, dial::Dial, key::Key, target::PreparedTarget, Response};

/// How messages are sent (`-ws-frame`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WsFrame {
    /// Text frames (the body must be UTF-8).
    #[default]
    Text,
    /// Binary frames.
    Binary,
}

impl std::str::FromStr for WsFrame {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(WsFrame::Text),
            "binary" => Ok(WsFrame::Binary),
            other => Err(format!("unknown frame type {other:?} (use text or binary)")),
        }
    }
}

/// The status of a successful exchange (Switching Protocols).
pub const WS_OK: u16 = 101;

/// An open connection and its `-max-connections` permit.
struct Conn {
    stream: WebSocketStream<BoxStream>,
    _permit: Option<OwnedSemaphorePermit>,
}

/// The WebSocket side of a worker thread's client.
pub(crate) struct Ws {
    dial: Arc<Dial>,
    tls: TlsConnector,
    open_limit: Option<Arc<Semaphore>>,
    idle: std::sync::Mutex<HashMap<Key, Vec<Conn>>>,
    max_idle: usize,
    keepalive: bool,
    frame: WsFrame,
    config: WebSocketConfig,
}

/// A close code's words, as RFC 6455 §7.4.1 names them.
fn close_words(code: CloseCode) -> &'static str {
    match u16::from(code) {
        1000 => "normal closure",
        1001 => "going away",
        1002 => "protocol error",
        1003 => "unsupported data",
        1005 => "no status",
        1006 => "abnormal closure",
        1007 => "invalid payload data",
        1008 => "policy violation",
        1009 => "message too big",
        1010 => "mandatory extension",
        1011 => "internal error",
        1012 => "service restart",
        1013 => "try again later",
        1015 => "TLS handshake",
        _ => "unknown close code",
    }
}

/// `websocket: closed by server (1011 internal error)`, with the frame's
/// reason when it gives one.
fn closed(frame: Option<CloseFrame>) -> String {
    match frame {
        Some(f) if !f.reason.is_empty() => format!(
            "websocket: closed by server ({} {})",
            u16::from(f.code),
            f.reason
        ),
        Some(f) => format!(
            "websocket: closed by server ({} {})",
            u16::from(f.code),
            close_words(f.code)
        ),
        None => "websocket: closed by server (1005 no status)".into(),
    }
}

/// A tungstenite error in the record's words.
fn words(e: &tungstenite::Error) -> String {
    use tungstenite::Error as E;
    match e {
        E::ConnectionClosed | E::AlreadyClosed => "websocket: connection closed".into(),
        E::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "websocket: connection closed by server (EOF)".into()
        }
        E::Io(e) => format!("websocket: {e}"),
        E::Capacity(c) => format!("websocket: {c}"),
        E::Protocol(p) => format!("websocket: protocol error: {p}"),
        other => format!("websocket: {other}"),
    }
}

impl Ws {
    pub(crate) fn new(
        dial: Arc<Dial>,
        tls: TlsConnector,
        open_limit: Option<Arc<Semaphore>>,
        cfg: &crate::ClientConfig,
    ) -> Self {
        // Small buffers: a connection waiting for its reply holds its
        // read buffer (tungstenite allocates it up front: 128 KiB by
        // default), and writes go out at once.
        let config = WebSocketConfig::default()
            .read_buffer_size(512)
            .write_buffer_size(0)
            .max_message_size(Some(cfg.ws_max_message))
            .max_frame_size(Some(cfg.ws_max_message));
        Ws {
            dial,
            tls,
            open_limit,
            idle: Default::default(),
            max_idle: cfg.connections,
            keepalive: cfg.keepalive,
            frame: cfg.ws_frame,
            config,
        }
    }

    /// Opens a connection for `target`: TCP (or TLS), then the upgrade.
    /// A refused upgrade is `Ok(Err(response))` with the server's status.
    async fn open(
        &self,
        target: &PreparedTarget,
        key: &Key,
        fail: &(dyn Fn(&dyn std::fmt::Display) -> String + Sync),
    ) -> Result<Result<Conn, Response>, crate::Failure> {
        let permit = match &self.open_limit {
            Some(s) => Some(s.clone().acquire_owned().await.map_err(|e| fail(&e))?),
            None => None,
        };
        let stream = self.dial.open(key).await.map_err(|e| fail(&e))?;
        let stream: BoxStream = if key.tls {
            let name = rustls::pki_types::ServerName::try_from(key.host.clone())
                .map_err(|e| fail(&format!("bad server name {}: {e}", key.host)))?;
            let tls = self
                .tls
                .connect(name, stream)
                .await
                .map_err(|e| fail(&crate::tls::handshake_failure(&e, &key.host)))?;
            Box::new(tls)
        } else {
            stream
        };
        let mut req = target
            .url_text
            .as_str()
            .into_client_request()
            .map_err(|e| fail(&words(&e)))?;
        for (k, v) in &target.headers {
            req.headers_mut().append(k.clone(), v.clone());
        }
        match tokio_tungstenite::client_async_with_config(req, stream, Some(self.config)).await {
            Ok((stream, _)) => Ok(Ok(Conn {
                stream,
                _permit: permit,
            })),
            Err(tungstenite::Error::Http(resp)) => {
                let status = resp.status();
                Ok(Err(Response {
                    code: status.as_u16(),
                    error: Some(format!(
                        "websocket: bad handshake ({} {})",
                        status.as_u16(),
                        status.canonical_reason().unwrap_or("")
                    )),
                    head_at: Some(Instant::now()),
                    ..Response::default()
                }))
            }
            Err(e) => Err(crate::Failure::from(fail(&words(&e)))),
        }
    }

    /// Sends `target`'s message and waits for the reply.
    pub(crate) async fn send(
        &self,
        target: &PreparedTarget,
        keep: i64,
    ) -> Result<Response, crate::Failure> {
        let fail = |e: &dyn std::fmt::Display| e.to_string();
        let key = target.key.as_ref().map_err(|e| fail(e))?;
        let kept = self
            .idle
            .lock()
            .ok()
            .and_then(|mut m| m.get_mut(key).and_then(Vec::pop));
        let mut conn = match kept {
            Some(c) => c,
            None => match self.open(target, key, &fail).await? {
                Ok(c) => c,
                Err(refused) => return Ok(refused),
            },
        };
        let out = exchange(&mut conn, target, self.frame, keep).await?;
        if out.error.is_some() {
            return Ok(out);
        }
        if self.keepalive {
            if let Ok(mut idle) = self.idle.lock() {
                let list = idle.entry(key.clone()).or_default();
                if list.len() < self.max_idle.max(1) {
                    list.push(conn);
                }
            }
        } else {
            let _ = conn.stream.close(None).await;
        }
        Ok(out)
    }

    /// A connection of its own for `target` (`-hold`): `Err` is the
    /// record of a failed open (a refused upgrade keeps its status).
    pub(crate) async fn hold(
        &self,
        target: &PreparedTarget,
        keep: i64,
    ) -> Result<Held, Result<Response, crate::Failure>> {
        let fail = |e: &dyn std::fmt::Display| e.to_string();
        let key = target
            .key
            .as_ref()
            .map_err(|e| Err(crate::Failure::from(fail(e))))?;
        match self.open(target, key, &fail).await {
            Ok(Ok(conn)) => Ok(Held {
                conn,
                frame: self.frame,
                keep,
            }),
            Ok(Err(refused)) => Err(Ok(refused)),
            Err(e) => Err(Err(e)),
        }
    }
}

/// Sends `target`'s message on `conn` (a ping when it has no body) and
/// waits for the reply; a close or a broken stream is a record with
/// code 0 and its error, a failed send an `Err`.
async fn exchange(
    conn: &mut Conn,
    target: &PreparedTarget,
    frame: WsFrame,
    keep: i64,
) -> Result<Response, crate::Failure> {
    let message =
        if target.body.is_empty() {
            Message::Ping(Default::default())
        } else if frame == WsFrame::Binary {
            Message::Binary(target.body.clone())
        } else {
            match tungstenite::Utf8Bytes::try_from(target.body.clone()) {
                Ok(t) => Message::Text(t),
                Err(_) => return Err(crate::Failure::from(
                    "websocket: -ws-frame text: the message is not UTF-8 (use -ws-frame binary)"
                        .to_string(),
                )),
            }
        };
    let ping = matches!(message, Message::Ping(_));
    conn.stream
        .send(message)
        .await
        .map_err(|e| crate::Failure::from(words(&e)))?;
    let mut out = Response {
        code: WS_OK,
        ..Response::default()
    };
    loop {
        let m = match conn.stream.next().await {
            None => Err("websocket: connection closed by server (EOF)".to_string()),
            Some(Err(e)) => Err(words(&e)),
            Some(Ok(m)) => Ok(m),
        };
        let m = match m {
            Ok(m) => m,
            Err(e) => {
                out.code = 0;
                out.error = Some(e);
                return Ok(out);
            }
        };
        out.head_at.get_or_insert_with(Instant::now);
        let payload = match m {
            Message::Text(t) if !ping => t.as_bytes().to_vec(),
            Message::Binary(b) if !ping => b.to_vec(),
            Message::Pong(p) if ping => p.to_vec(),
            Message::Close(frame) => {
                out.code = 0;
                out.error = Some(closed(frame));
                return Ok(out);
            }
            // Pings are answered by tungstenite; anything else before the
            // reply is not it.
            _ => continue,
        };
        out.bytes_in = payload.len() as u64;
        let room = if keep < 0 {
            payload.len()
        } else {
            (keep as usize).min(payload.len())
        };
        out.body = payload[..room].to_vec();
        return Ok(out);
    }
}

/// A connection held open (`-hold`): between messages it reads, so that
/// the server's pings are answered and its close is seen when it comes.
pub struct Held {
    conn: Conn,
    frame: WsFrame,
    keep: i64,
}

impl Held {
    /// Waits until `deadline` (or forever), reading: `None` when the
    /// deadline came, the record of the end when the server closed the
    /// connection or it broke.
    pub async fn idle_until(&mut self, deadline: Option<tokio::time::Instant>) -> Option<Response> {
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(sleep);
        loop {
            let next = tokio::select! {
                biased;
                () = &mut sleep => return None,
                n = self.conn.stream.next() => n,
            };
            let error = match next {
                Some(Ok(Message::Close(frame))) => closed(frame),
                Some(Ok(_)) => continue,
                Some(Err(e)) => words(&e),
                None => "websocket: connection closed by server (EOF)".into(),
            };
            return Some(Response {
                error: Some(error),
                ..Response::default()
            });
        }
    }

    /// Sends `target`'s message (a ping without a body) and waits for the
    /// reply.
    pub async fn exchange(&mut self, target: &PreparedTarget) -> Result<Response, crate::Failure> {
        exchange(&mut self.conn, target, self.frame, self.keep).await
    }

    /// Ends the connection with a close frame (1000, normal closure).
    pub async fn close(mut self) {
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        let _ = self.conn.stream.close(Some(frame)).await;
    }
}
