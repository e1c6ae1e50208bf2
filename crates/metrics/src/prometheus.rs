//! vegeta's Prometheus metrics (`attack -prometheus-addr`) over records:
//! `request_seconds` (a histogram with Prometheus's default buckets),
//! `request_bytes_in`, `request_bytes_out` (by method, url and status) and
//! `request_fail_count` (by method, url, code and message; vegeta
//! registers it but never counts, barrage counts every record with an
//! error), in Prometheus's text format; and barrage's own
//! `connect_seconds` and `tls_seconds` histograms over the requests that
//! opened a connection, by the address it went to; with a flow's records
//! (`-format flow`), `sessions_started`, `sessions_completed` and
//! `sessions_failed` (by the step the session ended at). Beside vegeta's
//! coarse `request_seconds`, latency is also barrage's histogram
//! `barrage_request_duration_seconds` (by method, url and status), on the
//! bounds of [`crate::prom_buckets`] that `export` writes too, so that
//! `histogram_quantile` over a run, or over many attackers, lands in the
//! bucket of its exact figure. Serving them is the CLI's.

use std::{collections::HashMap, fmt::Write as _};

use barrage_model::Hit;

/// Prometheus's default histogram buckets, seconds (`prometheus.DefBuckets`).
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Buckets of the connection histograms, seconds: from 100 µs (a
/// loopback connect) to 2.5 s (a SYN resent).
const CONN_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Most label sets kept per metric family (an endless `-lazy` stream of
/// URLs counts the rest under `url="other"`).
pub const MAX_SERIES: usize = 1000;

/// The URL label that series past [`MAX_SERIES`] share.
const OTHER: &str = "other";

#[derive(Default)]
struct Series {
    /// Records at or below each bucket's bound (not cumulative here).
    buckets: [u64; BUCKETS.len()],
    /// The same on the classic bounds of [`crate::prom_buckets`].
    fine: Vec<u64>,
    count: u64,
    sum_ns: u128,
    bytes_in: u64,
    bytes_out: u64,
}

/// A histogram of connection costs for one remote address.
#[derive(Default)]
struct ConnSeries {
    buckets: [u64; CONN_BUCKETS.len()],
    count: u64,
    sum_ns: u128,
}

impl ConnSeries {
    fn record(&mut self, ns: u64) {
        let secs = ns as f64 / 1e9;
        if let Some(b) = CONN_BUCKETS.iter().position(|le| secs <= *le) {
            self.buckets[b] += 1;
        }
        self.count += 1;
        self.sum_ns += u128::from(ns);
    }
}

/// Vegeta's Prometheus metrics over the records added so far: label sets
/// bounded by [`MAX_SERIES`] per family.
#[derive(Default)]
pub struct Prometheus {
    /// By (method, url, status).
    series: HashMap<(String, String, u16), Series>,
    /// By (method, url, code, message).
    fails: HashMap<(String, String, u16, String), u64>,
    /// New connections' connect and TLS times, by remote address.
    connects: HashMap<String, ConnSeries>,
    handshakes: HashMap<String, ConnSeries>,
    /// A flow's sessions, from its first record of one.
    sessions: Option<crate::Sessions>,
}

impl Prometheus {
    /// Counts one record.
    pub fn add(&mut self, hit: &Hit) {
        if hit.session.is_some() {
            self.sessions.get_or_insert_with(Default::default).add(hit);
        }
        let key = (hit.method.clone(), hit.url.clone(), hit.code);
        let key = if self.series.len() < MAX_SERIES || self.series.contains_key(&key) {
            key
        } else {
            (key.0, OTHER.to_string(), key.2)
        };
        let s = self.series.entry(key).or_default();
        let secs = hit.latency as f64 / 1e9;
        if let Some(b) = BUCKETS.iter().position(|le| secs <= *le) {
            s.buckets[b] += 1;
        }
        if s.fine.is_empty() {
            s.fine = vec![0; crate::prom_buckets::CLASSIC_COUNT];
        }
        if let Some(slot) = crate::prom_buckets::classic_slot(hit.latency) {
            s.fine[slot] += 1;
        }
        s.count += 1;
        s.sum_ns += u128::from(hit.latency);
        s.bytes_in = s.bytes_in.saturating_add(hit.bytes_in);
        s.bytes_out = s.bytes_out.saturating_add(hit.bytes_out);
        if let Some(link) = hit.link.filter(|l| !l.reused) {
            let remote = link
                .remote
                .map_or_else(|| "unix".to_string(), |a| a.to_string());
            let bounded = |m: &HashMap<String, ConnSeries>, k: String| {
                if m.len() < MAX_SERIES || m.contains_key(&k) {
                    k
                } else {
                    OTHER.to_string()
                }
            };
            let key = bounded(&self.connects, remote.clone());
            self.connects.entry(key).or_default().record(link.connect);
            if link.tls > 0 {
                let key = bounded(&self.handshakes, remote);
                self.handshakes.entry(key).or_default().record(link.tls);
            }
        }
        if hit.error.is_empty() {
            return;
        }
        let key = (
            hit.method.clone(),
            hit.url.clone(),
            hit.code,
            hit.error.clone(),
        );
        let key = if self.fails.len() < MAX_SERIES || self.fails.contains_key(&key) {
            key
        } else {
            (key.0, OTHER.to_string(), key.2, key.3)
        };
        *self.fails.entry(key).or_default() += 1;
    }

    /// The text exposition format, series sorted for stable output.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        let mut series: Vec<_> = self.series.iter().collect();
        series.sort_by(|a, b| a.0.cmp(b.0));
        let labels = |(method, url, code): &(String, String, u16)| {
            format!(
                "method=\"{}\",url=\"{}\",status=\"{code}\"",
                escape(method),
                escape(url)
            )
        };
        out.push_str("# HELP request_seconds Request latency\n# TYPE request_seconds histogram\n");
        for (key, s) in &series {
            let l = labels(key);
            let mut cumulative = 0;
            for (le, n) in BUCKETS.iter().zip(s.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "request_seconds_bucket{{{l},le=\"{le}\"}} {cumulative}"
                );
            }
            let _ = writeln!(out, "request_seconds_bucket{{{l},le=\"+Inf\"}} {}", s.count);
            let _ = writeln!(out, "request_seconds_sum{{{l}}} {}", s.sum_ns as f64 / 1e9);
            let _ = writeln!(out, "request_seconds_count{{{l}}} {}", s.count);
        }
        out.push_str(
            "# HELP barrage_request_duration_seconds Request latency, on fine buckets each 2^(1/4) above the last\n\
             # TYPE barrage_request_duration_seconds histogram\n",
        );
        let bounds: Vec<f64> = crate::prom_buckets::classic_bounds()
            .map(|(_, b)| b)
            .collect();
        for (key, s) in &series {
            let l = labels(key);
            let mut cumulative = 0;
            for (le, n) in bounds.iter().zip(&s.fine) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "barrage_request_duration_seconds_bucket{{{l},le=\"{le}\"}} {cumulative}"
                );
            }
            let name = "barrage_request_duration_seconds";
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {}", s.count);
            let _ = writeln!(out, "{name}_sum{{{l}}} {}", s.sum_ns as f64 / 1e9);
            let _ = writeln!(out, "{name}_count{{{l}}} {}", s.count);
        }
        for (name, help, value) in [
            (
                "request_bytes_in",
                "Bytes received from servers as response to requests",
                (|s: &Series| s.bytes_in) as fn(&Series) -> u64,
            ),
            (
                "request_bytes_out",
                "Bytes sent to servers during requests",
                |s: &Series| s.bytes_out,
            ),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (key, s) in &series {
                let _ = writeln!(out, "{name}{{{}}} {}", labels(key), value(s));
            }
        }
        out.push_str(
            "# HELP request_fail_count Internal failures that prevented a hit to the target server\n\
             # TYPE request_fail_count counter\n",
        );
        let mut fails: Vec<_> = self.fails.iter().collect();
        fails.sort_by(|a, b| a.0.cmp(b.0));
        for ((method, url, code, message), n) in fails {
            let _ = writeln!(
                out,
                "request_fail_count{{method=\"{}\",url=\"{}\",code=\"{code}\",message=\"{}\"}} {n}",
                escape(method),
                escape(url),
                escape(message)
            );
        }
        for (name, help, map) in [
            (
                "connect_seconds",
                "Time to connect, over requests that opened a connection",
                &self.connects,
            ),
            (
                "tls_seconds",
                "TLS handshake time, over requests that opened a connection",
                &self.handshakes,
            ),
        ] {
            if map.is_empty() {
                continue;
            }
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
            let mut series: Vec<_> = map.iter().collect();
            series.sort_by(|a, b| a.0.cmp(b.0));
            for (remote, s) in series {
                let l = format!("remote=\"{}\"", escape(remote));
                let mut cumulative = 0;
                for (le, n) in CONN_BUCKETS.iter().zip(s.buckets) {
                    cumulative += n;
                    let _ = writeln!(out, "{name}_bucket{{{l},le=\"{le}\"}} {cumulative}");
                }
                let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {}", s.count);
                let _ = writeln!(out, "{name}_sum{{{l}}} {}", s.sum_ns as f64 / 1e9);
                let _ = writeln!(out, "{name}_count{{{l}}} {}", s.count);
            }
        }
        if let Some(x) = &self.sessions {
            for (name, help, n) in [
                (
                    "sessions_started",
                    "Flow sessions whose first step was sent",
                    x.started(),
                ),
                (
                    "sessions_completed",
                    "Flow sessions whose last step succeeded",
                    x.completed(),
                ),
            ] {
                let _ = writeln!(
                    out,
                    "# HELP {name} {help}\n# TYPE {name} counter\n{name} {n}"
                );
            }
            out.push_str(
                "# HELP sessions_failed Flow sessions ended by a failed step, by that step\n\
                 # TYPE sessions_failed counter\n",
            );
            for (step, n, _) in x.ended() {
                let _ = writeln!(out, "sessions_failed{{step=\"{}\"}} {n}", escape(step));
            }
        }
        out
    }
}

/// A label value as the text format wants it.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(url: &str, code: u16, latency_ms: u64, error: &str) -> Hit {
        Hit {
            method: "GET".into(),
            url: url.into(),
            code,
            latency: latency_ms * 1_000_000,
            bytes_in: 6,
            bytes_out: 2,
            error: error.into(),
            ..Hit::default()
        }
    }

    #[test]
    fn new_connections_fill_connect_and_tls_histograms_by_remote() {
        let mut t = Prometheus::default();
        let remote = Some("127.0.0.2:443".parse().unwrap());
        let new = barrage_model::Link {
            connect: 300_000,
            tls: 2_000_000,
            remote,
            ..Default::default()
        };
        let reused = barrage_model::Link {
            reused: true,
            remote,
            ..Default::default()
        };
        for link in [new, reused, reused] {
            t.add(&Hit {
                link: Some(link),
                ..hit("https://a/", 200, 1, "")
            });
        }
        t.add(&hit("https://a/", 200, 1, ""));
        let text = t.render();
        let l = "remote=\"127.0.0.2:443\"";
        for line in [
            "# TYPE connect_seconds histogram".to_string(),
            format!("connect_seconds_bucket{{{l},le=\"0.00025\"}} 0"),
            format!("connect_seconds_bucket{{{l},le=\"0.0005\"}} 1"),
            format!("connect_seconds_count{{{l}}} 1"),
            format!("tls_seconds_bucket{{{l},le=\"0.001\"}} 0"),
            format!("tls_seconds_bucket{{{l},le=\"0.0025\"}} 1"),
            format!("tls_seconds_sum{{{l}}} 0.002"),
        ] {
            assert!(text.contains(&line), "{line} not in\n{text}");
        }
        // Without connections, vegeta's families only.
        let mut plain = Prometheus::default();
        plain.add(&hit("http://a/", 200, 1, ""));
        assert!(!plain.render().contains("connect_seconds"));
    }

    #[test]
    fn a_flows_sessions_are_counted_by_their_end() {
        use barrage_model::{SessionEnd, SessionMark};
        let mut p = Prometheus::default();
        p.add(&hit("/", 200, 1, ""));
        assert!(!p.render().contains("sessions_"));
        for (id, step, name, end, error) in [
            (0, 0, "login", SessionEnd::Going, ""),
            (0, 1, "me", SessionEnd::Completed, ""),
            (1, 0, "login", SessionEnd::Going, ""),
            (1, 1, "me", SessionEnd::Failed, "401 Unauthorized"),
            (2, 0, "login", SessionEnd::Going, ""),
        ] {
            let mut h = hit("/", 200, 1, error);
            h.name = name.into();
            h.session = Some(SessionMark {
                id,
                step,
                end,
                took: 1,
            });
            p.add(&h);
        }
        let text = p.render();
        assert!(text.contains("\nsessions_started 3\n"), "{text}");
        assert!(text.contains("\nsessions_completed 1\n"), "{text}");
        assert!(
            text.contains("\nsessions_failed{step=\"me\"} 1\n"),
            "{text}"
        );
    }

    #[test]
    fn renders_vegeta_names_with_cumulative_buckets() {
        let mut t = Prometheus::default();
        t.add(&hit("http://a/", 200, 3, ""));
        t.add(&hit("http://a/", 200, 30, ""));
        t.add(&hit("http://a/", 200, 20_000, ""));
        t.add(&hit(
            "http://b/\"q\"",
            0,
            1,
            "dial tcp: connect: connection refused",
        ));
        let text = t.render();
        let l = "method=\"GET\",url=\"http://a/\",status=\"200\"";
        for line in [
            format!("request_seconds_bucket{{{l},le=\"0.005\"}} 1"),
            format!("request_seconds_bucket{{{l},le=\"0.025\"}} 1"),
            format!("request_seconds_bucket{{{l},le=\"0.05\"}} 2"),
            format!("request_seconds_bucket{{{l},le=\"10\"}} 2"),
            format!("request_seconds_bucket{{{l},le=\"+Inf\"}} 3"),
            format!("request_seconds_sum{{{l}}} 20.033"),
            format!("request_seconds_count{{{l}}} 3"),
            format!("request_bytes_in{{{l}}} 18"),
            format!("request_bytes_out{{{l}}} 6"),
            "request_fail_count{method=\"GET\",url=\"http://b/\\\"q\\\"\",code=\"0\",message=\"dial tcp: connect: connection refused\"} 1".to_string(),
        ] {
            assert!(text.lines().any(|x| x == line), "missing {line}\n{text}");
        }
        assert!(text.contains("# TYPE request_seconds histogram\n"));
        assert!(text.contains("# TYPE request_fail_count counter\n"));
    }

    #[test]
    fn label_sets_are_bounded() {
        let mut t = Prometheus::default();
        for i in 0..MAX_SERIES + 500 {
            t.add(&hit(
                &format!("http://a/{i}"),
                500,
                1,
                "500 Internal Server Error",
            ));
        }
        assert_eq!(t.series.len(), MAX_SERIES + 1);
        assert_eq!(t.fails.len(), MAX_SERIES + 1);
        let other = &t.series[&("GET".to_string(), OTHER.to_string(), 500)];
        assert_eq!(other.count, 500);
        // A URL already known keeps its own series past the bound.
        t.add(&hit("http://a/7", 500, 1, "500 Internal Server Error"));
        assert_eq!(
            t.series[&("GET".to_string(), "http://a/7".to_string(), 500)].count,
            2
        );
    }
}
