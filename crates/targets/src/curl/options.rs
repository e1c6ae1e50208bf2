//! curl's options: the table of those barrage takes (long and short
//! names, whether each takes a value), and each applied to the request
//! it builds.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::{
    lexer::{Word, BYTE_BASE},
    request::{content_type_for, Part, Request},
};
use crate::{error::error, BadValue, TargetError};

/// What curl leaves unescaped in `--data-urlencode`: letters, digits, `-._~`.
pub(super) const URLENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// How an option is taken.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Opt {
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
pub(super) fn long(name: &str) -> Option<Opt> {
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
pub(super) fn short(c: char) -> Option<Opt> {
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

pub(super) fn takes_arg(o: Opt) -> bool {
    !matches!(
        o,
        Opt::Get | Opt::Head | Opt::Compressed | Opt::Insecure | Opt::Protocol | Opt::Ignore
    )
}

/// The words after `curl`, as one request.
pub(super) fn options(
    words: &[Word],
    source: &str,
    notes: &mut Vec<String>,
) -> Result<Request, TargetError> {
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
pub(super) fn read_file(path: &str, typed: &str) -> Result<Vec<u8>, BadValue> {
    let bytes = crate::bounded::read_bounded(path, crate::bounded::MAX_BODY)
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
pub(super) fn apply(r: &mut Request, o: Opt, v: String, typed: &str) -> Result<(), BadValue> {
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
pub(super) fn form_part(value: &str, typed: &str) -> Result<Part, BadValue> {
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
