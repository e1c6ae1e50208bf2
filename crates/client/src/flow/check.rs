//! `-check`: conditions a response must meet to count as a success
//! (go-stress-testing's `-v`). A response that fails one gets the error
//! `check failed: …` naming the check and what was found; its status code
//! stays. Bodies are checked over their first [`CHECK_BODY_BYTES`],
//! whatever `-max-body` keeps in the record.

use std::{fmt, str::FromStr};

use barrage_model::CHECK_FAILED;
use regex::bytes::Regex;
use serde_json::Value;

/// How much of a body the checks read.
pub const CHECK_BODY_BYTES: i64 = 1 << 20;

/// One `-check`.
#[derive(Clone, Debug)]
pub enum Check {
    /// `status=200`, `status=2xx`, `status=200-299,404`.
    Status(Vec<(u16, u16)>, String),
    /// `body~REGEX`.
    Body(Regex),
    /// `header:Name~REGEX`.
    Header(String, Regex),
    /// `events>=N` (with `-stream`): at least N events came.
    Events(u64),
    /// `event~REGEX` (with `-stream` sse or ndjson): some event's data
    /// matches.
    Event(Regex),
    /// `json:.path==VALUE` (`equal`) or `json:.path!=VALUE`.
    Json {
        /// The path's steps.
        path: Vec<Step>,
        /// The path as typed.
        text: String,
        /// The value compared with.
        want: Value,
        /// `==` (or `!=`).
        equal: bool,
    },
}

/// A step of a JSON path: `.key` or `[index]`.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// An object's member.
    Key(String),
    /// An array's element.
    Index(usize),
}

/// A `-check` that could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{why}")]
pub struct BadCheck {
    typed: String,
    why: String,
}

impl FromStr for Check {
    type Err = BadCheck;

    fn from_str(s: &str) -> Result<Self, BadCheck> {
        let bad = |why: &str| BadCheck {
            typed: s.to_string(),
            why: why.to_string(),
        };
        let regex = |r: &str| Regex::new(r).map_err(|e| bad(&e.to_string().replace('\n', " ")));
        if let Some(codes) = s.strip_prefix("status=") {
            return status_set(codes)
                .map(|set| Check::Status(set, codes.to_string()))
                .ok_or_else(|| bad("use status=200, status=2xx or status=200-299,404"));
        }
        if let Some(r) = s.strip_prefix("body~") {
            return Ok(Check::Body(regex(r)?));
        }
        if let Some(n) = s.strip_prefix("events>=") {
            return n
                .parse()
                .map(Check::Events)
                .map_err(|_| bad("use events>=N, N a whole number"));
        }
        if let Some(r) = s.strip_prefix("event~") {
            return Ok(Check::Event(regex(r)?));
        }
        if let Some(rest) = s.strip_prefix("header:") {
            let (name, r) = rest
                .split_once('~')
                .filter(|(n, _)| !n.is_empty())
                .ok_or_else(|| bad("use header:Name~REGEX"))?;
            return Ok(Check::Header(name.to_string(), regex(r)?));
        }
        if let Some(rest) = s.strip_prefix("json:") {
            let (path, value, equal) = match (rest.find("=="), rest.find("!=")) {
                (Some(i), j) if j.is_none_or(|j| i < j) => (&rest[..i], &rest[i + 2..], true),
                (_, Some(j)) => (&rest[..j], &rest[j + 2..], false),
                _ => return Err(bad("use json:.path==VALUE or json:.path!=VALUE")),
            };
            let steps = json_path(path)
                .ok_or_else(|| bad("a path such as .data.items[0].id (from the top: .)"))?;
            let want = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.into()));
            return Ok(Check::Json {
                path: steps,
                text: path.to_string(),
                want,
                equal,
            });
        }
        Err(bad(
            "use status=CODES, body~REGEX, header:Name~REGEX, json:.path==VALUE, events>=N or event~REGEX",
        ))
    }
}

/// `200`, `2xx`, `200-299`, comma-separated.
fn status_set(s: &str) -> Option<Vec<(u16, u16)>> {
    s.split(',')
        .map(str::trim)
        .map(|item| {
            if let Some(class) = item.strip_suffix("xx") {
                let c: u16 = class.parse().ok().filter(|c| (1..=5).contains(c))?;
                return Some((c * 100, c * 100 + 99));
            }
            match item.split_once('-') {
                Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)).filter(|(a, b)| a <= b),
                None => item.parse().ok().map(|c| (c, c)),
            }
        })
        .collect()
}

/// `.a.b[0]` as steps; `.` alone is the whole document.
/// The value at `path` in `doc`, if it is there.
pub(crate) fn lookup<'a>(doc: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |at, step| match step {
        Step::Key(k) => at.get(k),
        Step::Index(i) => at.get(i),
    })
}

pub(crate) fn json_path(s: &str) -> Option<Vec<Step>> {
    let mut rest = s.strip_prefix('.')?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let (n, after) = r.split_once(']')?;
            steps.push(Step::Index(n.parse().ok()?));
            rest = after.strip_prefix('.').unwrap_or(after);
            continue;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        if end == 0 {
            return None;
        }
        steps.push(Step::Key(rest[..end].to_string()));
        rest = &rest[end..];
        rest = rest.strip_prefix('.').unwrap_or(rest);
    }
    Some(steps)
}

/// At most 60 characters of what was found, for the error text.
pub(crate) struct Shown<'a>(pub(crate) &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(60) {
            Some((i, _)) => write!(f, "{}…", &self.0[..i]),
            None => f.write_str(self.0),
        }
    }
}

impl Check {
    /// Whether the check reads the body.
    pub fn needs_body(&self) -> bool {
        matches!(self, Check::Body(_) | Check::Json { .. })
    }

    /// Whether the check reads the headers.
    pub fn needs_headers(&self) -> bool {
        matches!(self, Check::Header(..))
    }

    /// Whether the check reads a streamed answer's events (`-stream`).
    pub fn needs_events(&self) -> bool {
        matches!(self, Check::Events(_) | Check::Event(_))
    }

    /// `None` when the response passes; else the record's error.
    pub fn verdict(&self, code: u16, body: &[u8], headers: &[(String, String)]) -> Option<String> {
        self.verdict_streamed(code, body, headers, &Seen::default())
    }

    /// [`Check::verdict`] for an answer whose events were read: `seen`
    /// says how many came and which `event~` patterns matched one.
    pub fn verdict_streamed(
        &self,
        code: u16,
        body: &[u8],
        headers: &[(String, String)],
        seen: &Seen<'_>,
    ) -> Option<String> {
        match self {
            Check::Events(n) => (seen.count < *n)
                .then(|| format!("{CHECK_FAILED}events {}, want >= {n}", seen.count)),
            Check::Event(r) => (!seen.matched.iter().any(|m| m == r.as_str()))
                .then(|| format!("{CHECK_FAILED}no event matches /{}/", r.as_str())),
            Check::Status(set, text) => (!set.iter().any(|(a, b)| (*a..=*b).contains(&code)))
                .then(|| format!("{CHECK_FAILED}status {code}, want {text}")),
            Check::Body(r) => (!r.is_match(body))
                .then(|| format!("{CHECK_FAILED}body does not match /{}/", r.as_str())),
            Check::Header(name, r) => {
                let mut values = headers
                    .iter()
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                    .peekable();
                if values.peek().is_none() {
                    return Some(format!("{CHECK_FAILED}header {name} missing"));
                }
                let mut first = None;
                for (_, v) in values {
                    if r.is_match(v.as_bytes()) {
                        return None;
                    }
                    first.get_or_insert(v);
                }
                Some(format!(
                    "{CHECK_FAILED}header {name} = {:?}, want ~ /{}/",
                    Shown(first.map_or("", |v| v)).to_string(),
                    r.as_str()
                ))
            }
            Check::Json {
                path,
                text,
                want,
                equal,
            } => {
                let doc: Value = match serde_json::from_slice(body) {
                    Ok(v) => v,
                    Err(_) => {
                        return Some(format!("{CHECK_FAILED}json {text}: the body is not JSON"))
                    }
                };
                let Some(at) = lookup(&doc, path) else {
                    return Some(format!("{CHECK_FAILED}json {text} missing"));
                };
                if (at == want) == *equal {
                    return None;
                }
                let found = at.to_string();
                let op = if *equal { "want" } else { "want not" };
                Some(format!(
                    "{CHECK_FAILED}json {text} = {}, {op} {want}",
                    Shown(&found)
                ))
            }
        }
    }
}

/// The checks of an attack, in the order given; the first that fails
/// names the record's error.
#[derive(Clone, Debug, Default)]
pub struct Checks(pub Vec<Check>);

impl Checks {
    /// Whether any check reads the body.
    pub fn need_body(&self) -> bool {
        self.0.iter().any(Check::needs_body)
    }

    /// Whether any check reads the headers.
    pub fn need_headers(&self) -> bool {
        self.0.iter().any(Check::needs_headers)
    }

    /// The first failure, if any.
    pub fn verdict(&self, code: u16, body: &[u8], headers: &[(String, String)]) -> Option<String> {
        self.verdict_streamed(code, body, headers, &Seen::default())
    }

    /// [`Checks::verdict`] with a streamed answer's events.
    pub fn verdict_streamed(
        &self,
        code: u16,
        body: &[u8],
        headers: &[(String, String)],
        seen: &Seen<'_>,
    ) -> Option<String> {
        self.0
            .iter()
            .find_map(|c| c.verdict_streamed(code, body, headers, seen))
    }

    /// The `event~REGEX` patterns, for the splitter to try on each event.
    pub fn event_patterns(&self) -> Vec<Regex> {
        self.0
            .iter()
            .filter_map(|c| match c {
                Check::Event(r) => Some(r.clone()),
                _ => None,
            })
            .collect()
    }
}

/// What a streamed answer's checks read: its events' count, and the
/// `event~` patterns (as typed) that some event matched.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seen<'a> {
    /// Events counted.
    pub count: u64,
    /// Patterns matched by at least one event.
    pub matched: &'a [String],
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str) -> Check {
        s.parse().unwrap()
    }

    #[test]
    fn each_kind_passes_and_fails_with_what_it_found() {
        let h = vec![("X-Cache".to_string(), "MISS".to_string())];
        let body = br#"{"code": 5, "data": {"items": [{"id": "a"}]}, "ok": true}"#;
        let cases: &[(&str, Option<&str>)] = &[
            ("status=200", None),
            ("status=2xx", None),
            (
                "status=201-299,404",
                Some("check failed: status 200, want 201-299,404"),
            ),
            ("body~\"ok\": true", None),
            (
                "body~^nope",
                Some("check failed: body does not match /^nope/"),
            ),
            ("header:x-cache~MISS|HIT", None),
            (
                "header:X-Cache~^HIT$",
                Some("check failed: header X-Cache = \"MISS\", want ~ /^HIT$/"),
            ),
            ("header:Age~.", Some("check failed: header Age missing")),
            ("json:.code==5", None),
            (
                "json:.code==0",
                Some("check failed: json .code = 5, want 0"),
            ),
            (
                "json:.code!=5",
                Some("check failed: json .code = 5, want not 5"),
            ),
            ("json:.data.items[0].id==a", None),
            (
                "json:.data.items[0].id==\"b\"",
                Some("check failed: json .data.items[0].id = \"a\", want \"b\""),
            ),
            ("json:.ok==true", None),
            (
                "json:.data.items[3].id==a",
                Some("check failed: json .data.items[3].id missing"),
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(
                check(spec).verdict(200, body, &h).as_deref(),
                *want,
                "{spec}"
            );
        }
        assert_eq!(
            check("json:.code==0")
                .verdict(200, b"<html>", &h)
                .as_deref(),
            Some("check failed: json .code: the body is not JSON")
        );
    }

    #[test]
    fn bad_checks_are_refused_as_typed() {
        for (spec, why) in [
            ("status=2x", "use status=200"),
            ("body~(", "regex parse error"),
            ("header:~x", "use header:Name~REGEX"),
            ("json:code==1", "a path such as"),
            ("json:.code", "use json:.path==VALUE"),
            ("latency<5ms", "use status=CODES"),
        ] {
            let e = spec.parse::<Check>().unwrap_err();
            assert_eq!(e.typed, spec);
            assert!(e.to_string().contains(why), "{e}");
        }
    }
}
