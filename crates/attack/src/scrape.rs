//! `-scrape URL`: a server's own metrics read during the attack (vLLM's
//! `/metrics`, node_exporter, any Prometheus text endpoint), every
//! `-scrape-every`, on a thread of its own: a slow or failed scrape never
//! delays a request. Each series the `-scrape-match` pattern keeps becomes
//! a [`ServerSample`] in the result stream, with the scrape's time: a
//! gauge as it reads, a counter as its rate a second since the scrape
//! before (from its first increase after a reset, as Prometheus counts
//! one). Each scrape also gives `up` (1, or 0 when it failed) and
//! `scrape_duration_seconds`, Prometheus's own names. Histograms and
//! summaries are left out (their `_sum` and `_count` folded in by the
//! parser).

use std::{
    collections::HashMap,
    sync::mpsc::{Receiver, RecvTimeoutError, Sender},
    thread,
    time::{Duration, Instant},
};

use barrage_model::ServerSample;

/// The most series one scrape of one endpoint keeps (the rest, and the
/// fact, said once on stderr).
pub const MAX_SERIES: usize = 1000;

/// The largest answer read from an endpoint.
const MAX_BODY: u64 = 16 << 20;

/// What `-scrape` asks for.
#[derive(Debug, Clone)]
pub struct ScrapeSpec {
    /// The endpoints, as typed.
    pub urls: Vec<String>,
    /// `-scrape-every`.
    pub every: Duration,
    /// `-scrape-match`: the metric names kept (all without it).
    pub matching: Option<regex::Regex>,
}

/// The scraper's thread: scrapes every endpoint at once, then every
/// `every`, sending each sample to `out`, until `done` is dropped or
/// said.
pub(crate) fn spawn(
    spec: ScrapeSpec,
    out: Sender<ServerSample>,
    done: Receiver<()>,
) -> std::io::Result<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name("barrage-scrape".into())
        .spawn(move || {
            let timeout = spec
                .every
                .clamp(Duration::from_millis(100), Duration::from_secs(5));
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .timeout_global(Some(timeout))
                .http_status_as_error(true)
                .build()
                .into();
            let mut endpoints: Vec<Endpoint> = spec.urls.iter().map(|u| Endpoint::new(u)).collect();
            loop {
                let started = Instant::now();
                for e in &mut endpoints {
                    for s in e.scrape(&agent, spec.matching.as_ref()) {
                        if out.send(s).is_err() {
                            return;
                        }
                    }
                }
                match done.recv_timeout(spec.every.saturating_sub(started.elapsed())) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
            }
        })
}

/// One endpoint: its counters' last values, what was said of it.
struct Endpoint {
    url: String,
    counters: HashMap<String, (f64, i64)>,
    failed_said: bool,
    capped_said: bool,
}

impl Endpoint {
    fn new(url: &str) -> Endpoint {
        Endpoint {
            url: url.to_string(),
            counters: HashMap::new(),
            failed_said: false,
            capped_said: false,
        }
    }

    /// One scrape's samples: the series kept, `up` and the scrape's
    /// duration.
    fn scrape(
        &mut self,
        agent: &ureq::Agent,
        matching: Option<&regex::Regex>,
    ) -> Vec<ServerSample> {
        let at = barrage_model::time::now_ns();
        let started = Instant::now();
        let body = agent
            .get(&self.url)
            .call()
            .and_then(|mut r| r.body_mut().with_config().limit(MAX_BODY).read_to_string());
        let took = started.elapsed().as_secs_f64();
        let sample = |name: &str, value: f64, rate: bool| ServerSample {
            source: self.url.clone(),
            at,
            name: name.to_string(),
            value,
            rate,
        };
        let mut out = Vec::new();
        let parsed = body.map_err(|e| e.to_string()).and_then(|text| {
            prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
                .map_err(|e| e.to_string())
        });
        let scrape = match parsed {
            Ok(s) => s,
            Err(why) => {
                if !std::mem::replace(&mut self.failed_said, true) {
                    eprintln!(
                        "barrage attack: -scrape {}: {why} (the attack goes on; each failed scrape is up 0 in the stream)",
                        barrage_model::words::redacted(&self.url)
                    );
                }
                out.push(sample("up", 0.0, false));
                out.push(sample("scrape_duration_seconds", took, false));
                return out;
            }
        };
        for s in &scrape.samples {
            if matching.is_some_and(|m| !m.is_match(&s.metric)) {
                continue;
            }
            if out.len() >= MAX_SERIES {
                if !std::mem::replace(&mut self.capped_said, true) {
                    eprintln!(
                        "barrage attack: -scrape {}: over {MAX_SERIES} series; the rest are left out (-scrape-match chooses them)",
                        barrage_model::words::redacted(&self.url)
                    );
                }
                break;
            }
            let name = if s.labels.is_empty() {
                s.metric.clone()
            } else {
                format!("{}{{{}}}", s.metric, s.labels)
            };
            match s.value {
                prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => {
                    out.push(sample(&name, v, false));
                }
                prometheus_parse::Value::Counter(v) => {
                    if let Some((before, then)) = self.counters.insert(name.clone(), (v, at)) {
                        let secs = (at - then) as f64 / 1e9;
                        // A counter that went down was reset: all of its
                        // value is the increase.
                        let increase = if v >= before { v - before } else { v };
                        if secs > 0.0 {
                            out.push(sample(&name, increase / secs, true));
                        }
                    }
                }
                _ => {}
            }
        }
        out.push(sample("up", 1.0, false));
        out.push(sample("scrape_duration_seconds", took, false));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A one-shot metrics endpoint on loopback: each connection gets
    /// `bodies`' next answer.
    fn endpoint(bodies: Vec<String>) -> String {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/metrics", l.local_addr().unwrap());
        thread::spawn(move || {
            for body in bodies {
                let Ok((mut c, _)) = l.accept() else { return };
                let mut buf = [0u8; 4096];
                let _ = c.read(&mut buf);
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        url
    }

    #[test]
    fn gauges_as_read_counters_as_rates_and_up() {
        let page = |queue: u32, total: u32| {
            format!("# TYPE waiting gauge\nwaiting{{model=\"m\"}} {queue}\n# TYPE served_total counter\nserved_total {total}\n# TYPE other gauge\nother 1\n")
        };
        let url = endpoint(vec![page(3, 100), page(5, 160)]);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(5)))
            .build()
            .into();
        let mut e = Endpoint::new(&url);
        let keep = regex::Regex::new("^(waiting|served_total)$").unwrap();
        let first = e.scrape(&agent, Some(&keep));
        let names: Vec<(&str, f64)> = first.iter().map(|s| (s.name.as_str(), s.value)).collect();
        assert_eq!(
            &names[..2],
            [("waiting{model=\"m\"}", 3.0), ("up", 1.0)],
            "no rate yet"
        );
        thread::sleep(Duration::from_millis(200));
        let second = e.scrape(&agent, Some(&keep));
        let rate = second.iter().find(|s| s.name == "served_total").unwrap();
        assert!(
            rate.rate && rate.value > 60.0 / 0.5 && rate.value < 60.0 / 0.19,
            "{rate:?}"
        );
        assert_eq!(second[0].value, 5.0);
        // Nothing answers now: up 0, said once.
        let down = e.scrape(&agent, None);
        assert_eq!((down[0].name.as_str(), down[0].value), ("up", 0.0));
        assert!(e.failed_said);
    }
}
