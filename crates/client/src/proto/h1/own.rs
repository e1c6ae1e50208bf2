//! barrage's own HTTP/1.1 engine's part of a request: the request encoded
//! for it ([`wire`]), what one exchange on one of its connections came
//! to, with the stale-connection retry decided ([`answer`]), and its
//! responses, whole or broken off.

use bytes::Bytes;
use http::{Method, Uri};

use crate::{
    core::response::{Answer, Step},
    core::shape::Shape,
    proto::h1::{self, Framer, Parts, Stamps, Wire},
    transport::proxy::ProxyUrl,
    PreparedTarget, Response,
};

/// After one exchange on `conn`: a kept connection the server closed
/// while idle is tried again where `retry` allows (nothing of the answer
/// came), a failure before the head is the record's error, one after it
/// keeps what arrived, and a whole answer comes with its connection.
pub(crate) fn answer(
    conn: h1::Conn,
    sent: Result<(), h1::ExchangeError>,
    mut framer: Framer,
    stamps: Stamps,
    retry: bool,
    fail: &dyn Fn(&dyn std::fmt::Display) -> String,
) -> Step<h1::Conn> {
    if let Err(e) = sent {
        if conn.reused() && !framer.started() && retry {
            return Step::Again;
        }
        if !framer.head_done() {
            return Step::Done(Err(crate::Failure::from(fail(&e))));
        }
        return Step::Done(Ok(broken_off(framer, stamps, fail(&e))));
    }
    let location = framer.head.location.take().map(Vec::from);
    let response = response_of(framer, stamps);
    Step::Answer(Answer {
        code: response.code,
        location,
        response,
        conn: Some(conn),
    })
}

/// `target`'s own request (not a redirect's) for barrage's HTTP/1.1
/// engine, encoded: [`wire`].
pub(crate) fn target_wire(
    shape: &Shape,
    target: &PreparedTarget,
    proxy: Option<&ProxyUrl>,
) -> Wire {
    let t = target;
    wire(shape, &t.header_lines, &t.method, &t.uri, &t.body, proxy)
}

/// The request for barrage's HTTP/1.1 engine, encoded, through the
/// plain-HTTP `proxy` if any (it takes the absolute URL; a tunnel's
/// requests are the server's own).
pub(crate) fn wire(
    shape: &Shape,
    headers: &[(String, String)],
    method: &Method,
    uri: &Uri,
    body: &Bytes,
    proxy: Option<&ProxyUrl>,
) -> Wire {
    let origin;
    let request_target = if proxy.is_some() {
        origin = uri.to_string();
        origin.as_str()
    } else {
        uri.path_and_query().map_or("/", |pq| pq.as_str())
    };
    let host = uri.authority().map_or("", |a| a.as_str());
    Wire::new(&Parts {
        method: method.as_str(),
        target: request_target,
        host,
        headers,
        body,
        chunked: shape.chunked,
        close: !shape.keepalive,
        // A UTF-8 name goes as it is (to_str takes ASCII only: it
        // dropped the header).
        attack: shape
            .attack
            .as_ref()
            .and_then(|a| std::str::from_utf8(a.as_bytes()).ok()),
        proxy_auth: proxy
            .and_then(|p| p.auth.as_ref())
            .and_then(|a| a.to_str().ok()),
    })
}

/// A response whose body broke off after its head: a failure (code 0, as
/// vegeta records it) that keeps the bytes that did arrive.
pub(crate) fn broken_off(framer: Framer, stamps: Stamps, error: String) -> Response {
    Response {
        code: 0,
        bytes_in: framer.bytes_in,
        body: framer.body,
        headers: framer.head.headers,
        error: Some(error),
        head_at: stamps.head(),
        end_at: None,
        status: None,
        proto: barrage_model::Proto::Http1,
        link: None,
        events: None,
    }
}

/// A complete response read by barrage's HTTP/1.1 engine; its error text
/// (for codes outside 2xx/3xx) is the server's status line, made only
/// for them (a `format!` per response was 1% of the pipelined model).
pub(crate) fn response_of(framer: Framer, stamps: Stamps) -> Response {
    let head = framer.head;
    let status = (!(200..400).contains(&head.code)).then(|| {
        if head.reason.is_empty() {
            head.code.to_string()
        } else {
            format!("{} {}", head.code, head.reason)
        }
    });
    Response {
        code: head.code,
        bytes_in: framer.bytes_in,
        body: framer.body,
        headers: head.headers,
        error: None,
        head_at: stamps.head(),
        end_at: stamps.end(),
        status,
        proto: barrage_model::Proto::Http1,
        link: None,
        events: None,
    }
}
