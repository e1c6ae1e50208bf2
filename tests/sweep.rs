//! `barrage sweep` end to end: against servers with a known limit, the
//! search lands within its precision, `-stop-on` stops at the right step,
//! closed-model steps hold their connection counts, a step barrage could
//! not keep is marked and never reported as the server's limit, and the
//! table and chart of a saved sweep match their golden files.

mod common;

use std::{path::Path, time::Duration};

use barrage_stream::{Encoder, Hit};
use barrage_testkit::{CapacityServer, Child, Server};
use common::{run, tempdir};

const WATCHDOG: Duration = Duration::from_secs(120);

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    common::one_at_a_time()
}

fn sweep(args: &[&str], targets: &str) -> std::process::Output {
    let mut full = vec!["sweep"];
    full.extend_from_slice(args);
    run(&full, targets.as_bytes())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn find_max_lands_within_the_precision_of_a_known_limit() {
    let _one = one_at_a_time();
    if let Err(first) = find_max_try() {
        eprintln!("first try: {first}; trying again");
        find_max_try().unwrap();
    }
}

/// One search for a limit of 400/s; `Err` when it landed low.
fn find_max_try() -> Result<(), String> {
    let capacity = 400.0;
    let server = CapacityServer::start(capacity);
    let dir = common::tempdir("sweep-find-max");
    let chart = dir.join("chart.html");
    let out = sweep(
        &[
            "-rates",
            "100",
            "-find-max",
            "success>=99.9%",
            "-step-duration",
            "1s",
            "-type",
            "json",
            // The search, not the generator's verdict: a loaded machine
            // (the suite in parallel) lags over 10 ms in a debug build.
            "-lag-limit",
            "1s",
            "-chart",
            chart.to_str().unwrap(),
        ],
        &format!("GET {}\n", server.url("/")),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The answer and its conditions are on the page, in words.
    let page = std::fs::read_to_string(&chart).unwrap();
    assert!(
        page.contains("<p class=\"answer\">max rate holding success&gt;=99.9%: "),
        "{page}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = v["find_max"]["found"]["rate"]
        .as_f64()
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        found <= capacity * 1.01,
        "found {found}/s for a limit of {capacity}/s"
    );
    if found < capacity / 1.05 - 1.0 {
        // One 503 in a step's 300 fails it: the server admits 10 ms of
        // requests at once, and a stall of the client (a loaded machine,
        // this VM's stolen time) sends the next ones bunched. Seen with
        // both -io back ends (375/s, 300/s, 194/s for 400/s), about one
        // run in four. A low answer is a failed try; a second one fails.
        return Err(format!("found {found}/s for a limit of {capacity}/s"));
    }
    assert!(
        v["find_max"]["text"]
            .as_str()
            .unwrap()
            .starts_with("max rate holding success>=99.9%: "),
        "{v}"
    );
    // Every probe is a row, by load; one progress line each on stderr.
    let steps = v["steps"].as_array().unwrap();
    let loads: Vec<f64> = steps.iter().map(|s| s["rate"].as_f64().unwrap()).collect();
    assert!(loads.windows(2).all(|w| w[0] < w[1]), "{loads:?}");
    assert_eq!(
        text(&out.stderr).matches("barrage sweep: rate=").count(),
        steps.len()
    );
    Ok(())
}

#[test]
fn stop_on_finishes_the_first_step_that_crosses() {
    let _one = one_at_a_time();
    let server = CapacityServer::start(500.0);
    let out = sweep(
        &[
            "-rates",
            "200..1000/+200",
            "-stop-on",
            "success<99%",
            "-step-duration",
            "1s",
            // The search, not the generator's verdict: a loaded machine
            // (the suite in parallel) lags over 10 ms in a debug build.
            "-lag-limit",
            "1s",
            "-type",
            "csv",
        ],
        &format!("GET {}\n", server.url("/")),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let rates: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(rates, ["200", "400", "600"], "{csv}");
    assert!(
        text(&out.stderr).contains("stopped after rate=600: -stop-on success<99%"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn closed_model_steps_hold_their_connection_counts() {
    let _one = one_at_a_time();
    let server = Server::http();
    let dir = tempdir("sweep-closed");
    let path = dir.join("r.bin");
    let out = sweep(
        &[
            "-concurrency",
            "1,4",
            "-step-duration",
            "1s",
            "-warmup",
            "300ms",
            "-output",
            path.to_str().unwrap(),
        ],
        &format!("GET {}\n", server.url("/sleep/50")),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let hits = common::decode(&std::fs::read(&path).unwrap());
    for (name, want) in [("c=1", 1), ("c=4", 4)] {
        let step: Vec<&Hit> = hits.iter().filter(|h| h.attack == name).collect();
        assert!(step.len() >= want * 10, "{name}: {} records", step.len());
        // Most requests in flight at once, from the records' own times.
        let mut edges: Vec<(i64, i32)> = step
            .iter()
            .flat_map(|h| [(h.timestamp, 1), (h.timestamp + h.latency as i64, -1)])
            .collect();
        edges.sort();
        let (mut now, mut most) = (0, 0);
        for (_, d) in edges {
            now += d;
            most = most.max(now);
        }
        assert_eq!(most, want as i32, "{name}");
        assert!(step.iter().all(|h| h.code == 200));
    }
    // The warm-up's records are in the stream under their own name, and
    // only the measured second is in the table.
    for name in ["c=1 warmup", "c=4 warmup"] {
        let warm: Vec<&Hit> = hits.iter().filter(|h| h.attack == name).collect();
        assert!(!warm.is_empty(), "{name}");
        let first = hits.iter().map(|h| h.scheduled).min().unwrap();
        assert!(warm.iter().all(|h| h.scheduled >= first));
    }
    let table = text(&out.stdout);
    assert!(
        table.lines().next().unwrap().starts_with("connections"),
        "{table}"
    );
}

#[test]
fn a_step_the_generator_could_not_keep_is_never_the_servers_limit() {
    let _one = one_at_a_time();
    // One request in flight at a time against a 100 ms answer: at most
    // 10/s go out of the 50/s offered, and each waits longer than the last.
    let server = Server::http();
    let out = sweep(
        &[
            "-rates",
            "50",
            "-max-workers",
            "1",
            "-find-max",
            "success>=99%",
            "-step-duration",
            "1s",
        ],
        &format!("GET {}\n", server.url("/sleep/100")),
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.contains("generator-bound"), "{table}");
    assert!(
        table.contains("limited by the generator at 50/s: lag p99 "),
        "{table}"
    );
    assert!(!table.contains("max rate holding"), "{table}");
}

#[test]
fn a_starved_generator_under_an_slo_is_an_at_least_never_a_capacity() {
    // Two requests in flight at most against a 50 ms answer: barrage can
    // send 40/s, the server (no limit of its own) takes any rate. The
    // search passes 10/s and 20/s and then cannot keep its schedule: the
    // answer is "at least", barrage the limit, exit 4, and no step is
    // ever the server's failure.
    let _one = one_at_a_time();
    let server = Server::http();
    let out = sweep(
        &[
            "-rates",
            "10",
            "-max-workers",
            "2",
            "-slo",
            "latency<=1s",
            "-attain",
            "90%",
            "-step-duration",
            "2s",
            "-type",
            "json",
        ],
        &format!("GET {}\n", server.url("/sleep/50")),
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = &v["find_max"];
    assert_eq!(found["limited_by"], "generator", "{found}");
    let (low, high) = (
        found["low"]["rate"].as_f64().unwrap_or(0.0),
        found["high"]["rate"].as_f64().unwrap(),
    );
    assert!(low >= 10.0 && high <= 80.0, "{found}");
    assert_eq!(found["load"], found["low"], "{found}");
    assert!(
        found["bound_by"].as_array().is_some_and(|b| !b.is_empty()),
        "{found}"
    );
    let said = found["text"].as_str().unwrap();
    assert!(
        said.contains(": at least ") && said.contains("barrage was the limit above it"),
        "{said}"
    );
    // Every step below the generator's limit passed its SLO; none failed.
    for s in v["steps"].as_array().unwrap() {
        if !s["generator_bound"].as_bool().unwrap() {
            assert_eq!(s["slo"], "pass", "{s}");
        }
    }
}

#[test]
fn find_max_exits_3_when_even_the_first_step_fails() {
    let server = CapacityServer::start(100.0);
    let out = sweep(
        &[
            "-rates",
            "400",
            "-find-max",
            "success>=99.9%",
            "-step-duration",
            "1s",
            // The search, not the generator's verdict: a loaded machine
            // (the suite in parallel) lags over 10 ms in a debug build.
            "-lag-limit",
            "1s",
        ],
        &format!("GET {}\n", server.url("/")),
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("even the first step fails success>=99.9%"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn ctrl_c_ends_the_step_and_the_table_covers_the_finished_ones() {
    let server = Server::http();
    let dir = tempdir("sweep-sigint");
    let path = dir.join("r.bin");
    let bin = Path::new(env!("CARGO_BIN_EXE_barrage"));
    let targets = format!("GET {}\n", server.url("/"));
    let child = Child::spawn(
        bin,
        &[
            "sweep",
            "-rates",
            "50,100,150",
            "-step-duration",
            "1s",
            "-type",
            "csv",
            "-output",
            path.to_str().unwrap(),
        ],
        targets.as_bytes(),
        None,
    );
    // Into the second step: the first is finished, the second is not.
    std::thread::sleep(Duration::from_millis(1500));
    child.signal(libc::SIGINT);
    let r = child.wait(WATCHDOG);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("interrupted: the table covers the 1 finished steps"),
        "{}",
        r.stderr
    );
    let hits = common::decode(&std::fs::read(&path).unwrap());
    assert!(
        hits.iter().any(|h| h.attack == "rate=100"),
        "the second step's records are kept"
    );
    assert_eq!(server.count(), hits.len() as u64, "one record per request");
}

/// Issue 29: `-rates 0.0000001` was named `rate=0`, which the rate
/// parser reads as "as fast as possible": 17,000 requests a second. A
/// step keeps its rate exactly, in its name too.
#[test]
fn a_tiny_rate_is_paced_and_named_exactly() {
    let server = Server::http();
    let dir = tempdir("sweep-tiny");
    let path = dir.join("s.bin");
    let out = sweep(
        &[
            "-rates",
            "0.0000001",
            "-step-duration",
            "1s",
            "-output",
            path.to_str().unwrap(),
        ],
        &format!("GET {}\n", server.url("/")),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let hits = common::decode(&std::fs::read(&path).unwrap());
    assert!(server.count() <= 1, "{} requests", server.count());
    assert_eq!(server.count(), hits.len() as u64);
    assert!(
        hits.iter().all(|h| h.attack == "rate=0.0000001"),
        "{hits:?}"
    );
}

#[test]
fn bad_steps_and_flags_are_one_line_and_exit_2() {
    for (args, says) in [
        (vec!["-rates", ""], "an empty step"),
        (vec!["-rates", "2000,1000"], "steps must rise"),
        (vec!["-rates", "0"], "above 0"),
        (vec!["-rates", "1e-12"], "not a rate barrage can pace"),
        (vec!["-rates", "1e400"], "too large"),
        (vec!["-concurrency", "0"], "above 0"),
        (
            vec!["-rates", "100", "-find-max", "speed<1"],
            "unknown figure",
        ),
        (vec!["-rates", "100", "-stop-on", "p99>"], "-stop-on"),
        (
            vec!["-rates", "100", "-concurrency", "10"],
            "cannot be used with",
        ),
        (
            vec!["-rates", "100", "-rate", "5"],
            "sweep sets -rate itself",
        ),
        (
            vec!["-rates", "100", "-duration", "5s"],
            "sweep sets -duration itself",
        ),
        (vec![], "sweep needs its steps"),
        (vec!["-rates", "100", "-precision", "0"], "-precision"),
    ] {
        let out = sweep(&args, "GET http://127.0.0.1:1/\n");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A saved sweep with known figures: 100 records a step, at 200, 400 and
/// 800/s offered; the last step's latency jumps and a tenth fail.
fn saved_sweep(path: &Path) {
    let mut enc = Encoder::new(std::fs::File::create(path).unwrap()).unwrap();
    let mut seq = 0;
    for (step, rate, latency_ms, failing) in
        [(0, 200.0, 2, 0), (1, 400.0, 2, 0), (2, 800.0, 40, 10)]
    {
        let name = format!("rate={rate}");
        let start = 1_700_000_000_000_000_000i64 + step * 2_000_000_000;
        // A warm-up record, left out of the table.
        enc.write(&Hit {
            attack: format!("{name} warmup"),
            seq,
            scheduled: start - 1_000_000_000,
            timestamp: start - 1_000_000_000,
            latency: 900_000_000,
            code: 200,
            method: "GET".into(),
            url: "http://127.0.0.1:8080/".into(),
            ..Hit::default()
        })
        .unwrap();
        seq += 1;
        for i in 0..100 {
            let at = start + (i as f64 * 1e9 / rate) as i64;
            let fail = i < failing;
            enc.write(&Hit {
                attack: name.clone(),
                seq,
                scheduled: at,
                timestamp: at + 20_000,
                latency: (latency_ms * 1_000_000 + i * 10_000) as u64,
                code: if fail { 503 } else { 200 },
                error: if fail {
                    "503 Service Unavailable".into()
                } else {
                    String::new()
                },
                method: "GET".into(),
                url: "http://127.0.0.1:8080/".into(),
                ..Hit::default()
            })
            .unwrap();
            seq += 1;
        }
    }
    enc.finish().unwrap();
}

#[test]
fn a_saved_sweep_redraws_its_table_and_chart() {
    let dir = tempdir("sweep-from");
    let path = dir.join("r.bin");
    saved_sweep(&path);
    let path = path.to_str().unwrap();
    for (kind, golden) in [
        ("text", "sweep.txt"),
        ("json", "sweep.json"),
        ("csv", "sweep.csv"),
    ] {
        let out = run(&["sweep", "-from", path, "-type", kind], b"");
        assert!(out.status.success(), "{}", text(&out.stderr));
        common::golden(golden, &out.stdout);
    }
    let chart = dir.join("sweep.html");
    let out = run(
        &[
            "sweep",
            "-from",
            path,
            "-chart",
            chart.to_str().unwrap(),
            "-title",
            "A saved sweep",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    common::golden("sweep.html", &std::fs::read(&chart).unwrap());
}

/// Closed-model steps against a server that answers 200 a second and
/// sheds the rest with 503 at once: 10 connections are already far past
/// it, so the knee is "at or below the first step", none is marked; and
/// against a server that keeps up (each answer 20 ms), throughput rises
/// with every step and no knee is marked within the sweep.
#[test]
fn the_closed_models_knee_against_a_capacity_server_and_one_that_keeps_up() {
    let _one = one_at_a_time();
    let shedding = CapacityServer::start(200.0);
    let out = sweep(
        &[
            "-concurrency",
            "10,20",
            "-step-duration",
            "700ms",
            "-warmup",
            "0s",
        ],
        &format!("GET {}\n", shedding.url("/")),
    );
    let table = text(&out.stdout);
    assert!(
        table.contains("knee: at or below the first step (10 connections: "),
        "{table}{}",
        text(&out.stderr)
    );
    assert!(!table.lines().any(|l| l.ends_with("  knee")), "{table}");
    let keeps_up = Server::http();
    let out = sweep(
        &[
            "-concurrency",
            "1,2,4",
            "-step-duration",
            "700ms",
            "-warmup",
            "0s",
        ],
        &format!("GET {}\n", keeps_up.url("/sleep/20")),
    );
    let table = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!table.contains("knee"), "{table}");
}

/// `barrage serve` with `flags` on a free port, killed when dropped.
struct Served(std::process::Child, String);

impl Served {
    fn start(flags: &[&str]) -> Served {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_barrage"))
            .args(["serve", "-addr", "127.0.0.1:0"])
            .args(flags)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().rsplit(' ').next().unwrap().to_string();
        Served(child, url)
    }
}

/// `sweep ARGS` against `server` in 2 s steps (lag up to 1 s allowed: a
/// loaded machine's debug build), as JSON: the table and stderr.
fn served_sweep(server: &Served, args: &[&str]) -> (serde_json::Value, String) {
    let mut all = args.to_vec();
    all.extend(["-step-duration", "2s", "-lag-limit", "1s", "-type", "json"]);
    let out = sweep(&all, &format!("GET {}\n", server.1));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = serde_json::from_slice(&out.stdout).unwrap();
    (v, text(&out.stderr))
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_queue_growing_inside_a_step_fails_it_before_its_figures_do() {
    // 1,000/s served, the rest queued without bound: at 1,500/s every
    // request waits longer than the last (about 0.5 s more each second)
    // and none fails, so only the queue's line tells.
    let _one = one_at_a_time();
    let server = Served::start(&["-capacity", "1000", "-queue"]);
    let (v, err) = served_sweep(&server, &["-rates", "500,1500"]);
    let backlog: Vec<bool> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["backlog"].as_bool().unwrap())
        .collect();
    assert_eq!(backlog, [false, true], "{v}");
    assert_eq!(v["steps"][1]["success"], 1.0, "{v}");
    assert!(
        err.contains("rate=1500: ") && err.contains("(backlog: latency rose "),
        "{err}"
    );
    // A search on success alone, which the queue never fails, stops
    // under the capacity: the backlog fails the steps above it.
    let (v, _) = served_sweep(
        &server,
        &[
            "-rates",
            "400",
            "-find-max",
            "success>=99%",
            "-precision",
            "10%",
        ],
    );
    let found = &v["find_max"];
    let (low, high) = (
        found["low"]["rate"].as_f64().unwrap(),
        found["high"]["rate"].as_f64().unwrap(),
    );
    assert!(low < 1000.0 * 1.01 && high > 1000.0 * 0.9, "{found}");
    assert_eq!(found["limited_by"], "server", "{found}");
}

#[test]
fn an_slo_search_brackets_the_capacity_on_decided_steps() {
    let _one = one_at_a_time();
    let server = Served::start(&["-capacity", "1500"]);
    if let Err(first) = slo_search(&server) {
        // A stall of this loaded machine bunches a low step's requests
        // past the server's 10 ms burst: its 503s fail it (as
        // find_max_try says). A second low answer fails.
        eprintln!("first try: {first}; trying again");
        slo_search(&server).unwrap();
    }
}

/// One `-slo` search against a 1,500/s server; `Err` when its bracket
/// missed the capacity.
fn slo_search(server: &Served) -> Result<(), String> {
    let (v, err) = served_sweep(
        server,
        &["-rates", "400", "-slo", "success", "-attain", "99%"],
    );
    let found = &v["find_max"];
    assert_eq!(found["confidence"], 0.95, "{found}");
    assert_eq!(found["slo"], "99% meeting success", "{found}");
    // Every step is decided on its interval and says so.
    for s in v["steps"].as_array().unwrap() {
        let said = s["slo"].as_str().unwrap_or_default();
        assert!(["pass", "fail", "undecided"].contains(&said), "{s}");
        assert!(
            s["attainment"].as_f64().is_some() && s["goodput"].as_f64().is_some(),
            "{s}"
        );
    }
    assert!(err.contains(", SLO met by "), "{err}");
    let (low, high) = (
        found["low"]["rate"].as_f64().unwrap_or(0.0),
        found["high"]["rate"].as_f64().unwrap_or(0.0),
    );
    if !(low <= 1500.0 * 1.01 && 1500.0 < high * 1.05) {
        return Err(format!("bracket {low}..{high} for 1500/s: {found}"));
    }
    Ok(())
}

#[test]
fn an_llm_slo_decides_steps_on_ttft() {
    // serve's OpenAI route answers its first token 150 ms after a
    // request: a step held to ttft<=100ms fails at once (exit 3), and its
    // row carries the LLM columns.
    let _one = one_at_a_time();
    let server = CapacityServer::unlimited();
    let dir = common::tempdir("sweep-llm");
    let body = dir.join("chat.json");
    std::fs::write(
        &body,
        r#"{"model":"m","stream":true,"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .unwrap();
    let out = sweep(
        &[
            "-rates",
            "10",
            "-llm",
            "openai",
            "-slo",
            "ttft<=100ms",
            "-step-duration",
            "2s",
            "-lag-limit",
            "1s",
        ],
        &format!(
            "POST {}\nContent-Type: application/json\n@{}\n",
            server.url("/v1/chat/completions?first=150ms&gap=5ms"),
            body.display()
        ),
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.contains("TTFT p99 ms") && table.contains("tokens/s"),
        "{table}"
    );
    assert!(
        table.contains("even the first step fails 99% meeting ttft<=100ms"),
        "{table}"
    );
}
