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

use super::{
    close::{close_reply, closed, eof, protocol, Broken, INVALID_DATA, PROTOCOL_ERROR, TOO_BIG},
    utf8::Utf8,
};
use crate::{core::target::PreparedTarget, transport::dial::BoxStream, Response};

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

/// A frame as read: its header and (unmasked) payload, of which only
/// what was asked is kept.
pub(crate) struct Got {
    pub(crate) header: FrameHeader,
    pub(crate) payload: Vec<u8>,
    /// The payload's length on the wire.
    pub(crate) len: u64,
}

/// A frame partly received.
struct Partial {
    header: FrameHeader,
    /// The payload's length on the wire.
    len: u64,
    /// Payload bytes still to come.
    left: u64,
    payload: Vec<u8>,
    /// How much of the payload is kept.
    room: usize,
}

/// Control frames a connection answers before it lets the thread's
/// other tasks run.
const CONTROL_RUN: u32 = 64;

/// The longest payload of a control frame (RFC 6455 §5.5).
const MAX_CONTROL: u64 = 125;

/// An open WebSocket connection.
pub(crate) struct WsConn {
    stream: BoxStream,
    /// Bytes received and not yet taken (from `start` on); no
    /// allocation between messages.
    pending: Vec<u8>,
    /// Where the bytes not yet taken begin in `pending` (taking a frame
    /// moves this, not the bytes: a read of 8,000 pings is not 8,000
    /// copies of the rest).
    start: usize,
    /// The frame being received: only what it keeps is held.
    partial: Option<Partial>,
    /// The text message being received, checked as its bytes come.
    text: Option<Utf8>,
    /// Why the connection was failed (RFC 6455 §7.1.7): every later read
    /// says so.
    failed: Option<Broken>,
    /// Control frames answered, for [`CONTROL_RUN`].
    controls: u32,
    _permit: Option<OwnedSemaphorePermit>,
    /// What opening it cost (the upgrade's record carries it), and its ends.
    pub(crate) opened: std::sync::Arc<crate::transport::opened::Opened>,
    /// Whether its upgrade is done (a pooled connection is upgraded by
    /// its first exchange, which knows the target).
    pub(crate) upgraded: bool,
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

impl WsConn {
    /// A connection over `stream`, not upgraded yet.
    pub(crate) fn new(
        stream: BoxStream,
        permit: Option<OwnedSemaphorePermit>,
        opened: std::sync::Arc<crate::transport::opened::Opened>,
    ) -> WsConn {
        WsConn {
            stream,
            pending: Vec::new(),
            start: 0,
            partial: None,
            text: None,
            failed: None,
            controls: 0,
            _permit: permit,
            opened,
            upgraded: false,
        }
    }

    /// Upgrades `stream` for `target`: `Ok(Err(response))` is a refused
    /// upgrade with the server's status (and what opening cost).
    pub(crate) async fn open(
        stream: BoxStream,
        target: &PreparedTarget,
        permit: Option<OwnedSemaphorePermit>,
        opened: crate::transport::opened::Opened,
    ) -> Result<Result<WsConn, Response>, Broken> {
        let mut conn = WsConn::new(stream, permit, std::sync::Arc::new(opened));
        Ok(match conn.upgrade(target).await? {
            None => Ok(conn),
            Some(mut refused) => {
                refused.link = Some(conn.opened.link().into());
                Err(refused)
            }
        })
    }

    /// Whether it may carry a request (its stream not failed).
    pub(crate) fn is_ready(&self) -> bool {
        self.failed.is_none()
    }

    /// Upgrades the connection for `target`: `Some(response)` is a
    /// refused upgrade with the server's status.
    pub(crate) async fn upgrade(
        &mut self,
        target: &PreparedTarget,
    ) -> Result<Option<Response>, Broken> {
        // The URL without its user info: credentials go as Basic auth
        // among the target's headers.
        let mut req = target
            .uri
            .clone()
            .into_client_request()
            .map_err(|e| format!("websocket: {e}"))?;
        for (k, v) in target.headers() {
            req.headers_mut().append(k.clone(), v.clone());
        }
        let (bytes, key) = generate_request(req).map_err(|e| format!("websocket: {e}"))?;
        let conn = self;
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
            return Ok(Some(Response {
                code: answer.code,
                error: Some(format!(
                    "websocket: bad handshake ({} {reason})",
                    answer.code
                )),
                head_at: Some(Instant::now()),
                proto: barrage_model::Proto::Http1,
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
        conn.upgraded = true;
        Ok(None)
    }

    /// Writes `bytes` and flushes.
    async fn write(&mut self, bytes: &[u8]) -> Result<(), Broken> {
        let r = async {
            self.stream.write_all(bytes).await?;
            self.stream.flush().await
        };
        r.await.map_err(|e| format!("websocket: {e}"))
    }

    /// The bytes received and not yet taken.
    fn unread(&self) -> &[u8] {
        &self.pending[self.start..]
    }

    /// Reads what has arrived into `pending`; 0 at the end of the stream.
    /// Cancel-safe: bytes are only moved within one poll.
    async fn fill(&mut self) -> Result<usize, Broken> {
        if self.start > 0 {
            self.pending.drain(..self.start);
            self.start = 0;
        }
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

    /// Fails the connection (RFC 6455 §7.1.7): a close frame with `code`,
    /// sent if the socket takes it within a second, and `words` for this
    /// read and every later one.
    async fn fail(&mut self, code: u16, words: Broken) -> Broken {
        self.failed = Some(words.clone());
        // Boxed: every read's future would otherwise hold room for the
        // close's, for as long as a connection is held.
        let _ = Box::pin(tokio::time::timeout(
            std::time::Duration::from_secs(1),
            self.close_with(&code.to_be_bytes()),
        ))
        .await;
        words
    }

    /// A new frame's header, if it has come whole, checked: a masked
    /// frame, reserved bits, a control frame over 125 bytes or in pieces
    /// fail the connection with 1002, a frame over `max` with 1009.
    fn header(&mut self, max: usize) -> Result<Option<(FrameHeader, u64)>, (u16, Broken)> {
        let mut at = Cursor::new(self.unread());
        let Some((header, len)) =
            FrameHeader::parse(&mut at).map_err(|e| (PROTOCOL_ERROR, protocol(e)))?
        else {
            return Ok(None);
        };
        let fault = |what: String| Err((PROTOCOL_ERROR, protocol(what)));
        if header.mask.is_some() {
            return fault("a masked frame from the server".into());
        }
        if header.rsv1 || header.rsv2 || header.rsv3 {
            return fault("reserved bits set (no extension was agreed)".into());
        }
        if let OpCode::Control(c) = header.opcode {
            if let Control::Reserved(n) = c {
                return fault(format!("reserved opcode {n}"));
            }
            if len > MAX_CONTROL {
                return fault(format!(
                    "a control frame of {len} bytes (at most {MAX_CONTROL})"
                ));
            }
            if !header.is_final {
                return fault("a control frame in pieces".into());
            }
        }
        if let OpCode::Data(Data::Reserved(n)) = header.opcode {
            return fault(format!("reserved opcode {n}"));
        }
        if len > max as u64 {
            return Err((TOO_BIG, too_long(len, max)));
        }
        self.start += at.position() as usize;
        Ok(Some((header, len)))
    }

    /// Takes what has come of the partial frame: true when it is whole.
    /// A text message's bytes are checked here, as they come.
    fn take(&mut self) -> Result<bool, (u16, Broken)> {
        let Some(p) = self.partial.as_mut() else {
            return Ok(false);
        };
        let n =
            (self.pending.len() - self.start).min(usize::try_from(p.left).unwrap_or(usize::MAX));
        let chunk = &self.pending[self.start..self.start + n];
        let data = matches!(p.header.opcode, OpCode::Data(_));
        if let Some(text) = self.text.as_mut().filter(|_| data) {
            if !text.feed(chunk) {
                return Err((INVALID_DATA, protocol("a text message that is not UTF-8")));
            }
        }
        let keep = (p.room - p.payload.len()).min(n);
        p.payload.extend_from_slice(&chunk[..keep]);
        p.left -= n as u64;
        self.start += n;
        if p.left > 0 {
            return Ok(false);
        }
        if data && p.header.is_final && self.text.take().is_some_and(|t| !t.whole()) {
            return Err((INVALID_DATA, protocol("a text message that is not UTF-8")));
        }
        Ok(true)
    }

    /// The next frame, waiting for it; `first` is set when a frame's
    /// header has arrived that `counts`. A data frame keeps at most `keep`
    /// bytes of its payload (the rest is counted, not held); a control
    /// frame is kept whole. Cancel-safe: a frame partly received stays
    /// with the connection.
    pub(crate) async fn frame(
        &mut self,
        max: usize,
        first: &mut Option<Instant>,
        counts: impl Fn(OpCode) -> bool,
        keep: usize,
    ) -> Result<Got, Broken> {
        loop {
            if let Some(words) = &self.failed {
                return Err(words.clone());
            }
            if self.partial.is_none() {
                match self.header(max) {
                    Ok(Some((header, len))) => {
                        if first.is_none() && counts(header.opcode) {
                            *first = Some(Instant::now());
                        }
                        let room = match header.opcode {
                            OpCode::Control(_) => len as usize,
                            OpCode::Data(d) => {
                                match d {
                                    Data::Text => self.text = Some(Utf8::default()),
                                    Data::Binary => self.text = None,
                                    _ => {}
                                }
                                keep.min(usize::try_from(len).unwrap_or(usize::MAX))
                            }
                        };
                        self.partial = Some(Partial {
                            header,
                            len,
                            left: len,
                            payload: Vec::with_capacity(room),
                            room,
                        });
                    }
                    Ok(None) => {}
                    Err((code, words)) => return Err(self.fail(code, words).await),
                }
            }
            match self.take() {
                Ok(true) => {
                    let p = self.partial.take().expect("a whole frame was taken");
                    if self.start == self.pending.len() {
                        self.pending = Vec::new();
                        self.start = 0;
                    }
                    return Ok(Got {
                        header: p.header,
                        payload: p.payload,
                        len: p.len,
                    });
                }
                Ok(false) => {}
                Err((code, words)) => return Err(self.fail(code, words).await),
            }
            if self.fill().await? == 0 {
                return Err(eof());
            }
        }
    }

    /// Whether the next frame already here is a ping (opcode 9).
    fn ping_next(&self) -> bool {
        self.unread().first().is_some_and(|b| b & 0x0f == 0x9)
    }

    /// Answers a control frame the server sent: a pong for a ping (only
    /// for the last of pings that came together, as RFC 6455 §5.5.3
    /// allows, so that a ping flood costs one write a read), the close
    /// handshake's reply for a close (then its record's words).
    pub(crate) async fn answer(&mut self, got: &Got) -> Option<Broken> {
        // A flood of control frames arrives without a wait between them:
        // every CONTROL_RUN, the other requests of this thread get their
        // turn (issue 29: a ping flood dragged an HTTP target's p50 from
        // 33 µs to 41 ms).
        self.controls = self.controls.wrapping_add(1);
        if self.controls.is_multiple_of(CONTROL_RUN) {
            tokio::task::yield_now().await;
        }
        match got.header.opcode {
            OpCode::Control(Control::Ping) => {
                if !self.ping_next() {
                    let _ = self
                        .send(OpCode::Control(Control::Pong), got.payload.clone().into())
                        .await;
                }
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
    /// server's pings and assembling fragments: at most `max` bytes on
    /// the wire, of which `keep` are kept. Returns what was kept and the
    /// message's length.
    pub(crate) async fn reply(
        &mut self,
        pong: bool,
        max: usize,
        keep: usize,
        first: &mut Option<Instant>,
    ) -> Result<(Vec<u8>, u64), Broken> {
        let counts = |op: OpCode| {
            if pong {
                op == OpCode::Control(Control::Pong)
            } else {
                matches!(op, OpCode::Data(Data::Text | Data::Binary))
            }
        };
        // The message being assembled and its length so far.
        let mut message: Option<(Vec<u8>, u64)> = None;
        loop {
            let room = match &message {
                Some((m, _)) => keep.saturating_sub(m.len()),
                None if pong => 0,
                None => keep,
            };
            let got = self.frame(max, first, counts, room).await?;
            match got.header.opcode {
                OpCode::Control(Control::Pong) if pong => {
                    return Ok((got.payload, got.len));
                }
                OpCode::Control(_) => {
                    if let Some(end) = self.answer(&got).await {
                        return Err(end);
                    }
                }
                OpCode::Data(Data::Continue) => {
                    let Some((m, len)) = message.as_mut() else {
                        let words = protocol("a continuation frame with nothing to continue");
                        return Err(self.fail(PROTOCOL_ERROR, words).await);
                    };
                    *len += got.len;
                    if *len > max as u64 {
                        let words = too_long(*len, max);
                        return Err(self.fail(TOO_BIG, words).await);
                    }
                    m.extend_from_slice(&got.payload);
                    if got.header.is_final {
                        if let Some(m) = message.take().filter(|_| !pong) {
                            return Ok(m);
                        }
                    }
                }
                OpCode::Data(_) if message.is_some() => {
                    let words = protocol("a new message before the last one's final frame");
                    return Err(self.fail(PROTOCOL_ERROR, words).await);
                }
                OpCode::Data(_) if got.header.is_final => {
                    if !pong {
                        return Ok((got.payload, got.len));
                    }
                }
                OpCode::Data(_) => message = Some((got.payload, got.len)),
            }
        }
    }

    /// Sends a close frame and ends the writing side: in answer to the
    /// server's close (`payload`, its code and reason) the code it gets
    /// back ([`close_reply`]); with a code of the client's own, that.
    pub(crate) async fn close_with(&mut self, payload: &[u8]) -> Result<(), Broken> {
        let code = close_reply(payload);
        // A close frame is FrameHeader's default opcode.
        let header = FrameHeader {
            mask: Some(fastrand::u32(..).to_ne_bytes()),
            ..FrameHeader::default()
        };
        let frame = Frame::from_payload(header, code.to_be_bytes().to_vec().into());
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
