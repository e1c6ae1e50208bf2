//! A target parsed once into what the engines send: [`PreparedTarget`]
//! (made by `proto/prepare.rs`, which knows what each protocol needs of
//! it) and its `-mix` group.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, Method, Uri};

use barrage_model::words::redacted;

use crate::core::{key::Key, wire::Wire};

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
    pub(crate) headers: OnceLock<HeaderMap>,
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
    pub(crate) h1_headers: OnceLock<HeaderMap>,
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
    /// What an LLM request was made to ask for (`-prompt-tokens`,
    /// `-output-tokens`), for its record.
    pub asked: Option<barrage_model::Asked>,
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
    /// Its `-timeout`: its `-mix` group's own (zero: none), else
    /// `attack`'s.
    pub(crate) fn timeout_or(&self, attack: Option<Duration>) -> Option<Duration> {
        match self.group.as_ref().and_then(|g| g.timeout) {
            Some(t) => Some(t).filter(|t| !t.is_zero()),
            None => attack,
        }
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
pub(crate) fn without_credentials(uri: Uri) -> Result<(Uri, Option<String>), crate::Failure> {
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
pub(crate) fn header_ok(name: &str, value: &str) -> bool {
    const TCHAR: &[u8] = b"!#$%&'*+-.^_`|~";
    let token = |b: &u8| b.is_ascii_alphanumeric() || TCHAR.contains(b);
    !name.is_empty()
        && name.len() < 1 << 16
        && name.as_bytes().iter().all(token)
        && value.bytes().all(|b| (b >= 32 && b != 127) || b == b'\t')
}

#[cfg(test)]
mod credential_tests {
    use super::*;
    use http::HeaderValue;

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
