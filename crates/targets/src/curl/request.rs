//! The request one curl command describes, as its options build it, and
//! the targets made from it: method, headers, body (data, JSON, a
//! multipart form), one target per URL.

use barrage_model::Target;
use base64::{engine::general_purpose::STANDARD as B64, Engine};

use crate::{check_url, BadValue, Defaults};

/// One command's request, as its options build it.
#[derive(Default)]
pub(super) struct Request {
    pub(super) method: Option<String>,
    pub(super) urls: Vec<String>,
    pub(super) headers: Vec<(String, String)>,
    /// Pieces of `-d` and the like, joined with `&`.
    pub(super) data: Vec<Vec<u8>>,
    /// Pieces of `--json`, joined as they are.
    pub(super) json: Vec<Vec<u8>>,
    pub(super) form: Vec<(String, Part)>,
    pub(super) user: Option<String>,
    pub(super) cookie: Vec<String>,
    pub(super) user_agent: Option<String>,
    pub(super) referer: Option<String>,
    pub(super) get: bool,
    pub(super) head: bool,
    pub(super) compressed: bool,
}

/// A `-F` part.
pub(super) enum Part {
    Text {
        value: Vec<u8>,
        kind: Option<String>,
    },
    File {
        name: String,
        content: Vec<u8>,
        kind: String,
    },
}

/// curl's guess of a file's type from its name (lib/mime.c).
pub(super) fn content_type_for(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("gif") => "image/gif",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        Some("txt") => "text/plain",
        Some("htm" | "html") => "text/html",
        Some("pdf") => "application/pdf",
        Some("xml") => "application/xml",
        _ => "application/octet-stream",
    }
}

impl Request {
    pub(super) fn has(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// The targets, one per URL.
    pub(super) fn targets(self, defaults: &Defaults) -> Result<Vec<Target>, BadValue> {
        let mut headers = defaults.headers.clone();
        let mut extra: Vec<(String, String)> = Vec::new();
        let add = |extra: &mut Vec<(String, String)>, r: &Request, k: &str, v: String| {
            if !r.has(k) {
                extra.push((k.to_string(), v));
            }
        };
        if let Some(u) = &self.user {
            add(
                &mut extra,
                &self,
                "Authorization",
                format!("Basic {}", B64.encode(u)),
            );
        }
        if let Some(a) = &self.user_agent {
            add(&mut extra, &self, "User-Agent", a.clone());
        }
        if let Some(e) = &self.referer {
            add(&mut extra, &self, "Referer", e.clone());
        }
        if !self.cookie.is_empty() {
            add(&mut extra, &self, "Cookie", self.cookie.join("; "));
        }
        if self.compressed {
            add(
                &mut extra,
                &self,
                "Accept-Encoding",
                "deflate, gzip, br, zstd".into(),
            );
        }
        let has_data = !self.data.is_empty() || !self.json.is_empty();
        if has_data && !self.form.is_empty() {
            return Err("-F cannot be combined with -d or --json (curl refuses it too)".into());
        }
        let mut body = Vec::new();
        let mut query = None;
        if has_data {
            let mut data = self.data.join(&b"&"[..]);
            if !self.json.is_empty() {
                if !data.is_empty() {
                    data.push(b'&');
                }
                data.extend(self.json.concat());
                add(&mut extra, &self, "Content-Type", "application/json".into());
                add(&mut extra, &self, "Accept", "application/json".into());
            } else if !self.get {
                add(
                    &mut extra,
                    &self,
                    "Content-Type",
                    "application/x-www-form-urlencoded".into(),
                );
            }
            if self.get {
                query = Some(String::from_utf8_lossy(&data).into_owned());
            } else {
                body = data;
            }
        } else if !self.form.is_empty() {
            let (b, boundary) = multipart(&self.form);
            body = b;
            add(
                &mut extra,
                &self,
                "Content-Type",
                format!("multipart/form-data; boundary={boundary}"),
            );
        }
        let method = match &self.method {
            Some(m) => m.clone(),
            None if self.head => "HEAD".into(),
            None if !body.is_empty() || !self.form.is_empty() => "POST".into(),
            None => "GET".into(),
        };
        if ::http::Method::from_bytes(method.as_bytes()).is_err() {
            return Err(format!("bad method: {method}").into());
        }
        headers.extend(self.headers.iter().cloned());
        headers.extend(extra);
        for (k, v) in &headers {
            if ::http::HeaderName::from_bytes(k.as_bytes()).is_err()
                || ::http::HeaderValue::from_str(v).is_err()
            {
                return Err(format!("bad header: {k}: {v}").into());
            }
        }
        let body: bytes::Bytes = if body.is_empty() {
            defaults.body.clone()
        } else {
            body.into()
        };
        let mut out = Vec::new();
        for url in &self.urls {
            let mut url = if url.contains("://") {
                url.clone()
            } else {
                format!("http://{url}")
            };
            if let Some(q) = &query {
                url.push(if url.contains('?') { '&' } else { '?' });
                url.push_str(q);
            }
            check_url(&url).map_err(|e| format!("bad URL: {url}, {e}"))?;
            out.push(Target {
                method: method.clone(),
                url,
                headers: headers.clone(),
                body: body.clone(),
                ..Target::default()
            });
        }
        Ok(out)
    }
}

/// A `multipart/form-data` body and its boundary: curl's shape, with a
/// boundary made from the parts (so a file converts the same each time)
/// and checked not to occur in them.
fn multipart(parts: &[(String, Part)]) -> (Vec<u8>, String) {
    let contents = |p: &Part| match p {
        Part::Text { value, .. } => value.clone(),
        Part::File { content, .. } => content.clone(),
    };
    let mut seed: u64 = 0xcbf2_9ce4_8422_2325;
    for (_, p) in parts {
        for b in contents(p) {
            seed = (seed ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    let boundary = loop {
        let b = format!("------------------------{seed:016x}");
        let clash = parts
            .iter()
            .any(|(_, p)| contents(p).windows(b.len()).any(|w| w == b.as_bytes()));
        if !clash {
            break b;
        }
        seed = seed.wrapping_add(1);
    };
    let mut body = Vec::new();
    let quote = |s: &str| s.replace('"', "%22");
    for (name, p) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let name = quote(name);
        match p {
            Part::Text { value, kind } => {
                body.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n").as_bytes(),
                );
                if let Some(k) = kind {
                    body.extend_from_slice(format!("Content-Type: {k}\r\n").as_bytes());
                }
                body.extend_from_slice(b"\r\n");
                body.extend_from_slice(value);
            }
            Part::File {
                name: file,
                content,
                kind,
            } => {
                body.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"{}\"\r\nContent-Type: {kind}\r\n\r\n",
                        quote(file)
                    )
                    .as_bytes(),
                );
                body.extend_from_slice(content);
            }
        }
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (body, boundary)
}
