//! What hyper's HTTP/1.1 (`-h1-engine hyper`) and HTTP/2 share: requests
//! built as hyper takes them, answers read from hyper's body, the header
//! maps handed from responses to requests, and errors worded with their
//! sources.

use std::cell::RefCell;

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full};

use crate::{
    core::observe::Observe,
    core::response::Answer,
    core::shape::Shape,
    core::target::{ATTACK_NAME, SEQ_NAME},
    transport::proxy::ProxyUrl,
    Response,
};

/// A failure's words: `Get "url": ` and the error.
pub(crate) type Fail<'a> = &'a (dyn Fn(&dyn std::fmt::Display) -> String + Sync);

/// The request for `uri` in `version`: origin-form URI for HTTP/1.1
/// (`headers` then carry Host: see `proto/prepare.rs`), the absolute URI
/// (`:authority`) for HTTP/2 and HTTP/3 and for a plain-HTTP `proxy`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn request(
    shape: &Shape,
    version: http::Version,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
    seq: u64,
    proxy: Option<&ProxyUrl>,
) -> Request<Full<Bytes>> {
    let mut req = Request::new(Full::new(body.clone()));
    *req.method_mut() = method.clone();
    let h2 = version != http::Version::HTTP_11;
    if h2 {
        *req.uri_mut() = uri.clone();
        *req.version_mut() = version;
    } else if proxy.is_some() {
        *req.uri_mut() = uri.clone();
    } else {
        *req.uri_mut() = uri
            .path_and_query()
            .map_or_else(|| Uri::from_static("/"), |pq| Uri::from(pq.clone()));
    }
    let h = req.headers_mut();
    *h = spare();
    for (k, v) in headers {
        h.append(k.clone(), v.clone());
    }
    if h2 {
        h.remove(header::HOST);
    } else {
        if !shape.keepalive {
            h.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        // hyper encodes the body in chunks when the header asks for
        // them, whatever its length.
        if shape.chunked && !body.is_empty() {
            h.insert(
                header::TRANSFER_ENCODING,
                HeaderValue::from_static("chunked"),
            );
        }
    }
    h.insert(SEQ_NAME, HeaderValue::from(seq));
    if let Some(auth) = proxy.and_then(|p| p.auth.as_ref()) {
        h.insert(header::PROXY_AUTHORIZATION, auth.clone());
    }
    if let Some(a) = &shape.attack {
        h.insert(ATTACK_NAME, a.clone());
    }
    req
}

/// Reads a hyper response (HTTP/2, or `-h1-engine hyper`).
pub(crate) async fn read<C, O: Observe>(
    shape: &Shape,
    resp: http::Response<hyper::body::Incoming>,
    fail: Fail<'_>,
    obs: O,
) -> Answer<C> {
    let head_at = std::time::Instant::now();
    let (head, mut incoming) = resp.into_parts();
    let status = head.status;
    // Only a redirect's headers are looked up (a lookup per response
    // otherwise).
    let location = (status.is_redirection() && shape.follow)
        .then(|| head.headers.get(header::LOCATION))
        .flatten()
        .map(|l| l.as_bytes().to_vec());
    let proto = match head.version {
        http::Version::HTTP_2 => barrage_model::Proto::Http2,
        _ => barrage_model::Proto::Http1,
    };
    let mut out = Response {
        code: status.as_u16(),
        head_at: Some(head_at),
        proto,
        ..Response::default()
    };
    if shape.keep_headers && location.is_none() {
        for (k, v) in head.headers.iter().take(barrage_model::Hit::MAX_HEADERS) {
            out.headers.push((
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            ));
        }
    }
    let stream = shape.limits.stream;
    if stream {
        obs.head(head.headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes()));
    }
    give_back(head.headers);
    while let Some(frame) = incoming.frame().await {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => {
                // The body broke off: a failure (code 0, as vegeta
                // records it) that keeps the bytes that did arrive.
                out.code = 0;
                out.error = Some(fail(&chain(&e)));
                return Answer {
                    code: 0,
                    location: None,
                    response: out,
                    conn: None,
                };
            }
        };
        if let Some(data) = frame.data_ref() {
            if stream {
                obs.data(data, true);
            }
            out.bytes_in += data.len() as u64;
            let room = if shape.max_body < 0 || location.is_some() {
                if location.is_some() {
                    0
                } else {
                    data.len()
                }
            } else {
                (shape.max_body as usize)
                    .saturating_sub(out.body.len())
                    .min(data.len())
            };
            out.body.extend_from_slice(&data[..room]);
        }
    }
    if stream {
        obs.finish();
    }
    Answer {
        code: status.as_u16(),
        location,
        response: out,
        conn: None,
    }
}

thread_local! {
    /// Header maps of responses read on this thread, emptied, for the
    /// headers of the next requests.
    static SPARE_MAPS: RefCell<Vec<HeaderMap>> = const { RefCell::new(Vec::new()) };
}

/// Most maps kept in [`SPARE_MAPS`], and the most entries one may have
/// room for (a response with hundreds of headers is not kept).
const SPARE_MAX: usize = 256;
const SPARE_MAX_ROOM: usize = 64;

/// An empty header map for a request: a response's, given back.
///
/// hyper parses a response's headers into the map of the request it
/// answers, emptied. A copy of the target's headers has room for just
/// those (two or three), so every response with more grew it twice
/// (nginx sends five: two reallocations and copies per request); and the
/// copy itself cost two allocations. A response's map has room for a
/// response.
pub(crate) fn spare() -> HeaderMap {
    SPARE_MAPS
        .with(|s| s.borrow_mut().pop())
        .unwrap_or_else(|| HeaderMap::with_capacity(8))
}

/// Keeps a response's header map for [`spare`].
pub(crate) fn give_back(mut map: HeaderMap) {
    if map.capacity() > SPARE_MAX_ROOM {
        return;
    }
    map.clear();
    SPARE_MAPS.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < SPARE_MAX {
            s.push(map);
        }
    });
}

/// An error and its sources, joined with `: `, without repeats.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = s.source();
    }
    parts.join(": ")
}
