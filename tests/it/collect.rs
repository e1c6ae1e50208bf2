//! `barrage collect`: attackers' streams over TCP (or TLS) merged live,
//! a dropped connection resumed from the spool, the token, the shared
//! `-fail-on`, and `barrage send`.

use crate::common;

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    process::{Child, Command, Output, Stdio},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use barrage_testkit::{Relay, Server};
use common::{assert_exact_schedule, bin, decode, tempdir};

const TOKEN: &str = "collect-test-token";

/// A collector on a free loopback port: the child, its address, and its
/// stderr lines as they come.
struct Collect {
    child: Child,
    addr: String,
    /// Its stderr lines, each with when it came.
    log: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Collect {
    fn start(extra: &[&str], output: &std::path::Path) -> Collect {
        let mut child = bin()
            .args(["collect", "-listen", "127.0.0.1:0", "-output"])
            .arg(output)
            .args(extra)
            .env("BARRAGE_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn collect");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let first = lines.next().expect("a line").expect("utf-8");
        let addr = first
            .rsplit_once("://")
            .map(|(_, a)| a.to_string())
            .unwrap_or_else(|| panic!("no address in {first:?}"));
        let log = Arc::new(Mutex::new(vec![(Instant::now(), first)]));
        let keep = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                keep.lock().unwrap().push((Instant::now(), line));
            }
        });
        Collect { child, addr, log }
    }

    /// Waits (at most 60 s) for the collector's exit.
    fn wait(mut self) -> (i32, String) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let code = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status.code().unwrap_or(-1);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("collect did not end: {}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(50));
        let log = self.text();
        assert!(!log.contains("panicked"), "{log}");
        (code, log)
    }

    fn text(&self) -> String {
        let lines = self.log.lock().unwrap();
        lines
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// When the first line holding `needle` came.
    fn said(&self, needle: &str) -> Option<Instant> {
        let lines = self.log.lock().unwrap();
        lines
            .iter()
            .find(|(_, l)| l.contains(needle))
            .map(|(t, _)| *t)
    }
}

/// An attack writing to `output`, its targets given.
fn attack_into(target: &str, output: &str, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut cmd = bin();
    cmd.args(["attack", "-output", output])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn attack");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "GET {target}").expect("targets");
    child
}

/// `barrage send ADDRESS` of `stream` on its stdin, with the token and
/// `env`; fails the test unless it succeeds.
fn send_piped(address: &str, env: &[(&str, &str)], stream: &[u8]) {
    let mut cmd = bin();
    cmd.args(["send", address])
        .env("BARRAGE_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut send = cmd.spawn().unwrap();
    send.stdin.take().unwrap().write_all(stream).unwrap();
    let out = finished(send);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `barrage send tcp://ADDR FILE` with the token, waited for.
fn send_file(addr: &str, file: &std::path::Path) -> Output {
    bin()
        .args(["send", &format!("tcp://{addr}"), file.to_str().unwrap()])
        .env("BARRAGE_TOKEN", TOKEN)
        .output()
        .unwrap()
}

fn finished(child: Child) -> Output {
    let out = child.wait_with_output().expect("wait");
    common::assert_no_panic(&out);
    out
}

fn start_at(lead: Duration) -> String {
    let t = std::time::SystemTime::now() + lead;
    let ns = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

#[test]
fn three_shards_merge_into_one_schedule() {
    let server = Server::http();
    let dir = tempdir("collect-shards");
    let merged = dir.join("merged.bin");
    // A clock read in one process and compared in another on this
    // loaded 2-core machine: a hello can wait past the default 10 ms for
    // its thread (CI saw a 17 ms "behind"); schedules are checked exactly
    // below.
    let collect = Collect::start(&["-max-skew", "100ms"], &merged);
    let at = start_at(Duration::from_millis(1500));
    let output = format!("tcp://{}", collect.addr);
    // The first shard scrapes a server too: its samples come through.
    let metrics = server.url("/metrics");
    let attackers: Vec<Child> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            let mut args = vec![
                "-rate",
                "250",
                "-duration",
                "2s",
                "-shard",
                &shard,
                "-start-at",
                &at,
            ];
            if i == 0 {
                args.extend(["-scrape", &metrics, "-scrape-every", "500ms"]);
            }
            attack_into(
                &server.url("/"),
                &output,
                &args,
                &[("BARRAGE_TOKEN", TOKEN)],
            )
        })
        .collect();
    for a in attackers {
        let out = finished(a);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (code, log) = collect.wait();
    assert_eq!(code, 0, "{log}");
    let mut hits = decode(&std::fs::read(&merged).unwrap());
    assert_eq!(hits.len(), 500, "{log}");
    // One schedule of 250/s: seq 0..499 once each, 4 ms apart.
    assert_exact_schedule(&mut hits, 4_000_000);
    assert!(log.contains("3 attackers"), "{log}");
    assert!(!log.contains("warning"), "{log}");
    let bytes = std::fs::read(&merged).unwrap();
    let mut d = barrage_stream::Decoder::new(&bytes[..]).unwrap();
    let mut h = barrage_stream::Hit::default();
    while d.read(&mut h).unwrap() {}
    let ups = d
        .samples()
        .iter()
        .filter(|s| s.name == "up" && s.source == metrics)
        .count();
    assert!(ups >= 4, "{:?}", d.samples());
}

#[test]
fn a_dropped_connection_resumes_from_the_spool() {
    let server = Server::http();
    let dir = tempdir("collect-drop");
    let merged = dir.join("merged.bin");
    let collect = Collect::start(&["-attackers", "1"], &merged);
    let relay = Relay::new(collect.addr.clone());
    let spool = dir.join("spool.bin");
    let a = attack_into(
        &server.url("/"),
        &format!("tcp://{}", relay.addr),
        &[
            "-rate",
            "500",
            "-duration",
            "3s",
            "-spool",
            spool.to_str().unwrap(),
        ],
        &[("BARRAGE_TOKEN", TOKEN)],
    );
    // Two cuts, each at wherever the bytes are (mid-frame, most likely).
    std::thread::sleep(Duration::from_millis(800));
    relay.cut(Duration::from_millis(700));
    std::thread::sleep(Duration::from_millis(400));
    relay.cut(Duration::from_millis(300));
    let out = finished(a);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("lost the collector") && err.contains("reconnected"),
        "{err}"
    );
    let (code, log) = collect.wait();
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("dropped") && log.contains("is back"), "{log}");
    // Nothing lost, nothing twice: the merged stream is the spool's.
    let mut hits = decode(&std::fs::read(&merged).unwrap());
    assert_eq!(hits.len(), 1500, "{log}");
    common::assert_seq_complete(&mut hits);
    assert_eq!(decode(&std::fs::read(&spool).unwrap()).len(), 1500);
    assert!(!log.contains("twice"), "{log}");
}

#[test]
fn a_wrong_or_missing_token_is_refused() {
    let server = Server::http();
    let dir = tempdir("collect-token");
    let merged = dir.join("merged.bin");
    let collect = Collect::start(&[], &merged);
    let output = format!("tcp://{}", collect.addr);
    // The attackers' spools in the test's own directory: a refused
    // attacker leaves none behind.
    let tmp = dir.to_str().unwrap();
    let out = finished(attack_into(
        &server.url("/"),
        &output,
        &["-rate", "10", "-duration", "1s"],
        &[("BARRAGE_TOKEN", "wrong"), ("TMPDIR", tmp)],
    ));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("refused this stream: wrong token"), "{err}");
    let out = finished(attack_into(
        &server.url("/"),
        &output,
        &["-rate", "10", "-duration", "1s"],
        &[("TMPDIR", tmp)],
    ));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("BARRAGE_TOKEN"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&*dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("barrage-spool"))
        .collect();
    assert!(left.is_empty(), "spools left behind: {left:?}");
    // Nothing was sent to the target.
    assert_eq!(server.count(), 0);
    // A stranger's bytes are refused too.
    let mut s = TcpStream::connect(&collect.addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    assert!(reply.starts_with("refused"), "{reply}");
    let mut child = collect.child;
    let _ = child.kill();
    let _ = child.wait();
    // And a collector without a token does not start.
    let out = bin()
        .args(["collect", "-listen", "127.0.0.1:0"])
        .env_remove("BARRAGE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs the shared token"));
}

/// A collector that stops its attackers once 30 requests are in and
/// under 99% succeed, and a target nothing listens on (every request
/// fails): the target, the collector, the address to send to and the
/// merged stream's file (in the directory given back, kept while held).
fn failing(
    tag: &str,
) -> (
    String,
    Collect,
    String,
    (common::TempDir, std::path::PathBuf),
) {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let target = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let dir = tempdir(tag);
    let merged = dir.join("merged.bin");
    let collect = Collect::start(&["-fail-on", "success<99%", "-min-requests", "30"], &merged);
    let output = format!("tcp://{}", collect.addr);
    (target, collect, output, (dir, merged))
}

/// Every attacker stopped by the collector's verdict (exit 3, saying
/// why), the collector too, and the merged stream all failures.
fn all_stopped(
    outs: Vec<Output>,
    collect: Collect,
    (_dir, merged): (common::TempDir, std::path::PathBuf),
) {
    let (code, log) = collect.wait();
    for out in outs {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{err}\ncollector: {log}");
        assert!(
            err.contains("stopped by the collector: -fail-on: success<99%"),
            "{err}"
        );
    }
    assert_eq!(code, 3, "{log}");
    let hits = decode(&std::fs::read(&merged).unwrap());
    assert!(hits.len() >= 30 && hits.iter().all(|h| !h.error.is_empty()));
}

#[test]
fn fail_on_stops_every_attacker() {
    let (target, collect, output, merged) = failing("collect-fail-on");
    let began = Instant::now();
    let attackers: Vec<Child> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            attack_into(
                &target,
                &output,
                &["-rate", "100", "-duration", "60s", "-shard", &shard],
                &[("BARRAGE_TOKEN", TOKEN)],
            )
        })
        .collect();
    let outs: Vec<_> = attackers.into_iter().map(finished).collect();
    // Far inside the 60 s the attacks were given (the figures are
    // printed: from the collector's verdict to the last attacker's exit).
    let ended = Instant::now();
    let took = ended - began;
    let verdict = collect.said("-fail-on: success<99%");
    let verdict = verdict.unwrap_or_else(|| panic!("no verdict\n{}", collect.text()));
    let after = ended.saturating_duration_since(verdict);
    eprintln!(
        "three attackers stopped {took:?} after they started, the last {after:?} after the collector's verdict"
    );
    // The issue's "within a second" (30-38 ms measured), with room for a
    // loaded machine.
    assert!(after < Duration::from_secs(5), "{after:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    all_stopped(outs, collect, merged);
}

/// A collector's stop reaches an attacker in the closed model on ring's
/// threads too (its loops look at the schedule's orders as tokio's do).
#[test]
fn fail_on_stops_a_closed_model_attacker_on_ring() {
    let (target, collect, output, merged) = failing("collect-fail-on-closed");
    let args = [
        "-io",
        "ring",
        "-rate",
        "0",
        "-max-workers",
        "2",
        "-duration",
        "60s",
    ];
    let out = finished(attack_into(
        &target,
        &output,
        &args,
        &[("BARRAGE_TOKEN", TOKEN)],
    ));
    all_stopped(vec![out], collect, merged);
}

#[test]
fn tls_and_send() {
    let cert = barrage_testkit::TestCert::ca_signed();
    let server = Server::http();
    let dir = tempdir("collect-tls");
    let merged = dir.join("merged.bin");
    let (c, k) = (
        cert.cert_path.to_str().unwrap(),
        cert.key_path.to_str().unwrap(),
    );
    let collect = Collect::start(&["-tls-cert", c, "-tls-key", k, "-attackers", "2"], &merged);
    let port = collect.addr.rsplit_once(':').unwrap().1.to_string();
    let output = format!("tls://localhost:{port}");
    let ca = cert.ca_path().unwrap();
    // Unverified: the system's roots do not know this CA.
    let out = finished(attack_into(
        &server.url("/"),
        &output,
        &["-rate", "10", "-duration", "1s"],
        &[("BARRAGE_TOKEN", TOKEN)],
    ));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // Issue 60: in Go's words, not rustls's Debug text, and not blamed on
    // a collector that is not listening.
    assert!(
        err.contains("x509: certificate signed by unknown authority"),
        "{err}"
    );
    assert!(
        !err.contains("listening there") && !err.contains("Other("),
        "{err}"
    );
    let ca_env = ("BARRAGE_CA", ca.to_str().unwrap());
    let out = finished(attack_into(
        &server.url("/"),
        &output,
        &["-rate", "100", "-duration", "1s"],
        &[("BARRAGE_TOKEN", TOKEN), ca_env],
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // barrage send: a stream from stdin.
    let stream = common::ok(
        &["attack", "-rate", "50", "-duration", "1s"],
        format!("GET {}\n", server.url("/x")).as_bytes(),
    );
    send_piped(&output, &[("BARRAGE_CA", ca.to_str().unwrap())], &stream);
    let (code, log) = collect.wait();
    assert_eq!(code, 0, "{log}");
    let hits = decode(&std::fs::read(&merged).unwrap());
    assert_eq!(hits.len(), 150, "{log}");
    assert_eq!(hits.iter().filter(|h| h.url.ends_with("/x")).count(), 50);
}

#[test]
fn send_refuses_what_is_not_a_stream() {
    let dir = tempdir("collect-send-bad");
    let merged = dir.join("merged.bin");
    let collect = Collect::start(&[], &merged);
    let csv = dir.join("r.csv");
    std::fs::write(&csv, "1,200,3,4,5,,GET,http://a/\n").unwrap();
    let out = send_file(&collect.addr, &csv);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not a barrage result stream"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = bin()
        .args(["send", "127.0.0.1:1"])
        .env("BARRAGE_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let mut child = collect.child;
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn the_shards_are_checked_live() {
    let server = Server::http();
    let dir = tempdir("collect-skew");
    let merged = dir.join("merged.bin");
    // Two shards of three, started 300 ms apart.
    let collect = Collect::start(&["-attackers", "2"], &merged);
    let output = format!("tcp://{}", collect.addr);
    let attackers: Vec<Child> = [(0, 1000), (1, 1300)]
        .iter()
        .map(|(i, lead)| {
            let (shard, at) = (format!("{i}/3"), start_at(Duration::from_millis(*lead)));
            let args = [
                "-rate",
                "300",
                "-duration",
                "2s",
                "-shard",
                &shard,
                "-start-at",
                &at,
            ];
            attack_into(
                &server.url("/"),
                &output,
                &args,
                &[("BARRAGE_TOKEN", TOKEN)],
            )
        })
        .collect();
    for a in attackers {
        let out = finished(a);
        assert!(
            out.status.success(),
            "{:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (code, log) = collect.wait();
    assert_eq!(code, 0, "{log}");
    assert!(
        log.contains("shards 2/3 of the schedule have not joined"),
        "{log}"
    );
    assert!(
        log.contains("shard 1/3") && log.contains("later than the other shards'"),
        "{log}"
    );
}

#[test]
fn ctrl_c_leaves_the_collector_a_whole_stream() {
    let server = Server::http();
    let dir = tempdir("collect-sigint");
    let merged = dir.join("merged.bin");
    let collect = Collect::start(&[], &merged);
    let a = attack_into(
        &server.url("/"),
        &format!("tcp://{}", collect.addr),
        &["-rate", "200", "-duration", "60s"],
        &[("BARRAGE_TOKEN", TOKEN)],
    );
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("kill")
        .args(["-INT", &a.id().to_string()])
        .status()
        .unwrap();
    let out = finished(a);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // "interrupted: N requests sent, N results written"
    let written: usize = err
        .lines()
        .find(|l| l.contains("interrupted:"))
        .and_then(|l| l.split(", ").nth(1))
        .and_then(|w| w.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    let (code, log) = collect.wait();
    assert_eq!(code, 0, "{log}");
    let mut hits = decode(&std::fs::read(&merged).unwrap());
    assert_eq!(hits.len(), written, "{log}");
    common::assert_seq_complete(&mut hits);
}

/// `barrage send FILE` to a fresh collector; the merged records.
fn through_collect(file: &std::path::Path, dir: &std::path::Path) -> Vec<barrage_stream::Hit> {
    let merged = dir.join(format!(
        "merged-{}",
        file.file_name().unwrap().to_string_lossy()
    ));
    let collect = Collect::start(&[], &merged);
    let out = send_file(&collect.addr, file);
    common::assert_no_panic(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, log) = collect.wait();
    assert_eq!(code, 0, "{log}");
    decode(&std::fs::read(&merged).unwrap())
}

/// Issue 60: `collect` dropped every record whose `seq` it had seen, and
/// flows, `-mix` groups and sweep steps reuse `seq`s: each way of
/// sending, through `collect`, gives the records its file holds, every
/// one; two streams joined (`cat a.bin b.bin | send`) read as one.
#[test]
fn every_way_of_sending_comes_through_collect_whole() {
    let server = Server::http();
    let dir = tempdir("collect-ways");
    let flow = dir.join("two.flow");
    std::fs::write(
        &flow,
        format!(
            "GET {}\n:name a\n\nGET {}\n:name b\n",
            server.url("/bytes/1"),
            server.url("/bytes/2")
        ),
    )
    .unwrap();
    std::fs::write(dir.join("a.http"), format!("GET {}\n", server.url("/ga"))).unwrap();
    let mix = dir.join("mix.yaml");
    std::fs::write(
        &mix,
        format!(
            "groups:\n  - name: ga\n    targets: a.http\n    rate: 100\n  - name: gb\n    target: GET {}\n    rate: 100\n",
            server.url("/gb")
        ),
    )
    .unwrap();
    let target = format!("GET {}\n", server.url("/s"));
    let ways: Vec<(&str, Vec<String>, String)> = vec![
        (
            "flow",
            [
                "attack",
                "-format",
                "flow",
                "-targets",
                flow.to_str().unwrap(),
            ]
            .into_iter()
            .chain(["-rate", "100", "-requests", "30"])
            .map(String::from)
            .collect(),
            String::new(),
        ),
        (
            "mix",
            ["attack", "-mix", mix.to_str().unwrap(), "-requests", "30"]
                .map(String::from)
                .to_vec(),
            String::new(),
        ),
        (
            "sweep",
            [
                "sweep",
                "-rates",
                "50,100",
                "-step-duration",
                "300ms",
                "-output",
                "-",
            ]
            .map(String::from)
            .to_vec(),
            target.clone(),
        ),
    ];
    let mut files = Vec::new();
    for (name, args, stdin) in &ways {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::run(&args, stdin.as_bytes());
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // A sweep writes its table to stdout too when -output is -: the
        // stream is what decodes.
        let stream = if *name == "sweep" {
            let file = dir.join("sweep-run.bin");
            let mut a = args.clone();
            let at = a.iter().position(|x| *x == "-").unwrap();
            let f = file.to_str().unwrap().to_string();
            a[at] = &f;
            let out = common::run(&a, stdin.as_bytes());
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::read(&file).unwrap()
        } else {
            out.stdout
        };
        let file = dir.join(format!("{name}.bin"));
        std::fs::write(&file, &stream).unwrap();
        let want = decode(&stream);
        let seqs: std::collections::HashSet<u64> = want.iter().map(|h| h.seq).collect();
        assert!(seqs.len() < want.len(), "{name}: no shared seq to test");
        let got = through_collect(&file, &dir);
        assert_eq!(got.len(), want.len(), "{name}");
        assert_eq!(
            common::record_keys(&got),
            common::record_keys(&want),
            "{name}"
        );
        files.push(stream);
    }
    // Joined streams, through a pipe.
    let joined = files.concat();
    let merged = dir.join("merged-joined.bin");
    let collect = Collect::start(&[], &merged);
    send_piped(&format!("tcp://{}", collect.addr), &[], &joined);
    let (code, log) = collect.wait();
    assert_eq!(code, 0, "{log}");
    let got = decode(&std::fs::read(&merged).unwrap());
    assert_eq!(
        common::record_keys(&got),
        common::record_keys(&decode(&joined)),
        "{log}"
    );
}

/// A stream of `n` records with 1 KiB bodies, written here.
fn big_stream(path: &std::path::Path, n: u64) {
    let mut enc = barrage_stream::Encoder::new(std::fs::File::create(path).unwrap()).unwrap();
    for seq in 0..n {
        let body: Vec<u8> = (0..1024).map(|i| ((seq * 7 + i) % 251) as u8).collect();
        enc.write(&barrage_stream::Hit {
            seq,
            code: 200,
            timestamp: 1_700_000_000_000_000_000 + seq as i64 * 1000,
            url: "http://127.0.0.1:1/".into(),
            method: "GET".into(),
            body,
            ..Default::default()
        })
        .unwrap();
    }
    enc.finish().unwrap();
}

/// Issue 60: a collector that says `ok` and then reads nothing (its
/// output blocked) left `send` and `attack` waiting for ever, deaf to
/// SIGTERM. Now a write it does not take for 10 s is a lost connection,
/// said with the spool's name, and a signal ends the wait at once.
#[test]
fn a_collector_that_stops_reading_is_not_waited_on_for_ever() {
    let dir = tempdir("collect-quiet");
    let file = dir.join("big.bin");
    big_stream(&file, 30_000);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let quiet = Arc::new(AtomicBool::new(false));
    let held = Arc::new(Mutex::new(Vec::new()));
    {
        let (quiet, held) = (quiet.clone(), held.clone());
        std::thread::spawn(move || {
            for sock in listener.incoming().flatten() {
                let mut r = BufReader::new(sock.try_clone().unwrap());
                let mut line = String::new();
                while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\n" {
                    line.clear();
                }
                let mut w = sock;
                let _ = w.write_all(b"ok 0\n");
                quiet.store(true, Ordering::SeqCst);
                // Held open, never read.
                held.lock().unwrap().push(w);
            }
        });
    }
    let mut send = bin()
        .args(["send", &format!("tcp://{addr}"), file.to_str().unwrap()])
        .env("BARRAGE_TOKEN", TOKEN)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = send.stderr.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    {
        let lines = lines.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(l);
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(40);
    let said = |needle: &str| lines.lock().unwrap().iter().any(|l| l.contains(needle));
    while !said("lost the collector") {
        assert!(
            send.try_wait().unwrap().is_none(),
            "{:?}",
            lines.lock().unwrap()
        );
        assert!(Instant::now() < deadline, "{:?}", lines.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(quiet.load(Ordering::SeqCst));
    let text = lines.lock().unwrap().join("\n");
    assert!(text.contains("took nothing for 10s"), "{text}");
    assert!(
        text.contains(file.to_str().unwrap()),
        "the spool is named: {text}"
    );
    // One SIGTERM ends the wait.
    let asked = Instant::now();
    Command::new("kill")
        .args(["-TERM", &send.id().to_string()])
        .status()
        .unwrap();
    let status = loop {
        if let Some(s) = send.try_wait().unwrap() {
            break s;
        }
        assert!(asked.elapsed() < Duration::from_secs(20), "SIGTERM ignored");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(100));
    let text = lines.lock().unwrap().join("\n");
    assert!(!status.success(), "{text}");
    assert!(text.contains("the whole stream is in"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    // A spool of send's own making is readable by its owner only.
    let spool = barrage_collect::temp_spool();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&spool).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let _ = std::fs::remove_file(spool);
}

/// Issue 60: `collect` waited for ever for attackers that died or never
/// came, and two Ctrl-Cs with nobody joined exited 0. Now the awaited
/// set has a join deadline and each attacker a silence deadline; the
/// exit is 1, naming who is missing; one SIGTERM with nobody live ends it.
#[test]
fn collect_names_who_never_came_or_went_away() {
    let server = Server::http();
    let dir = tempdir("collect-missing");
    // Nobody at all.
    let merged = dir.join("none.bin");
    let collect = Collect::start(&["-join-timeout", "1s"], &merged);
    let (code, log) = collect.wait();
    assert_eq!(code, 1, "{log}");
    assert!(log.contains("no attacker joined within 1s"), "{log}");
    // One SIGTERM, nobody joined: at once.
    let collect = Collect::start(&[], &dir.join("term.bin"));
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    Command::new("kill")
        .args(["-TERM", &collect.child.id().to_string()])
        .status()
        .unwrap();
    let (code, log) = collect.wait();
    assert!(t.elapsed() < Duration::from_secs(5), "{log}");
    assert_eq!(code, 1, "{log}");
    assert!(log.contains("no attacker joined"), "{log}");
    // Two awaited, one comes: its records are kept, the other is named.
    let merged = dir.join("one.bin");
    let collect = Collect::start(&["-expect", "2", "-join-timeout", "3s"], &merged);
    let out = finished(attack_into(
        &server.url("/"),
        &format!("tcp://{}", collect.addr),
        &["-rate", "50", "-duration", "1s"],
        &[("BARRAGE_TOKEN", TOKEN)],
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, log) = collect.wait();
    assert_eq!(code, 1, "{log}");
    assert!(
        log.contains("1 of 2 awaited attackers never joined"),
        "{log}"
    );
    assert_eq!(decode(&std::fs::read(&merged).unwrap()).len(), 50);
    // An attacker killed with -9: lost after -silence, its records kept.
    let merged = dir.join("killed.bin");
    let collect = Collect::start(&["-silence", "1s"], &merged);
    // Its spool in the test's directory: a killed attacker cannot remove
    // it (each run of the suite left one in /tmp).
    let mut a = attack_into(
        &server.url("/"),
        &format!("tcp://{}", collect.addr),
        &["-rate", "100", "-duration", "60s"],
        &[("BARRAGE_TOKEN", TOKEN), ("TMPDIR", dir.to_str().unwrap())],
    );
    let t = Instant::now();
    while collect.said("joined").is_none() {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(800));
    a.kill().unwrap();
    let _ = a.wait();
    let (code, log) = collect.wait();
    assert_eq!(code, 1, "{log}");
    assert!(
        log.contains("lost: its connection has been gone for 1s"),
        "{log}"
    );
    let hits = decode(&std::fs::read(&merged).unwrap());
    assert!(!hits.is_empty(), "{log}");
}

/// Issue 60: anyone can reach the collector's port. An HTTP request is
/// refused at its first line, a hello that trickles in is cut at 5 s,
/// connections past 256 are closed as they come, a label's control
/// characters are escaped, and the token's CA file must hold one.
#[test]
fn strangers_cost_the_collector_little() {
    let dir = tempdir("collect-strangers");
    let collect = Collect::start(&["-expect", "1"], &dir.join("m.bin"));
    let read_reply = |s: &mut TcpStream| {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        String::from_utf8_lossy(&got).into_owned()
    };
    // HTTP: refused at once, not after a 5 s wait for a blank line.
    let t = Instant::now();
    let mut s = TcpStream::connect(&collect.addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    let reply = read_reply(&mut s);
    assert!(
        reply.starts_with("refused not a barrage sender"),
        "{reply:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    // A hello a byte a second: cut at its deadline.
    let t = Instant::now();
    let mut s = TcpStream::connect(&collect.addr).unwrap();
    s.write_all(b"BARRAGE-COLLECT/1\n").unwrap();
    let trickle = {
        let mut w = s.try_clone().unwrap();
        std::thread::spawn(move || {
            for _ in 0..20 {
                if w.write_all(b"x").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    let reply = read_reply(&mut s);
    assert!(reply.contains("no whole hello within 5s"), "{reply:?}");
    assert!(t.elapsed() < Duration::from_secs(9), "{:?}", t.elapsed());
    drop(s);
    let _ = trickle.join();
    // 300 idle connections: those past 256 are closed as they come.
    let idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(&collect.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let closed = idle
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).unwrap();
            let mut b = [0u8; 1];
            matches!((&**s).read(&mut b), Ok(0)) || matches!((&**s).read(&mut b), Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset)
        })
        .count();
    assert!(closed >= 40, "{closed} of 300 closed");
    drop(idle);
    // A label with an escape sequence, printed escaped.
    let mut s = TcpStream::connect(&collect.addr).unwrap();
    write!(
        s,
        "BARRAGE-COLLECT/1\norigin: {}\nshard: -\nlabel: evil\x1b[2Jlabel\nclock: 0\ntoken: {TOKEN}\n\n",
        "ab".repeat(16)
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(s);
    let mut child = collect.child;
    let _ = child.kill();
    let _ = child.wait();
    let log = collect
        .log
        .lock()
        .unwrap()
        .iter()
        .map(|(_, l)| l.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(log.contains("evil") && !log.contains('\x1b'), "{log:?}");
    // BARRAGE_CA with no certificate in it: said, exit 2.
    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "nothing here\n").unwrap();
    let out = finished(attack_into(
        "http://127.0.0.1:1/",
        "tls://127.0.0.1:1",
        &["-rate", "1", "-duration", "1s"],
        &[
            ("BARRAGE_TOKEN", TOKEN),
            ("BARRAGE_CA", empty.to_str().unwrap()),
        ],
    ));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no certificate in it"), "{err}");
}

/// Issue 60: an attack that failed before its first request was
/// swallowed by the collector ("done: 0 records", exit 0). Its reason
/// reaches the collector, which exits 1 naming it.
#[test]
fn an_attack_that_never_started_is_named_by_the_collector() {
    let dir = tempdir("collect-aborted");
    let collect = Collect::start(&[], &dir.join("m.bin"));
    let mut a = bin()
        .args([
            "attack",
            "-lazy",
            "-rate",
            "5",
            "-duration",
            "1s",
            "-output",
        ])
        .arg(format!("tcp://{}", collect.addr))
        .env("BARRAGE_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    a.stdin.take().unwrap().write_all(b"BAD notaurl\n").unwrap();
    let out = finished(a);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, log) = collect.wait();
    assert_eq!(code, 1, "{log}");
    assert!(log.contains("failed before its first request"), "{log}");
    assert!(log.contains("bad URL: notaurl"), "{log}");
}

/// Issue 66: one call to `collect -control` reaches all three attackers
/// and each applies it at the same schedule time: the merged stream is
/// one schedule at 300/s up to one request, and one at 900/s from it.
#[test]
fn one_control_call_changes_every_attacker_at_one_schedule_time() {
    let server = Server::http();
    let dir = tempdir("collect-control");
    let merged = dir.join("merged.bin");
    let collect = Collect::start(&["-max-skew", "100ms", "-control", "127.0.0.1:0"], &merged);
    let deadline = Instant::now() + Duration::from_secs(20);
    while collect.said("control at http://").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let text = collect.text();
    let control = text
        .lines()
        .find_map(|l| l.split_once("control at http://"))
        .map(|(_, a)| a.trim_end_matches('/').to_string())
        .unwrap_or_else(|| panic!("no control address: {text}"));
    let at = start_at(Duration::from_millis(1500));
    let output = format!("tcp://{}", collect.addr);
    let attackers: Vec<Child> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            let args = [
                "-rate",
                "300",
                "-duration",
                "4s",
                "-shard",
                &shard,
                "-start-at",
                &at,
            ];
            attack_into(
                &server.url("/"),
                &output,
                &args,
                &[("BARRAGE_TOKEN", TOKEN)],
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(3000));
    // A second ahead (500 ms by default): room for a loaded host to
    // pass it on before it holds.
    let body = r#"{"rate": 900, "in": "1s"}"#;
    let (code, said) = crate::control::call(&control, "POST", "/rate", body, None);
    assert_eq!(code, 200, "{said}");
    for a in attackers {
        let out = finished(a);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (code, log) = collect.wait();
    assert_eq!(code, 0, "{log}");
    let (mut hits, markers) = crate::control::records_and_markers(&merged);
    assert_eq!(markers.len(), 3, "{log}");
    let m = &markers[0];
    assert!(markers
        .iter()
        .all(|x| (x.first, x.from) == (m.first, m.from)));
    assert!(markers
        .iter()
        .all(|x| x.what == "rate 900/1s" && x.who == "collect"));
    assert_eq!(m.from, said["from"].as_i64().unwrap());
    let line = format!("rate 900/1s from request {}", m.first);
    assert_eq!(log.matches(&line).count(), 3, "{log}");
    common::assert_seq_complete(&mut hits);
    hits.sort_by_key(|h| h.seq);
    let start = hits[0].scheduled;
    for h in &hits {
        let want = if h.seq < m.first {
            start + (h.seq * 1_000_000_000 / 300) as i64
        } else {
            m.from + ((h.seq - m.first) * 1_000_000_000 / 900) as i64
        };
        assert_eq!(h.scheduled, want, "request {}", h.seq);
    }
    assert!(hits.len() as u64 > m.first + 1000, "{} records", hits.len());
}
