//! WebSocket request–reply (`ws://` and `wss://` targets) over barrage's
//! own dialer and TLS (ALPN http/1.1, so that the server can upgrade:
//! `transport/connect.rs`), framed by `conn.rs` with tungstenite's frame
//! codec: each request sends the target's body as one message on an open
//! connection and waits for the server's next message. Connections come
//! from the pool like any protocol's ([`exchange_on`]: a new one is
//! upgraded by its first exchange, which knows the target), are kept
//! between requests (up to `-connections` idle per host), and closed
//! after each with `-keepalive=false`. `-hold` opens its own ([`Held`]). A target without a body sends a ping and waits for
//! its pong. With `-ws-events N` a request waits instead for N server
//! messages, each an event on the request's tape (see `events.rs`); a
//! target without a body then sends nothing and only listens.

mod close;
mod conn;
mod utf8;

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_rustls::TlsConnector;
use tungstenite::protocol::frame::coding::{Control, Data, OpCode};

use crate::{
    core::{
        ask::Ask,
        key::Key,
        observe::{Observe, Unobserved},
        response::{Answer, Step},
        shape::{Shape, WsFrame},
        target::PreparedTarget,
    },
    transport::dial::Dial,
    Response,
};
pub(crate) use conn::WsConn;

/// The status of a successful exchange (Switching Protocols).
pub const WS_OK: u16 = 101;

/// `-ws-max-message`; with `-ws-events` a message is an event, so
/// `-max-event-bytes` bounds it too (each was held whole up to
/// `-ws-max-message`).
pub(crate) fn max_message(cfg: &crate::ClientConfig) -> usize {
    match (&cfg.stream, cfg.ws_events) {
        (Some(spec), n) if n > 0 => cfg.ws_max_message.min(spec.max_event_bytes),
        _ => cfg.ws_max_message,
    }
}

/// One request on a pooled connection: upgraded first if it is new (a
/// refused upgrade is the record, with the server's status), then the
/// target's message and its reply (or `-ws-events`' messages). A whole
/// exchange gives the connection back, or closes it with
/// `-keepalive=false`.
pub(crate) async fn exchange_on<O: Observe>(
    mut conn: Box<WsConn>,
    shape: &Shape,
    ask: &Ask<'_>,
    obs: O,
) -> Step<Box<WsConn>> {
    let target = ask.target;
    if !conn.upgraded {
        match conn.upgrade(target).await {
            Ok(None) => {}
            Ok(Some(refused)) => return Step::Done(Ok(refused)),
            Err(e) => return Step::Done(Err(crate::Failure(e))),
        }
    }
    let (frame, max, events) = (shape.ws_frame, shape.ws_max_message, shape.ws_events);
    let out = match exchange(&mut conn, target, frame, shape.max_body, max, events, obs).await {
        Ok(out) => out,
        Err(e) => return Step::Done(Err(e)),
    };
    if out.error.is_some() {
        return Step::Done(Ok(out));
    }
    if !shape.keepalive {
        let _ = conn.close_with(&[]).await;
        return Step::Done(Ok(out));
    }
    Step::Answer(Answer {
        code: out.code,
        location: None,
        response: out,
        conn: Some(conn),
    })
}

/// The WebSocket side of a worker thread's client.
pub(crate) struct Ws {
    dial: Arc<Dial>,
    tls: TlsConnector,
    open_limit: Option<Arc<Semaphore>>,
    frame: WsFrame,
    /// `-ws-max-message`.
    max_message: usize,
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
            frame: cfg.ws_frame,
            max_message: max_message(cfg),
        }
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
    let mut out = upgraded_reply();
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

/// A record's response before its reply (its link: the pool's exchange
/// marks it, `-hold`'s [`Held::exchange`] adds it).
fn upgraded_reply() -> Response {
    Response {
        code: WS_OK,
        proto: barrage_model::Proto::Http1,
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
    let mut out = upgraded_reply();
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
        let mut r = exchange(
            &mut self.conn,
            target,
            self.frame,
            self.keep,
            self.max,
            0,
            Unobserved,
        )
        .await?;
        r.link = Some(self.conn.opened.link().into());
        Ok(r)
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
