//! What run a page shows, said at its top (issue 60: a page kept for a
//! post-mortem must say it): the targets (the first few, then a count),
//! when it started and for how long, the load asked for (or, from an
//! older stream, as measured), the attack names, barrage's version and
//! the command, when the stream holds them (`attack` writes them as the
//! stream's facts), and the input files.

use barrage_model::{duration, time, Hit};

use crate::svg::escape;

/// Targets and attack names kept to name a run: the first few distinct.
const KEPT: usize = 3;

/// Distinct values counted at most (past it: "and more").
const COUNTED: usize = 1000;

/// The first few distinct values of a field, and how many there were.
#[derive(Default, Clone)]
struct Few {
    first: Vec<String>,
    seen: std::collections::HashSet<String>,
    more: bool,
}

impl Few {
    fn add(&mut self, v: &str) {
        if self.seen.contains(v) {
            return;
        }
        if self.seen.len() >= COUNTED {
            self.more = true;
            return;
        }
        self.seen.insert(v.to_string());
        if self.first.len() < KEPT {
            self.first.push(v.to_string());
        }
    }

    fn said(&self) -> Option<String> {
        if self.first.is_empty() {
            return None;
        }
        let mut s = self.first.join(", ");
        let rest = self.seen.len() - self.first.len();
        if rest > 0 || self.more {
            s.push_str(&format!(
                " and {}{rest} more",
                if self.more { "over " } else { "" }
            ));
        }
        Some(s)
    }
}

/// One input's run, gathered from its records and its facts.
#[derive(Default, Clone)]
pub struct RunFacts {
    urls: Few,
    attacks: Few,
    requests: u64,
    first: Option<i64>,
    last: i64,
    facts: Vec<(String, String)>,
    inputs: Vec<String>,
    /// Live control's changes: the schedule time each holds from (unix
    /// ns) and what.
    changes: Vec<(i64, String)>,
}

impl RunFacts {
    /// Nothing seen yet.
    pub fn new() -> RunFacts {
        RunFacts::default()
    }

    /// Adds a record.
    pub fn add(&mut self, hit: &Hit) {
        self.urls.add(&hit.url);
        if !hit.attack.is_empty() {
            self.attacks.add(&hit.attack);
        }
        self.requests += 1;
        self.first = Some(self.first.map_or(hit.timestamp, |f| f.min(hit.timestamp)));
        self.last = self.last.max(hit.timestamp);
    }

    /// The stream's facts (`command`, `version`, `load`, `targets`, as
    /// `attack` writes them), each kept once.
    pub fn facts(&mut self, facts: &[(String, String)]) {
        for kv in facts {
            if !self.facts.contains(kv) {
                self.facts.push(kv.clone());
            }
        }
    }

    /// Live control's changes (`attack -control`), each once: the
    /// schedule time it holds from (unix ns) and what; the load row
    /// names them after the load asked for.
    pub fn changes(&mut self, changes: impl IntoIterator<Item = (i64, String)>) {
        for c in changes {
            if !self.changes.contains(&c) {
                self.changes.push(c);
            }
        }
        self.changes.sort();
    }

    /// The input files read (none: standard input), by their names: a
    /// page kept elsewhere names no directory of this machine.
    pub fn inputs(&mut self, files: &[String]) {
        self.inputs = files
            .iter()
            .map(|f| {
                std::path::Path::new(f)
                    .file_name()
                    .map_or(f.clone(), |n| n.to_string_lossy().into_owned())
            })
            .collect();
    }

    /// The time its sending spanned (unix ns), where no records are
    /// added (a live sweep's page).
    pub fn span(&mut self, first: i64, last: i64) {
        self.first = Some(first);
        self.last = last;
    }

    /// Records seen.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    fn fact(&self, key: &str) -> Vec<&str> {
        self.facts
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Live control's changes after the load: `, then rate 3000/1s at
    /// +5.002s, pause at +7.010s` (the first five, and how many more).
    fn changed(&self) -> String {
        const SAID: usize = 5;
        let first = self.first.unwrap_or(0);
        let mut s: Vec<String> = (self.changes.iter().take(SAID))
            .map(|(at, what)| format!("{what} at +{:.3}s", (at - first).max(0) as f64 / 1e9))
            .collect();
        if self.changes.len() > SAID {
            s.push(format!("{} more changes", self.changes.len() - SAID));
        }
        if s.is_empty() {
            return String::new();
        }
        format!(", then (live control) {}", s.join(", "))
    }

    /// The rows said: what, and its value.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let mut rows = Vec::new();
        let targets = self.fact("targets");
        let targets = if targets.is_empty() {
            self.urls.said()
        } else {
            Some(targets.join("; "))
        };
        if let Some(t) = targets {
            rows.push(("targets", t));
        }
        if let Some(first) = self.first {
            let span = (self.last - first).max(0);
            rows.push((
                "started",
                format!(
                    "{}, sending for {}",
                    time::format_rfc3339(first),
                    duration::format(duration::round_for_report(span))
                ),
            ));
        }
        let load = self.fact("load");
        rows.push((
            "load",
            if load.is_empty() {
                let secs = (self.last - self.first.unwrap_or(self.last)) as f64 / 1e9;
                if secs > 0.0 {
                    format!(
                        "{:.2}/s measured (the stream does not say what was asked)",
                        self.requests as f64 / secs
                    )
                } else {
                    format!("{} requests", self.requests)
                }
            } else {
                load.join("; ")
            } + &self.changed(),
        ));
        if let Some(a) = self.attacks.said() {
            rows.push(("attack", a));
        }
        let version = self.fact("version");
        rows.push((
            "barrage",
            if version.is_empty() {
                "version not recorded (an older stream, or not barrage's)".to_string()
            } else {
                version.join("; ")
            },
        ));
        for c in self.fact("command") {
            rows.push(("command", c.to_string()));
        }
        rows.push((
            "input",
            if self.inputs.is_empty() {
                "standard input".to_string()
            } else {
                self.inputs.join(", ")
            },
        ));
        rows
    }

    /// The rows as the page's run table.
    pub fn html(&self) -> String {
        let mut s = String::from("<table class=\"run\">\n");
        for (k, v) in self.rows() {
            s.push_str(&format!(
                "<tr><th>{}</th><td>{}</td></tr>\n",
                escape(k),
                escape(&v)
            ));
        }
        s.push_str("</table>\n");
        s
    }
}

/// Two sides' runs (`compare`), a column each: every row either has,
/// with each side's files and request count.
pub fn side_by_side(base: &RunFacts, new: &RunFacts) -> String {
    let (b, n) = (base.rows(), new.rows());
    let mut keys: Vec<&'static str> = Vec::new();
    for (k, _) in b.iter().chain(&n) {
        if !keys.contains(k) {
            keys.push(k);
        }
    }
    let get = |rows: &[(&'static str, String)], k: &str| {
        rows.iter()
            .filter(|r| r.0 == k)
            .map(|r| r.1.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut s = String::from(
        "<table class=\"run\">\n<tr><th></th><td><b>base</b></td><td><b>new</b></td></tr>\n",
    );
    s.push_str(&format!(
        "<tr><th>requests</th><td>{}</td><td>{}</td></tr>\n",
        base.requests(),
        new.requests()
    ));
    for k in keys {
        s.push_str(&format!(
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>\n",
            escape(k),
            escape(&get(&b, k)),
            escape(&get(&n, k))
        ));
    }
    s.push_str("</table>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_named_by_its_facts_or_its_records() {
        let mut r = RunFacts::new();
        for i in 0..10 {
            r.add(&Hit {
                url: format!("http://a/{}", i % 5),
                attack: "smoke".into(),
                timestamp: 1_700_000_000_000_000_000 + i * 100_000_000,
                ..Hit::default()
            });
        }
        r.inputs(&["r.bin".into()]);
        let rows = r.rows();
        let get = |k: &str| rows.iter().find(|r| r.0 == k).map(|r| r.1.clone());
        assert_eq!(
            get("targets").as_deref(),
            Some("http://a/0, http://a/1, http://a/2 and 2 more")
        );
        assert_eq!(
            get("started").as_deref(),
            Some("2023-11-14T22:13:20Z, sending for 900ms")
        );
        assert!(get("load").unwrap().contains("measured"));
        assert!(get("barrage").unwrap().contains("not recorded"));
        assert_eq!(get("input").as_deref(), Some("r.bin"));
        r.facts(&[
            ("load".into(), "rate 10/1s".into()),
            ("version".into(), "0.1.0".into()),
            (
                "command".into(),
                "barrage attack -rate 10 -duration 1s".into(),
            ),
        ]);
        let rows = r.rows();
        let get = |k: &str| rows.iter().find(|r| r.0 == k).map(|r| r.1.clone());
        assert_eq!(get("load").as_deref(), Some("rate 10/1s"));
        assert_eq!(
            get("command").as_deref(),
            Some("barrage attack -rate 10 -duration 1s")
        );
        assert!(r.html().contains("<th>command</th>"));
        // Live control's changes after the load, each once (shards mark
        // one change alike), the first five and how many more.
        let t0 = 1_700_000_000_000_000_000;
        let pause = (t0 + 250_000_000, "pause".to_string());
        r.changes([pause.clone(), pause, (t0 + 500_000_000, "resume".into())]);
        let rows = r.rows();
        let get = |k: &str| rows.iter().find(|r| r.0 == k).map(|r| r.1.clone());
        assert_eq!(
            get("load").as_deref(),
            Some("rate 10/1s, then (live control) pause at +0.250s, resume at +0.500s")
        );
        r.changes((1..=5).map(|i| (t0 + i, format!("rate {i}/1s"))));
        assert!(
            r.rows()[2].1.ends_with(", 2 more changes"),
            "{:?}",
            r.rows()
        );
    }
}
