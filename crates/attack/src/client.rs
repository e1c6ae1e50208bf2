use std::{borrow::Cow, cell::RefCell, pin::Pin, sync::Arc, time::Duration};

use barrage_model::Target;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use tokio::time::Sleep;
use tokio_rustls::TlsConnector;

use crate::{
    pool::{Conn, Dial, Key, Pool},
    proxy::ProxyUrl,
    tls, ClientConfig, TlsError,
};

/// Request header carrying the hit's sequence number.
pub const SEQ_HEADER: &str = "x-barrage-seq";
/// Request header carrying the attack name (only when `-name` is set).
pub const ATTACK_HEADER: &str = "x-barrage-attack";

// The names built once: inserting by `&str` parsed and checked the name on
// every request (280 instructions, 1.3% of a closed-model request).
const SEQ_NAME: HeaderName = HeaderName::from_static(SEQ_HEADER);
const ATTACK_NAME: HeaderName = HeaderName::from_static(ATTACK_HEADER);

/// A target parsed once into what hyper sends, shared by every hit of it.
#[derive(Debug)]
pub struct Prepared {
    /// The method.
    pub method: Method,
    /// The URL.
    pub uri: Uri,
    /// Its headers (global `-header` values first).
    pub headers: HeaderMap,
    /// Its body.
    pub body: Bytes,
    /// Where its connections go, or why it cannot be sent.
    pub(crate) key: Result<Key, String>,
    /// Its headers with a Host header for HTTP/1.1 (built once: per
    /// request only X-Barrage-Seq, and with `-name` or `-keepalive false`
    /// their headers, are added).
    pub(crate) h1_headers: HeaderMap,
    /// The method as written, for the Hit.
    pub method_text: String,
    /// The URL as written, for the Hit.
    pub url_text: String,
}

impl Prepared {
    /// Parses `t`; the error says which part hyper cannot send.
    pub fn new(t: Target) -> Result<Self, String> {
        let method = Method::from_bytes(t.method.as_bytes())
            .map_err(|_| format!("bad method: {}", t.method))?;
        let uri: Uri = t
            .url
            .parse()
            .map_err(|e| format!("bad URL: {}, {e}", t.url))?;
        let mut headers = HeaderMap::with_capacity(t.headers.len());
        for (k, v) in &t.headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| format!("bad header: {k}: {v}"))?;
            let value = HeaderValue::from_str(v).map_err(|_| format!("bad header: {k}: {v}"))?;
            headers.append(name, value);
        }
        let key = Key::of(&uri);
        let h1_headers = with_host(&headers, &uri);
        Ok(Prepared {
            method,
            key,
            h1_headers,
            uri,
            headers,
            body: t.body,
            method_text: t.method,
            url_text: t.url,
        })
    }
}

/// What came back for one hit.
#[derive(Debug, Default)]
pub struct Response {
    /// Status code.
    pub code: u16,
    /// Body bytes received.
    pub bytes_in: u64,
    /// Body bytes kept (`-max-body`).
    pub body: Vec<u8>,
    /// Headers (with `-keep-headers`).
    pub headers: Vec<(String, String)>,
    /// Set when the body broke off after the status arrived.
    pub error: Option<String>,
    /// When the final response's head (status and headers) arrived.
    pub head_at: Option<std::time::Instant>,
}

/// The HTTP client of one worker thread: hyper's connection API over its
/// own connection pool (`pool::Pool`), rustls for TLS.
pub struct Client {
    pool: Arc<Pool>,
    timeout: Option<Duration>,
    redirects: i64,
    max_body: i64,
    keep_headers: bool,
    keepalive: bool,
    /// `-chunked`.
    chunked: bool,
    /// Whether a [`Serial`] loop may keep its connection between requests:
    /// with keep-alive and no `-max-connections` (under the cap, loops
    /// keeping theirs would leave the others waiting).
    hold: bool,
    attack: Option<HeaderValue>,
}

/// What a loop that sends one request after another (the closed model)
/// keeps between its requests.
pub(crate) struct Serial {
    /// One timer for `-timeout`, pushed out per request: pushing a
    /// registered timer further out is an atomic store, where a timer per
    /// request enters and leaves tokio's timer wheel (580 instructions per
    /// request, 2.8% of the closed model's).
    timer: Pin<Box<Sleep>>,
    /// The HTTP/1.1 connection of its last request.
    kept: Kept,
}

impl Serial {
    /// Nothing kept yet.
    pub(crate) fn new() -> Self {
        Serial {
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            kept: Kept::default(),
        }
    }
}

/// A loop's last HTTP/1.1 connection, reused for its next request to the
/// same host without the pool's lock and lookups (470 instructions per
/// request); given back to the pool when the loop moves to another host.
#[derive(Default)]
pub(crate) struct Kept {
    /// The host of `conn`, or of the last one (kept to compare without
    /// cloning a key per request).
    key: Option<Key>,
    conn: Option<http1::SendRequest<Full<Bytes>>>,
}

impl Client {
    /// The TLS side of `cfg` (certificates read and parsed once), to share
    /// between the clients of one attack.
    pub fn tls(cfg: &ClientConfig) -> Result<TlsConnector, TlsError> {
        let mut tls = tls::client_config(cfg)?;
        tls.alpn_protocols = if cfg.http2 {
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        } else {
            vec![b"http/1.1".to_vec()]
        };
        Ok(TlsConnector::from(Arc::new(tls)))
    }

    /// The `-max-connections` cap, to share between the clients of one
    /// attack (`None`: unlimited).
    pub fn open_limit(cfg: &ClientConfig) -> Option<Arc<tokio::sync::Semaphore>> {
        (cfg.max_connections > 0)
            .then(|| Arc::new(tokio::sync::Semaphore::new(cfg.max_connections)))
    }

    /// A client whose connections count against a shared `-max-connections`
    /// and that shares a TLS configuration ([`Client::tls`]) and how it
    /// dials ([`Dial`]: DNS cache, `-connect-to` turns).
    pub(crate) fn sharing(
        cfg: &ClientConfig,
        open_limit: Option<Arc<tokio::sync::Semaphore>>,
        tls: TlsConnector,
        dial: Arc<Dial>,
    ) -> Self {
        let pool = Arc::new(Pool::new(
            tls,
            cfg.h2c,
            cfg.keepalive,
            cfg.connections,
            open_limit,
            dial,
            cfg.timeout,
        ));
        let attack = (!cfg.name.is_empty())
            .then(|| HeaderValue::from_str(&cfg.name).ok())
            .flatten();
        Client {
            pool,
            timeout: cfg.timeout,
            redirects: cfg.redirects,
            max_body: cfg.max_body,
            keep_headers: cfg.keep_headers,
            chunked: cfg.chunked,
            keepalive: cfg.keepalive,
            hold: cfg.keepalive && cfg.max_connections == 0,
            attack,
        }
    }

    /// Opens an idle connection to `uri`'s host ahead of the attack.
    pub async fn warm(&self, uri: &Uri) {
        if let Ok(key) = Key::of(uri) {
            self.pool.warm(&key).await;
        }
    }

    /// Sends `target` as hit `seq`, follows redirects, reads the whole body.
    /// Errors are the transport's, worded like Go's: `Get "url": …`.
    pub async fn send(&self, target: &Prepared, seq: u64) -> Result<Response, String> {
        // Boxed: the exchange's state machine is several KiB, and moving it
        // by value through every spawn showed as 10% memmove in the profile.
        let exchange = Box::pin(self.exchange(target, seq, None));
        match self.timeout {
            Some(t) => match tokio::time::timeout(t, exchange).await {
                Ok(r) => r,
                Err(_) => Err(timed_out(target, t)),
            },
            None => exchange.await,
        }
    }

    /// [`Client::send`] for a loop that sends one request after another
    /// (the closed model), with what it keeps between them: see [`Serial`].
    pub(crate) async fn send_serial(
        &self,
        target: &Prepared,
        seq: u64,
        serial: &mut Serial,
    ) -> Result<Response, String> {
        let kept = if self.hold {
            Some(&mut serial.kept)
        } else {
            None
        };
        let exchange = Box::pin(self.exchange(target, seq, kept));
        let Some(t) = self.timeout else {
            return exchange.await;
        };
        serial.timer.as_mut().reset(tokio::time::Instant::now() + t);
        tokio::select! {
            biased;
            r = exchange => r,
            () = serial.timer.as_mut() => Err(timed_out(target, t)),
        }
    }

    /// The request for `uri` over `conn`: origin-form URI for HTTP/1.1
    /// (`headers` then carry Host: see [`with_host`]), the absolute URI
    /// (`:authority`) for HTTP/2 and for a plain-HTTP `proxy`.
    #[allow(clippy::too_many_arguments)]
    fn request(
        &self,
        h2: bool,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &Bytes,
        seq: u64,
        proxy: Option<&ProxyUrl>,
    ) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(body.clone()));
        *req.method_mut() = method.clone();
        if h2 {
            *req.uri_mut() = uri.clone();
            *req.version_mut() = http::Version::HTTP_2;
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
            if !self.keepalive {
                h.insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            // hyper encodes the body in chunks when the header asks for
            // them, whatever its length.
            if self.chunked && !body.is_empty() {
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
        if let Some(a) = &self.attack {
            h.insert(ATTACK_NAME, a.clone());
        }
        req
    }

    /// `kept`'s connection if it goes to `key` and can take a request; one
    /// to another host goes back to the pool.
    fn take_kept(&self, kept: &mut Kept, key: &Key) -> Option<http1::SendRequest<Full<Bytes>>> {
        let conn = kept.conn.take()?;
        match &kept.key {
            Some(k) if k == key => conn.is_ready().then_some(conn),
            Some(k) => {
                self.pool.put(k, conn);
                None
            }
            None => None,
        }
    }

    async fn exchange(
        &self,
        target: &Prepared,
        seq: u64,
        mut kept: Option<&mut Kept>,
    ) -> Result<Response, String> {
        let mut method = target.method.clone();
        let mut uri = target.uri.clone();
        let mut body = target.body.clone();
        let mut followed = 0i64;
        loop {
            let fail = |e: &dyn std::fmt::Display| {
                format!("{} \"{}\": {}", go_op(method.as_str()), uri, e)
            };
            // The target's own key and headers, built once; a redirect's
            // are built here.
            let (key, h1_headers) = if followed == 0 {
                let key = target.key.as_ref().map_err(|e| fail(&e))?;
                (Cow::Borrowed(key), Cow::Borrowed(&target.h1_headers))
            } else {
                let key = Key::of(&uri).map_err(|e| fail(&e))?;
                (
                    Cow::Owned(key),
                    Cow::Owned(with_host(&target.headers, &uri)),
                )
            };
            let key = key.as_ref();
            let conn = match kept.as_deref_mut().and_then(|k| self.take_kept(k, key)) {
                Some(sender) => Conn::H1(sender),
                None => self.pool.get(key).await.map_err(|e| fail(&e))?,
            };
            let (resp, h1) = match conn {
                Conn::H1(mut sender) => {
                    sender.ready().await.map_err(|e| fail(&chain(&e)))?;
                    // A proxy of plain HTTP takes the absolute URL (a
                    // tunnel's requests are the server's own).
                    let proxy = (!key.tls).then(|| self.pool.proxy(key)).flatten();
                    let req = self.request(false, &method, &uri, &h1_headers, &body, seq, proxy);
                    let resp = sender
                        .send_request(req)
                        .await
                        .map_err(|e| fail(&chain(&e)))?;
                    (resp, Some(sender))
                }
                Conn::H2(mut sender) => {
                    sender.ready().await.map_err(|e| fail(&chain(&e)))?;
                    let req = self.request(true, &method, &uri, &target.headers, &body, seq, None);
                    (
                        sender
                            .send_request(req)
                            .await
                            .map_err(|e| fail(&chain(&e)))?,
                        None,
                    )
                }
            };
            let head_at = std::time::Instant::now();
            let (head, incoming) = resp.into_parts();
            let status = head.status;
            // Only a redirect's headers are looked up (a lookup per
            // response otherwise).
            let location = (status.is_redirection() && self.redirects >= 0)
                .then(|| head.headers.get(header::LOCATION))
                .flatten()
                .and_then(|l| l.to_str().ok())
                .map(str::to_string);
            if let Some(loc) = location {
                if followed >= self.redirects {
                    return Err(fail(&format!("stopped after {} redirects", self.redirects)));
                }
                // Read the body so the connection can be reused.
                let drained = incoming.collect().await.is_ok();
                give_back(head.headers);
                if let (Some(sender), true) = (h1, drained) {
                    self.pool.put(key, sender);
                }
                uri =
                    resolve(&uri, &loc).map_err(|e| fail(&format!("bad redirect {loc:?}: {e}")))?;
                if matches!(
                    status,
                    StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND | StatusCode::SEE_OTHER
                ) && method != Method::HEAD
                {
                    method = Method::GET;
                    body = Bytes::new();
                }
                followed += 1;
                continue;
            }
            let mut out = Response {
                code: status.as_u16(),
                head_at: Some(head_at),
                ..Response::default()
            };
            if self.keep_headers {
                for (k, v) in &head.headers {
                    out.headers.push((
                        k.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    ));
                }
            }
            give_back(head.headers);
            let mut incoming = incoming;
            while let Some(frame) = incoming.frame().await {
                let frame = match frame {
                    Ok(f) => f,
                    Err(e) => {
                        // The body broke off: a failure (code 0, as vegeta
                        // records it) that keeps the bytes that did arrive.
                        out.code = 0;
                        out.error = Some(fail(&chain(&e)));
                        return Ok(out);
                    }
                };
                if let Some(data) = frame.data_ref() {
                    out.bytes_in += data.len() as u64;
                    let room = if self.max_body < 0 {
                        data.len()
                    } else {
                        (self.max_body as usize)
                            .saturating_sub(out.body.len())
                            .min(data.len())
                    };
                    out.body.extend_from_slice(&data[..room]);
                }
            }
            if let Some(sender) = h1 {
                match kept {
                    Some(k) => {
                        if k.key.as_ref() != Some(key) {
                            k.key = Some(key.clone());
                        }
                        k.conn = Some(sender);
                    }
                    None => self.pool.put(key, sender),
                }
            }
            return Ok(out);
        }
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
fn spare() -> HeaderMap {
    SPARE_MAPS
        .with(|s| s.borrow_mut().pop())
        .unwrap_or_else(|| HeaderMap::with_capacity(8))
}

/// Keeps a response's header map for [`spare`].
fn give_back(mut map: HeaderMap) {
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

/// `headers` with a Host header from `uri` unless they have one, and a
/// place for [`SEQ_HEADER`]: a request's copy then takes its value in
/// place, where inserting a header the copy lacked regrew the copy (a
/// realloc per request; 170 instructions).
fn with_host(headers: &HeaderMap, uri: &Uri) -> HeaderMap {
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

/// The error of a request that took longer than `-timeout` (`t`).
fn timed_out(target: &Prepared, t: Duration) -> String {
    format!(
        "{} \"{}\": timeout after {} (-timeout)",
        go_op(&target.method_text),
        target.url_text,
        barrage_model::duration::format(t.as_nanos() as i64)
    )
}

/// Go's wording for the operation in an error: `Get`, `Post`, `Purge`.
fn go_op(method: &str) -> String {
    let mut s = String::with_capacity(method.len());
    for (i, c) in method.chars().enumerate() {
        s.push(if i == 0 {
            c.to_ascii_uppercase()
        } else {
            c.to_ascii_lowercase()
        });
    }
    s
}

/// An error and its sources, joined with `: `, without repeats.
fn chain(e: &dyn std::error::Error) -> String {
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

/// Resolves a `Location` against the URL it came from.
fn resolve(base: &Uri, location: &str) -> Result<Uri, String> {
    if let Ok(abs) = location.parse::<Uri>() {
        if abs.scheme().is_some() && abs.authority().is_some() {
            return Ok(abs);
        }
    }
    let scheme = base.scheme_str().unwrap_or("http");
    let authority = base.authority().map(|a| a.as_str()).unwrap_or("");
    let path = if let Some(rest) = location.strip_prefix("//") {
        return format!("{scheme}://{rest}")
            .parse()
            .map_err(|e| format!("{e}"));
    } else if location.starts_with('/') {
        location.to_string()
    } else {
        let dir = base.path().rsplit_once('/').map_or("", |(d, _)| d);
        format!("{dir}/{location}")
    };
    format!("{scheme}://{authority}{path}")
        .parse()
        .map_err(|e| format!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_locations() {
        let base: Uri = "http://h:1/a/b?q".parse().unwrap();
        let cases = [
            ("http://o:2/x", "http://o:2/x"),
            ("/root", "http://h:1/root"),
            ("sib", "http://h:1/a/sib"),
            ("//other/p", "http://other/p"),
        ];
        for (loc, want) in cases {
            assert_eq!(resolve(&base, loc).unwrap().to_string(), want, "{loc}");
        }
    }

    #[test]
    fn go_op_names() {
        assert_eq!(go_op("GET"), "Get");
        assert_eq!(go_op("POST"), "Post");
    }
}
