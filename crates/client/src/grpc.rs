//! gRPC unary calls over HTTP/2 (hyper): a target with the method `GRPC`
//! and a URL naming the method (`http://host:50051/pkg.Service/Method`,
//! h2c; `https://`, TLS with ALPN h2). Its body is the request message,
//! framed here (the 5-byte length prefix); its header lines are metadata.
//! The answer is one length-prefixed message and a status from the
//! trailers (or from the headers: trailers-only).

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue};
use http_body_util::BodyExt;

/// The method of a gRPC target.
pub const GRPC_METHOD: &str = "GRPC";

pub use barrage_model::GRPC_FAILED;

/// gRPC's default limit on a received message (grpc-go's and ghz's).
pub const DEFAULT_MAX_MESSAGE: usize = 4 << 20;

/// A status code's name (grpc/codes).
pub fn status_name(code: u32) -> &'static str {
    match code {
        0 => "OK",
        1 => "CANCELLED",
        2 => "UNKNOWN",
        3 => "INVALID_ARGUMENT",
        4 => "DEADLINE_EXCEEDED",
        5 => "NOT_FOUND",
        6 => "ALREADY_EXISTS",
        7 => "PERMISSION_DENIED",
        8 => "RESOURCE_EXHAUSTED",
        9 => "FAILED_PRECONDITION",
        10 => "ABORTED",
        11 => "OUT_OF_RANGE",
        12 => "UNIMPLEMENTED",
        13 => "INTERNAL",
        14 => "UNAVAILABLE",
        15 => "DATA_LOSS",
        16 => "UNAUTHENTICATED",
        _ => "UNKNOWN CODE",
    }
}

/// The error of a call that ended with `code`.
pub fn failed(code: u32, message: &str) -> String {
    let name = status_name(code);
    if message.is_empty() {
        format!("{GRPC_FAILED}{code} ({name})")
    } else {
        format!("{GRPC_FAILED}{code} ({name}): {message}")
    }
}

/// `message` framed: a flag byte (not compressed) and its length.
pub fn frame(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 5);
    out.push(0);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out.into()
}

/// The request headers a call adds to its metadata (unless given).
pub(crate) fn add_headers(h: &mut HeaderMap) {
    if !h.contains_key(header::CONTENT_TYPE) {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/grpc"),
        );
    }
    h.insert(header::TE, HeaderValue::from_static("trailers"));
}

/// `grpc-timeout` for `-timeout` (milliseconds; at most 8 digits).
pub(crate) fn timeout_header(t: std::time::Duration) -> HeaderValue {
    let ms = t.as_millis().clamp(1, 99_999_999);
    HeaderValue::from_str(&format!("{ms}m")).unwrap_or(HeaderValue::from_static("99999999m"))
}

/// What a call's answer came to.
pub(crate) struct Answer {
    /// The HTTP status.
    pub code: u16,
    /// The message's bytes (decompressed), up to `keep` of them.
    pub body: Vec<u8>,
    /// The message's size.
    pub bytes_in: u64,
    /// The error, when the status is not OK (or the answer is not gRPC).
    pub error: Option<String>,
    /// The response headers and trailers, with `-keep-headers`.
    pub headers: Vec<(String, String)>,
}

fn status_of(h: &HeaderMap) -> Option<(u32, String)> {
    let code = h.get("grpc-status")?.to_str().ok()?.trim().parse().ok()?;
    let message = h
        .get("grpc-message")
        .map(|m| {
            percent_encoding::percent_decode(m.as_bytes())
                .decode_utf8_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    Some((code, message))
}

/// Reads a call's answer: its head, its message (at most `max_message`
/// bytes, decompressed when `grpc-encoding` says gzip) and its status.
pub(crate) async fn read(
    resp: http::Response<hyper::body::Incoming>,
    max_message: usize,
    keep: i64,
    keep_headers: bool,
    fail: &(dyn Fn(&dyn std::error::Error) -> String + Sync),
) -> Answer {
    let (head, mut incoming) = resp.into_parts();
    let mut out = Answer {
        code: head.status.as_u16(),
        body: Vec::new(),
        bytes_in: 0,
        error: None,
        headers: Vec::new(),
    };
    let keep_pairs = |h: &HeaderMap, out: &mut Vec<(String, String)>| {
        for (k, v) in h.iter().take(barrage_model::Hit::MAX_HEADERS) {
            out.push((
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            ));
        }
    };
    if keep_headers {
        keep_pairs(&head.headers, &mut out.headers);
    }
    // Trailers-only: the status in the head, no body.
    let mut status = status_of(&head.headers);
    let gzip = head
        .headers
        .get("grpc-encoding")
        .is_some_and(|e| e.as_bytes() == b"gzip");
    let mut data: Vec<u8> = Vec::new();
    let mut too_big = None;
    while let Some(frame) = incoming.frame().await {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => {
                out.code = 0;
                out.error = Some(fail(&e));
                return out;
            }
        };
        if let Some(d) = frame.data_ref() {
            if too_big.is_none() {
                data.extend_from_slice(d);
                // The message's declared length, once its prefix is in.
                if data.len() >= 5 {
                    let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
                    if len > max_message {
                        too_big = Some(len);
                        data = Vec::new();
                    }
                }
            }
        } else if let Some(t) = frame.trailers_ref() {
            if keep_headers {
                keep_pairs(t, &mut out.headers);
            }
            status = status_of(t).or(status);
        }
    }
    if out.code != 200 {
        return out;
    }
    let Some((code, message)) = status else {
        out.error = Some(failed(13, "grpc: the answer has no grpc-status"));
        return out;
    };
    if let Some(n) = too_big {
        out.error = Some(failed(
            8,
            &format!("grpc: received message larger than max ({n} vs. {max_message})"),
        ));
        return out;
    }
    if data.len() >= 5 {
        let compressed = data[0] == 1;
        let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
        let mut message = data.split_off(5);
        message.truncate(len);
        if compressed {
            if !gzip {
                out.error = Some(failed(
                    13,
                    "grpc: a compressed message without grpc-encoding",
                ));
                return out;
            }
            let mut plain = Vec::new();
            let mut dec = flate2::read::GzDecoder::new(&message[..]);
            let limit = (max_message + 1) as u64;
            if let Err(e) =
                std::io::Read::read_to_end(&mut std::io::Read::take(&mut dec, limit), &mut plain)
            {
                out.error = Some(failed(13, &format!("grpc: decompressing the message: {e}")));
                return out;
            }
            if plain.len() > max_message {
                out.error = Some(failed(
                    8,
                    &format!("grpc: received message after decompression larger than max ({max_message})"),
                ));
                return out;
            }
            message = plain;
        }
        out.bytes_in = message.len() as u64;
        let room = if keep < 0 {
            message.len()
        } else {
            (keep as usize).min(message.len())
        };
        message.truncate(room);
        out.body = message;
    }
    if code != 0 {
        out.error = Some(failed(code, &message));
    }
    out
}

/// A descriptor set (`-proto-set`: what `protoc --descriptor_set_out` or
/// `buf build -o` writes), for JSON request messages.
pub struct ProtoSet(prost_reflect::DescriptorPool);

impl ProtoSet {
    /// Reads a serialized `FileDescriptorSet`.
    pub fn decode(bytes: &[u8]) -> Result<Self, crate::Failure> {
        prost_reflect::DescriptorPool::decode(bytes)
            .map(ProtoSet)
            .map_err(|e| format!("not a descriptor set: {e}").into())
    }
}

/// `/package.Service/Method` of a gRPC URL, checked.
fn method_path(url: &str) -> Result<(String, String), crate::Failure> {
    let uri: http::Uri = url.parse().map_err(|e| format!("bad URL: {url}, {e}"))?;
    let path = uri.path().trim_start_matches('/');
    match path.split_once('/') {
        Some((service, method))
            if !service.is_empty() && !method.is_empty() && !method.contains('/') =>
        {
            Ok((service.to_string(), method.to_string()))
        }
        _ => Err(format!(
            "GRPC {url}: the URL must name the method, as http://host:port/package.Service/Method"
        )
        .into()),
    }
}

/// Whether `body` reads as a JSON object.
fn is_json(body: &[u8]) -> bool {
    body.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
        && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok()
}

/// A `GRPC` target's body as the message's bytes: checked against its
/// method, and converted from JSON with `protos` (protobuf bytes pass as
/// they are).
pub fn prepare_body(
    url: &str,
    body: &[u8],
    protos: Option<&ProtoSet>,
) -> Result<Vec<u8>, crate::Failure> {
    let (service, method) = method_path(url)?;
    let Some(protos) = protos else {
        if is_json(body) {
            return Err(format!(
                "GRPC {url}: the body is JSON; give -proto-set FILE (a descriptor set) to convert it, or a protobuf file"
            ).into());
        }
        return Ok(body.to_vec());
    };
    let svc = protos
        .0
        .get_service_by_name(&service)
        .ok_or_else(|| format!("GRPC {url}: no service {service} in -proto-set"))?;
    let m = svc
        .methods()
        .find(|m| m.name() == method)
        .ok_or_else(|| format!("GRPC {url}: service {service} has no method {method}"))?;
    if !is_json(body) {
        return Ok(body.to_vec());
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let msg = prost_reflect::DynamicMessage::deserialize(m.input(), &mut de).map_err(|e| {
        format!(
            "GRPC {url}: the body is not a {}: {e}",
            m.input().full_name()
        )
    })?;
    Ok(prost::Message::encode_to_vec(&msg))
}
