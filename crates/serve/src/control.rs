//! `attack -control ADDR`: a small HTTP API that steers the running
//! attack ([`Steer`]): read its state, set the rate or the stages, pause,
//! resume, stop. Every change it makes leaves a marker in the stream.
//!
//! ```text
//! GET  /           the state: rate, paused, sent, in flight, the verdict so far
//! POST /rate       {"rate": "3000/s"}       (also "at": unix ns, "in": "2s")
//! POST /stages     {"stages": "30s:5000,1m:5000"}
//! POST /pause  /resume  /stop
//! ```
//!
//! A token (`BARRAGE_TOKEN`) is asked for as `Authorization: Bearer T`
//! when set; the CLI refuses an address off loopback without one.

use std::{convert::Infallible, io, net::SocketAddr, sync::Arc, thread};

use barrage_model::{Command, Marker, Order, Rate, Stages};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{body::Incoming, server::conn::http1, service::service_fn, Request, Response};
use hyper_util::rt::TokioIo;

/// What the API steers: the attack's controls and its state.
pub trait Steer: Send + Sync + 'static {
    /// Carries out `order`; an error changes nothing.
    fn order(&self, order: &Order) -> Result<Marker, Box<dyn std::error::Error + Send + Sync>>;
    /// The state, as `GET /` answers it.
    fn state(&self) -> serde_json::Value;
}

/// Why a control call was refused before it reached the attack.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BadCall {
    /// No token, or another.
    #[error("a token is needed (Authorization: Bearer T, the attack's BARRAGE_TOKEN)")]
    Token,
    /// Not a path the API has.
    #[error("no such call {0:?} (GET /, POST /rate, /stages, /pause, /resume, /stop)")]
    Path(String),
    /// A change asked with another method than POST.
    #[error("{0} changes the attack: use POST")]
    Method(String),
    /// The body is not the JSON object asked for.
    #[error("body: {0}")]
    Json(String),
    /// A rate or stages that do not parse.
    #[error("{0}")]
    Value(String),
}

/// The largest body a call may have, bytes.
const MAX_BODY: usize = 64 << 10;

/// The API's server: binds at once (a taken port is said before the
/// attack starts) and serves on a thread of its own.
pub struct ControlServer {
    listener: std::net::TcpListener,
    addr: SocketAddr,
}

impl ControlServer {
    /// Binds `addr`: before anything is written or sent, so that a taken
    /// port ends the attack before its stream begins.
    pub fn bind(addr: SocketAddr) -> io::Result<ControlServer> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        Ok(ControlServer { listener, addr })
    }

    /// Where it listens (the port chosen, for `:0`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `steer` on a thread of its own until the process ends.
    pub fn serve(self, token: Option<String>, steer: Arc<dyn Steer>) -> io::Result<()> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let (listener, token) = (self.listener, Arc::new(token));
        thread::Builder::new()
            .name("barrage-control".into())
            .spawn(move || rt.block_on(serve(listener, token, steer)))?;
        Ok(())
    }
}

async fn serve(listener: std::net::TcpListener, token: Arc<Option<String>>, steer: Arc<dyn Steer>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let (token, steer) = (token.clone(), steer.clone());
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let (token, steer) = (token.clone(), steer.clone());
                async move { Ok::<_, Infallible>(answer(req, peer, &token, &*steer).await) }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    req: Request<Incoming>,
    peer: SocketAddr,
    token: &Option<String>,
    steer: &dyn Steer,
) -> Response<Full<Bytes>> {
    let authorized = token.as_ref().is_none_or(|t| {
        req.headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|given| given == t)
    });
    if !authorized {
        return json(401, &error(&BadCall::Token.to_string()));
    }
    let path = req.uri().path().trim_end_matches('/').to_string();
    if path.is_empty() && req.method() == hyper::Method::GET {
        return json(200, &steer.state());
    }
    if req.method() != hyper::Method::POST {
        let e = match path.as_str() {
            "/rate" | "/stages" | "/pause" | "/resume" | "/stop" => BadCall::Method(path),
            _ => BadCall::Path(path),
        };
        return json(
            if matches!(e, BadCall::Path(_)) {
                404
            } else {
                405
            },
            &error(&e.to_string()),
        );
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return json(400, &error(&format!("body: {e}"))),
    };
    let order = match parse_order(&path, &body, &peer.to_string()) {
        Ok(o) => o,
        Err(e @ BadCall::Path(_)) => return json(404, &error(&e.to_string())),
        Err(e) => return json(400, &error(&e.to_string())),
    };
    match steer.order(&order) {
        Ok(m) => json(
            200,
            &serde_json::json!({
                "changed": m.what,
                "at": m.at,
                "from": m.from,
                "first": m.first,
                "who": m.who,
            }),
        ),
        Err(e) => json(409, &error(&e.to_string())),
    }
}

/// A call's order: `path` names the command, `body` (JSON, may be empty)
/// its value and when; `peer` is who asked unless the body says `who`.
pub fn parse_order(path: &str, body: &[u8], peer: &str) -> Result<Order, BadCall> {
    let v: serde_json::Value = if body.iter().all(u8::is_ascii_whitespace) {
        serde_json::json!({})
    } else {
        serde_json::from_slice(body).map_err(|e| BadCall::Json(e.to_string()))?
    };
    let Some(o) = v.as_object() else {
        return Err(BadCall::Json("want a JSON object".into()));
    };
    let text = |key: &str| -> Result<String, BadCall> {
        match o.get(key) {
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(serde_json::Value::Number(n)) => Ok(n.to_string()),
            Some(_) => Err(BadCall::Json(format!("{key:?}: want a string or a number"))),
            None => Err(BadCall::Json(format!("{key:?} is missing"))),
        }
    };
    let command = match path {
        "/rate" => {
            let t = text("rate")?;
            if t.trim_start().starts_with('-') {
                return Err(BadCall::Value(format!(
                    "rate {t:?}: a rate cannot be negative"
                )));
            }
            Command::Rate(
                t.parse::<Rate>()
                    .map_err(|e| BadCall::Value(e.to_string()))?,
            )
        }
        "/stages" => Command::Stages(
            text("stages")?
                .parse::<Stages>()
                .map_err(|e| BadCall::Value(e.to_string()))?,
        ),
        "/pause" => Command::Pause,
        "/resume" => Command::Resume,
        "/stop" => Command::Stop,
        other => return Err(BadCall::Path(other.to_string())),
    };
    let at = match (o.get("at"), o.get("in")) {
        (Some(at), _) => Some(
            at.as_i64()
                .ok_or_else(|| BadCall::Json("\"at\": want unix nanoseconds".into()))?,
        ),
        (None, Some(after)) => {
            let ns = after
                .as_str()
                .and_then(|s| barrage_model::duration::parse(s).ok())
                .ok_or_else(|| BadCall::Json("\"in\": want a duration (2s, 500ms)".into()))?;
            Some(barrage_model::time::now_ns().saturating_add(ns))
        }
        (None, None) => None,
    };
    let who = match o.get("who").and_then(|w| w.as_str()) {
        Some(w) => w.chars().take(100).collect(),
        None => peer.to_string(),
    };
    Ok(Order { command, at, who })
}

fn error(why: &str) -> serde_json::Value {
    serde_json::json!({ "error": why })
}

fn json(status: u16, v: &serde_json::Value) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(format!("{v}\n"))));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_parse_into_orders_or_say_what_is_wrong() {
        let o = parse_order("/rate", br#"{"rate": "3000/s"}"#, "127.0.0.1:9").unwrap();
        assert_eq!(o.command, Command::Rate("3000/1s".parse().unwrap()));
        assert_eq!((o.at, o.who.as_str()), (None, "127.0.0.1:9"));
        let o = parse_order("/rate", br#"{"rate": 500, "at": 7, "who": "me"}"#, "x").unwrap();
        assert_eq!((o.at, o.who.as_str()), (Some(7), "me"));
        assert_eq!(
            parse_order("/pause", b"", "x").unwrap().command,
            Command::Pause
        );
        let bad = |path: &str, body: &[u8]| parse_order(path, body, "x").unwrap_err().to_string();
        assert_eq!(
            bad("/rate", br#"{"rate": "-5"}"#),
            "rate \"-5\": a rate cannot be negative"
        );
        assert!(bad("/rate", b"{rate").starts_with("body: key must be a string"));
        assert_eq!(bad("/rate", b"{}"), "body: \"rate\" is missing");
        assert_eq!(bad("/rate", b"[1]"), "body: want a JSON object");
        assert!(bad("/rate", br#"{"rate": "fast"}"#).contains("invalid rate"));
        assert!(bad("/stages", br#"{"stages": "10s"}"#).contains("invalid -stages"));
        assert!(bad("/speed", b"").contains("no such call"));
        assert!(bad("/rate", br#"{"rate": 5, "in": "soon"}"#).contains("\"in\""));
    }
}
