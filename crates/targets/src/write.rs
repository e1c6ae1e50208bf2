//! Writing targets back out (`barrage targets`): vegeta's JSON lines, or
//! its http format with each body in a file of its own.

use std::io::{self, Write};

use barrage_model::Target;
use base64::{engine::general_purpose::STANDARD as B64, Engine};

/// `target` as one line of vegeta's JSON format: `method`, `url`, `body`
/// (base64, left out when empty) and `header` (each name once, its
/// values in order, names in first-seen order).
pub fn write_json(target: &Target, out: &mut impl Write) -> io::Result<()> {
    let s = |v: &str| serde_json::to_string(v).unwrap_or_default();
    write!(
        out,
        "{{\"method\":{},\"url\":{}",
        s(&target.method),
        s(&target.url)
    )?;
    if !target.body.is_empty() {
        write!(out, ",\"body\":\"{}\"", B64.encode(&target.body))?;
    }
    let mut names: Vec<&str> = Vec::new();
    for (k, _) in &target.headers {
        if !names.contains(&k.as_str()) {
            names.push(k);
        }
    }
    if !names.is_empty() {
        out.write_all(b",\"header\":{")?;
        for (i, name) in names.iter().enumerate() {
            let values: Vec<String> = target
                .headers
                .iter()
                .filter(|(k, _)| k == name)
                .map(|(_, v)| s(v))
                .collect();
            let comma = if i > 0 { "," } else { "" };
            write!(out, "{comma}{}:[{}]", s(name), values.join(","))?;
        }
        out.write_all(b"}")?;
    }
    if let Some(w) = target.weight {
        write!(out, ",\"weight\":{w}")?;
    }
    if !target.name.is_empty() {
        write!(out, ",\"name\":{}", s(&target.name))?;
    }
    out.write_all(b"}\n")
}

/// `target` in vegeta's http format, its body (if any) named by `body`
/// (an `@path` line), and the blank line that ends it.
pub fn write_http(target: &Target, body: Option<&str>, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{} {}", target.method, target.url)?;
    for (k, v) in &target.headers {
        writeln!(out, "{k}: {v}")?;
    }
    if let Some(path) = body {
        writeln!(out, "@{path}")?;
    }
    if let Some(w) = target.weight {
        writeln!(out, ":weight {w}")?;
    }
    if !target.name.is_empty() {
        writeln!(out, ":name {}", target.name)?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{reader::parse_text, Format};

    #[test]
    fn weights_and_names_are_written_in_both_formats() {
        let http = "GET http://h/a\n:weight 7\n:name read\n\nGET http://h/b\n";
        let t = parse_text(http, "t", Format::Http).unwrap();
        let mut json = Vec::new();
        let mut back = Vec::new();
        for target in &t {
            write_json(target, &mut json).unwrap();
            write_http(target, None, &mut back).unwrap();
        }
        let json = String::from_utf8(json).unwrap();
        assert_eq!(
            json,
            "{\"method\":\"GET\",\"url\":\"http://h/a\",\"weight\":7,\"name\":\"read\"}\n{\"method\":\"GET\",\"url\":\"http://h/b\"}\n"
        );
        assert_eq!(parse_text(&json, "t", Format::Json).unwrap(), t);
        let back = String::from_utf8(back).unwrap();
        assert_eq!(parse_text(&back, "t", Format::Http).unwrap(), t);
        for bad in [
            "{\"method\":\"GET\",\"url\":\"http://h/\",\"weight\":0}",
            "{\"method\":\"GET\",\"url\":\"http://h/\",\"weight\":1.5}",
            "{\"method\":\"GET\",\"url\":\"http://h/\",\"weight\":\"2\"}",
        ] {
            let e = parse_text(bad, "t.json", Format::Json).unwrap_err();
            assert!(e.to_string().starts_with("t.json:1: bad weight:"), "{e}");
        }
    }

    #[test]
    fn json_and_http_read_back_the_same() {
        let text = "{\"method\":\"POST\",\"url\":\"http://h/x\",\"body\":\"AP8K\",\"header\":{\"B\":[\"2\",\"3\"],\"A\":[\"\\\"1\\\"\"]}}\n";
        let t = parse_text(text, "t", Format::Json).unwrap();
        let mut out = Vec::new();
        write_json(&t[0], &mut out).unwrap();
        let back = parse_text(std::str::from_utf8(&out).unwrap(), "t", Format::Json).unwrap();
        assert_eq!(back, t);
        let mut out = Vec::new();
        write_http(&t[0], None, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "POST http://h/x\nA: \"1\"\nB: 2\nB: 3\n\n"
        );
    }
}

/// Why [`convert`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// A target could not be read (bad input).
    #[error(transparent)]
    Target(#[from] crate::TargetError),
    /// A target has a body and no `-bodies` directory was given (bad
    /// input).
    #[error("target {n} ({method} {url}) has a body: give -bodies DIR for its file")]
    BodyWithoutDir {
        /// 1-based number of the target.
        n: u64,
        /// Its method.
        method: String,
        /// Its URL.
        url: String,
    },
    /// A body file could not be written.
    #[error("{path}: {error}")]
    BodyFile {
        /// The file.
        path: String,
        /// Why.
        error: io::Error,
    },
    /// The output could not be written.
    #[error(transparent)]
    Output(io::Error),
}

/// `barrage targets`: every target of `reader` written to `out`, as
/// vegeta's JSON lines (`http` false) or its http format with each body
/// in `bodies/body-N.bin`. Returns how many were written.
pub fn convert<R: io::BufRead>(
    reader: &mut crate::TargetReader<R>,
    http: bool,
    bodies: Option<&std::path::Path>,
    out: &mut impl Write,
) -> Result<u64, ConvertError> {
    let mut n = 0u64;
    while let Some(target) = reader.next()? {
        n += 1;
        if !http {
            write_json(&target, out).map_err(ConvertError::Output)?;
            continue;
        }
        let body = match (bodies, target.body.is_empty()) {
            (_, true) => None,
            (None, false) => {
                return Err(ConvertError::BodyWithoutDir {
                    n,
                    method: target.method,
                    url: target.url,
                })
            }
            (Some(dir), false) => {
                let path = dir.join(format!("body-{n}.bin"));
                std::fs::create_dir_all(dir)
                    .and_then(|()| std::fs::write(&path, &target.body))
                    .map_err(|error| ConvertError::BodyFile {
                        path: path.display().to_string(),
                        error,
                    })?;
                Some(path.display().to_string())
            }
        };
        write_http(&target, body.as_deref(), out).map_err(ConvertError::Output)?;
    }
    Ok(n)
}
