//! How each protocol prepares what a target sends, once: the
//! [`PreparedTarget`] itself (a `GRPC` target's body framed and its calls
//! over HTTP/2), and the header maps hyper's HTTP/1.1, HTTP/2 and HTTP/3
//! send, built on first use.

use std::sync::OnceLock;

use barrage_model::{words::redacted, Target};
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, Uri};

use crate::core::{
    ask::Ask,
    key::Key,
    target::{header_ok, without_credentials, PreparedTarget, SEQ_NAME},
};

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
            asked: t.asked,
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
}

impl<'a> Ask<'a> {
    /// Its headers, for hyper: the target's, or its redirect's.
    pub(crate) fn headers(&self) -> &'a http::HeaderMap {
        match self.hop {
            Some(h) => h
                .map
                .get_or_init(|| header_map(&h.headers, self.target.grpc)),
            None => self.target.headers(),
        }
    }
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
