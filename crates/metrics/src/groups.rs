use std::collections::BTreeMap;

use barrage_model::Hit;

use crate::Metrics;

/// Most groups kept; hits of further keys go to [`OTHER`]. A group's
/// metrics (its latency histogram) take ~150 KB: 5,000 distinct error
/// texts (a server naming each failure its own way) held 741 MB at
/// 10,000; at 1,000 the most is ~150 MB, and a report of more groups
/// than that is not read by a person anyway.
pub const MAX_GROUPS: usize = 1_000;
/// The group of hits beyond [`MAX_GROUPS`] distinct keys.
pub const OTHER: &str = "(other)";

/// What to group a report by (`-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// The request URL.
    Url,
    /// The request method.
    Method,
    /// The status code.
    Code,
    /// The attack name.
    Attack,
    /// The error text (empty for successes).
    Error,
    /// A gRPC call's status: `0 OK`, `14 UNAVAILABLE`, …; other records
    /// (HTTP, or no answer) under their code.
    GrpcStatus,
    /// The HTTP version (`HTTP/1.1`, `HTTP/2`, `HTTP/3`); records without
    /// one (no answer, or from vegeta's formats) under `(none)`.
    Proto,
    /// The target's name (`:name`); unnamed targets under `(none)`.
    Name,
    /// The address the request's connection went to (`ip:port`); records
    /// without one (no connection, a Unix socket, older streams) under
    /// `(none)`.
    Remote,
    /// Whether the request opened its connection (`new`) or went on one
    /// opened before (`reused`); records without a connection under
    /// `(none)`.
    Conn,
    /// A flow's step (`-format flow`): its name; records that are no
    /// flow's under `(none)`.
    Step,
    /// The live control change in force at the record's scheduled time
    /// (`attack -control`): `0 start`, `1 rate 3000/1s`, …
    Phase,
}

impl std::str::FromStr for GroupBy {
    type Err = crate::ParseError;
    fn from_str(s: &str) -> Result<Self, crate::ParseError> {
        Ok(match s {
            "url" => GroupBy::Url,
            "method" => GroupBy::Method,
            "code" => GroupBy::Code,
            "attack" => GroupBy::Attack,
            "error" => GroupBy::Error,
            "grpc-status" => GroupBy::GrpcStatus,
            "proto" => GroupBy::Proto,
            "name" => GroupBy::Name,
            "remote" => GroupBy::Remote,
            "conn" => GroupBy::Conn,
            "step" => GroupBy::Step,
            "phase" => GroupBy::Phase,
            other => {
                return Err(crate::ParseError::from(format!(
                    "unknown -by {other:?} (use url, method, code, attack, error, grpc-status, proto, name, remote, conn, step or phase)"
                )))
            }
        })
    }
}

impl GroupBy {
    /// The flag value naming this grouping.
    pub fn name(&self) -> &'static str {
        match self {
            GroupBy::Url => "url",
            GroupBy::Method => "method",
            GroupBy::Code => "code",
            GroupBy::Attack => "attack",
            GroupBy::Error => "error",
            GroupBy::GrpcStatus => "grpc-status",
            GroupBy::Proto => "proto",
            GroupBy::Name => "name",
            GroupBy::Remote => "remote",
            GroupBy::Conn => "conn",
            GroupBy::Step => "step",
            GroupBy::Phase => "phase",
        }
    }

    /// The group `hit` falls in; `buf` holds a key that has to be
    /// written out (a code, an address).
    pub fn key<'a>(&self, hit: &'a Hit, buf: &'a mut String) -> &'a str {
        match self {
            // A password in a URL is never printed (issue 29).
            GroupBy::Url => match barrage_model::words::redacted(&hit.url) {
                std::borrow::Cow::Borrowed(url) => url,
                std::borrow::Cow::Owned(url) => {
                    *buf = url;
                    buf
                }
            },
            GroupBy::Method => &hit.method,
            GroupBy::Attack => &hit.attack,
            GroupBy::Name if hit.name.is_empty() => "(none)",
            GroupBy::Name => &hit.name,
            GroupBy::Step if hit.session.is_none() => "(none)",
            GroupBy::Step => &hit.name,
            GroupBy::Remote => match hit.link.and_then(|l| l.remote) {
                Some(a) => {
                    buf.clear();
                    use std::fmt::Write as _;
                    let _ = write!(buf, "{a}");
                    buf
                }
                None => "(none)",
            },
            GroupBy::Conn => match hit.link {
                Some(l) if l.reused => "reused",
                Some(_) => "new",
                None => "(none)",
            },
            GroupBy::Error => &hit.error,
            // Keyed by the groups, which know the markers.
            GroupBy::Phase => "0 start",
            GroupBy::Proto => match hit.proto {
                barrage_model::Proto::Unknown => "(none)",
                p => p.as_str(),
            },
            GroupBy::Code => {
                use std::fmt::Write;
                buf.clear();
                let _ = write!(buf, "{}", hit.code);
                buf
            }
            GroupBy::GrpcStatus => {
                use std::fmt::Write;
                buf.clear();
                match hit.error.strip_prefix(barrage_model::GRPC_FAILED) {
                    // "14 (UNAVAILABLE): …" → "14 UNAVAILABLE"
                    Some(rest) => {
                        let status = rest.split(':').next().unwrap_or(rest);
                        buf.push_str(&status.replace(['(', ')'], ""));
                    }
                    None if hit.method == "GRPC" && hit.code == 200 && hit.error.is_empty() => {
                        buf.push_str("0 OK")
                    }
                    None => {
                        let _ = write!(buf, "code {}", hit.code);
                    }
                }
                buf
            }
        }
    }
}

/// Metrics per group, memory bounded by the number of groups (at most
/// [`MAX_GROUPS`] + 1), never by the number of hits.
pub struct Groups {
    by: GroupBy,
    template: Metrics,
    groups: BTreeMap<String, Metrics>,
    /// For `-by step`: each group's step index, to list steps in the
    /// flow's order rather than by name.
    step_index: BTreeMap<String, u32>,
    code_key: String,
    /// For `-by phase`: each change's schedule time and its phase's key.
    phases: Vec<(i64, String)>,
}

impl Groups {
    /// Empty groups whose metrics start as `template`.
    pub fn new(by: GroupBy, template: &Metrics) -> Self {
        Groups {
            by,
            template: template.empty_like().without_sessions(),
            groups: BTreeMap::new(),
            step_index: BTreeMap::new(),
            code_key: String::new(),
            phases: Vec::new(),
        }
    }

    /// Live control's markers read so far, for `-by phase`: a record
    /// falls in the phase of the last change at or before its scheduled
    /// time.
    pub fn add_markers<'a>(
        &mut self,
        markers: impl IntoIterator<Item = &'a barrage_model::Marker>,
    ) {
        for m in markers {
            let what = barrage_model::words::printable(&m.what);
            // Attackers told one change by `collect` each mark it.
            let same = |(from, key): &(i64, String)| {
                *from == m.from && key.split_once(' ').is_some_and(|(_, w)| w == what)
            };
            if self.phases.iter().any(same) {
                continue;
            }
            let n = self.phases.len() + 1;
            self.phases.push((m.from, format!("{n} {what}")));
        }
        self.phases.sort_by_key(|(from, _)| *from);
    }

    /// Adds a hit to its group.
    pub fn add(&mut self, hit: &Hit) {
        self.add_lacking(hit, barrage_model::Lacks::default());
    }

    /// [`Groups::add`] for a hit whose source lacks `lacks`.
    pub fn add_lacking(&mut self, hit: &Hit, lacks: barrage_model::Lacks) {
        let key = match self.by {
            GroupBy::Phase => {
                let n = self
                    .phases
                    .partition_point(|(from, _)| *from <= hit.scheduled);
                match n.checked_sub(1) {
                    Some(i) => self.phases[i].1.as_str(),
                    None => "0 start",
                }
            }
            by => by.key(hit, &mut self.code_key),
        };
        if let Some(m) = self.groups.get_mut(key) {
            m.add_lacking(hit, lacks);
            return;
        }
        let key = if self.groups.len() >= MAX_GROUPS {
            OTHER.to_string()
        } else {
            key.to_string()
        };
        if self.by == GroupBy::Step {
            let index = hit.session.map_or(u32::MAX, |s| s.step);
            self.step_index.entry(key.clone()).or_insert(index);
        }
        if self.by == GroupBy::Phase {
            let index = key.split(' ').next().and_then(|n| n.parse().ok());
            self.step_index
                .entry(key.clone())
                .or_insert(index.unwrap_or(u32::MAX));
        }
        self.groups
            .entry(key)
            .or_insert_with(|| self.template.empty_like())
            .add_lacking(hit, lacks);
    }

    /// What the groups are keyed by.
    pub fn by(&self) -> GroupBy {
        self.by
    }

    /// The groups, sorted by key (`-by step`: in the flow's order).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Metrics)> {
        let mut all: Vec<(&str, &Metrics)> =
            self.groups.iter().map(|(k, m)| (k.as_str(), m)).collect();
        if matches!(self.by, GroupBy::Step | GroupBy::Phase) {
            // A flow's steps in its order; `(none)` and the rest last.
            all.sort_by_key(|(k, _)| (self.step_index.get(*k).copied().unwrap_or(u32::MAX), *k));
        }
        all.into_iter()
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(url: &str, code: u16) -> Hit {
        Hit {
            url: url.into(),
            code,
            method: "GET".into(),
            latency: 5,
            ..Hit::default()
        }
    }

    #[test]
    fn groups_by_each_key() {
        let hits = [
            hit("/a", 200),
            hit("/b", 404),
            hit("/a", 200),
            hit("/a", 500),
        ];
        let mut by_url = Groups::new(GroupBy::Url, &Metrics::new());
        let mut by_code = Groups::new(GroupBy::Code, &Metrics::new());
        for h in &hits {
            by_url.add(h);
            by_code.add(h);
        }
        let urls: Vec<(&str, u64)> = by_url.iter().map(|(k, m)| (k, m.requests())).collect();
        assert_eq!(urls, [("/a", 3), ("/b", 1)]);
        let codes: Vec<(&str, u64)> = by_code.iter().map(|(k, m)| (k, m.requests())).collect();
        assert_eq!(codes, [("200", 2), ("404", 1), ("500", 1)]);
    }

    #[test]
    fn group_count_is_bounded() {
        let mut g = Groups::new(GroupBy::Url, &Metrics::new());
        for i in 0..(MAX_GROUPS + 50) {
            g.add(&hit(&format!("/{i}"), 200));
        }
        assert_eq!(g.len(), MAX_GROUPS + 1);
        assert_eq!(
            g.iter().find(|(k, _)| *k == OTHER).unwrap().1.requests(),
            50
        );
    }
}
