//! `-mix FILE`: groups sent together in one attack, each with its own
//! targets and schedule, read from YAML (serde_norway, the maintained
//! fork of serde_yaml).
//!
//! ```yaml
//! groups:
//!   - name: reads
//!     targets: reads.http        # a targets file, beside the mix file
//!     format: http               # http (default), json, curl or har
//!     rate: 700                  # or rate: 700/1s, or stages: 30s:700,1m:700
//!   - name: writes
//!     target: POST http://127.0.0.1:8080/items   # one request line
//!     rate: 50
//!     max-workers: 20            # its own -max-workers
//!     timeout: 2s                # its own -timeout
//!     headers: ["Content-Type: application/json"]
//! ```

use std::{collections::HashSet, io::BufReader, path::Path, time::Duration};

use barrage_model::{Rate, Stages, Target};
use serde::Deserialize;

use crate::{error::error, Defaults, Format, Sendable, TargetError, TargetReader};

/// One group of a mix file, read and checked.
#[derive(Debug, Clone)]
pub struct MixGroup {
    /// Its name: its records' attack name.
    pub name: String,
    /// Its targets, read up front (global `-header` values first, then
    /// the group's `headers`).
    pub targets: Vec<Target>,
    /// Its rate, or `None` with stages.
    pub rate: Option<Rate>,
    /// Its ramp, instead of a rate.
    pub stages: Option<Stages>,
    /// Its own `-max-workers`.
    pub max_workers: Option<u64>,
    /// Its own `-timeout` (0: none).
    pub timeout: Option<Duration>,
}

impl MixGroup {
    /// Its peak rate, requests per second.
    pub fn peak_per_second(&self) -> f64 {
        match (&self.stages, self.rate) {
            (Some(s), _) => s.peak_per_second(),
            (None, Some(r)) => r.per_second(),
            (None, None) => 0.0,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    groups: Vec<RawGroup>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawGroup {
    name: Option<String>,
    targets: Option<String>,
    target: Option<String>,
    format: Option<String>,
    rate: Option<serde_norway::Value>,
    stages: Option<String>,
    max_workers: Option<u64>,
    timeout: Option<serde_norway::Value>,
    #[serde(default)]
    headers: Vec<String>,
}

/// A YAML scalar as the text a flag would take (`300`, `2.5`, `300/1s`).
fn scalar(v: &serde_norway::Value) -> Option<String> {
    match v {
        serde_norway::Value::String(s) => Some(s.clone()),
        serde_norway::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The line where group `i` (named `name`) begins: its `name:` line, else
/// the `groups:` line (serde keeps no places for values).
fn line_of(text: &str, name: Option<&str>, i: usize) -> u64 {
    let lines: Vec<&str> = text.lines().collect();
    if let Some(name) = name {
        for (n, l) in lines.iter().enumerate() {
            let l = l.trim_start().trim_start_matches("- ").trim();
            if let Some(v) = l.strip_prefix("name:") {
                if v.trim().trim_matches(['"', '\'']) == name {
                    return n as u64 + 1;
                }
            }
        }
    }
    // The i-th item under groups: (lines starting with "- " at the
    // items' indent).
    let mut items = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("- "));
    items
        .nth(i)
        .map(|(n, _)| n as u64 + 1)
        .or_else(|| {
            lines
                .iter()
                .position(|l| l.trim_start().starts_with("groups:"))
                .map(|n| n as u64 + 1)
        })
        .unwrap_or(1)
}

/// Reads the mix file `path` (its text `text`): every group's targets
/// (files named relative to the mix file's folder) with `defaults`
/// (`-header`, `-body`). Errors name the file and line.
pub fn read_mix(path: &str, text: &str, defaults: &Defaults) -> Result<Vec<MixGroup>, TargetError> {
    let file: File = serde_norway::from_str(text).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line() as u64);
        let what = e.to_string();
        // serde_norway appends " at line L column C": the place is ours.
        let what = what.split(" at line ").next().unwrap_or(&what).to_string();
        error(path, line, format!("bad mix file: {what}"))
    })?;
    if file.groups.is_empty() {
        return Err(error(path, 1, "bad mix file: no groups".into()));
    }
    let folder = Path::new(path).parent().unwrap_or(Path::new(""));
    let mut names = HashSet::new();
    let mut out = Vec::new();
    for (i, g) in file.groups.into_iter().enumerate() {
        let line = line_of(text, g.name.as_deref(), i);
        let fail = |what: String| error(path, line, what);
        let name = g
            .name
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| fail(format!("group {} has no name", i + 1)))?;
        let fail = |what: String| error(path, line, format!("group {name:?}: {what}"));
        if name.chars().any(char::is_control) {
            return Err(fail(
                "a name cannot hold line breaks or control characters".into(),
            ));
        }
        if !names.insert(name.clone()) {
            return Err(fail("a second group of this name".into()));
        }
        let (rate, stages) = match (&g.rate, &g.stages) {
            (Some(_), Some(_)) => return Err(fail("give rate or stages, not both".into())),
            (None, None) => return Err(fail("no rate (give rate: N or stages: ...)".into())),
            (Some(r), None) => {
                let text = scalar(r).ok_or_else(|| fail(format!("bad rate: {r:?}")))?;
                match text.parse::<Rate>() {
                    Ok(Rate::Max) => {
                        return Err(fail(format!(
                            "rate {text}: a group needs a rate above 0 (groups are the open model)"
                        )))
                    }
                    Ok(r) => (Some(r), None),
                    Err(e) => return Err(fail(e.to_string())),
                }
            }
            (None, Some(s)) => (
                None,
                Some(s.parse::<Stages>().map_err(|e| fail(e.to_string()))?),
            ),
        };
        if g.max_workers == Some(0) {
            return Err(fail("max-workers must be at least 1".into()));
        }
        let timeout = match &g.timeout {
            None => None,
            Some(v) => {
                let text = scalar(v).unwrap_or_default();
                let ns = barrage_model::duration::parse(&text)
                    .ok()
                    .filter(|ns| *ns >= 0)
                    .ok_or_else(|| {
                        fail(format!("bad timeout: {text:?} (a duration: 2s, 500ms)"))
                    })?;
                Some(Duration::from_nanos(ns as u64))
            }
        };
        let mut group_defaults = defaults.clone();
        for h in &g.headers {
            match h.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
                Some((k, v))
                    if !k.is_empty()
                        && !v.is_empty()
                        && ::http::HeaderName::from_bytes(k.as_bytes()).is_ok()
                        && ::http::HeaderValue::from_str(v).is_ok() =>
                {
                    group_defaults.headers.push((k.to_string(), v.to_string()))
                }
                _ => return Err(fail(format!("bad header: {h:?} (Name: value)"))),
            }
        }
        let format: Format = match &g.format {
            None => Format::Http,
            Some(f) => f.parse().map_err(|e: crate::BadValue| fail(e.0))?,
        };
        // A flow's steps sent as independent requests would lose their
        // cookies and extracted values (issue 60): refused until a mix
        // runs a flow group as sessions.
        if format == Format::Flow {
            return Err(fail(
                "format: flow is not run as sessions in a mix (its steps would go out as independent requests, without cookies or extracted values); run the flow with its own attack -format flow -rate R beside the mix (two attacks, or two -shard'ed runs into one collect)".into(),
            ));
        }
        let sendables = match (&g.targets, &g.target) {
            (Some(_), Some(_)) => return Err(fail("give targets or target, not both".into())),
            (None, None) => {
                return Err(fail(
                    "no targets (give targets: FILE or target: METHOD URL)".into(),
                ))
            }
            (Some(file), None) => {
                let shown = folder.join(file);
                let shown = shown.display().to_string();
                let f = std::fs::File::open(&shown)
                    .map_err(|e| fail(format!("targets {shown}: {e}")))?;
                read_all(TargetReader::new(
                    BufReader::new(f),
                    &shown,
                    format,
                    group_defaults,
                ))?
            }
            (None, Some(one)) => read_all(TargetReader::new(
                one.as_bytes(),
                &format!("{path}:{line}: group {name:?}: target"),
                format,
                group_defaults,
            ))?,
        };
        let mut targets = Vec::new();
        for t in sendables {
            match t {
                Sendable::Plain(t) => targets.push(t),
                Sendable::Templated(_) => return Err(fail(
                    "placeholders ({{...}}) are not sent in a mix yet; use them in a plain attack"
                        .into(),
                )),
            }
        }
        if targets.is_empty() {
            return Err(fail("its targets are empty".into()));
        }
        out.push(MixGroup {
            name,
            targets,
            rate,
            stages,
            max_workers: g.max_workers,
            timeout,
        });
    }
    Ok(out)
}

fn read_all<R: std::io::BufRead>(mut r: TargetReader<R>) -> Result<Vec<Sendable>, TargetError> {
    let mut all = Vec::new();
    while let Some(t) = r.next_sendable(&[])? {
        all.push(t);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<MixGroup>, TargetError> {
        read_mix("mix.yaml", text, &Defaults::default())
    }

    #[test]
    fn groups_with_their_own_rates() {
        let g = read(
            "groups:\n  - name: reads\n    target: GET http://127.0.0.1:1/r\n    rate: 300\n  - name: writes\n    target: POST http://127.0.0.1:1/w\n    stages: 1s:100\n    max-workers: 5\n    timeout: 2s\n    headers: [\"X-Group: w\"]\n",
        )
        .unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].name, "reads");
        assert_eq!(g[0].rate, Some("300".parse().unwrap()));
        assert_eq!(g[1].stages, Some("1s:100".parse().unwrap()));
        assert_eq!(g[1].max_workers, Some(5));
        assert_eq!(g[1].timeout, Some(Duration::from_secs(2)));
        assert_eq!(
            g[1].targets[0].headers,
            vec![("X-Group".to_string(), "w".to_string())]
        );
        assert_eq!(g[1].peak_per_second(), 100.0);
    }

    #[test]
    fn refusals_name_the_line() {
        let cases: &[(&str, u64, &str)] = &[
            ("groups:\n  - name: a\n    target: GET http://h/\n    rate: 1\n    color: red\n", 5, "bad mix file: groups[0]: unknown field `color`"),
            ("groups: []\n", 1, "bad mix file: no groups"),
            ("groups:\n  - name: a\n    rate: 10\n", 2, "group \"a\": no targets"),
            ("groups:\n  - name: a\n    target: GET http://h/\n", 2, "group \"a\": no rate"),
            ("groups:\n  - name: a\n    target: GET http://h/\n    rate: fast\n", 2, "group \"a\": invalid rate \"fast\""),
            ("groups:\n  - name: a\n    target: GET http://h/\n    rate: 0\n", 2, "group \"a\": rate 0: a group needs a rate above 0"),
            ("groups:\n  - target: GET http://h/\n    rate: 1\n", 2, "group 1 has no name"),
            ("groups:\n  - name: a\n    target: GET http://h/\n    rate: 1\n  - name: a\n    target: GET http://h/\n    rate: 1\n", 2, "group \"a\": a second group"),
            ("groups:\n  - name: a\n    targets: nonexistent-barrage.http\n    rate: 1\n", 2, "group \"a\": targets nonexistent-barrage.http"),
            ("groups:\n  - name: a\n    target: GET http://h/\n    rate: 1\n    max-workers: 0\n", 2, "group \"a\": max-workers must be at least 1"),
            ("groups:\n  - name: a\n    target: GET http://h/{{seq}}\n    rate: 1\n", 2, "group \"a\": placeholders"),
            ("groups:\n  - name: a\n    target: GET http://h/\n    rate: 1\n    format: xml\n", 2, "group \"a\": unknown target format"),
        ];
        for (text, line, msg) in cases {
            let e = read(text).unwrap_err();
            assert_eq!(
                (e.source_name.as_str(), e.line),
                ("mix.yaml", *line),
                "{text:?}: {e}"
            );
            assert!(e.message.starts_with(msg), "{text:?}: {e}");
        }
        let e = read("groups:\n  - name: a\n    target: GET nowhere\n    rate: 1\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("mix.yaml:2: group \"a\": target:1: bad URL"),
            "{e}"
        );
    }
}
