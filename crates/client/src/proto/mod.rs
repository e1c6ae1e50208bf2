//! The protocols, a room each, and the one match on protocol.
//!
//! - [`h1`]: barrage's own HTTP/1.1 engine.
//! - [`hyper`]: hyper's HTTP/1.1 (`-h1-engine hyper`) and HTTP/2.
//! - [`h3`]: HTTP/3 on quinn and h3.
//! - [`grpc`]: gRPC's framing, unary and streaming calls (over hyper's
//!   HTTP/2), descriptors from files or reflection.
//! - [`ws`]: WebSocket on tungstenite's codec (a connection upgraded by
//!   its first exchange; `-hold`'s held ones open themselves).
//!
//! This file holds [`Conn`], a connection of whichever protocol made
//! from a transport stream ([`Protocols::handshake`]), and the match on
//! protocol: one exchange on it ([`Conn::exchange`]). The client around
//! it (`send/`) does the timeout, redirects and stale retries; the pool
//! (`pool.rs`) keeps connections without looking inside.

pub(crate) mod grpc;
pub mod h1;
pub(crate) mod h3;
pub(crate) mod hyper;
mod prepare;
pub(crate) mod ws;

use std::{borrow::Cow, sync::Arc};

use futures_util::future::Either;
use tokio::sync::OwnedSemaphorePermit;

use self::h1::{own, Framer, Stamps, H1};
use self::hyper::{h2, request, Fail};
use crate::{
    core::{
        ask::Ask,
        observe::Observe,
        response::{Answer, Step},
        shape::Shape,
    },
    transport::{
        connect::{Carried, Transport},
        opened::{Claim, Linked, Opened},
    },
    H1Engine,
};
use prepare::with_host;

/// A connection ready for one request (HTTP/1.1) or many at once (HTTP/2,
/// HTTP/3).
pub(crate) enum Conn {
    H1(H1),
    H2(Linked<h2::Sender>),
    H3(h3::Conn),
    /// Boxed: a WebSocket connection is the largest, and a request's
    /// future holds a `Conn`.
    Ws(Box<ws::WsConn>),
}

impl Conn {
    /// Another handle to a connection that carries many requests at once
    /// (HTTP/2, HTTP/3) while it is open; `None` for one that carries one
    /// at a time, or one closed.
    pub(crate) fn share(&self) -> Option<Conn> {
        match self {
            Conn::H2(s) if !s.is_closed() => Some(Conn::H2(s.clone())),
            Conn::H3(c) if !c.is_closed() => Some(Conn::H3(c.clone())),
            _ => None,
        }
    }

    /// Whether it carries many requests at once (HTTP/2, HTTP/3): the
    /// pool keeps it as the host's, never as an idle one.
    pub(crate) fn carries_many(&self) -> bool {
        matches!(self, Conn::H2(_) | Conn::H3(_))
    }

    /// What opening it cost, and its ends.
    pub(crate) fn opened(&self) -> &Arc<Opened> {
        match self {
            Conn::H1(c) => c.opened(),
            Conn::H2(s) => &s.opened,
            Conn::H3(c) => &c.opened,
            Conn::Ws(c) => &c.opened,
        }
    }

    /// Whether it can take a request now (a shared one: while open).
    pub(crate) fn is_ready(&self) -> bool {
        match self {
            Conn::H1(c) => c.is_ready(),
            Conn::H2(s) => !s.is_closed(),
            Conn::H3(c) => !c.is_closed(),
            Conn::Ws(c) => c.is_ready(),
        }
    }

    /// It, once it can take a request (hyper's HTTP/1.1 finishes its
    /// handshake on its task); `None` when it closed meanwhile.
    pub(crate) async fn ready(self) -> Option<Conn> {
        match self {
            Conn::H1(c) => c.ready().await.map(Conn::H1),
            shared => shared.is_ready().then_some(shared),
        }
    }

    /// barrage's own HTTP/1.1 connection, which `-pipeline` writes
    /// requests on ahead of their answers; any other, as it is.
    pub(crate) fn into_pipelined(self) -> Result<h1::Conn, Conn> {
        match self {
            Conn::H1(H1::Own(c)) => Ok(c),
            other => Err(other),
        }
    }
}

impl From<h1::Conn> for Conn {
    fn from(c: h1::Conn) -> Self {
        Conn::H1(H1::Own(c))
    }
}

/// How each protocol's handshake goes.
pub(crate) struct Protocols {
    /// `-h1-engine`.
    pub(crate) engine: H1Engine,
    /// `-max-header-bytes`: on HTTP/2 (and gRPC) and HTTP/3 the largest
    /// header list an answer may have.
    pub(crate) max_header_bytes: usize,
    /// `-h3-streams` (0: the server's limit).
    pub(crate) h3_streams: usize,
}

impl Protocols {
    /// The handshake of the protocol `transport` carries (as the
    /// transport said: ALPN or `-h2c` for HTTP/2, QUIC for HTTP/3) to
    /// `host`; `permit` (`-max-connections`) is held until the connection
    /// closes.
    pub(crate) async fn handshake(
        &self,
        transport: Transport,
        host: &str,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Result<Conn, crate::Failure> {
        let opened = Arc::new(transport.opened);
        let stream = match transport.carried {
            Carried::Quic(quic) => {
                let (streams, max_header) = (self.h3_streams, self.max_header_bytes);
                let conn = h3::handshake(quic, host, streams, max_header, permit, opened).await?;
                return Ok(Conn::H3(conn));
            }
            Carried::Stream { stream, h2: true } => {
                let max = self.max_header_bytes;
                return Ok(Conn::H2(h2::handshake(stream, max, permit, opened).await?));
            }
            Carried::Stream { stream, h2: false } => stream,
            // Upgraded by its first exchange, which knows the target.
            Carried::Upgrade(stream) => {
                return Ok(Conn::Ws(Box::new(ws::WsConn::new(stream, permit, opened))));
            }
        };
        Ok(Conn::H1(match self.engine {
            H1Engine::Own => H1::Own(h1::Conn::new(stream, permit, opened)),
            H1Engine::Hyper => H1::Hyper(hyper::h1::handshake(stream, permit, opened).await?),
        }))
    }
}

/// `step` with its response naming the connection it came on (and its
/// costs, if no answer on it took them before).
fn mark(claim: Claim, step: Step<Conn>) -> Step<Conn> {
    match step {
        Step::Done(Ok(mut r)) => {
            r.link = Some(claim.answered());
            Step::Done(Ok(r))
        }
        Step::Answer(mut a) => {
            a.response.link = Some(claim.answered());
            Step::Answer(a)
        }
        other => other,
    }
}

impl Conn {
    /// Sends `ask` on this connection and reads its answer, which names
    /// the connection (its response's `link`).
    ///
    /// barrage's own HTTP/1.1 engine's future is returned unboxed and
    /// holds its connection once; every other path's is boxed. A request's
    /// future is held for as long as it waits (18,000 held connections),
    /// and one async block over all paths kept the whole `Conn` (120
    /// bytes) beside the connection it moved out of it (88), and a
    /// redirect's request inline (56): 744 bytes, where the own engine's
    /// is now 400 (see `a_waiting_requests_futures_stay_small`).
    ///
    /// `obs` hears the answer as it is read (`-stream`): moved down into
    /// the room's exchange, so that [`crate::core::observe::Unobserved`]
    /// adds nothing to any future.
    pub(crate) fn exchange<'a, O: Observe + 'a>(
        self,
        shape: &'a Shape,
        ask: &'a Ask<'a>,
        obs: O,
    ) -> impl std::future::Future<Output = Step<Conn>> + Send + 'a {
        match self {
            Conn::H1(H1::Own(conn)) if !ask.target.grpc => {
                Either::Left(own_exchange(conn, shape, ask, obs))
            }
            other => Either::Right(Box::pin(other.exchange_boxed(shape, ask, obs))),
        }
    }

    /// [`Conn::exchange`] on every path but barrage's own HTTP/1.1
    /// engine's.
    async fn exchange_boxed<'a, O: Observe>(
        self,
        shape: &'a Shape,
        ask: &'a Ask<'a>,
        obs: O,
    ) -> Step<Conn> {
        let fail = |e: &dyn std::fmt::Display| ask.fail(e);
        let fail: Fail = &fail;
        let claim = Claim::on(self.opened());
        let step = 'step: {
            let (target, seq) = (ask.target, ask.seq);
            let (method, uri, body) = ask.parts();
            let answer = match self {
                Conn::H1(_) if target.grpc => {
                    break 'step Step::Done(Err(crate::Failure::from(fail(
                        &"grpc: the server does not speak HTTP/2 (its TLS chose http/1.1)",
                    ))));
                }
                // `exchange` sends these unboxed; this one stands whole
                // all the same (its own claim, not this one, marks it).
                Conn::H1(H1::Own(conn)) => return own_exchange(conn, shape, ask, obs).await,
                Conn::H1(H1::Hyper(sender)) => {
                    let h1_headers = if ask.hop.is_none() {
                        Cow::Borrowed(target.h1_headers())
                    } else {
                        Cow::Owned(with_host(ask.headers(), uri))
                    };
                    let v = http::Version::HTTP_11;
                    let proxy = ask.proxy();
                    let req = request(shape, v, method, uri, &h1_headers, body, seq, proxy);
                    Box::pin(hyper::h1::exchange(shape, sender, req, fail, obs))
                        .await
                        .map(|a| a.map_conn(|s| Conn::H1(H1::Hyper(s))))
                }
                Conn::H2(sender) if target.grpc => {
                    let v = http::Version::HTTP_2;
                    let req = request(shape, v, method, uri, ask.headers(), body, seq, None);
                    break 'step Step::Done(
                        Box::pin(grpc::call::call(shape, sender, req, fail, obs)).await,
                    );
                }
                Conn::H2(sender) => {
                    let v = http::Version::HTTP_2;
                    let req = request(shape, v, method, uri, ask.headers(), body, seq, None);
                    Box::pin(h2::exchange(shape, sender, req, fail, obs))
                        .await
                        .map(Answer::none_back)
                }
                Conn::Ws(conn) => {
                    let step = Box::pin(ws::exchange_on(conn, shape, ask, obs)).await;
                    break 'step step.map_conn(Conn::Ws);
                }
                Conn::H3(_) if target.grpc => {
                    break 'step Step::Done(Err(crate::Failure::from(fail(
                        &"grpc: gRPC over HTTP/3 is not supported (leave out -http3)",
                    ))));
                }
                Conn::H3(conn) => {
                    let v = http::Version::HTTP_3;
                    let req = request(shape, v, method, uri, ask.headers(), body, seq, None);
                    let req = http::Request::from_parts(req.into_parts().0, ());
                    Box::pin(h3::exchange(shape, conn, req, body, fail, obs))
                        .await
                        .map(Answer::none_back)
                }
            };
            match answer {
                Ok(a) => Step::Answer(a),
                Err(e) => Step::Done(Err(e)),
            }
        };
        mark(claim, step)
    }
}

/// One exchange on a connection of barrage's own HTTP/1.1 engine.
///
/// The claim on the connection's costs is taken here and kept in this
/// future: kept by the caller across the await instead (two locals, 9
/// bytes), the caller's future grew by 136 bytes, past mimalloc's 1 KiB
/// class.
// An async block, not an async fn: an async fn keeps its arguments twice.
#[allow(clippy::manual_async_fn)]
fn own_exchange<'a, O: Observe + 'a>(
    mut conn: h1::Conn,
    shape: &'a Shape,
    ask: &'a Ask<'a>,
    obs: O,
) -> impl std::future::Future<Output = Step<Conn>> + Send + 'a {
    async move {
        let claim = Claim::on(conn.opened());
        let (target, seq) = (ask.target, ask.seq);
        // Built once, kept in the target (or in a redirect's hop).
        let wire = match ask.hop {
            None => (target.wire).get_or_init(|| own::target_wire(shape, target, ask.proxy())),
            Some(h) => (h.wire).get_or_init(|| {
                own::wire(shape, &h.headers, &h.method, &h.uri, &h.body, ask.proxy())
            }),
        };
        let mut framer = Framer::new(shape.limits, wire.head_request);
        let mut stamps = Stamps::default();
        let retry = wire.replayable && ask.retry;
        // The exchange's await stays in this future (a call's future
        // would hold its arguments too); it keeps neither the wire nor
        // the list it came in, only its body if that goes apart.
        let sent = conn.exchange_observed(&[(wire, seq)], &mut framer, &mut stamps, obs);
        let sent = sent.await;
        // Its error's wording is made from `ask` (a closure passed in
        // was 16 bytes more in a waiting request's future).
        let fail = |e: &dyn std::fmt::Display| ask.fail(e);
        let step = own::answer(conn, sent, framer, stamps, retry, &fail).map_conn(Conn::from);
        mark(claim, step)
    }
}
