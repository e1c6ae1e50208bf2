//! `-format curl`: curl command lines as browsers ("Copy as cURL"),
//! Postman and people write them, one target per URL of each command.
//!
//! The words are split as a POSIX shell splits them: `'…'`, `"…"` (with
//! its four escapes), `$'…'` (ANSI-C escapes), backslashes, `\` at a line's
//! end, `#` comments. An unquoted line end ends a command. The shell
//! splitting is hand-written: the `shell-words` crate has no `$'…'` (which
//! Chrome's copies use for bodies with quotes or control bytes) and does
//! not give line numbers for errors.

use crate::BadValue;
use std::collections::VecDeque;

use barrage_model::Target;
use base64::{engine::general_purpose::STANDARD as B64, Engine};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::{check_url, reader::error, Defaults, TargetError};

/// What curl leaves unescaped in `--data-urlencode`: letters, digits, `-._~`.
const URLENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A word of a command and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    text: String,
    line: u64,
}

/// Splits `text` into commands of words, as a shell would.
fn commands(text: &str, source: &str) -> Result<Vec<Vec<Word>>, TargetError> {
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut word: Option<Word> = None;
    let mut line = 1u64;
    let mut chars = text.chars().peekable();
    let start = |word: &mut Option<Word>, line: u64| {
        word.get_or_insert_with(|| Word {
            text: String::new(),
            line,
        })
        .line
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\r' => {
                if c == '\r' && chars.peek() != Some(&'\n') {
                    start(&mut word, line);
                    word.as_mut().unwrap().text.push(c);
                    continue;
                }
                words.extend(word.take());
            }
            '\n' => {
                words.extend(word.take());
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
                line += 1;
            }
            '#' if word.is_none() => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            '\\' => match chars.next() {
                Some('\n') => line += 1,
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                    line += 1;
                }
                Some(next) => {
                    start(&mut word, line);
                    word.as_mut().unwrap().text.push(next);
                }
                None => {}
            },
            '\'' => {
                let at = line;
                start(&mut word, line);
                let w = word.as_mut().unwrap();
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => {
                            line += u64::from(c == '\n');
                            w.text.push(c);
                        }
                        None => return Err(error(source, at, "unterminated ' quote".into())),
                    }
                }
            }
            '"' => {
                let at = line;
                start(&mut word, line);
                let w = word.as_mut().unwrap();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('\n') => line += 1,
                            Some(e @ ('"' | '\\' | '$' | '`')) => w.text.push(e),
                            Some(other) => {
                                line += u64::from(other == '\n');
                                w.text.push('\\');
                                w.text.push(other);
                            }
                            None => return Err(error(source, at, "unterminated \" quote".into())),
                        },
                        Some(c) => {
                            line += u64::from(c == '\n');
                            w.text.push(c);
                        }
                        None => return Err(error(source, at, "unterminated \" quote".into())),
                    }
                }
            }
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                let at = line;
                start(&mut word, line);
                let text = &mut word.as_mut().unwrap().text;
                ansi_c(&mut chars, text, &mut line)
                    .map_err(|why| error(source, at, format!("$'…' quote: {why}")))?;
            }
            c => {
                start(&mut word, line);
                word.as_mut().unwrap().text.push(c);
            }
        }
    }
    words.extend(word);
    if !words.is_empty() {
        out.push(words);
    }
    Ok(out)
}

/// The rest of a `$'…'` quote, its escapes decoded into `out`.
fn ansi_c(
    chars: &mut std::iter::Peekable<std::str::Chars>,
    out: &mut String,
    line: &mut u64,
) -> Result<(), BadValue> {
    let mut bytes: Vec<u8> = Vec::new();
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars>, radix: u32, max: usize| {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            match chars.peek().and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    v = v * radix + d;
                    chars.next();
                    n += 1;
                }
                None => break,
            }
        }
        (v, n)
    };
    loop {
        let c = chars.next().ok_or("unterminated")?;
        match c {
            '\'' => break,
            '\\' => {
                let e = chars.next().ok_or("unterminated")?;
                match e {
                    'n' => bytes.push(b'\n'),
                    't' => bytes.push(b'\t'),
                    'r' => bytes.push(b'\r'),
                    'a' => bytes.push(7),
                    'b' => bytes.push(8),
                    'e' | 'E' => bytes.push(0x1b),
                    'f' => bytes.push(0x0c),
                    'v' => bytes.push(0x0b),
                    '\\' | '\'' | '"' | '?' => bytes.push(e as u8),
                    'x' => {
                        let (v, n) = digits(chars, 16, 2);
                        if n == 0 {
                            return Err("\\x without hex digits".into());
                        }
                        bytes.push(v as u8);
                    }
                    'u' | 'U' => {
                        let (v, n) = digits(chars, 16, if e == 'u' { 4 } else { 8 });
                        let c = char::from_u32(v).filter(|_| n > 0);
                        let c = c.ok_or_else(|| format!("\\{e} without a character"))?;
                        bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    '0'..='7' => {
                        let (rest, n) = digits(chars, 8, 2);
                        let first = e.to_digit(8).unwrap_or(0);
                        bytes.push((first * 8u32.pow(n as u32) + rest) as u8);
                    }
                    other => {
                        bytes.push(b'\\');
                        bytes.extend_from_slice(other.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                }
            }
            c => {
                *line += u64::from(c == '\n');
                bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
        }
    }
    // Bytes that are not UTF-8 (a binary body) are kept as Latin-1
    // characters and turned back into bytes by the body's reader.
    match String::from_utf8(bytes) {
        Ok(s) => out.push_str(&s),
        Err(e) => out.extend(e.into_bytes().into_iter().map(|b| BYTE_BASE.offset(b))),
    }
    Ok(())
}

/// Non-UTF-8 bytes of a `$'…'` quote ride in a word as characters of a
/// private-use block, one per byte, and come back as bytes in a body.
struct ByteBase(u32);
const BYTE_BASE: ByteBase = ByteBase(0xF700);

impl ByteBase {
    fn offset(&self, b: u8) -> char {
        char::from_u32(self.0 + u32::from(b)).unwrap_or('\u{FFFD}')
    }

    /// A word's bytes: UTF-8, with the private-use stand-ins as their bytes.
    fn bytes(&self, s: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(s.len());
        for c in s.chars() {
            match u32::from(c).checked_sub(self.0) {
                Some(b) if b < 256 => out.push(b as u8),
                _ => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        out
    }
}

/// How an option is taken.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Opt {
    Request,
    Header,
    /// `-d`, `--data`, `--data-ascii`: `@file` read with line ends dropped.
    Data,
    DataRaw,
    DataBinary,
    DataUrlencode,
    Json,
    Form,
    FormString,
    User,
    Cookie,
    UserAgent,
    Referer,
    Get,
    Head,
    Compressed,
    Insecure,
    Url,
    /// `--http2` and the like: barrage's own flags choose the protocol.
    Protocol,
    /// Options that change nothing for a load test, with an argument.
    IgnoreArg,
    /// … and without one.
    Ignore,
    /// `-K`/`--config`: options from a file, which barrage does not read.
    Config,
}

/// An option by its long name (without `--`).
fn long(name: &str) -> Option<Opt> {
    use Opt::*;
    Some(match name {
        "request" => Request,
        "header" => Header,
        "data" | "data-ascii" => Data,
        "data-raw" => DataRaw,
        "data-binary" => DataBinary,
        "data-urlencode" => DataUrlencode,
        "json" => Json,
        "form" => Form,
        "form-string" => FormString,
        "user" => User,
        "cookie" => Cookie,
        "user-agent" => UserAgent,
        "referer" => Referer,
        "get" => Get,
        "head" => Head,
        "compressed" => Compressed,
        "insecure" => Insecure,
        "url" => Url,
        "http2" | "http1.1" | "http1.0" | "http2-prior-knowledge" | "http3" | "http3-only" => {
            Protocol
        }
        "output" | "write-out" | "connect-timeout" | "max-time" | "retry" | "retry-delay"
        | "retry-max-time" | "dump-header" | "cookie-jar" | "max-redirs" | "trace"
        | "trace-ascii" | "stderr" | "limit-rate" | "expect100-timeout" | "keepalive-time"
        | "output-dir" => IgnoreArg,
        "config" => Config,
        "silent" | "show-error" | "verbose" | "location" | "location-trusted" | "include"
        | "fail" | "fail-with-body" | "progress-bar" | "no-progress-meter" | "no-buffer"
        | "globoff" | "remote-name" | "remote-name-all" | "remote-header-name" | "raw"
        | "tr-encoding" | "path-as-is" | "ssl-no-revoke" | "tcp-nodelay" | "styled-output"
        | "no-styled-output" | "no-keepalive" | "create-dirs" | "disable" | "ipv4" | "ipv6" => {
            Ignore
        }
        _ => return None,
    })
}

/// A one-letter option.
fn short(c: char) -> Option<Opt> {
    use Opt::*;
    Some(match c {
        'X' => Request,
        'H' => Header,
        'd' => Data,
        'F' => Form,
        'u' => User,
        'b' => Cookie,
        'A' => UserAgent,
        'e' => Referer,
        'G' => Get,
        'I' => Head,
        'k' => Insecure,
        'o' | 'w' | 'm' | 'D' | 'c' => IgnoreArg,
        'K' => Config,
        's' | 'S' | 'v' | 'L' | 'i' | 'f' | '#' | 'N' | 'g' | 'O' | 'J' | 'q' | '4' | '6' => Ignore,
        _ => return None,
    })
}

fn takes_arg(o: Opt) -> bool {
    !matches!(
        o,
        Opt::Get | Opt::Head | Opt::Compressed | Opt::Insecure | Opt::Protocol | Opt::Ignore
    )
}

/// One command's request, as its options build it.
#[derive(Default)]
struct Request {
    method: Option<String>,
    urls: Vec<String>,
    headers: Vec<(String, String)>,
    /// Pieces of `-d` and the like, joined with `&`.
    data: Vec<Vec<u8>>,
    /// Pieces of `--json`, joined as they are.
    json: Vec<Vec<u8>>,
    form: Vec<(String, Part)>,
    user: Option<String>,
    cookie: Vec<String>,
    user_agent: Option<String>,
    referer: Option<String>,
    get: bool,
    head: bool,
    compressed: bool,
}

/// A `-F` part.
enum Part {
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

/// The words after `curl`, as one request.
fn options(words: &[Word], source: &str, notes: &mut Vec<String>) -> Result<Request, TargetError> {
    let mut r = Request::default();
    let mut i = 0;
    let mut positional_only = false;
    while i < words.len() {
        let w = &words[i];
        let at = |m: String| error(source, w.line, m);
        i += 1;
        if positional_only || !w.text.starts_with('-') || w.text == "-" {
            r.urls.push(w.text.clone());
            continue;
        }
        if w.text == "--" {
            positional_only = true;
            continue;
        }
        // (option, its value, the option as typed)
        let mut found: Vec<(Opt, Option<String>, String)> = Vec::new();
        if let Some(name) = w.text.strip_prefix("--") {
            let o = long(name).ok_or_else(|| at(format!("unknown curl option {}", w.text)))?;
            let value = if takes_arg(o) {
                let v = words
                    .get(i)
                    .ok_or_else(|| at(format!("{} needs a value", w.text)))?;
                i += 1;
                Some(v.text.clone())
            } else {
                None
            };
            found.push((o, value, w.text.clone()));
        } else {
            // -sSL, -XPOST, -H'A: b', -d @file: letters, the last may take
            // the rest of the word or the next word.
            let letters: Vec<char> = w.text[1..].chars().collect();
            let mut k = 0;
            while k < letters.len() {
                let c = letters[k];
                let o = short(c).ok_or_else(|| at(format!("unknown curl option -{c}")))?;
                k += 1;
                if takes_arg(o) {
                    let rest: String = letters[k..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else {
                        let v = words
                            .get(i)
                            .ok_or_else(|| at(format!("-{c} needs a value")))?;
                        i += 1;
                        v.text.clone()
                    };
                    found.push((o, Some(value), format!("-{c}")));
                    break;
                }
                found.push((o, None, format!("-{c}")));
            }
        }
        for (o, value, typed) in found {
            if o == Opt::Config {
                return Err(at(format!(
                    "{typed}: barrage does not read curl's config files; put the options on the command line"
                )));
            }
            let v = value.unwrap_or_default();
            READ.with_borrow_mut(Vec::clear);
            apply(&mut r, o, v, &typed).map_err(|e| at(e.0))?;
            for (path, len) in READ.with_borrow_mut(std::mem::take) {
                // Once a file, at its first use.
                let read = format!(": read {path} (");
                if !notes.iter().any(|n| n.contains(&read)) {
                    notes.push(format!(
                        "{source}:{}: {typed}: read {path} ({len} bytes)",
                        w.line
                    ));
                }
            }
            match o {
                Opt::Insecure => notes.push(format!(
                    "{source}:{}: {typed}: certificates are checked unless barrage runs with -insecure",
                    w.line
                )),
                Opt::Protocol => notes.push(format!(
                    "{source}:{}: {typed}: barrage chooses the protocol with its own flags (-http2, -h2c)",
                    w.line
                )),
                _ => {}
            }
        }
    }
    if r.urls.is_empty() {
        let line = words.first().map_or(0, |w| w.line);
        return Err(error(
            source,
            line,
            "bad target: a curl command without a URL".into(),
        ));
    }
    Ok(r)
}

/// A file's bytes, for `@file` and `<file`.
fn read_file(path: &str, typed: &str) -> Result<Vec<u8>, BadValue> {
    let bytes = crate::reader::read_bounded(path, crate::reader::MAX_BODY)
        .map_err(|e| BadValue(format!("{typed} @{path}: {e}")))?;
    READ.with_borrow_mut(|r| r.push((path.to_string(), bytes.len())));
    Ok(bytes)
}

thread_local! {
    /// The files read by the option being applied, with their sizes, for
    /// the notes on stderr: a command reading `@file` sends what is in
    /// that file now, which the user should see once (issue 29).
    static READ: std::cell::RefCell<Vec<(String, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One option into the request.
fn apply(r: &mut Request, o: Opt, v: String, typed: &str) -> Result<(), BadValue> {
    match o {
        Opt::Request => r.method = Some(v),
        Opt::Header => {
            let bad = || format!("bad header: {typed} {v:?} (use \"Name: value\")");
            if let Some(name) = v.strip_suffix(';').filter(|n| !n.contains(':')) {
                r.headers.push((name.trim().to_string(), String::new()));
            } else {
                let (k, val) = v.split_once(':').ok_or_else(bad)?;
                let (k, val) = (k.trim(), val.trim());
                if k.is_empty() {
                    return Err(bad().into());
                }
                if val.is_empty() {
                    // curl: "Name:" removes a header curl would send.
                    r.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
                } else {
                    r.headers.push((k.to_string(), val.to_string()));
                }
            }
        }
        Opt::Data => {
            let piece = match v.strip_prefix('@') {
                Some(path) => {
                    let mut b = read_file(path, typed)?;
                    b.retain(|&c| c != b'\r' && c != b'\n');
                    b
                }
                None => BYTE_BASE.bytes(&v),
            };
            r.data.push(piece);
        }
        Opt::DataRaw => r.data.push(BYTE_BASE.bytes(&v)),
        Opt::DataBinary => r.data.push(match v.strip_prefix('@') {
            Some(path) => read_file(path, typed)?,
            None => BYTE_BASE.bytes(&v),
        }),
        Opt::DataUrlencode => {
            let encode =
                |b: &[u8]| utf8_percent_encode(&String::from_utf8_lossy(b), URLENCODE).to_string();
            let piece = if let Some((name, content)) = v.split_once('=') {
                let content = encode(content.as_bytes());
                if name.is_empty() {
                    content
                } else {
                    format!("{name}={content}")
                }
            } else if let Some((name, path)) = v.split_once('@') {
                let content = encode(&read_file(path, typed)?);
                if name.is_empty() {
                    content
                } else {
                    format!("{name}={content}")
                }
            } else {
                encode(v.as_bytes())
            };
            r.data.push(piece.into_bytes());
        }
        Opt::Json => r.json.push(match v.strip_prefix('@') {
            Some(path) => read_file(path, typed)?,
            None => BYTE_BASE.bytes(&v),
        }),
        Opt::Form | Opt::FormString => {
            let (name, value) = v.split_once('=').ok_or_else(|| {
                format!("{typed} {v:?}: use name=value, name=@file or name=<file")
            })?;
            let part = if o == Opt::FormString {
                Part::Text {
                    value: BYTE_BASE.bytes(value),
                    kind: None,
                }
            } else {
                form_part(value, typed)?
            };
            r.form.push((name.to_string(), part));
        }
        Opt::User => {
            if !v.contains(':') {
                return Err(format!(
                    "{typed} {v:?}: give the password too (user:password); curl would ask for it"
                )
                .into());
            }
            r.user = Some(v);
        }
        Opt::Cookie => {
            if !v.contains('=') {
                return Err(format!(
                    "{typed} {v:?}: a cookie file is not read; give the cookies (-b 'name=value; other=value')"
                ).into());
            }
            r.cookie.push(v);
        }
        Opt::UserAgent => r.user_agent = Some(v),
        Opt::Referer => r.referer = Some(v.trim_end_matches(";auto").to_string()),
        Opt::Get => r.get = true,
        Opt::Head => r.head = true,
        Opt::Compressed => r.compressed = true,
        Opt::Url => r.urls.push(v),
        Opt::Insecure | Opt::Protocol | Opt::IgnoreArg | Opt::Ignore | Opt::Config => {}
    }
    Ok(())
}

/// A `-F` value: `text`, `@file`, `<file`, each with `;type=` and (for
/// files) `;filename=` after it.
fn form_part(value: &str, typed: &str) -> Result<Part, BadValue> {
    let mut main = value;
    let mut kind = None;
    let mut filename = None;
    // The parameters curl reads after the value, from the right.
    while let Some(at) = main.rfind(';') {
        let param = &main[at + 1..];
        if let Some(t) = param.strip_prefix("type=") {
            kind = Some(t.to_string());
        } else if let Some(f) = param.strip_prefix("filename=") {
            filename = Some(f.trim_matches('"').to_string());
        } else {
            break;
        }
        main = &main[..at];
    }
    if let Some(path) = main.strip_prefix('@') {
        let content = read_file(path, typed)?;
        let base = path.rsplit('/').next().unwrap_or(path);
        let kind = kind.unwrap_or_else(|| content_type_for(base).to_string());
        return Ok(Part::File {
            name: filename.unwrap_or_else(|| base.to_string()),
            content,
            kind,
        });
    }
    let value = match main.strip_prefix('<') {
        Some(path) => read_file(path, typed)?,
        None => BYTE_BASE.bytes(main),
    };
    Ok(Part::Text { value, kind })
}

/// curl's guess of a file's type from its name (lib/mime.c).
fn content_type_for(name: &str) -> &'static str {
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
    fn has(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// The targets, one per URL.
    fn targets(self, defaults: &Defaults) -> Result<Vec<Target>, BadValue> {
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
