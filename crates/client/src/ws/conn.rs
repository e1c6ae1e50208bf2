//! One WebSocket connection on barrage's own stream: the upgrade request
//! from tungstenite's `generate_request` (which also makes the key), its
//! answer parsed with httparse and checked against tungstenite's
//! `derive_accept_key`, and frames read and written with tungstenite's
//! `FrameHeader` and `Frame`.
//!
//! Why not tokio-tungstenite's `WebSocketStream` (which barrage used
//! first): a held connection spends its life waiting, and that stream
//! keeps its codec's read buffer, its write buffer and two waker proxies
//! for each connection; `scripts/bench` measured 6.51 KiB of RSS per held
//! connection with it (18,000 held). Here a connection keeps bytes only
//! while a frame is partly received: reads land in the worker thread's
//! scratch buffer ([`SCRATCH`]) and only an unfinished frame's bytes are
//! copied out.

use std::{
    cell::RefCell,
    future::poll_fn,
    io::Cursor,
    pin::Pin,
    task::{ready, Poll},
    time::Instant,
};

use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use tokio::sync::OwnedSemaphorePermit;
use tungstenite::{
    client::IntoClientRequest,
    handshake::{client::generate_request, derive_accept_key},
    protocol::frame::{
        coding::{Control, Data, OpCode},
        Frame, FrameHeader,
    },
};

use crate::{dial::BoxStream, target::PreparedTarget, Response};

/// The largest response head an upgrade may have, as the HTTP/1.1
/// engine's limit.
const MAX_HEAD: usize = 64 * 1024;

/// Headers an upgrade's answer may have.
const MAX_HEADERS: usize = 100;

/// Scratch space for each read, per worker thread.
const SCRATCH_LEN: usize = 16 * 1024;

thread_local! {
    /// Where every connection of this thread reads into; what is not a
    /// whole frame yet is copied to the connection's `pending`.
    static SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0; SCRATCH_LEN].into_boxed_slice());
}

/// What ended a read: the words of the record's error.
pub(crate) type Broken = String;

/// A frame as read: its header and (unmasked) payload.
pub(crate) struct Got {
    pub(crate) header: FrameHeader,
    pub(crate) payload: Vec<u8>,
}

/// An open WebSocket connection.
pub(crate) struct WsConn {
    stream: BoxStream,
    /// Bytes received that are not a whole frame yet; no allocation
    /// between messages.
    pending: Vec<u8>,
    _permit: Option<OwnedSemaphorePermit>,
}

/// The upgrade's answer, as far as the client checks it.
struct Answer {
    code: u16,
    upgraded: bool,
    accepted: bool,
    head: usize,
}

fn answer(head: &httparse::Response<'_, '_>, key: &str, len: usize) -> Answer {
    let value = |name: &str| {
        head.headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).into_owned())
            .collect::<Vec<_>>()
    };
    let upgrade = value("upgrade")
        .iter()
        .any(|v| v.trim().eq_ignore_ascii_case("websocket"));
    let connection = value("connection").iter().any(|v| {
        v.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
    });
    let accept = value("sec-websocket-accept");
    Answer {
        code: head.code.unwrap_or(0),
        upgraded: upgrade && connection,
        accepted: accept.len() == 1 && accept[0].trim() == derive_accept_key(key.as_bytes()),
        head: len,
    }
}

/// `websocket: closed by server (1011 internal error)`, with the close
/// frame's reason when it gives one.
pub(crate) fn closed(payload: &[u8]) -> String {
    if payload.len() < 2 {
        return "websocket: closed by server (1005 no status)".into();
    }
    let code = u16::from_be_bytes([payload[0], payload[1]]);
    // RFC 6455 allows 123 bytes; a server that sends more is cut.
    let reason = barrage_model::words::cut(
        &String::from_utf8_lossy(&payload[2..payload.len().min(2 + MAX_CLOSE_REASON + 4)]),
        MAX_CLOSE_REASON,
        payload.len() > 2 + MAX_CLOSE_REASON,
    );
    if reason.is_empty() {
        format!("websocket: closed by server ({code} {})", close_words(code))
    } else {
        format!("websocket: closed by server ({code} {reason})")
    }
}

/// The longest close reason RFC 6455 allows (a control frame's 125 bytes
/// less the code's 2).
const MAX_CLOSE_REASON: usize = 123;

/// A close code's words, as RFC 6455 §7.4.1 names them.
fn close_words(code: u16) -> &'static str {
    match code {
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

fn eof() -> Broken {
    "websocket: connection closed by server (EOF)".into()
}

fn protocol(what: impl std::fmt::Display) -> Broken {
    format!("websocket: protocol error: {what}")
}

impl WsConn {
    /// Upgrades `stream` for `target`: `Ok(Err(response))` is a refused
    /// upgrade with the server's status.
    pub(crate) async fn open(
        stream: BoxStream,
        target: &PreparedTarget,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Result<Result<WsConn, Response>, Broken> {
        // The URL without its user info: credentials go as Basic auth
        // among the target's headers.
        let mut req = target
            .uri
            .clone()
            .into_client_request()
            .map_err(|e| format!("websocket: {e}"))?;
        for (k, v) in &target.headers {
            req.headers_mut().append(k.clone(), v.clone());
        }
        let (bytes, key) = generate_request(req).map_err(|e| format!("websocket: {e}"))?;
        let mut conn = WsConn {
            stream,
            pending: Vec::new(),
            _permit: permit,
        };
        conn.write(&bytes).await?;
        let answer = loop {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut head = httparse::Response::new(&mut headers);
            match head.parse(&conn.pending) {
                Ok(httparse::Status::Complete(n)) => break answer(&head, &key, n),
                Ok(httparse::Status::Partial) if conn.pending.len() > MAX_HEAD => {
                    return Err(format!(
                        "websocket: bad handshake: the answer's head is over {} KiB",
                        MAX_HEAD / 1024
                    ))
                }
                Ok(httparse::Status::Partial) => {}
                Err(e) => return Err(format!("websocket: bad handshake: {e}")),
            }
            if conn.fill().await? == 0 {
                return Err(eof());
            }
        };
        if answer.code != 101 {
            let reason = http::StatusCode::from_u16(answer.code)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("");
            return Ok(Err(Response {
                code: answer.code,
                error: Some(format!(
                    "websocket: bad handshake ({} {reason})",
                    answer.code
                )),
                head_at: Some(Instant::now()),
                ..Response::default()
            }));
        }
        if !answer.upgraded {
            return Err(protocol("no \"Upgrade: websocket\" in the server's answer"));
        }
        if !answer.accepted {
            return Err(protocol("Sec-WebSocket-Accept does not match the key"));
        }
        conn.pending.drain(..answer.head);
        conn.pending.shrink_to_fit();
        Ok(Ok(conn))
    }

    /// Writes `bytes` and flushes.
    async fn write(&mut self, bytes: &[u8]) -> Result<(), Broken> {
        let r = async {
            self.stream.write_all(bytes).await?;
            self.stream.flush().await
        };
        r.await.map_err(|e| format!("websocket: {e}"))
    }

    /// Reads what has arrived into `pending`; 0 at the end of the stream.
    /// Cancel-safe: bytes are only moved within one poll.
    async fn fill(&mut self) -> Result<usize, Broken> {
        let WsConn {
            stream, pending, ..
        } = self;
        poll_fn(|cx| {
            SCRATCH.with_borrow_mut(|scratch| {
                let mut buf = ReadBuf::new(scratch);
                ready!(Pin::new(&mut *stream).poll_read(cx, &mut buf))?;
                pending.extend_from_slice(buf.filled());
                Poll::Ready(Ok(buf.filled().len()))
            })
        })
        .await
        .map_err(|e: std::io::Error| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => eof(),
            _ => format!("websocket: {e}"),
        })
    }

    /// Sends one frame, masked as a client's must be.
    pub(crate) async fn send(
        &mut self,
        opcode: OpCode,
        payload: bytes::Bytes,
    ) -> Result<(), Broken> {
        let mut frame = match opcode {
            OpCode::Data(_) => Frame::message(payload, opcode, true),
            _ => Frame::from_payload(
                FrameHeader {
                    opcode,
                    ..FrameHeader::default()
                },
                payload,
            ),
        };
        frame.header_mut().mask = Some(fastrand::u32(..).to_ne_bytes());
        let mut out = Vec::with_capacity(frame.len());
        frame
            .format(&mut out)
            .map_err(|e| format!("websocket: {e}"))?;
        self.write(&out).await
    }

    /// The next frame, waiting for it; `first` is set when a frame's
    /// header has arrived that `counts`. Frames over `max` bytes, masked
    /// frames and reserved bits are errors. Cancel-safe.
    pub(crate) async fn frame(
        &mut self,
        max: usize,
        first: &mut Option<Instant>,
        counts: impl Fn(OpCode) -> bool,
    ) -> Result<Got, Broken> {
        loop {
            let mut at = Cursor::new(&self.pending[..]);
            if let Some((header, len)) = FrameHeader::parse(&mut at).map_err(protocol)? {
                if header.mask.is_some() {
                    return Err(protocol("a masked frame from the server"));
                }
                if header.rsv1 || header.rsv2 || header.rsv3 {
                    return Err(protocol("reserved bits set (no extension was agreed)"));
                }
                if len > max as u64 {
                    return Err(too_long(len, max));
                }
                if first.is_none() && counts(header.opcode) {
                    *first = Some(Instant::now());
                }
                let start = at.position() as usize;
                let end = start + len as usize;
                if self.pending.len() >= end {
                    let payload = self.pending[start..end].to_vec();
                    self.pending.drain(..end);
                    if self.pending.is_empty() {
                        self.pending = Vec::new();
                    }
                    return Ok(Got { header, payload });
                }
            }
            if self.fill().await? == 0 {
                return Err(eof());
            }
        }
    }

    /// Answers a control frame the server sent: a pong for a ping, the
    /// close handshake's reply for a close (then its record's words).
    pub(crate) async fn answer(&mut self, got: &Got) -> Option<Broken> {
        match got.header.opcode {
            OpCode::Control(Control::Ping) => {
                let _ = self
                    .send(OpCode::Control(Control::Pong), got.payload.clone().into())
                    .await;
                None
            }
            OpCode::Control(Control::Close) => {
                let _ = self.close_with(&got.payload).await;
                Some(closed(&got.payload))
            }
            _ => None,
        }
    }

    /// The next whole data message (a pong when `pong`), answering the
    /// server's pings and assembling fragments, at most `max` bytes.
    pub(crate) async fn reply(
        &mut self,
        pong: bool,
        max: usize,
        first: &mut Option<Instant>,
    ) -> Result<Vec<u8>, Broken> {
        let counts = |op: OpCode| {
            if pong {
                op == OpCode::Control(Control::Pong)
            } else {
                matches!(op, OpCode::Data(Data::Text | Data::Binary))
            }
        };
        let mut message: Option<Vec<u8>> = None;
        loop {
            let got = self.frame(max, first, counts).await?;
            match got.header.opcode {
                OpCode::Control(Control::Pong) if pong => return Ok(got.payload),
                OpCode::Control(_) => {
                    if let Some(end) = self.answer(&got).await {
                        return Err(end);
                    }
                }
                OpCode::Data(Data::Continue) => {
                    let Some(m) = message.as_mut() else {
                        return Err(protocol("a continuation frame with nothing to continue"));
                    };
                    if m.len() + got.payload.len() > max {
                        return Err(too_long((m.len() + got.payload.len()) as u64, max));
                    }
                    m.extend_from_slice(&got.payload);
                    if got.header.is_final {
                        if let Some(m) = message.take().filter(|_| !pong) {
                            return Ok(m);
                        }
                    }
                }
                OpCode::Data(_) if message.is_some() => {
                    return Err(protocol("a new message before the last one's final frame"));
                }
                OpCode::Data(_) if got.header.is_final => {
                    if !pong {
                        return Ok(got.payload);
                    }
                }
                OpCode::Data(_) => message = Some(got.payload),
            }
        }
    }

    /// Sends a close frame with `payload` (its code and reason) and ends
    /// the writing side.
    pub(crate) async fn close_with(&mut self, payload: &[u8]) -> Result<(), Broken> {
        // The close frame (FrameHeader's default opcode) echoes the
        // server's code, or says 1000 (normal closure).
        let code = payload.get(..2).unwrap_or(&[0x03, 0xe8]);
        let header = FrameHeader {
            mask: Some(fastrand::u32(..).to_ne_bytes()),
            ..FrameHeader::default()
        };
        let frame = Frame::from_payload(header, code.to_vec().into());
        let mut out = Vec::with_capacity(frame.len());
        frame
            .format(&mut out)
            .map_err(|e| format!("websocket: {e}"))?;
        self.write(&out).await?;
        self.stream
            .shutdown()
            .await
            .map_err(|e| format!("websocket: {e}"))
    }
}

/// tungstenite's words for a message over the limit.
fn too_long(size: u64, max: usize) -> Broken {
    format!("websocket: Space limit exceeded: Message too long: {size} > {max}")
}
