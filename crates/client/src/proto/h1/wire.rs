//! A target's HTTP/1.1 request as bytes, encoded once: per request only
//! the digits of `X-Barrage-Seq` (the last header) are written between
//! the encoded head and its end.

use bytes::Bytes;

pub use crate::core::wire::Wire;

/// The header carrying each request's sequence number.
pub const SEQ_HEADER: &str = "X-Barrage-Seq";

/// Bodies up to this size are copied behind the head so that the request
/// goes out in one write; larger ones are written from where they are
/// (`writev`), saving the copy.
pub const COPY_BODY_MAX: usize = 16 * 1024;

/// What a request's bytes are built from.
pub struct Parts<'a> {
    /// The method as written.
    pub method: &'a str,
    /// The request target: origin-form (`/path?q`), or the absolute URL
    /// for a plain-HTTP proxy.
    pub target: &'a str,
    /// `Host` (the URL's authority) unless the headers carry one.
    pub host: &'a str,
    /// Headers as written, names with their case kept.
    pub headers: &'a [(String, String)],
    /// The body.
    pub body: &'a Bytes,
    /// `-chunked`: send the body with `Transfer-Encoding: chunked`.
    pub chunked: bool,
    /// `-keepalive=false`: ask the server to close after answering.
    pub close: bool,
    /// `X-Barrage-Attack` (`-name`), when set.
    pub attack: Option<&'a str>,
    /// `Proxy-Authorization`, for a plain-HTTP proxy with credentials.
    pub proxy_auth: Option<&'a str>,
}

impl Wire {
    /// Encodes `p`.
    pub fn new(p: &Parts<'_>) -> Wire {
        let mut head = Vec::with_capacity(128 + p.target.len());
        let line = |h: &mut Vec<u8>, name: &str, value: &str| {
            h.extend_from_slice(name.as_bytes());
            h.extend_from_slice(b": ");
            h.extend_from_slice(value.as_bytes());
            h.extend_from_slice(b"\r\n");
        };
        head.extend_from_slice(p.method.as_bytes());
        head.push(b' ');
        head.extend_from_slice(p.target.as_bytes());
        head.extend_from_slice(b" HTTP/1.1\r\n");
        let named = |n: &str| p.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(n));
        match named("host") {
            Some((_, v)) => line(&mut head, "Host", v),
            None => line(&mut head, "Host", p.host),
        }
        // A Transfer-Encoding: chunked header asks for what -chunked does.
        let chunked = p.chunked
            || named("transfer-encoding").is_some_and(|(_, v)| v.eq_ignore_ascii_case("chunked"));
        for (k, v) in p.headers {
            // The framing is ours to write, and Host is written above.
            if ["host", "content-length", "transfer-encoding"]
                .iter()
                .any(|n| k.eq_ignore_ascii_case(n))
            {
                continue;
            }
            line(&mut head, k, v);
        }
        let body = if chunked && !p.body.is_empty() {
            line(&mut head, "Transfer-Encoding", "chunked");
            let mut framed = Vec::with_capacity(p.body.len() + 16);
            framed.extend_from_slice(format!("{:x}\r\n", p.body.len()).as_bytes());
            framed.extend_from_slice(p.body);
            framed.extend_from_slice(b"\r\n0\r\n\r\n");
            Bytes::from(framed)
        } else {
            // Go sends a length for an empty body only where one is
            // expected.
            if !p.body.is_empty() || matches!(p.method, "POST" | "PUT" | "PATCH") {
                line(&mut head, "Content-Length", &p.body.len().to_string());
            }
            p.body.clone()
        };
        if p.close {
            line(&mut head, "Connection", "close");
        }
        if let Some(a) = p.attack {
            line(&mut head, "X-Barrage-Attack", a);
        }
        if let Some(a) = p.proxy_auth {
            line(&mut head, "Proxy-Authorization", a);
        }
        head.extend_from_slice(SEQ_HEADER.as_bytes());
        head.extend_from_slice(b": ");
        Wire {
            head: head.into_boxed_slice(),
            body,
            head_request: p.method == "HEAD",
            replayable: matches!(p.method, "GET" | "HEAD" | "OPTIONS" | "TRACE"),
        }
    }

    /// Appends request `seq`'s bytes to `out`: all of them, or with a
    /// large body all but the body (then [`Wire::body_apart`] is true).
    pub fn write_to(&self, seq: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.head);
        let mut digits = itoa::Buffer::new();
        out.extend_from_slice(digits.format(seq).as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
        if !self.body_apart() {
            out.extend_from_slice(&self.body);
        }
    }

    /// Whether the body is written apart from the head (it is large).
    pub fn body_apart(&self) -> bool {
        self.body.len() > COPY_BODY_MAX
    }

    /// The body as sent.
    pub fn body(&self) -> &Bytes {
        &self.body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(w: &Wire, seq: u64) -> String {
        let mut out = Vec::new();
        w.write_to(seq, &mut out);
        if w.body_apart() {
            out.extend_from_slice(w.body());
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn encodes_once_and_patches_the_sequence_number() {
        let body = Bytes::from_static(b"{\"a\":1}");
        let headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("content-length".to_string(), "999".to_string()),
        ];
        let w = Wire::new(&Parts {
            method: "POST",
            target: "/api?x=1",
            host: "example.com:8080",
            headers: &headers,
            body: &body,
            chunked: false,
            close: false,
            attack: Some("night"),
            proxy_auth: None,
        });
        assert_eq!(
            text(&w, 42),
            "POST /api?x=1 HTTP/1.1\r\nHost: example.com:8080\r\nContent-Type: application/json\r\n\
             Content-Length: 7\r\nX-Barrage-Attack: night\r\nX-Barrage-Seq: 42\r\n\r\n{\"a\":1}"
        );
        assert!(text(&w, 18446744073709551615).contains("X-Barrage-Seq: 18446744073709551615\r\n"));
        assert!(!w.replayable && !w.head_request);
    }

    #[test]
    fn chunked_close_host_and_large_bodies() {
        let body = Bytes::from_static(b"hello");
        let headers = vec![("Host".to_string(), "virtual".to_string())];
        let w = Wire::new(&Parts {
            method: "PUT",
            target: "http://h/p",
            host: "h",
            headers: &headers,
            body: &body,
            chunked: true,
            close: true,
            attack: None,
            proxy_auth: Some("Basic dTpw"),
        });
        assert_eq!(
            text(&w, 0),
            "PUT http://h/p HTTP/1.1\r\nHost: virtual\r\nTransfer-Encoding: chunked\r\n\
             Connection: close\r\nProxy-Authorization: Basic dTpw\r\nX-Barrage-Seq: 0\r\n\r\n\
             5\r\nhello\r\n0\r\n\r\n"
        );
        let big = Bytes::from(vec![b'x'; COPY_BODY_MAX + 1]);
        let w = Wire::new(&Parts {
            method: "GET",
            target: "/",
            host: "h",
            headers: &[],
            body: &big,
            chunked: false,
            close: false,
            attack: None,
            proxy_auth: None,
        });
        assert!(w.body_apart() && w.replayable);
        let mut head = Vec::new();
        w.write_to(1, &mut head);
        assert!(head.ends_with(b"X-Barrage-Seq: 1\r\n\r\n"));
        let empty = Bytes::new();
        let w = Wire::new(&Parts {
            method: "GET",
            target: "/",
            host: "h",
            headers: &[],
            body: &empty,
            chunked: false,
            close: false,
            attack: None,
            proxy_auth: None,
        });
        assert_eq!(
            text(&w, 3),
            "GET / HTTP/1.1\r\nHost: h\r\nX-Barrage-Seq: 3\r\n\r\n"
        );
    }
}
