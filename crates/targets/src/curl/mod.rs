//! `-format curl`: curl command lines as browsers ("Copy as cURL"),
//! Postman and people write them, one target per URL of each command.
//!
//! The words are split as a POSIX shell splits them: `'…'`, `"…"` (with
//! its four escapes), `$'…'` (ANSI-C escapes), backslashes, `\` at a line's
//! end, `#` comments. An unquoted line end ends a command. The shell
//! splitting is hand-written: the `shell-words` crate has no `$'…'` (which
//! Chrome's copies use for bodies with quotes or control bytes) and does
//! not give line numbers for errors.
//!
//! Split by reason to change: [`lexer`] (the shell's words), [`options`]
//! (curl's option table, applied), [`request`] (the request built, made
//! into targets).

mod lexer;
mod options;
mod request;

use std::collections::VecDeque;

use barrage_model::Target;

use crate::{error::error, Defaults, TargetError};

use lexer::commands;
use options::options;

/// Reads `-format curl`: every command's targets, read at the first call.
pub struct CurlTargets {
    queue: VecDeque<(Target, u64)>,
    notes: Vec<String>,
}

impl CurlTargets {
    /// The targets of `text` (the file `source`), `-header`s first and
    /// `-body` for those without one; files named with `@` are read
    /// relative to the working directory, as curl reads them.
    pub fn parse(text: &str, source: &str, defaults: &Defaults) -> Result<Self, TargetError> {
        let mut queue = VecDeque::new();
        let mut notes = Vec::new();
        for words in commands(text, source)? {
            let line = words[0].line;
            let program = words[0].text.rsplit('/').next().unwrap_or_default();
            if program != "curl" && program != "curl.exe" {
                return Err(error(
                    source,
                    line,
                    format!(
                        "bad target: expected a curl command, found {:?}",
                        words[0].text
                    ),
                ));
            }
            let r = options(&words[1..], source, &mut notes)?;
            for t in r.targets(defaults).map_err(|e| error(source, line, e.0))? {
                queue.push_back((t, line));
            }
        }
        Ok(CurlTargets { queue, notes })
    }

    /// The next target and the line it begins on; `None` at the end.
    pub fn next_target(&mut self) -> Option<(Target, u64)> {
        self.queue.pop_front()
    }

    /// Notes for the user: options honoured only with barrage's own flags.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Target>, TargetError> {
        CurlTargets::parse(text, "cmds.txt", &Defaults::default())
            .map(|c| c.queue.into_iter().map(|(t, _)| t).collect())
    }

    fn one(text: &str) -> Target {
        let mut t = parse(text).unwrap();
        assert_eq!(t.len(), 1, "{text}");
        t.remove(0)
    }

    fn header<'a>(t: &'a Target, name: &str) -> Option<&'a str> {
        t.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn shell_quoting_and_continuations() {
        let t = one("curl 'http://h/'\"a\"b \\\n  -H \"X-A: \\\"q\\\" \\$x\" \\\n  -H $'X-B: tab\\there' -H X-C:\\ c");
        assert_eq!(t.url, "http://h/ab");
        assert_eq!(header(&t, "X-A"), Some("\"q\" $x"));
        assert_eq!(header(&t, "X-B"), Some("tab\there"));
        assert_eq!(header(&t, "X-C"), Some("c"));
        assert_eq!(t.method, "GET");
    }

    #[test]
    fn commands_follow_one_another_or_blank_lines() {
        let t =
            parse("curl http://h/1\ncurl --url http://h/2 -X DELETE\n\n# a comment\ncurl h/3\n")
                .unwrap();
        let urls: Vec<&str> = t.iter().map(|t| t.url.as_str()).collect();
        assert_eq!(urls, ["http://h/1", "http://h/2", "http://h/3"]);
        assert_eq!(t[1].method, "DELETE");
    }

    #[test]
    fn data_options() {
        let t = one("curl http://h/ -d a=1 --data-raw '@b=2' --data-urlencode 'q=x y&z' --data-urlencode =é");
        assert_eq!(t.method, "POST");
        assert_eq!(&t.body[..], b"a=1&@b=2&q=x%20y%26z&%C3%A9");
        assert_eq!(
            header(&t, "content-type"),
            Some("application/x-www-form-urlencoded")
        );
        let t = one("curl -G http://h/p?x=1 -d a=1 -d b=2");
        assert_eq!(
            (t.method.as_str(), t.url.as_str()),
            ("GET", "http://h/p?x=1&a=1&b=2")
        );
        assert!(t.body.is_empty());
        let t = one("curl http://h/ --json '{\"a\":' --json '1}'");
        assert_eq!(&t.body[..], b"{\"a\":1}");
        assert_eq!(header(&t, "accept"), Some("application/json"));
        let t = one("curl http://h/ --data-binary $'\\x00\\xff\\n' -H 'Content-Type: application/octet-stream'");
        assert_eq!(&t.body[..], b"\x00\xff\n");
        assert_eq!(header(&t, "content-type"), Some("application/octet-stream"));
        let t = one("curl -XPUT http://h/ -d x");
        assert_eq!(t.method, "PUT");
        let t = one("curl -I http://h/");
        assert_eq!(t.method, "HEAD");
    }

    #[test]
    fn identity_and_browser_options() {
        let t = one(
            "curl -u 'me:p@ss' -b 'a=1; b=2' -A 'UA/1' -e 'http://r/' --compressed -sSLk http://h/",
        );
        assert_eq!(header(&t, "authorization"), Some("Basic bWU6cEBzcw=="));
        assert_eq!(header(&t, "cookie"), Some("a=1; b=2"));
        assert_eq!(header(&t, "user-agent"), Some("UA/1"));
        assert_eq!(header(&t, "referer"), Some("http://r/"));
        assert_eq!(
            header(&t, "accept-encoding"),
            Some("deflate, gzip, br, zstd")
        );
        let mut c =
            CurlTargets::parse("curl -k --http2 http://h/", "f", &Defaults::default()).unwrap();
        let notes = c.take_notes();
        assert!(notes[0]
            .starts_with("f:1: -k: certificates are checked unless barrage runs with -insecure"));
        assert!(notes[1].starts_with("f:1: --http2: barrage chooses the protocol"));
    }

    #[test]
    fn multipart_forms() {
        let t = one("curl http://h/ -F a=1 -F 'b=x;type=text/plain' --form-string 'c=@not-a-file'");
        let ct = header(&t, "content-type").unwrap();
        let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap();
        let want = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"b\"\r\nContent-Type: text/plain\r\n\r\nx\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"c\"\r\n\r\n@not-a-file\r\n\
             --{boundary}--\r\n"
        );
        assert_eq!(String::from_utf8_lossy(&t.body), want);
        assert_eq!(t.method, "POST");
    }

    #[test]
    fn bad_input_names_the_line_and_the_option() {
        let cases = [
            (
                "curl http://h/\ncurl --frobnicate http://h/",
                2,
                "unknown curl option --frobnicate",
            ),
            ("curl http://h/ -Z", 1, "unknown curl option -Z"),
            ("\n\nwget http://h/", 3, "expected a curl command"),
            ("curl 'http://h/", 1, "unterminated ' quote"),
            ("curl -H", 1, "-H needs a value"),
            ("curl -X GET", 1, "without a URL"),
            ("curl -u me http://h/", 1, "give the password too"),
            (
                "curl -b cookies.txt http://h/",
                1,
                "a cookie file is not read",
            ),
            ("curl -d @/no/such/file http://h/", 1, "-d @/no/such/file"),
            ("curl ftp://h/", 1, "bad URL"),
            ("curl -F a=1 -d b=2 http://h/", 1, "-F cannot be combined"),
        ];
        for (text, line, want) in cases {
            let e = parse(text)
                .err()
                .unwrap_or_else(|| panic!("{text}: accepted"));
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.message.contains(want), "{text}: {e}");
        }
    }
}
