//! `-format har`: the requests of a HAR 1.2 file's entries, in order
//! (`log.entries[].request`): method, URL, headers less HTTP/2's
//! pseudo-headers, hop-by-hop headers and `Content-Length` (the body
//! sets it), and the body from `postData.text` (base64 when `encoding`
//! says so; `postData.params` form-encoded when there is no text).

use crate::BadValue;
use std::collections::VecDeque;

use barrage_model::Target;
use base64::{engine::general_purpose::STANDARD as B64, Engine};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::{check_url, error::error, Defaults, TargetError};

#[derive(Deserialize)]
struct Har<'a> {
    #[serde(borrow)]
    log: Log<'a>,
}

#[derive(Deserialize)]
struct Log<'a> {
    #[serde(borrow)]
    entries: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct Entry {
    request: Request,
    /// When the browser sent it (RFC 3339), for `-har-timing`.
    #[serde(default, rename = "startedDateTime")]
    started: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<NameValue>,
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct NameValue {
    name: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PostData {
    mime_type: Option<String>,
    text: Option<String>,
    encoding: Option<String>,
    #[serde(default)]
    params: Vec<Param>,
}

#[derive(Deserialize)]
struct Param {
    name: String,
    value: Option<String>,
}

/// Headers a HAR records that are not the request's to send: the
/// connection's own (RFC 9110 §7.6.1) and the length, which the body sets.
const DROPPED: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "host",
];

/// A URL filter (`-har-filter`): a regular expression.
pub type Filter = regex::Regex;

/// The targets of a HAR file, read whole.
pub struct HarTargets {
    queue: VecDeque<(Target, u64)>,
}

impl HarTargets {
    /// The targets of `text` (the file `source`) whose URL `filter`
    /// matches, `-header`s first and `-body` for those without one.
    pub fn parse(
        text: &str,
        source: &str,
        defaults: &Defaults,
        filter: Option<&Filter>,
    ) -> Result<Self, TargetError> {
        let line_of =
            |offset: usize| 1 + text[..offset.min(text.len())].matches('\n').count() as u64;
        let har: Har = serde_json::from_str(text)
            .map_err(|e| error(source, e.line() as u64, format!("bad HAR: {e}")))?;
        let mut queue = VecDeque::new();
        for (n, raw) in har.log.entries.iter().enumerate() {
            let offset = raw.get().as_ptr() as usize - text.as_ptr() as usize;
            let line = line_of(offset);
            let at = |m: String| error(source, line, format!("entry {n}: {m}"));
            let entry: Entry = serde_json::from_str(raw.get()).map_err(|e| {
                let inner = raw.get()[..]
                    .lines()
                    .take(e.line().saturating_sub(1))
                    .count() as u64;
                error(
                    source,
                    line + inner,
                    format!("entry {n}: bad HAR entry: {e}"),
                )
            })?;
            let r = entry.request;
            if filter.is_some_and(|f| !f.is_match(&r.url)) {
                continue;
            }
            let started = match entry.started.as_deref().filter(|s| !s.is_empty()) {
                None => None,
                Some(s) => Some(
                    barrage_model::time::parse_rfc3339(s)
                        .map_err(|e| at(format!("bad startedDateTime {s:?}: {e}")))?,
                ),
            };
            if ::http::Method::from_bytes(r.method.as_bytes()).is_err() {
                return Err(at(format!("bad method: {}", r.method)));
            }
            check_url(&r.url).map_err(|e| at(format!("bad URL: {}, {e}", r.url)))?;
            let mut headers = defaults.headers.clone();
            for h in r.headers {
                let lower = h.name.to_ascii_lowercase();
                if h.name.starts_with(':') || DROPPED.contains(&lower.as_str()) {
                    continue;
                }
                if ::http::HeaderName::from_bytes(h.name.as_bytes()).is_err()
                    || ::http::HeaderValue::from_str(&h.value).is_err()
                {
                    return Err(at(format!("bad header: {}: {}", h.name, h.value)));
                }
                headers.push((h.name, h.value));
            }
            let body = match r.post_data {
                None => defaults.body.clone(),
                Some(p) => {
                    let body = post_data(&p).map_err(|e| at(e.0))?;
                    let typed = headers
                        .iter()
                        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
                    if let (false, Some(m)) = (typed, p.mime_type.filter(|m| !m.is_empty())) {
                        headers.push(("Content-Type".into(), m));
                    }
                    body.into()
                }
            };
            let target = Target {
                method: r.method,
                url: r.url,
                headers,
                body,
                ..Target::default()
            };
            queue.push_back((target, line, started));
        }
        // Send times as offsets from the first request's (entries are not
        // always in the order they were sent).
        let first = queue.iter().filter_map(|(_, _, s)| *s).min();
        let queue = queue
            .into_iter()
            .map(|(mut t, line, started)| {
                t.at = started
                    .zip(first)
                    .map(|(s, f)| s.saturating_sub(f).max(0) as u64);
                (t, line)
            })
            .collect();
        Ok(HarTargets { queue })
    }

    /// The next target and the line it begins on; `None` at the end.
    pub fn next_target(&mut self) -> Option<(Target, u64)> {
        self.queue.pop_front()
    }
}

/// A request's body from its `postData`.
fn post_data(p: &PostData) -> Result<Vec<u8>, BadValue> {
    if let Some(text) = &p.text {
        return match p.encoding.as_deref() {
            Some("base64") => B64
                .decode(text.as_bytes())
                .map_err(|e| BadValue(format!("bad body: postData.text is not base64: {e}"))),
            None | Some("") => Ok(text.clone().into_bytes()),
            Some(other) => {
                Err(format!("bad body: postData.encoding {other:?} (base64 or none)").into())
            }
        };
    }
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for param in &p.params {
        form.append_pair(&param.name, param.value.as_deref().unwrap_or(""));
    }
    Ok(form.finish().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, filter: Option<&str>) -> Result<Vec<Target>, TargetError> {
        let f = filter.map(|f| Filter::new(f).unwrap());
        HarTargets::parse(text, "a.har", &Defaults::default(), f.as_ref())
            .map(|h| h.queue.into_iter().map(|(t, _)| t).collect())
    }

    const HAR: &str = r#"{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
  "entries": [
    {"request": {"method": "GET", "url": "https://h/a?x=1", "httpVersion": "h2",
      "headers": [{"name": ":authority", "value": "h"}, {"name": "accept", "value": "*/*"},
                  {"name": "connection", "value": "keep-alive"}, {"name": "content-length", "value": "0"}],
      "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0}},
    {"request": {"method": "POST", "url": "https://h/api/b", "headers": [],
      "postData": {"mimeType": "application/json", "text": "{\"a\":1}"}}},
    {"request": {"method": "PUT", "url": "https://h/api/c", "headers": [],
      "postData": {"mimeType": "application/octet-stream", "text": "AP8=", "encoding": "base64"}}},
    {"request": {"method": "POST", "url": "https://h/form", "headers": [],
      "postData": {"mimeType": "application/x-www-form-urlencoded", "params": [{"name": "q", "value": "a b"}]}}}
  ]}}"#;

    #[test]
    fn reads_entries_in_order() {
        let t = parse(HAR, None).unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(
            t[0].headers,
            vec![("accept".to_string(), "*/*".to_string())]
        );
        assert_eq!(
            (t[1].method.as_str(), &t[1].body[..]),
            ("POST", &b"{\"a\":1}"[..])
        );
        assert_eq!(
            t[1].headers,
            vec![("Content-Type".to_string(), "application/json".to_string())]
        );
        assert_eq!(&t[2].body[..], b"\x00\xff");
        assert_eq!(&t[3].body[..], b"q=a+b");
    }

    #[test]
    fn the_filter_keeps_matching_urls() {
        let t = parse(HAR, Some("/api/")).unwrap();
        let urls: Vec<&str> = t.iter().map(|t| t.url.as_str()).collect();
        assert_eq!(urls, ["https://h/api/b", "https://h/api/c"]);
    }

    #[test]
    fn bad_input_names_the_line() {
        let e = parse(
            "{\"log\": {\"entries\": [\n{\"request\": {\"method\": \"GET\", \"url\": \"nope\"}}]}}",
            None,
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (
                2,
                "entry 0: bad URL: nope, a URL needs its scheme: http://nope"
            )
        );
        let e = parse(
            "{\"log\": {\"entries\": [\n{},\n{\"request\": {\"url\": \"http://h/\"}}]}}",
            None,
        )
        .unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(
            e.message
                .starts_with("entry 0: bad HAR entry: missing field `request`"),
            "{e}"
        );
        let e = parse("{\"log\": \n [}", None).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.starts_with("bad HAR: "), "{e}");
        let e = parse(
            "{\"log\": {\"entries\": [{\"request\": {\"method\": \"POST\", \"url\": \"http://h/\", \"postData\": {\"text\": \"%%\", \"encoding\": \"base64\"}}}]}}",
            None,
        )
        .unwrap_err();
        assert!(e.message.contains("postData.text is not base64"), "{e}");
    }
}
