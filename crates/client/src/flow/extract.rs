//! A flow step's `:extract VAR EXPR`: a value taken from an answer for
//! later steps' `{{VAR}}`. Bodies are read over their first
//! [`CHECK_BODY_BYTES`], as the checks read them; a value is at most
//! [`MAX_VALUE_BYTES`].

use std::{fmt, str::FromStr};

use regex::bytes::Regex;
use serde_json::Value;

use crate::flow::check::{json_path, Shown, Step, CHECK_BODY_BYTES};

/// The longest value a variable may hold: past it the step fails.
pub const MAX_VALUE_BYTES: usize = 64 << 10;

/// What an `:extract` takes from an answer.
#[derive(Clone, Debug)]
pub enum Extract {
    /// `json:.path`: a string as it is, another value as JSON.
    Json(Vec<Step>, String),
    /// `header:Name`: the first such header's value.
    Header(String),
    /// `cookie:Name`: the value a `Set-Cookie` of the answer gives it.
    Cookie(String),
    /// `body~REGEX`: the first match's first group.
    Body(Regex),
    /// `status`: the status code.
    Status,
    /// `answer`: an LLM answer's text (a stream's chunks joined), as a
    /// JSON string with its quotes, to go into a later step's messages
    /// as it is (a multi-turn chat).
    Answer,
}

/// An expression that could not be read: why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadExtract(pub String);

impl fmt::Display for BadExtract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Extract {
    type Err = BadExtract;

    fn from_str(s: &str) -> Result<Self, BadExtract> {
        let bad = |why: String| BadExtract(format!("{s}: {why}"));
        if s == "status" {
            return Ok(Extract::Status);
        }
        if s == "answer" {
            return Ok(Extract::Answer);
        }
        if let Some(path) = s.strip_prefix("json:") {
            return json_path(path)
                .map(|steps| Extract::Json(steps, path.to_string()))
                .ok_or_else(|| bad("a path such as .data.items[0].id (from the top: .)".into()));
        }
        if let Some(name) = s.strip_prefix("header:").filter(|n| !n.is_empty()) {
            return Ok(Extract::Header(name.to_string()));
        }
        if let Some(name) = s.strip_prefix("cookie:").filter(|n| !n.is_empty()) {
            return Ok(Extract::Cookie(name.to_string()));
        }
        if let Some(r) = s.strip_prefix("body~") {
            let r = Regex::new(r).map_err(|e| bad(e.to_string().replace('\n', " ")))?;
            if r.captures_len() < 2 {
                return Err(bad(
                    "the regex needs a group for the value: body~\"id\":(\\d+)".into(),
                ));
            }
            return Ok(Extract::Body(r));
        }
        Err(bad(
            "use json:.path, header:Name, cookie:Name, body~REGEX with a group, status, or answer"
                .into(),
        ))
    }
}

impl Extract {
    /// Whether it reads the body.
    pub fn needs_body(&self) -> bool {
        matches!(self, Extract::Json(..) | Extract::Body(_) | Extract::Answer)
    }

    /// Whether it reads the headers.
    pub fn needs_headers(&self) -> bool {
        matches!(self, Extract::Header(_) | Extract::Cookie(_))
    }

    /// What it finds in an answer, or why not (the words after
    /// `extract VAR: `; never the answer's own values). `limit` is how
    /// much of a body was read (`-max-body`, at least
    /// [`CHECK_BODY_BYTES`]): a body that filled it may be cut.
    pub fn apply(
        &self,
        code: u16,
        body: &[u8],
        headers: &[(String, String)],
        limit: usize,
    ) -> Result<String, NotExtracted> {
        let limit = limit.max(CHECK_BODY_BYTES as usize);
        let full = body.len() >= limit;
        let body = &body[..body.len().min(limit)];
        let value = match self {
            Extract::Status => code.to_string(),
            Extract::Json(path, text) => {
                let not_json = || {
                    if full {
                        NotExtracted::OverLimit(text.clone(), limit)
                    } else {
                        NotExtracted::NotJson(text.clone())
                    }
                };
                let doc = std::str::from_utf8(body).map_err(|_| not_json())?;
                match raw_lookup(doc, path).map_err(|_| not_json())? {
                    None => return Err(NotExtracted::Json(text.clone())),
                    Some(raw) => {
                        let t = raw.get().trim();
                        match t.as_bytes().first() {
                            Some(b'"') => serde_json::from_str::<String>(t)
                                .map_err(|_| NotExtracted::NotString(text.clone()))?,
                            Some(b'{' | b'[') => serde_json::from_str::<Value>(t)
                                .map_err(|_| not_json())?
                                .to_string(),
                            _ if t == "null" => return Err(NotExtracted::Json(text.clone())),
                            // A number or a boolean as written: a number
                            // past 64 bits keeps every digit.
                            _ => t.to_string(),
                        }
                    }
                }
            }
            Extract::Answer if full => return Err(NotExtracted::AnswerOverLimit(limit)),
            Extract::Answer => crate::events::llm::answer_text(body)
                .map(|t| Value::String(t).to_string())
                .ok_or(NotExtracted::NoAnswer)?,
            Extract::Header(name) => headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
                .ok_or_else(|| NotExtracted::Header(name.clone()))?,
            Extract::Cookie(name) => headers
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
                .filter_map(|(_, v)| cookie_store::RawCookie::parse(v.as_str()).ok())
                .find(|c| c.name() == name)
                .map(|c| c.value().to_string())
                .ok_or_else(|| NotExtracted::Cookie(name.clone()))?,
            Extract::Body(r) => {
                let found = r
                    .captures(body)
                    .and_then(|c| c.get(1))
                    .ok_or_else(|| NotExtracted::Body(r.as_str().to_string()))?;
                String::from_utf8(found.as_bytes().to_vec())
                    .map_err(|_| NotExtracted::NotUtf8(r.as_str().to_string()))?
            }
        };
        if value.len() > MAX_VALUE_BYTES {
            return Err(NotExtracted::TooLong(value.len()));
        }
        Ok(value)
    }
}

/// Why an extraction found no value (the words after `extract VAR: `;
/// never the answer's own values).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotExtracted {
    /// The body filled the extraction limit and is not whole JSON.
    #[error("json {0}: the body is over the {limit} extraction limit (-max-body raises it)", limit = size(*.1))]
    OverLimit(String, usize),
    /// The body is not JSON.
    #[error("json {0}: the body is not JSON")]
    NotJson(String),
    /// The path leads nowhere (or to null).
    #[error("json {0} not found")]
    Json(String),
    /// A quoted value that does not decode.
    #[error("json {0}: not a JSON string")]
    NotString(String),
    /// No such header.
    #[error("header {0} not found")]
    Header(String),
    /// No such cookie set.
    #[error("cookie {0} not set")]
    Cookie(String),
    /// The pattern matched nothing.
    #[error("body~{0} not found")]
    Body(String),
    /// The pattern's capture is not UTF-8.
    #[error("body~{shown}: the value is not UTF-8", shown = Shown(.0))]
    NotUtf8(String),
    /// An answer that filled the extraction limit: it may be cut.
    #[error("answer: the body is over the {limit} extraction limit (-max-body raises it)", limit = size(*.0))]
    AnswerOverLimit(usize),
    /// No LLM answer (no chunk with choices) in the body.
    #[error("answer: no LLM answer (chunks or a completion with choices) in the body")]
    NoAnswer,
    /// A value over [`MAX_VALUE_BYTES`].
    #[error("the value is {0} bytes, over the {kib} KiB a variable holds", kib = MAX_VALUE_BYTES >> 10)]
    TooLong(usize),
}

/// The value at `path` in the JSON `doc`, as written (its raw text),
/// `None` when the path leads nowhere; `Err` when `doc` is not JSON.
fn raw_lookup<'a>(
    doc: &'a str,
    path: &[Step],
) -> Result<Option<&'a serde_json::value::RawValue>, serde_json::Error> {
    use serde_json::value::RawValue;
    let mut at: &'a RawValue = serde_json::from_str(doc)?;
    for step in path {
        let next = match step {
            Step::Key(k) => {
                serde_json::from_str::<std::collections::HashMap<String, &'a RawValue>>(at.get())
                    .ok()
                    .and_then(|m| m.get(k).copied())
            }
            Step::Index(i) => serde_json::from_str::<Vec<&'a RawValue>>(at.get())
                .ok()
                .and_then(|v| v.get(*i).copied()),
        };
        match next {
            Some(n) => at = n,
            None => return Ok(None),
        }
    }
    Ok(Some(at))
}

/// A byte count as a size (`1 MiB`).
fn size(n: usize) -> String {
    if n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(expr: &str, code: u16, body: &str, headers: &[(&str, &str)]) -> Result<String, String> {
        let h: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        expr.parse::<Extract>()
            .unwrap()
            .apply(code, body.as_bytes(), &h, CHECK_BODY_BYTES as usize)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn each_kind_finds_its_value_or_says_why_not() {
        let body = r#"{"access_token":"abc","n":5,"user":{"ids":[7,8]},"none":null}"#;
        let h = [
            ("X-Request-Id", "r-1"),
            ("Set-Cookie", "theme=dark; Path=/"),
            ("set-cookie", "sid=s%3D1; HttpOnly; Secure"),
        ];
        let ok: &[(&str, &str)] = &[
            ("json:.access_token", "abc"),
            ("json:.n", "5"),
            ("json:.user.ids[1]", "8"),
            ("json:.user", r#"{"ids":[7,8]}"#),
            ("header:x-request-id", "r-1"),
            ("cookie:sid", "s%3D1"),
            ("cookie:theme", "dark"),
            (r#"body~"access_token":"(\w+)""#, "abc"),
            ("status", "201"),
        ];
        for (expr, want) in ok {
            assert_eq!(take(expr, 201, body, &h).as_deref(), Ok(*want), "{expr}");
        }
        let missing: &[(&str, &str)] = &[
            ("json:.token", "json .token not found"),
            ("json:.none", "json .none not found"),
            ("header:X-Token", "header X-Token not found"),
            ("cookie:session", "cookie session not set"),
            ("body~id=(\\d+)", "body~id=(\\d+) not found"),
        ];
        for (expr, want) in missing {
            assert_eq!(take(expr, 200, body, &h), Err(want.to_string()), "{expr}");
        }
        assert_eq!(
            take("json:.a", 200, "<html>", &[]).unwrap_err(),
            "json .a: the body is not JSON"
        );
        let long = format!(r#"{{"a":"{}"}}"#, "x".repeat(MAX_VALUE_BYTES + 1));
        assert!(take("json:.a", 200, &long, &[])
            .unwrap_err()
            .contains("over the 64 KiB"));
    }

    #[test]
    fn a_body_is_read_over_its_first_mebibyte() {
        let body = format!("{}id=7", " ".repeat(CHECK_BODY_BYTES as usize));
        assert!(take("body~id=(\\d+)", 200, &body, &[]).is_err());
        assert_eq!(
            take("body~id=(\\d+)", 200, &body[1000..], &[]).unwrap(),
            "7"
        );
    }

    #[test]
    fn numbers_keep_their_text_and_a_cut_body_is_said() {
        // Past 64 bits a number kept as a float lost its last digits.
        let body = r#"{"id": 123456789012345678901234567890, "n": [1, 2.50, true], "s": "a\"b"}"#;
        assert_eq!(
            take("json:.id", 200, body, &[]).unwrap(),
            "123456789012345678901234567890"
        );
        assert_eq!(take("json:.n[1]", 200, body, &[]).unwrap(), "2.50");
        assert_eq!(take("json:.n[2]", 200, body, &[]).unwrap(), "true");
        assert_eq!(take("json:.n", 200, body, &[]).unwrap(), "[1,2.5,true]");
        assert_eq!(take("json:.s", 200, body, &[]).unwrap(), "a\"b");
        assert!(take("json:.nope", 200, body, &[])
            .unwrap_err()
            .contains("not found"));
        // Valid JSON past the limit: said as such, not "not JSON".
        let long = format!(r#"{{"a":"{}"}}"#, "x".repeat(CHECK_BODY_BYTES as usize));
        let e = take("json:.a", 200, &long, &[]).unwrap_err();
        assert!(
            e.contains("over the 1 MiB extraction limit (-max-body raises it)"),
            "{e}"
        );
        // A larger -max-body reads it.
        let h: Vec<(String, String)> = Vec::new();
        let got = "json:.a"
            .parse::<Extract>()
            .unwrap()
            .apply(200, long.as_bytes(), &h, 4 << 20);
        assert!(got
            .unwrap_err()
            .to_string()
            .contains("over the 64 KiB a variable holds"));
    }

    #[test]
    fn bad_expressions_are_refused() {
        for (expr, why) in [
            ("json:token", "json:token: a path such as"),
            ("body~(", "body~(: regex parse error"),
            ("body~\\d+", "body~\\d+: the regex needs a group"),
            ("header:", "header:: use json:.path"),
            ("xml:/a", "xml:/a: use json:.path"),
        ] {
            let e = expr.parse::<Extract>().unwrap_err();
            assert!(e.0.starts_with(why), "{expr}: {e}");
        }
    }
}
