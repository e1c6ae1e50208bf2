//! End-to-end: `barrage export` into the real servers people run,
//! started here on loopback from Debian's packages (`scripts/test` installs
//! `prometheus` and `influxdb`): what the server then holds is counted
//! with its own query API. And endpoints that refuse: a closed port, a
//! server that answers 500, one that never accepts.

use crate::common;

use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use barrage_testkit::{Blackhole, OtlpReceiver, Server};
use common::{decode, ok, run};
use serde_json::Value;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.1 request on loopback; the status and the body.
fn http(method: &str, port: u16, target: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|b| b.1.to_string())?;
    // A chunked body: the JSON sits between its size lines.
    let body = match (body.find('{'), body.rfind('}')) {
        (Some(a), Some(b)) if b > a => body[a..=b].to_string(),
        _ => body,
    };
    Some((code, body))
}

/// A server process, killed at the end of the test.
struct Daemon {
    child: Child,
    log: std::path::PathBuf,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    fn start(name: &'static str, args: &[String], dir: &Path) -> Daemon {
        let log = dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(name)
            .args(args)
            .stdout(Stdio::from(out.try_clone().unwrap()))
            .stderr(Stdio::from(out))
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {e} (apt-get install it; scripts/test does)"));
        Daemon { child, log }
    }

    /// Starts `name` with the arguments `setup` makes for a fresh port
    /// (given back beside them), and waits (30 s at most) until `GET
    /// target` on it answers `want`. A port found free may be taken by
    /// another process before the daemon binds it (a local run saw
    /// influxd exit with "address already in use"): a daemon that exits
    /// is started again on new ports, three times at most.
    fn ready(
        name: &'static str,
        dir: &Path,
        setup: impl Fn() -> (Vec<String>, u16),
        target: &str,
        want: u16,
    ) -> (Daemon, u16) {
        let mut log = String::new();
        for _ in 0..3 {
            let (args, port) = setup();
            let mut d = Daemon::start(name, &args, dir);
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(30) {
                if http("GET", port, target).is_some_and(|(c, _)| c == want) {
                    return (d, port);
                }
                if d.child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            log = std::fs::read_to_string(&d.log).unwrap_or_default();
            if d.child.try_wait().ok().flatten().is_none() {
                break;
            }
        }
        panic!("{name} not ready: {log}");
    }
}

/// A 2 s attack at 200/s on a loopback server, saved: its path, records
/// and first and last send (unix ns).
fn recorded_run(dir: &Path) -> (String, u64, i64, i64) {
    recorded_as(dir, "r")
}

/// [`recorded_run`], the attack named `name` (and its file `name.bin`).
fn recorded_as(dir: &Path, name: &str) -> (String, u64, i64, i64) {
    let server = Server::http();
    let file = dir.join(format!("{name}.bin"));
    ok(
        &[
            "attack",
            "-rate",
            "200",
            "-duration",
            "2s",
            "-name",
            name,
            "-output",
            file.to_str().unwrap(),
        ],
        format!(
            "GET {}\nGET {}\n",
            server.url("/"),
            server.url("/status/404")
        )
        .as_bytes(),
    );
    let hits = decode(&std::fs::read(&file).unwrap());
    let first = hits.iter().map(|h| h.timestamp).min().unwrap();
    let last = hits.iter().map(|h| h.timestamp).max().unwrap();
    (
        file.to_str().unwrap().to_string(),
        hits.len() as u64,
        first,
        last,
    )
}

#[test]
fn prometheus_holds_every_record_at_its_own_time() {
    let dir = common::tempdir("export-prom");
    let config = dir.join("prometheus.yml");
    std::fs::write(&config, "global:\n  scrape_interval: 1h\n").unwrap();
    let setup = || {
        let port = free_port();
        let args = vec![
            format!("--config.file={}", config.display()),
            format!("--storage.tsdb.path={}", dir.join("data").display()),
            format!("--web.listen-address=127.0.0.1:{port}"),
            "--web.enable-remote-write-receiver".into(),
            "--enable-feature=native-histograms".into(),
        ];
        (args, port)
    };
    let (_prom, port) = Daemon::ready("prometheus", &dir, setup, "/-/ready", 200);
    let (file, count, first, last) = recorded_run(&dir);
    let url = format!("http://127.0.0.1:{port}/api/v1/write");
    let out = run(
        &[
            "export",
            "-to",
            "prometheus-remote-write",
            "-native-histograms",
            &url,
            &file,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let at = (last / 1_000_000_000) + 10;
    let query = |q: &str| prom_query(port, at, q);
    let v = query("sum(barrage_requests_total)");
    let total: f64 = v["data"]["result"][0]["value"][1]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(total as u64, count, "{v}");
    let v = query("sum(barrage_request_errors_total)");
    let errors: f64 = v["data"]["result"][0]["value"][1]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(errors as u64, count / 2, "the 404s: {v}");
    // Every series' last sample is stamped inside the attack's span (an
    // interval's end: at most a second past the last send).
    let v = query("timestamp(barrage_requests_total)");
    for r in v["data"]["result"].as_array().unwrap() {
        let t: f64 = r["value"][1].as_str().unwrap().parse().unwrap();
        let ns = (t * 1e9) as i64;
        assert!(ns > first && ns <= last + 1_000_000_000, "{r}");
    }
    let v = query("barrage_request_duration_seconds%7Bquantile=%220.99%22%7D");
    assert!(!v["data"]["result"].as_array().unwrap().is_empty(), "{v}");
    // histogram_quantile over the run's buckets lies in the bucket of
    // barrage's exact p99 (classic bounds 2^(1/4) apart, native 2^(1/8)).
    let p99 = |files: &[&str]| -> f64 {
        let mut args = vec!["report", "-type", "json"];
        args.extend_from_slice(files);
        let out = ok(&args, b"");
        let v: Value = serde_json::from_slice(&out).unwrap();
        v["latencies"]["99th"].as_f64().unwrap() / 1e9
    };
    let value = |v: &Value| -> f64 {
        v["data"]["result"][0]["value"][1]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"))
            .parse()
            .unwrap()
    };
    let classic = "histogram_quantile(0.99, sum by (le) (barrage_request_duration_seconds_bucket))";
    let native = "histogram_quantile(0.99, sum(barrage_request_latency_seconds))";
    let within = |got: f64, exact: f64, factor: f64, what: &str| {
        assert!(
            got <= exact * factor && exact <= got * factor,
            "{what}: {got} s against barrage's {exact} s"
        );
    };
    let exact = p99(&[&file]);
    within(
        value(&query(&percent(classic))),
        exact,
        2f64.powf(0.25),
        "classic",
    );
    within(
        value(&query(&percent(native))),
        exact,
        2f64.powf(0.125),
        "native",
    );
    // A second attacker, exported on its own: the buckets of both give
    // the p99 of the two runs merged.
    let (other, _, _, other_last) = recorded_as(&dir, "b");
    let out = run(
        &[
            "export",
            "-to",
            "prometheus-remote-write",
            "-native-histograms",
            &url,
            &other,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let at = (other_last / 1_000_000_000) + 10;
    let query = |q: &str| prom_query(port, at, q);
    let both = p99(&[&file, &other]);
    // Each attacker's totals as of its last interval.
    let classic = classic.replace(
        "(barrage_request_duration_seconds_bucket)",
        "(last_over_time(barrage_request_duration_seconds_bucket[10m]))",
    );
    within(
        value(&query(&percent(&classic))),
        both,
        2f64.powf(0.25),
        "two attackers",
    );
    // A run that scraped its server (-scrape): the series come through,
    // named by their endpoint, a counter's rate as NAME:per_second.
    let target = barrage_testkit::CapacityServer::unlimited();
    let metrics = target.url("/metrics");
    let scraped = dir.join("scraped.bin");
    ok(
        &[
            "attack",
            "-rate",
            "100",
            "-duration",
            "2s",
            "-scrape",
            &metrics,
            "-scrape-every",
            "250ms",
            "-output",
            scraped.to_str().unwrap(),
        ],
        format!("GET {}\n", target.url("/")).as_bytes(),
    );
    let out = run(
        &[
            "export",
            "-to",
            "prometheus-remote-write",
            &url,
            scraped.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let last_scrape = decode(&std::fs::read(&scraped).unwrap())
        .iter()
        .map(|h| h.timestamp)
        .max()
        .unwrap();
    let at = last_scrape / 1_000_000_000 + 2;
    let scraped_query = |q: &str| prom_query(port, at, &percent(q));
    let v = scraped_query(&format!(
        "count_over_time(barrage_serve_uptime_seconds{{barrage_source=\"{metrics}\"}}[1m])"
    ));
    assert!(value(&v) >= 6.0, "{v}");
    let v = scraped_query("avg_over_time(barrage_serve_requests_total:per_second[1m])");
    assert!((value(&v) - 100.0).abs() < 20.0, "{v}");
    // The dashboard's queries run on this data.
    for (title, expr) in queries("barrage-prometheus.json", "expr") {
        let expr = expr
            .replace("$__rate_interval", "1m")
            .replace("$__range", "10m")
            .replace("$attack", ".*")
            .replace("$url", ".*");
        let v = query(&percent(&expr));
        assert_eq!(v["status"], "success", "{title}: {expr}: {v}");
        if title != "Errors by message" {
            assert!(
                !v["data"]["result"].as_array().unwrap().is_empty(),
                "{title}: {expr}: {v}"
            );
        }
    }
}

/// Prometheus's answer to the instant query `q` (percent-encoded) at
/// `at` (unix seconds).
fn prom_query(port: u16, at: i64, q: &str) -> Value {
    let (code, body) = http("GET", port, &format!("/api/v1/query?query={q}&time={at}")).unwrap();
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// (panel title, query) of every target of a dashboard in deploy/grafana.
fn queries(file: &str, key: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/grafana")
        .join(file);
    let d: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for p in d["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            out.push((
                p["title"].as_str().unwrap().to_string(),
                t[key].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

/// `s` percent-encoded for a query string.
fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn the_dashboards_name_only_what_export_writes() {
    use barrage_export::{influx::FIELDS, remote_write::NAMES};
    let labels = [
        "method", "url", "code", "attack", "name", "error", "quantile", "le",
    ];
    for (title, expr) in queries("barrage-prometheus.json", "expr") {
        for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if word.starts_with("barrage_") {
                assert!(NAMES.contains(&word), "{title}: {word}");
            }
        }
        if let Some(by) = expr.split("by (").nth(1) {
            let by = &by[..by.find(')').unwrap()];
            assert!(labels.contains(&by), "{title}: by {by}");
        }
    }
    for (title, q) in queries("barrage-influx.json", "query") {
        assert!(q.contains("FROM \"barrage\""), "{title}: {q}");
        for quoted in q.split('"').skip(1).step_by(2) {
            let known = FIELDS.contains(&quoted)
                || labels.contains(&quoted)
                || ["barrage", "p50", "p99", "p99.9"].contains(&quoted);
            assert!(known, "{title}: {quoted}");
        }
    }
}

#[test]
fn influxdb_holds_every_record() {
    let dir = common::tempdir("export-influx");
    let config = dir.join("influxdb.conf");
    let setup = || {
        let (port, rpc) = (free_port(), free_port());
        std::fs::write(
            &config,
            format!(
                "reporting-disabled = true\nbind-address = \"127.0.0.1:{rpc}\"\n\
                 [meta]\n  dir = \"{d}/meta\"\n\
                 [data]\n  dir = \"{d}/data\"\n  wal-dir = \"{d}/wal\"\n  query-log-enabled = false\n\
                 [http]\n  bind-address = \"127.0.0.1:{port}\"\n  log-enabled = false\n\
                 [monitor]\n  store-enabled = false\n",
                d = dir.display()
            ),
        )
        .unwrap();
        (vec!["-config".into(), config.display().to_string()], port)
    };
    let (_influx, port) = Daemon::ready("influxd", &dir, setup, "/ping", 204);
    let (file, count, first, last) = recorded_run(&dir);
    // A URL with a path is used as it is: into a database not there, the
    // refusal says how to make it.
    let url = format!("http://127.0.0.1:{port}/write?db=elsewhere");
    let out = run(
        &["export", "-to", "influx", "-retries", "0", &url, &file],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("database not found") && said.contains("CREATE DATABASE"),
        "{said}"
    );
    // A bare URL: export creates -db (barrage) and writes into it.
    let url = format!("http://127.0.0.1:{port}/");
    let out = run(&["export", "-to", "influx", &url, &file], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Every lag figure, per interval.
    let (code, body) = http(
        "GET",
        port,
        "/query?db=barrage&q=SELECT%20max(%22lag_max%22),max(%22lag_p999%22),min(%22lag_mean%22)%20FROM%20%22barrage%22",
    )
    .unwrap();
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let lag = &v["results"][0]["series"][0]["values"][0];
    assert!(
        lag[1].as_f64().is_some() && lag[2].as_f64() <= lag[1].as_f64(),
        "{v}"
    );
    let (code, body) = http(
        "GET",
        port,
        "/query?db=barrage&q=SELECT%20sum(%22requests%22),sum(%22errors%22)%20FROM%20%22barrage%22",
    )
    .unwrap();
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let row = &v["results"][0]["series"][0]["values"][0];
    assert_eq!(row[1].as_u64(), Some(count), "{v}");
    assert_eq!(row[2].as_u64(), Some(count / 2), "{v}");
    // The dashboard's queries run on this data.
    for (title, q) in queries("barrage-influx.json", "query") {
        let q = q
            .replace(
                "$timeFilter",
                &format!("time >= {first} AND time <= {}", last + 2_000_000_000),
            )
            .replace("$__interval", "1s")
            .replace("$attack", ".*")
            .replace("$url", ".*");
        let (code, body) =
            http("GET", port, &format!("/query?db=barrage&q={}", percent(&q))).unwrap();
        let v: Value = serde_json::from_str(&body).unwrap();
        assert!(
            code == 200 && v["results"][0]["error"].is_null(),
            "{title}: {q}: {body}"
        );
        if title != "Errors by message" {
            assert!(v["results"][0]["series"].is_array(), "{title}: {q}: {body}");
        }
    }
}

#[test]
fn an_otlp_collector_gets_cumulative_sums_at_the_records_time() {
    let dir = common::tempdir("export-otlp");
    let receiver = OtlpReceiver::start();
    let (file, count, first, last) = recorded_run(&dir);
    let out = run(&["export", "-to", "otlp", &receiver.url(), &file], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let points = receiver.points();
    let mut last_of: std::collections::HashMap<Vec<(String, String)>, f64> = Default::default();
    for p in points.iter().filter(|p| p.metric == "barrage.requests") {
        assert!(p.cumulative, "{p:?}");
        let t = p.time as i64;
        assert!(t > first && t <= last + 1_000_000_000, "{p:?}");
        let v = last_of.entry(p.attributes.clone()).or_insert(0.0);
        assert!(p.value >= *v, "cumulative: {p:?}");
        *v = p.value;
    }
    assert_eq!(last_of.values().sum::<f64>() as u64, count, "{last_of:?}");
    let errors: f64 = {
        let mut m: std::collections::HashMap<Vec<(String, String)>, f64> = Default::default();
        for p in points
            .iter()
            .filter(|p| p.metric == "barrage.request.errors")
        {
            m.insert(p.attributes.clone(), p.value);
        }
        m.values().sum()
    };
    assert_eq!(errors as u64, count / 2);
    for name in ["barrage.request.duration", "barrage.lag"] {
        assert!(points.iter().any(|p| p.metric == name), "{name}");
    }
    assert!(last_of
        .keys()
        .all(|k| k.iter().any(|(key, _)| key == "url")));
}

/// A stream of `n` records to feed on stdin.
fn records(n: u64) -> Vec<u8> {
    let mut enc = barrage_stream::Encoder::new(Vec::new()).unwrap();
    for i in 0..n {
        enc.write(&barrage_stream::Hit {
            timestamp: 1_700_000_000_000_000_000 + i as i64 * 1_000_000,
            latency: 1_000_000,
            code: 200,
            seq: i,
            ..barrage_stream::Hit::default()
        })
        .unwrap();
    }
    enc.finish().unwrap()
}

#[test]
fn a_refusing_endpoint_is_one_line_and_exit_1_after_the_whole_stream() {
    let input = records(50_000);
    let refused = |url: &str, extra: &[&str], says: &str| {
        let mut args = vec![
            "export", "-to", "influx", "-retries", "1", "-timeout", "300ms",
        ];
        args.extend_from_slice(extra);
        args.push(url);
        let start = Instant::now();
        let out = run(&args, &input);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{url}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{url}: {err}");
        // Read to the end: every record counted.
        assert!(err.contains("(50000 records read)"), "{err}");
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
    };
    let closed = format!("http://127.0.0.1:{}/write", free_port());
    refused(&closed, &[], "connect 127.0.0.1:");
    let server = Server::http();
    refused(&server.url("/status/500"), &[], "answered 500");
    assert!(server.count() >= 2, "retried: {}", server.count());
    let hole = Blackhole::start();
    refused(&hole.url("/write"), &[], "(after 2 attempts)");
}

#[test]
fn bad_flags_are_one_line_and_exit_2() {
    for (args, says) in [
        (
            &["export", "-to", "kafka", "http://127.0.0.1:1/"][..],
            "kafka",
        ),
        (
            &["export", "-to", "influx", "https://127.0.0.1:1/"][..],
            "only http://",
        ),
        (
            &[
                "export",
                "-to",
                "influx",
                "-by",
                "host",
                "http://127.0.0.1:1/",
            ][..],
            "\"host\"",
        ),
        (
            &[
                "export",
                "-to",
                "influx",
                "-interval",
                "0s",
                "http://127.0.0.1:1/",
            ][..],
            "-interval",
        ),
        (
            &[
                "export",
                "-to",
                "otlp",
                "-native-histograms",
                "http://127.0.0.1:1/",
            ][..],
            "-native-histograms is for -to prometheus-remote-write, not -to otlp",
        ),
    ] {
        let out = run(args, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A loopback endpoint answering the n-th request (from 0) with
/// `answer(n)`, each request read whole first: what it writes and whether
/// it then keeps the connection open (a keep-alive server that ignores
/// `Connection: close`). Requests are counted, each with when it came.
struct Scripted {
    port: u16,
    came: std::sync::Arc<std::sync::Mutex<Vec<Instant>>>,
}

type Script = fn(usize, &mut TcpStream);

impl Scripted {
    fn start(answer: Script) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let came = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = came.clone();
        std::thread::spawn(move || {
            for mut s in listener.incoming().flatten() {
                let seen = seen.clone();
                std::thread::spawn(move || {
                    // The head, then Content-Length bytes.
                    let mut got = Vec::new();
                    let mut buf = [0u8; 65536];
                    let body_at = loop {
                        let Ok(n) = s.read(&mut buf) else { return };
                        if n == 0 {
                            return;
                        }
                        got.extend_from_slice(&buf[..n]);
                        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                            break i + 4;
                        }
                    };
                    let head = String::from_utf8_lossy(&got[..body_at]).to_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while got.len() < body_at + len {
                        let Ok(n) = s.read(&mut buf) else { return };
                        if n == 0 {
                            return;
                        }
                        got.extend_from_slice(&buf[..n]);
                    }
                    let n = {
                        let mut c = seen.lock().unwrap();
                        c.push(Instant::now());
                        c.len() - 1
                    };
                    answer(n, &mut s);
                });
            }
        });
        Scripted { port, came }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/write", self.port)
    }

    fn count(&self) -> usize {
        self.came.lock().unwrap().len()
    }
}

/// `export -to influx` of `input` to `url` with `extra` flags: the exit
/// code, stderr, and how long it took.
fn export(url: &str, extra: &[&str], input: &[u8]) -> (Option<i32>, String, Duration) {
    let mut args = vec!["export", "-to", "influx"];
    args.extend_from_slice(extra);
    args.push(url);
    let start = Instant::now();
    let out = run(&args, input);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        start.elapsed(),
    )
}

/// Issue 60: answers are read by their framing, a few KiB at most, with
/// one deadline per write: an endless answer grew export's memory to
/// 3.9 GB, one a byte a second held it for ever, and a keep-alive server
/// that took every batch had them all reported undelivered.
#[test]
fn hostile_endpoints_cost_a_deadline_not_memory_or_forever() {
    // 5 intervals of 1 s.
    let input = records(5_000);
    // A 500 whose body never ends.
    let endless = Scripted::start(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 500 Internal Server Error\r\n\r\n");
        let chunk = vec![b'z'; 1 << 16];
        while s.write_all(&chunk).is_ok() {}
    });
    let (code, err, took) = export(&endless.url(), &["-retries", "0"], &input);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("answered 500: zzz"), "{err}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    // A byte a second: the deadline is the whole write's.
    let slow = Scripted::start(|_, s| {
        for b in b"HTTP/1.1 204 No Content\r\n\r\n" {
            if s.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    let (code, err, took) = export(&slow.url(), &["-retries", "0", "-timeout", "500ms"], &input);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no answer within 500ms (-timeout)"), "{err}");
    assert!(!err.contains("os error 11"), "{err}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    // Keep-alive, Connection: close ignored: each batch taken once, and
    // said so.
    let keep = Scripted::start(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
        std::thread::sleep(Duration::from_secs(20));
    });
    let (code, err, _) = export(&keep.url(), &["-timeout", "5s"], &input);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(keep.count(), 5, "{err}");
}

/// Issue 60: one refused batch lost every later one, and 429's
/// Retry-After was not heeded. Now each batch is retried on its own
/// (after Retry-After when given), later ones still go, and the
/// intervals not written are named.
#[test]
fn one_failed_batch_costs_only_its_interval() {
    let input = records(5_000);
    // The second request: 400; the rest 204.
    let picky = Scripted::start(|n, s| {
        let answer: &[u8] = if n == 1 {
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 9\r\n\r\nbad batch"
        } else {
            b"HTTP/1.1 204 No Content\r\n\r\n"
        };
        let _ = s.write_all(answer);
    });
    let (code, err, _) = export(&picky.url(), &[], &input);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("answered 400: bad batch"), "{err}");
    assert!(
        err.contains("1 of 5 intervals not delivered (ending 2023-11-14T22:13:22Z)"),
        "{err}"
    );
    assert_eq!(picky.count(), 5, "every batch tried: {err}");
    // 429 with Retry-After: 1, then taken.
    let busy = Scripted::start(|n, s| {
        let answer: &[u8] = if n == 0 {
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"
        } else {
            b"HTTP/1.1 204 No Content\r\n\r\n"
        };
        let _ = s.write_all(answer);
    });
    let (code, err, _) = export(&busy.url(), &[], &input);
    assert_eq!(code, Some(0), "{err}");
    let came = busy.came.lock().unwrap().clone();
    assert_eq!(came.len(), 6, "{err}");
    assert!(
        came[1].duration_since(came[0]) >= Duration::from_millis(950),
        "retried after {:?}, Retry-After said 1 s",
        came[1].duration_since(came[0])
    );
}
