//! WebSocket request–reply (`ws://` and `wss://` targets) over barrage's
//! own dialer and TLS (ALPN http/1.1, so that the server can upgrade),
//! framed by [`conn`] with tungstenite's frame codec: each request sends the target's body as
//! one message on an open connection and waits for the server's next
//! message. Connections are opened on demand, kept between requests (up
//! to `-connections` idle per host), and closed after each with
//! `-keepalive=false`. A target without a body sends a ping and waits for
//! its pong. With `-ws-events N` a request waits instead for N server
//! messages, each an event on the request's tape (see `events.rs`); a
//! target without a body then sends nothing and only listens.

mod close;
mod conn;
mod utf8;

use std::{collections::HashMap, sync::Arc};

use tokio::sync::Semaphore;
use tokio_rustls::TlsConnector;
use tungstenite::protocol::frame::coding::{Control, Data, OpCode};

use crate::{
    config::WsFrame,
    core::{
        key::Key,
        observe::{Observe, Unobserved},
        target::PreparedTarget,
    },
    transport::dial::Dial,
    Response,
};
use conn::WsConn;

/// The status of a successful exchange (Switching Protocols).
pub const WS_OK: u16 = 101;

/// The WebSocket side of a worker thread's client.
pub(crate) struct Ws {
    dial: Arc<Dial>,
    tls: TlsConnector,
    open_limit: Option<Arc<Semaphore>>,
    idle: std::sync::Mutex<HashMap<Key, Vec<WsConn>>>,
    max_idle: usize,
    keepalive: bool,
    frame: WsFrame,
    /// `-ws-max-message`.
    max_message: usize,
    /// `-ws-events`.
    events: u32,
}

impl Ws {
    pub(crate) fn new(
        dial: Arc<Dial>,
        tls: TlsConnector,
        open_limit: Option<Arc<Semaphore>>,
        cfg: &crate::ClientConfig,
    ) -> Self {
        Ws {
            dial,
            tls,
            open_limit,
            idle: Default::default(),
            max_idle: cfg.connections,
            keepalive: cfg.keepalive,
            frame: cfg.ws_frame,
            // With -ws-events, a message is an event: -max-event-bytes
            // bounds it too (each was held whole up to -ws-max-message).
            max_message: match (&cfg.stream, cfg.ws_events) {
                (Some(spec), n) if n > 0 => cfg.ws_max_message.min(spec.max_event_bytes),
                _ => cfg.ws_max_message,
            },
            events: cfg.ws_events,
        }
    }

    /// `-ws-events`: server messages a request waits for (0: its reply).
    pub(crate) fn events(&self) -> u32 {
        self.events
    }

    /// Opens a connection for `target`: TCP (or TLS), then the upgrade.
    /// A refused upgrade is `Ok(Err(response))` with the server's status.
    async fn open(
        &self,
        target: &PreparedTarget,
        key: &Key,
    ) -> Result<Result<WsConn, Response>, crate::Failure> {
        let permit = match &self.open_limit {
            Some(s) => Some(s.clone().acquire_owned().await.map_err(|e| e.to_string())?),
            None => None,
        };
        let (stream, opened) = self.dial.open_tunneled(key).await?;
        let began = std::time::Instant::now();
        let stream: crate::transport::dial::BoxStream = if key.tls {
            let name = rustls::pki_types::ServerName::try_from(key.host.clone())
                .map_err(|e| format!("bad server name {}: {e}", key.host))?;
            let tls = self
                .tls
                .connect(name, stream)
                .await
                .map_err(|e| crate::transport::tls::handshake_failure(&e, &key.host))?;
            Box::new(tls)
        } else {
            stream
        };
        let opened = match key.tls {
            true => opened.with_tls(crate::transport::opened::nanos(began)),
            false => opened,
        };
        Ok(WsConn::open(stream, target, permit, opened).await?)
    }

    /// Sends `target`'s message and waits for the reply.
    pub(crate) async fn send<O: Observe>(
        &self,
        target: &PreparedTarget,
        keep: i64,
        obs: O,
    ) -> Result<Response, crate::Failure> {
        let key = target.key.as_ref().map_err(|e| e.to_string())?;
        let kept = self
            .idle
            .lock()
            .ok()
            .and_then(|mut m| m.get_mut(key).and_then(Vec::pop));
        let mut conn = match kept {
            Some(c) => c,
            None => match self.open(target, key).await? {
                Ok(c) => c,
                Err(refused) => return Ok(refused),
            },
        };
        let out = exchange(
            &mut conn,
            target,
            self.frame,
            keep,
            self.max_message,
            self.events,
            obs,
        )
        .await?;
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
            let _ = conn.close_with(&[]).await;
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
        let key = target
            .key
            .as_ref()
            .map_err(|e| Err(crate::Failure::from(e.to_string())))?;
        match self.open(target, key).await {
            Ok(Ok(conn)) => Ok(Held {
                conn,
                open: true,
                frame: self.frame,
                keep,
                max: self.max_message,
            }),
            Ok(Err(refused)) => Err(Ok(refused)),
            Err(e) => Err(Err(e)),
        }
    }
}

/// Sends `target`'s message on `conn` (a ping when it has no body) and
/// waits for the reply, or for `events` messages; a close or a broken
/// stream is a record with code 0 and its error, a failed send an `Err`.
#[allow(clippy::too_many_arguments)]
async fn exchange<O: Observe>(
    conn: &mut WsConn,
    target: &PreparedTarget,
    frame: WsFrame,
    keep: i64,
    max: usize,
    events: u32,
    obs: O,
) -> Result<Response, crate::Failure> {
    let ping = target.body.is_empty();
    if events > 0 {
        return listen(conn, target, frame, keep, max, events, obs).await;
    }
    let opcode = if ping {
        OpCode::Control(Control::Ping)
    } else {
        data_opcode(target, frame)?
    };
    conn.send(opcode, target.body.clone()).await?;
    let mut out = opened(conn);
    // -max-body: what is kept of the reply; the rest is counted.
    let room = usize::try_from(keep).unwrap_or(usize::MAX);
    match conn.reply(ping, max, room, &mut out.head_at).await {
        Ok((payload, len)) => {
            out.bytes_in = len;
            out.body = payload;
        }
        Err(e) => {
            out.code = 0;
            out.error = Some(e);
        }
    }
    Ok(out)
}

/// The opcode of `target`'s message as `-ws-frame` sends it.
fn data_opcode(target: &PreparedTarget, frame: WsFrame) -> Result<OpCode, crate::Failure> {
    if frame == WsFrame::Binary {
        Ok(OpCode::Data(Data::Binary))
    } else if std::str::from_utf8(&target.body).is_ok() {
        Ok(OpCode::Data(Data::Text))
    } else {
        Err(crate::Failure::from(
            "websocket: -ws-frame text: the message is not UTF-8 (use -ws-frame binary)",
        ))
    }
}

/// A record's response on `conn` before its reply.
fn opened(conn: &WsConn) -> Response {
    Response {
        code: WS_OK,
        proto: barrage_model::Proto::Http1,
        link: Some(conn.opened.link().into()),
        ..Response::default()
    }
}

/// `-ws-events`: sends `target`'s message (nothing without a body) and
/// reads server messages until `events` of them passed `-event-filter`,
/// each an event on the request's tape; `-max-body` bytes of them are
/// kept, in order, and all counted.
#[allow(clippy::too_many_arguments)]
async fn listen(
    conn: &mut WsConn,
    target: &PreparedTarget,
    frame: WsFrame,
    keep: i64,
    max: usize,
    events: u32,
    obs: impl Observe,
) -> Result<Response, crate::Failure> {
    if !target.body.is_empty() {
        conn.send(data_opcode(target, frame)?, target.body.clone())
            .await?;
    }
    let mut out = opened(conn);
    let room = usize::try_from(keep).unwrap_or(usize::MAX);
    let mut counted = 0;
    while counted < events {
        // Whole (up to -ws-max-message): the filter and `event~` read it.
        match conn.reply(false, max, max, &mut out.head_at).await {
            Ok((payload, len)) => {
                out.bytes_in += len;
                if obs.message(&payload) {
                    counted += 1;
                }
                let take = room.saturating_sub(out.body.len()).min(payload.len());
                out.body.extend_from_slice(&payload[..take]);
            }
            Err(e) => {
                out.code = 0;
                out.error = Some(e);
                break;
            }
        }
    }
    Ok(out)
}

/// A connection held open (`-hold`): between messages it reads, so that
/// the server's pings are answered and its close is seen when it comes.
pub struct Held {
    conn: WsConn,
    /// False once it broke or the server closed it: nothing to close.
    open: bool,
    frame: WsFrame,
    keep: i64,
    max: usize,
}

impl Held {
    /// Waits until `deadline` (or forever), reading: `None` when the
    /// deadline came, the record of the end when the server closed the
    /// connection or it broke.
    pub async fn idle_until(&mut self, deadline: Option<tokio::time::Instant>) -> Option<Response> {
        loop {
            let mut first = None;
            // What the server sends unasked is read and not kept.
            let read = self.conn.frame(self.max, &mut first, |_| false, 0);
            let got = match deadline {
                Some(d) => tokio::select! {
                    biased;
                    () = tokio::time::sleep_until(d) => return None,
                    got = read => got,
                },
                None => read.await,
            };
            let error = match got {
                Ok(got) => match self.conn.answer(&got).await {
                    Some(end) => end,
                    None => continue,
                },
                Err(e) => e,
            };
            return Some(Response {
                error: Some(error),
                proto: barrage_model::Proto::Http1,
                link: Some(self.conn.opened.link().into()),
                ..Response::default()
            });
        }
    }

    /// Sends `target`'s message (a ping without a body) and waits for the
    /// reply.
    pub async fn exchange(&mut self, target: &PreparedTarget) -> Result<Response, crate::Failure> {
        exchange(
            &mut self.conn,
            target,
            self.frame,
            self.keep,
            self.max,
            0,
            Unobserved,
        )
        .await
    }

    /// The link of the next record on it (the first, the upgrade's,
    /// carries what opening it cost).
    pub fn link(&self) -> barrage_model::Link {
        self.conn.opened.link()
    }

    /// Notes that the connection broke or was closed by the server.
    pub fn broken(&mut self) {
        self.open = false;
    }

    /// Whether it is still open (not broken, not closed by the server).
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Ends the connection with a close frame (1000, normal closure).
    pub async fn close(mut self) {
        let _ = self.conn.close_with(&[]).await;
    }
}
