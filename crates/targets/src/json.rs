use std::{collections::BTreeMap, io::BufRead};

use barrage_model::Target;
use base64::{engine::general_purpose::STANDARD as B64, Engine};
use serde::Deserialize;

use crate::{bounded::read_line, check_url, error::error, Defaults, TargetError};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonTarget {
    method: Option<String>,
    url: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    header: Option<BTreeMap<String, Vec<String>>>,
    /// barrage's: the target's share of the schedule (a whole number from
    /// 1). vegeta refuses the key (its decoder disallows unknown fields).
    #[serde(default)]
    weight: Option<serde_json::Value>,
    /// barrage's: the target's name, for `report -by name`.
    #[serde(default)]
    name: Option<String>,
}

/// vegeta's JSON target format: one object per line, blank lines skipped.
///
/// `{"method": "POST", "url": "http://h/", "body": "<base64>", "header": {"A": ["1"]}}`
pub struct JsonTargets<R: BufRead> {
    input: R,
    source: String,
    defaults: Defaults,
    line_no: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> JsonTargets<R> {
    /// A reader on `input`, called `source` in errors.
    pub fn new(input: R, source: &str, defaults: Defaults) -> Self {
        JsonTargets {
            input,
            source: source.to_string(),
            defaults,
            line_no: 0,
            buf: Vec::new(),
        }
    }

    /// The line of the last target.
    pub fn line(&self) -> u64 {
        self.line_no
    }

    /// The input's name in errors.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The next target; `Ok(None)` at the end of the input.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Target>, TargetError> {
        loop {
            if !read_line(
                &mut self.input,
                &mut self.buf,
                &self.source,
                self.line_no + 1,
            )? {
                return Ok(None);
            }
            self.line_no += 1;
            if !self.buf.iter().all(u8::is_ascii_whitespace) {
                break;
            }
        }
        let err = |m: String| error(&self.source, self.line_no, m);
        let t: JsonTarget =
            serde_json::from_slice(&self.buf).map_err(|e| err(format!("bad target: {e}")))?;
        let method = t
            .method
            .filter(|m| !m.is_empty())
            .ok_or_else(|| err("target: required method is missing".into()))?;
        if ::http::Method::from_bytes(method.as_bytes()).is_err() {
            return Err(err(format!("bad method: {method}")));
        }
        let url = t
            .url
            .filter(|u| !u.is_empty())
            .ok_or_else(|| err("target: required url is missing".into()))?;
        check_url(&url).map_err(|e| err(format!("bad URL: {url}, {e}")))?;
        let mut headers = self.defaults.headers.clone();
        for (k, vs) in t.header.into_iter().flatten() {
            if ::http::HeaderName::from_bytes(k.as_bytes()).is_err() {
                return Err(err(format!("bad header: {k}")));
            }
            for v in vs {
                if ::http::HeaderValue::from_str(&v).is_err() {
                    return Err(err(format!("bad header: {k}: {v}")));
                }
                headers.push((k.clone(), v));
            }
        }
        let body = match t.body {
            Some(b) => B64
                .decode(b.as_bytes())
                .map_err(|e| err(format!("bad body: {e}")))?
                .into(),
            None => self.defaults.body.clone(),
        };
        let weight = match &t.weight {
            None => None,
            Some(w) => Some(
                w.as_u64()
                    .and_then(|w| u32::try_from(w).ok())
                    .filter(|w| *w > 0)
                    .ok_or_else(|| {
                        err(format!(
                            "bad weight: {w} (a whole number from 1 to {})",
                            u32::MAX
                        ))
                    })?,
            ),
        };
        Ok(Some(Target {
            method,
            url,
            headers,
            body,
            weight,
            name: t.name.unwrap_or_default(),
            at: None,
            asked: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Target>, TargetError> {
        crate::reader::parse_text(text, "stdin", crate::Format::Json)
    }

    #[test]
    fn reads_targets() {
        let t = parse(
            "{\"method\":\"POST\",\"url\":\"http://a:1/x\",\"body\":\"aGVsbG8=\",\"header\":{\"A\":[\"1\",\"2\"]}}\n\n{\"method\":\"GET\",\"url\":\"https://b/\"}\n",
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(&t[0].body[..], b"hello");
        assert_eq!(
            t[0].headers,
            vec![("A".into(), "1".into()), ("A".into(), "2".into())]
        );
        assert_eq!(t[1].url, "https://b/");
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, u64, &str)] = &[
            (
                "{\"url\":\"http://a/\"}",
                1,
                "target: required method is missing",
            ),
            (
                "\n{\"method\":\"GET\"}",
                2,
                "target: required url is missing",
            ),
            (
                "{\"method\":\"GET\",\"url\":\"http://a/\",\"body\":\"%%%\"}",
                1,
                "bad body",
            ),
            (
                "{\"method\":\"GET\",\"url\":\"http://a/\",\"extra\":1}",
                1,
                "bad target",
            ),
            ("{not json", 1, "bad target"),
            ("{\"method\":\"GET\",\"url\":\"nope\"}", 1, "bad URL: nope"),
        ];
        for (text, line, msg) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, *line, "{text}: {e}");
            assert!(e.message.starts_with(msg), "{text}: {e}");
        }
    }
}
