//! A target parsed once into what the engines send.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use barrage_model::Target;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, Uri};

use barrage_model::words::redacted;

use crate::{core::key::Key, proto::h1::Wire};

/// Request header carrying the hit's sequence number.
pub const SEQ_HEADER: &str = "x-barrage-seq";
/// Request header carrying the attack name (only when `-name` is set).
pub const ATTACK_HEADER: &str = "x-barrage-attack";

// The names built once: inserting by `&str` parsed and checked the name on
// every request (280 instructions, 1.3% of a closed-model request).
pub(crate) const SEQ_NAME: HeaderName = HeaderName::from_static(SEQ_HEADER);
pub(crate) const ATTACK_NAME: HeaderName = HeaderName::from_static(ATTACK_HEADER);

/// A target parsed once into what the engines send, shared by every hit
/// of it.
#[derive(Debug)]
pub struct PreparedTarget {
    /// The method.
    pub method: Method,
    /// The URL.
    pub uri: Uri,
    /// Its headers (global `-header` values first), for hyper: built on
    /// first use ([`PreparedTarget::headers`]), as barrage's HTTP/1.1
    /// engine writes `header_lines` and never reads them.
    headers: OnceLock<HeaderMap>,
    /// Its headers as written, for barrage's HTTP/1.1 engine (which keeps
    /// their case).
    pub(crate) header_lines: Vec<(String, String)>,
    /// Its body.
    pub body: Bytes,
    /// Where its connections go, or why it cannot be sent.
    pub(crate) key: Result<Key, crate::Failure>,
    /// Its headers with a Host header, for hyper's HTTP/1.1, on first use
    /// (per request only X-Barrage-Seq, and with `-name` or `-keepalive
    /// false` their headers, are added).
    h1_headers: OnceLock<HeaderMap>,
    /// Its request encoded for barrage's HTTP/1.1 engine, on first use
    /// (the encoding depends on the client's flags).
    pub(crate) wire: OnceLock<Wire>,
    /// The method as written, for the Hit.
    pub method_text: String,
    /// The URL as written, for the Hit.
    pub url_text: String,
    /// A gRPC call (`GRPC` targets): sent as POST over HTTP/2, its body
    /// framed, its answer read as gRPC's.
    pub grpc: bool,
    /// A WebSocket message (`ws://`, `wss://`): sent on a WebSocket
    /// connection, its reply awaited.
    pub ws: bool,
    /// Its name (`:name`), for the Hit.
    pub name: String,
    /// Its weight in the schedule (`:weight`; 1 unless given).
    pub weight: u32,
    /// When a recording sent it (`-har-timing`), ns after its first
    /// request.
    pub at: Option<u64>,
    /// The `-mix` group it belongs to, if any: its records carry the
    /// group's name as their attack name.
    pub group: Option<Arc<TargetGroup>>,
}

/// What a `-mix` group sets for its targets beyond their schedule.
#[derive(Debug, Default)]
pub struct TargetGroup {
    /// The group's name: its records' attack name.
    pub name: String,
    /// Its own `-timeout` (`Some(0)`: none), instead of the attack's.
    pub timeout: Option<Duration>,
    /// Its own `-max-workers`: a request waits for one of these before it
    /// is sent (the wait shows as lag).
    pub slots: Option<tokio::sync::Semaphore>,
}

impl PreparedTarget {
    /// Parses `t`; the error says which part cannot be sent.
    pub fn new(t: Target) -> Result<Self, crate::Failure> {
        let grpc = t.method == crate::proto::grpc::GRPC_METHOD;
        let method = if grpc {
            Method::POST
        } else {
            Method::from_bytes(t.method.as_bytes())
                .map_err(|_| format!("bad method: {}", t.method))?
        };
        let uri: Uri = t
            .url
            .parse()
            .map_err(|e| format!("bad URL: {}, {e}", redacted(&t.url)))?;
        let (uri, basic) = without_credentials(uri)?;
        let mut header_lines = t.headers;
        // Credentials in the URL are sent as Basic auth, unless the target
        // has its own Authorization (as Go's client and vegeta do); they
        // were sent in the Host header (issue 29).
        if let Some(basic) = basic {
            if !header_lines
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            {
                header_lines.push(("Authorization".to_string(), basic));
            }
        }
        let t = Target {
            headers: header_lines,
            ..t
        };
        // Checked here, where a bad one is the record's error; the maps
        // hyper sends are built from them on first use. A flow's steps
        // and templated targets are prepared per request, and building
        // two maps that barrage's own HTTP/1.1 engine never reads was
        // ~6% of a flow step's CPU (perf against nginx).
        if let Some((k, v)) = t.headers.iter().find(|(k, v)| !header_ok(k, v)) {
            return Err(format!("bad header: {k}: {v}").into());
        }
        let mut key = Key::of(&uri);
        let mut body = t.body;
        if grpc {
            body = crate::proto::grpc::frame(&body);
            if let Ok(k) = &mut key {
                k.h2c = !k.tls;
            }
        }
        let ws = matches!(uri.scheme_str(), Some("ws" | "wss"));
        Ok(PreparedTarget {
            method,
            key,
            h1_headers: OnceLock::new(),
            uri,
            headers: OnceLock::new(),
            header_lines: t.headers,
            body,
            wire: OnceLock::new(),
            method_text: t.method,
            url_text: t.url,
            grpc,
            ws,
            name: t.name,
            weight: t.weight.unwrap_or(1),
            at: t.at,
            group: None,
        })
    }
}

impl PreparedTarget {
    /// Its headers (global `-header` values first, and gRPC's), for hyper.
    pub fn headers(&self) -> &HeaderMap {
        self.headers
            .get_or_init(|| header_map(&self.header_lines, self.grpc))
    }

    /// Its headers with a Host header, for hyper's HTTP/1.1.
    pub(crate) fn h1_headers(&self) -> &HeaderMap {
        self.h1_headers
            .get_or_init(|| with_host(self.headers(), &self.uri))
    }

    /// The URL as errors show it: its password replaced by `xxxxx`, as
    /// Go's `URL.Redacted` does.
    pub fn url_shown(&self) -> std::borrow::Cow<'_, str> {
        redacted(&self.url_text)
    }

    /// The bytes a record counts as sent: the body, or a gRPC call's
    /// message (its body less the 5-byte frame prefix).
    pub fn message_len(&self) -> usize {
        if self.grpc {
            self.body.len().saturating_sub(5)
        } else {
            self.body.len()
        }
    }
}

/// `uri` without its user and password, and the `Authorization` value
/// they make (`Basic base64(user:password)`, each percent-decoded).
fn without_credentials(uri: Uri) -> Result<(Uri, Option<String>), crate::Failure> {
    let Some((userinfo, host)) = uri.authority().and_then(|a| a.as_str().rsplit_once('@')) else {
        return Ok((uri, None));
    };
    let decode = |s: &str| percent_encoding::percent_decode_str(s).collect::<Vec<u8>>();
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let mut plain = decode(user);
    plain.push(b':');
    plain.extend(decode(password));
    let basic = format!(
        "Basic {}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, plain)
    );
    let authority = host
        .parse()
        .map_err(|e| format!("bad URL host {host:?}: {e}"))?;
    let mut parts = uri.into_parts();
    parts.authority = Some(authority);
    let uri = Uri::from_parts(parts).map_err(|e| format!("bad URL: {e}"))?;
    Ok((uri, Some(basic)))
}

/// Whether `name: value` is a header http's `HeaderName::from_bytes` and
/// `HeaderValue::from_str` take (RFC 9110's token, and a field value
/// without controls but tab), checked without building either: the test
/// below holds the two to the same answer for every byte.
fn header_ok(name: &str, value: &str) -> bool {
    const TCHAR: &[u8] = b"!#$%&'*+-.^_`|~";
    let token = |b: &u8| b.is_ascii_alphanumeric() || TCHAR.contains(b);
    !name.is_empty()
        && name.len() < 1 << 16
        && name.as_bytes().iter().all(token)
        && value.bytes().all(|b| (b >= 32 && b != 127) || b == b'\t')
}

/// `headers` with a Host header from `uri` unless they have one, and a
/// place for [`SEQ_HEADER`]: a request's copy then takes its value in
/// place, where inserting a header the copy lacked regrew the copy (a
/// realloc per request; 170 instructions).
/// `lines` as hyper sends them (and gRPC's headers, for a `grpc` call).
pub(crate) fn header_map(lines: &[(String, String)], grpc: bool) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(lines.len());
    for (k, v) in lines {
        // Each was checked by `header_ok` when its target was prepared.
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            headers.append(name, value);
        }
    }
    if grpc {
        crate::proto::grpc::add_headers(&mut headers);
    }
    headers
}

pub(crate) fn with_host(headers: &HeaderMap, uri: &Uri) -> HeaderMap {
    let mut h = headers.clone();
    if !h.contains_key(header::HOST) {
        if let Some(v) = uri
            .authority()
            .and_then(|a| HeaderValue::from_str(a.as_str()).ok())
        {
            h.insert(header::HOST, v);
        }
    }
    h.insert(SEQ_NAME, HeaderValue::from_static("0"));
    h
}

#[cfg(test)]
mod credential_tests {
    use super::*;

    #[test]
    fn header_checks_agree_with_http_for_every_byte() {
        for b in 0..=255u8 {
            let text = String::from_utf8_lossy(&[b'a', b, b'z']).into_owned();
            let http_name = HeaderName::from_bytes(text.as_bytes()).is_ok();
            let http_value = HeaderValue::from_str(&text).is_ok();
            assert_eq!(header_ok(&text, "v"), http_name, "name byte {b}");
            assert_eq!(header_ok("n", &text), http_value, "value byte {b}");
        }
        assert!(!header_ok("", "v"));
        let many = "a".repeat(1 << 16);
        assert_eq!(
            header_ok(&many, "v"),
            HeaderName::from_bytes(many.as_bytes()).is_ok()
        );
    }

    #[test]
    fn credentials_become_basic_auth() {
        let (uri, basic) = without_credentials(
            "http://alice:s3cr%40t@example.com:8080/p?q=1"
                .parse()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(uri.to_string(), "http://example.com:8080/p?q=1");
        // base64("alice:s3cr@t")
        assert_eq!(basic.as_deref(), Some("Basic YWxpY2U6czNjckB0"));
        let (_, none) = without_credentials("http://example.com/".parse().unwrap()).unwrap();
        assert_eq!(none, None);
    }
}
