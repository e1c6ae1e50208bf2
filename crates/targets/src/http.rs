use std::io::BufRead;

use barrage_model::Target;

use crate::{bounded::read_line, check_url, error::error, Defaults, TargetError};

/// vegeta's `http` target format, read one target at a time.
///
/// ```text
/// GET http://h/path          request line: an upper-case method, a space, a URL
/// Header-Name: value         any number of header lines (case kept, repeats kept)
/// # comment                  skipped anywhere
/// @/path/to/body             optional body file, the last line but directives
/// :weight 7                  barrage's directives (a colon first: no header
/// :name search               name is empty, and vegeta refuses the line as a
///                            bad header): the target's share and its name
///                            a blank line, EOF or the next request line ends it
/// ```
pub struct HttpTargets<R: BufRead> {
    input: R,
    source: String,
    defaults: Defaults,
    /// Number of the line in `peeked` (or of the last line read).
    line_no: u64,
    peeked: Option<String>,
    buf: Vec<u8>,
    /// The line the last target began on.
    start: u64,
    /// Reading a flow (`-format flow`): its step directives (`:check`,
    /// `:extract`, `:think`) are kept here, with their lines, for the
    /// flow's reader; elsewhere they are unknown.
    flow: Option<Vec<Directive>>,
}

/// A flow step's directive line, as typed: its line, word and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Where it is.
    pub line: u64,
    /// `check`, `extract` or `think`.
    pub word: String,
    /// What follows the word, trimmed.
    pub value: String,
}

/// `^[A-Z]+\s`: what vegeta takes for the start of a request line.
fn starts_with_method(line: &str) -> bool {
    let upper = line.bytes().take_while(u8::is_ascii_uppercase).count();
    upper > 0
        && line
            .as_bytes()
            .get(upper)
            .is_some_and(u8::is_ascii_whitespace)
}

impl<R: BufRead> HttpTargets<R> {
    /// A reader on `input`, called `source` in errors.
    pub fn new(input: R, source: &str, defaults: Defaults) -> Self {
        HttpTargets {
            input,
            source: source.to_string(),
            defaults,
            line_no: 0,
            peeked: None,
            buf: Vec::new(),
            start: 0,
            flow: None,
        }
    }

    /// A reader of a flow's steps: as [`HttpTargets::new`], and keeping
    /// each step's `:check`, `:extract` and `:think` lines
    /// ([`HttpTargets::take_directives`]).
    pub fn flow(input: R, source: &str, defaults: Defaults) -> Self {
        let mut r = Self::new(input, source, defaults);
        r.flow = Some(Vec::new());
        r
    }

    /// Whether it reads a flow.
    pub fn is_flow(&self) -> bool {
        self.flow.is_some()
    }

    /// The step directives of the target read last.
    pub fn take_directives(&mut self) -> Vec<Directive> {
        self.flow.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The line the last target began on.
    pub fn start_line(&self) -> u64 {
        self.start
    }

    /// The input's name in errors.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// vegeta reads `@path` from the working directory; when it is not
    /// there but is beside the targets file, says so.
    fn beside(&self, path: &str) -> String {
        let here = std::path::Path::new(path);
        let Some(dir) = std::path::Path::new(&self.source).parent() else {
            return String::new();
        };
        let there = dir.join(here);
        if here.is_relative() && !here.exists() && there.is_file() && !dir.as_os_str().is_empty() {
            format!(
                " ({} is beside the targets file: @ paths are read from the working directory, as in vegeta; write @{})",
                there.display(),
                there.display()
            )
        } else {
            String::new()
        }
    }

    fn err(&self, message: String) -> TargetError {
        error(&self.source, self.line_no, message)
    }

    /// Looks at the next line, trimmed, without consuming it.
    fn peek(&mut self) -> Result<Option<&str>, TargetError> {
        if self.peeked.is_none() {
            if !read_line(
                &mut self.input,
                &mut self.buf,
                &self.source,
                self.line_no + 1,
            )? {
                return Ok(None);
            }
            self.line_no += 1;
            let text = std::str::from_utf8(&self.buf)
                .map_err(|_| self.err("bad target: line is not UTF-8".into()))?;
            self.peeked = Some(text.trim().to_string());
        }
        Ok(self.peeked.as_deref())
    }

    fn take(&mut self) -> Result<Option<String>, TargetError> {
        self.peek()?;
        Ok(self.peeked.take())
    }

    /// The next target; `Ok(None)` at the end of the input.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Target>, TargetError> {
        let line = loop {
            match self.take()? {
                None => return Ok(None),
                Some(l) if l.is_empty() || l.starts_with('#') => continue,
                Some(l) => break l,
            }
        };
        self.start = self.line_no;
        let example = |url: &str| {
            let url = if url.contains("://") {
                url
            } else {
                "http://127.0.0.1:8080/"
            };
            format!("(expected METHOD URL, e.g. GET {url})")
        };
        let Some((method, url)) = line.split_once(' ') else {
            return Err(self.err(format!("bad target: {line} {}", example(&line))));
        };
        if !starts_with_method(&line) {
            return Err(self.err(format!("bad method: {method} {}", example(method))));
        }
        let url = url.trim();
        check_url(url).map_err(|e| self.err(format!("bad URL: {url}, {e}")))?;
        let mut target = Target {
            method: method.to_string(),
            url: url.to_string(),
            headers: self.defaults.headers.clone(),
            body: self.defaults.body.clone(),
            ..Target::default()
        };
        let (mut body_read, mut inline_body) = (false, false);
        while let Some(next) = self.peek()? {
            if next.is_empty() || starts_with_method(next) {
                break;
            }
            // After the body only directives and comments belong to it.
            if body_read && !next.starts_with([':', '#']) {
                break;
            }
            let next = self.take()?.unwrap_or_default();
            if next.starts_with('#') {
                continue;
            }
            // A directive's word follows the colon at once (`:weight 2`);
            // `: value` is a header without a name, as vegeta says.
            if let Some(directive) = next
                .strip_prefix(':')
                .filter(|d| d.starts_with(|c: char| c.is_ascii_alphabetic()))
            {
                // `:body TEXT`: the body inline (as k6 and curl users write
                // it), instead of an `@file`; placeholders render in flows.
                if let Some(text) = directive
                    .strip_prefix("body")
                    .filter(|r| r.is_empty() || r.starts_with(' '))
                {
                    if body_read || inline_body {
                        return Err(
                            self.err("a second body for one target (:body or @file)".into())
                        );
                    }
                    target.body = text
                        .strip_prefix(' ')
                        .unwrap_or(text)
                        .as_bytes()
                        .to_vec()
                        .into();
                    inline_body = true;
                    continue;
                }
                self.directive(directive, &mut target)?;
                continue;
            }
            if let Some(path) = next.strip_prefix('@') {
                if inline_body {
                    return Err(self.err("a second body for one target (:body or @file)".into()));
                }
                target.body = read_body(path)
                    .map_err(|e| self.err(format!("bad body: {path}: {e}{}", self.beside(path))))?
                    .into();
                body_read = true;
                continue;
            }
            let header = next
                .split_once(':')
                .map(|(k, v)| (k.trim(), v.trim()))
                .filter(|(k, v)| {
                    !k.is_empty()
                        && !v.is_empty()
                        && ::http::HeaderName::from_bytes(k.as_bytes()).is_ok()
                });
            let Some((k, v)) = header else {
                return Err(self.err(format!("bad header: {next}")));
            };
            if ::http::HeaderValue::from_str(v).is_err() {
                return Err(self.err(format!("bad header: {next}")));
            }
            target.headers.push((k.to_string(), v.to_string()));
        }
        Ok(Some(target))
    }
}

impl<R: BufRead> HttpTargets<R> {
    /// Applies a directive line (after its colon) to `target`.
    fn directive(&mut self, line: &str, target: &mut Target) -> Result<(), TargetError> {
        let (word, value) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(w, v)| (w, v.trim()));
        match word {
            "weight" if self.flow.is_some() => {
                return Err(self.err(
                    "a flow's step has no :weight (its steps go in order; weigh flows with -mix)"
                        .into(),
                ))
            }
            "weight" => {
                let w = value
                    .parse::<u32>()
                    .ok()
                    .filter(|w| *w > 0)
                    .ok_or_else(|| {
                        self.err(format!(
                            "bad weight: {value:?} (:weight takes a whole number from 1 to {})",
                            u32::MAX
                        ))
                    })?;
                if target.weight.replace(w).is_some() {
                    return Err(self.err("a second :weight for one target".into()));
                }
            }
            "name" => {
                if value.is_empty() {
                    return Err(self.err(":name needs a name (:name search)".into()));
                }
                if !target.name.is_empty() {
                    return Err(self.err("a second :name for one target".into()));
                }
                target.name = value.to_string();
            }
            "check" | "extract" | "think" if self.flow.is_some() => {
                let line = self.line_no;
                if let Some(kept) = self.flow.as_mut() {
                    kept.push(Directive {
                        line,
                        word: word.to_string(),
                        value: value.to_string(),
                    });
                }
            }
            _ if self.flow.is_some() => {
                return Err(self.err(format!(
                    "unknown directive :{word} (a flow's step takes :name NAME, :body TEXT, :check CONDITION, :extract VAR EXPR and :think DELAY)"
                )))
            }
            _ => {
                return Err(self.err(format!(
                    "unknown directive :{word} (a line starting with a colon is a directive: :weight N, :name NAME or :body TEXT)"
                )))
            }
        }
        Ok(())
    }
}

/// Reads a body file. Only regular files: `@/dev/zero` or a FIFO would
/// never end (found by fuzzing the target parser); at most
/// [`MAX_BODY`](crate::bounded::MAX_BODY).
fn read_body(path: &str) -> Result<Vec<u8>, crate::bounded::Unread> {
    use crate::bounded::Unread;
    if !std::fs::metadata(path).map_err(Unread::Io)?.is_file() {
        return Err(Unread::Io(std::io::Error::other("not a regular file")));
    }
    crate::bounded::read_bounded(path, crate::bounded::MAX_BODY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Target>, TargetError> {
        crate::reader::parse_text(text, "t.http", crate::Format::Http)
    }

    #[test]
    fn reads_vegeta_example() {
        let text = "# comment\nGET http://127.0.0.1:1/\n\nGET http://127.0.0.1:1/missing\n\nPOST http://127.0.0.1:1/\nContent-Type: text/plain\n# inner comment\nX-Two: a:b\n\n\nGET http://127.0.0.1:9/\n";
        let t = parse(text).unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t[2].method, "POST");
        assert_eq!(
            t[2].headers,
            vec![
                ("Content-Type".into(), "text/plain".into()),
                ("X-Two".into(), "a:b".into())
            ]
        );
        assert_eq!(t[3].url, "http://127.0.0.1:9/");
    }

    #[test]
    fn request_line_ends_a_target_without_blank_line() {
        let t = parse("GET http://a:1/\nX: 1\nPOST http://a:1/b\n").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].method, "POST");
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, u64, &str)] = &[
            ("GET\n", 1, "bad target: GET (expected METHOD URL, e.g. GET http://127.0.0.1:8080/)"),
            (
                "http://127.0.0.1:1/x\n",
                1,
                "bad target: http://127.0.0.1:1/x (expected METHOD URL, e.g. GET http://127.0.0.1:1/x)",
            ),
            ("GET 127.0.0.1:8080/\n", 1, "bad URL: 127.0.0.1:8080/, a URL needs its scheme: http://127.0.0.1:8080/"),
            ("get http://a/\n", 1, "bad method: get"),
            ("\n\nGET ftp://a/\n", 3, "bad URL: ftp://a/"),
            (
                "GET http://a/\nBroken header\n",
                2,
                "bad header: Broken header",
            ),
            ("GET http://a/\nX:\n", 2, "bad header: X:"),
            (
                "GET http://a/\n@/nonexistent/barrage-body\n",
                2,
                "bad body: /nonexistent/barrage-body",
            ),
            ("GET /relative\n", 1, "bad URL: /relative"),
            (
                "GET http://a/\n@/dev/zero\n",
                2,
                "bad body: /dev/zero: not a regular file",
            ),
        ];
        for (text, line, msg) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.starts_with(msg), "{text:?}: {e}");
            assert!(e.to_string().starts_with(&format!("t.http:{line}: ")));
        }
    }

    #[test]
    fn directives_weigh_and_name_a_target() {
        let dir = std::env::temp_dir().join(format!("barrage-directive-{}", std::process::id()));
        std::fs::write(&dir, b"q").unwrap();
        let text = format!(
            "GET http://a:1/r\n:weight 7\n:name read\n\nPOST http://a:1/s\nX: 1\n@{}\n# after the body\n:weight 2\nGET http://a:1/w\n",
            dir.display()
        );
        let t = parse(&text).unwrap();
        std::fs::remove_file(dir).unwrap();
        assert_eq!((t[0].weight, t[0].name.as_str()), (Some(7), "read"));
        assert_eq!((t[1].weight, &t[1].body[..]), (Some(2), &b"q"[..]));
        assert_eq!(t[1].headers, vec![("X".to_string(), "1".to_string())]);
        assert_eq!((t[2].weight, t[2].weight()), (None, 1));
        let bad: &[(&str, u64, &str)] = &[
            ("GET http://a/\n:weight 0\n", 2, "bad weight: \"0\""),
            ("GET http://a/\n:weight -3\n", 2, "bad weight: \"-3\""),
            ("GET http://a/\n:weight x\n", 2, "bad weight: \"x\""),
            ("GET http://a/\n:weight\n", 2, "bad weight: \"\""),
            (
                "GET http://a/\n:weight 2\n:weight 3\n",
                3,
                "a second :weight",
            ),
            ("GET http://a/\n:name\n", 2, ":name needs a name"),
            ("GET http://a/\n:think 1s\n", 2, "unknown directive :think"),
        ];
        for (text, line, msg) in bad {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.starts_with(msg), "{text:?}: {e}");
        }
    }

    #[test]
    fn defaults_come_first_and_body_applies_when_missing() {
        let dir = std::env::temp_dir().join(format!("barrage-body-{}", std::process::id()));
        std::fs::write(&dir, b"own body").unwrap();
        let defaults = Defaults {
            headers: vec![("X-Global".into(), "g".into())],
            body: "default".into(),
        };
        let text = format!(
            "POST http://a:1/\nX-Own: o\n@{}\n\nGET http://a:1/\n",
            dir.display()
        );
        let mut r = HttpTargets::new(text.as_bytes(), "stdin", defaults);
        let first = r.next().unwrap().unwrap();
        assert_eq!(first.headers[0].0, "X-Global");
        assert_eq!(first.headers[1].0, "X-Own");
        assert_eq!(&first.body[..], b"own body");
        let second = r.next().unwrap().unwrap();
        assert_eq!(&second.body[..], b"default");
        std::fs::remove_file(dir).unwrap();
    }
}
