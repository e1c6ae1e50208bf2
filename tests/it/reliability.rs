//! The reliability checklist (P, T, S, C, I, M items of the reliability
//! research note): faults from the server, bad input, signals and output
//! failures, each with its pass criterion as the assertion. Every fault test
//! also checks the invariants: one record per scheduled request, every seq
//! once, a stream that decodes to a clean end, no panic, the right exit code.

use crate::common;

use std::{
    path::Path,
    thread,
    time::{Duration, Instant},
};

use barrage_testkit::{Blackhole, Child, RawServer, Script, Server, TestCert};
use common::{decode, fixture, run};

const WATCHDOG: Duration = Duration::from_secs(60);

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_barrage"))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Every hit failed before a status arrived (code 0), with `text` in its
/// error.
fn assert_all_failed_with(hits: &[barrage_model::Hit], text: &str) {
    if let Some(h) = hits.iter().find(|h| h.code != 0 || !h.error.contains(text)) {
        panic!(
            "every hit should fail with {text:?}; seq {} has code {} and error {:?}",
            h.seq, h.code, h.error
        );
    }
}

fn skip(why: &str) {
    eprintln!("SKIPPED (visible on purpose): {why}");
}

/// `rate` per second for `secs` (plus `extra` flags): exactly rate × secs
/// records, contiguous, each scheduled at its exact offset and sent no
/// earlier, and as many requests at the server.
fn assert_schedule_and_count(rate: u64, secs: u64, extra: &[&str]) {
    let server = Server::http();
    let (rate_text, secs_text) = (rate.to_string(), format!("{secs}s"));
    let mut args = vec!["-rate", &rate_text, "-duration", &secs_text];
    args.extend_from_slice(extra);
    let r = common::attack_watched(&args, &format!("GET {}\n", server.url("/")));
    assert_eq!(r.code, Some(0));
    r.assert_clean();
    let want = rate * secs;
    assert_eq!(r.hits.len() as u64, want);
    let mut hits = r.hits.clone();
    common::assert_exact_schedule(&mut hits, 1_000_000_000 / rate as i64);
    assert_eq!(server.count(), want);
}

#[test]
fn p2_schedule_and_count() {
    // Up to one request per 300 µs tick each worker thread sleeps until
    // the ticket it took is due.
    assert_schedule_and_count(1000, 2, &[]);
}

#[test]
fn p2b_schedule_and_count_above_one_request_per_tick() {
    // Above it the worker threads take turns by tick, each on a repeating
    // timer: two threads, then three (one tick in three each).
    assert_schedule_and_count(5000, 1, &[]);
    assert_schedule_and_count(20000, 1, &["-cpus", "3"]);
}

#[test]
fn p2d_a_stopped_attacker_catches_up_late_not_lost() {
    // 20,000/s, the whole process stopped for 300 ms midway: the 6,000
    // requests due meanwhile go out late when it runs again (in batches,
    // reading answers between them), each with its own schedule, none
    // sent twice. A loaded host may still be over 500 ms behind at the
    // end of -duration: what was due then is never sent, and is counted
    // and said, never lost without a word.
    let server = Server::http();
    let child = spawn_attack(&server, &["-rate", "20000", "-duration", "2s"], "/");
    assert!(
        child.wait_records(2000, WATCHDOG),
        "2000 records within the watchdog"
    );
    child.signal(libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(300));
    child.signal(libc::SIGCONT);
    let r = child.wait(WATCHDOG);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.assert_clean();
    let dropped: usize = r
        .stderr
        .lines()
        .find_map(|l| {
            // "barrage attack: warning: N requests due before the end …"
            l.split_once("warning: ")?
                .1
                .split_once(" requests due before the end")
        })
        .map_or(0, |(n, _)| n.parse().unwrap());
    assert_eq!(r.hits.len() + dropped, 40_000, "{}", r.stderr);
    assert!(dropped < 20_000, "most went out late: {}", r.stderr);
    let mut hits = r.hits.clone();
    common::assert_exact_schedule(&mut hits, 50_000);
    let worst = hits.iter().map(|h| h.lag()).max().unwrap();
    assert!(worst >= 250_000_000, "the stop shows as lag: {worst} ns");
    assert_eq!(server.count(), r.hits.len() as u64);
}

#[test]
fn p2c_schedule_and_count_with_the_pacer_thread() {
    // Lazy targets keep the pacer thread (reading one may block).
    let server = Server::http();
    let targets: String = (0..5000)
        .map(|i| format!("GET {}\n\n", server.url(&format!("/{i}"))))
        .collect();
    let r = common::attack_watched(&["-lazy", "-rate", "5000", "-duration", "1s"], &targets);
    assert_eq!(r.code, Some(0));
    r.assert_clean();
    let mut hits = r.hits.clone();
    assert_eq!(hits.len(), 5000);
    common::assert_exact_schedule(&mut hits, 200_000);
    for (i, h) in hits.iter().enumerate() {
        assert!(
            h.url.ends_with(&format!("/{i}")),
            "seq {i} went to {}",
            h.url
        );
    }
    assert_eq!(server.count(), 5000);
}

#[test]
fn p3_one_result_per_scheduled_hit_under_mixed_faults() {
    let server = Server::http();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refused = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let mut targets = vec![
        format!("GET {refused}"),
        format!("GET {}", server.url("/sleep/3000")),
        format!("GET {}", server.url("/status/500")),
    ];
    targets.extend((0..7).map(|_| format!("GET {}", server.url("/"))));
    let r = common::attack_watched(
        &["-rate", "500", "-requests", "500", "-timeout", "300ms"],
        &targets.join("\n\n"),
    );
    assert_eq!(r.code, Some(0));
    r.assert_clean();
    assert_eq!(r.hits.len(), 500);
    let refusedn = r
        .hits
        .iter()
        .filter(|h| h.code == 0 && h.error.to_lowercase().contains("refused"))
        .count();
    let timeouts = r
        .hits
        .iter()
        .filter(|h| h.code == 0 && h.error.contains("timeout"))
        .count();
    let e500 = r.hits.iter().filter(|h| h.code == 500).count();
    let ok = r.hits.iter().filter(|h| h.code == 200).count();
    assert_eq!((refusedn, timeouts, e500, ok), (50, 50, 50, 350));
    assert!(server.count() <= 500);
}

#[test]
fn p4_open_model_does_not_wait_for_slow_hits() {
    let server = Server::http();
    // 100/s for 1 s against a 500 ms server: every hit starts on time.
    let r = common::attack_watched(
        &["-rate", "100", "-duration", "1s"],
        &format!("GET {}\n", server.url("/sleep/500")),
    );
    r.assert_clean();
    assert_eq!(r.hits.len(), 100);
    let worst_lag = r.hits.iter().map(|h| h.lag()).max().unwrap();
    assert!(
        worst_lag < 100_000_000,
        "a slow server made barrage late by {worst_lag} ns"
    );
    assert!(r.hits.iter().all(|h| h.latency >= 500_000_000));
}

#[test]
fn p5_worker_cap_delays_but_never_drops() {
    let server = Server::http();
    let r = common::attack_watched(
        &["-rate", "100", "-requests", "40", "-max-workers", "10"],
        &format!("GET {}\n", server.url("/sleep/200")),
    );
    r.assert_clean();
    assert_eq!(r.hits.len(), 40);
    let mut hits = r.hits.clone();
    hits.sort_by_key(|h| h.seq);
    assert!(
        hits[..10].iter().all(|h| h.lag() < 50_000_000),
        "the first 10 go out on time"
    );
    assert!(
        hits[30..].iter().all(|h| h.lag() > 100_000_000),
        "later ones wait for a worker, and it shows"
    );
}

#[test]
fn t1_connection_refused() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let r = common::attack_watched(&["-rate", "50", "-duration", "1s"], &format!("GET {url}\n"));
    assert_eq!(r.code, Some(0));
    r.assert_clean();
    assert_eq!(r.hits.len(), 50);
    assert_all_failed_with(&r.hits, "connect: connection refused");
}

#[test]
fn t2_reset_mid_exchange() {
    let server = RawServer::start(Script::Reset);
    let r = common::attack_watched(
        &["-rate", "50", "-requests", "20"],
        &format!("GET {}\n", server.url("/")),
    );
    assert_eq!(r.code, Some(0));
    r.assert_clean();
    assert_eq!(r.hits.len(), 20);
    for h in &r.hits {
        assert_eq!(h.code, 0);
        let e = h.error.to_lowercase();
        assert!(e.contains("reset") || e.contains("closed"), "{}", h.error);
    }
}

#[test]
fn t3_timeout_on_a_silent_server() {
    let server = RawServer::start(Script::Stall);
    let r = common::attack_watched(
        &["-rate", "100", "-requests", "20", "-timeout", "200ms"],
        &format!("GET {}\n", server.url("/")),
    );
    assert_eq!(r.code, Some(0));
    r.assert_clean();
    assert_eq!(r.hits.len(), 20);
    assert_all_failed_with(&r.hits, "timeout");
    assert!(r.hits.iter().all(|h| h.latency >= 200_000_000));
}

#[test]
fn t4_truncated_response_body() {
    let server = RawServer::start(Script::Truncated {
        declared: 1000,
        sent: 10,
    });
    let r = common::attack_watched(
        &["-rate", "50", "-requests", "5"],
        &format!("GET {}\n", server.url("/")),
    );
    r.assert_clean();
    for h in &r.hits {
        assert_eq!(h.bytes_in, 10);
        assert!(
            !h.error.is_empty() && !h.is_success(),
            "incomplete body must be an error: {h:?}"
        );
        let e = h.error.to_lowercase();
        assert!(
            e.contains("unexpected eof")
                || e.contains("incomplete")
                || e.contains("end of file before message length"),
            "{}",
            h.error
        );
    }
}

#[test]
fn t5_keepalive_reuses_one_connection() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    let r = common::attack_watched(
        &["-rate", "500", "-requests", "200", "-max-workers", "1"],
        &t,
    );
    r.assert_clean();
    assert_eq!(server.connections(), 1);
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    let r = common::attack_watched(
        &[
            "-rate",
            "500",
            "-requests",
            "200",
            "-max-workers",
            "1",
            "-keepalive=false",
        ],
        &t,
    );
    r.assert_clean();
    assert_eq!(server.connections(), 200);
}

#[test]
fn t6_server_closes_connections() {
    let each = RawServer::start(Script::CloseEach);
    let r = common::attack_watched(
        &["-rate", "100", "-requests", "50"],
        &format!("GET {}\n", each.url("/")),
    );
    r.assert_clean();
    assert!(
        r.hits.iter().all(|h| h.code == 200),
        "{:?}",
        r.hits.iter().find(|h| h.code != 200)
    );
    // Every request answered, each on a connection of its own. Counted as
    // requests read, not as connections accepted: the count must not
    // depend on the host's socket table or on when accepts happen.
    assert_eq!(each.requests(), 50);
    assert!(each.connections() >= 50, "{}", each.connections());
    let idle = RawServer::start(Script::IdleClose(Duration::from_millis(50)));
    let r = common::attack_watched(
        &["-rate", "10", "-requests", "50", "-max-workers", "1"],
        &format!("GET {}\n", idle.url("/")),
    );
    r.assert_clean();
    assert!(
        r.hits.iter().all(|h| h.code == 200),
        "{:?}",
        r.hits.iter().find(|h| h.code != 200)
    );
    assert_eq!(idle.requests(), 50);
    // A request sent more than the server's 50 ms idle after the answer
    // before it finds its connection closed and opens another. (Not
    // every one: on a loaded machine a late request can follow the one
    // before within 50 ms, and reuse its connection rightly; CI saw 48.)
    let mut hits: Vec<_> = r.hits.iter().collect();
    hits.sort_by_key(|h| h.timestamp);
    let idle_gaps = hits
        .windows(2)
        .filter(|w| w[1].timestamp - (w[0].timestamp + w[0].latency as i64) > 60_000_000)
        .count();
    assert!(
        idle.connections() as usize > idle_gaps,
        "{} connections, {idle_gaps} idle gaps",
        idle.connections()
    );
}

/// Decision: streams refused by a GOAWAY are not re-sent (a load tester
/// must not send a request twice); they are recorded as errors, so
/// server-processed + errors == scheduled.
#[test]
fn t7_http2_goaway() {
    let server = Server::http_goaway_after(100);
    let r = common::attack_watched(
        &["-h2c", "-rate", "1000", "-requests", "1000"],
        &format!("GET {}\n", server.url("/")),
    );
    assert_eq!(r.code, Some(0));
    r.assert_clean();
    assert_eq!(r.hits.len(), 1000);
    let ok = r.hits.iter().filter(|h| h.code == 200).count() as u64;
    let errors = r.hits.iter().filter(|h| h.code == 0).count() as u64;
    assert_eq!(ok + errors, 1000);
    assert_eq!(
        server.count(),
        ok,
        "no request processed twice, none recorded wrongly"
    );
    assert!(
        server.connections() >= 10,
        "{} connections",
        server.connections()
    );
}

#[test]
fn t8_endless_body_times_out_with_flat_memory() {
    let server = RawServer::start(Script::Endless);
    let r = common::attack_watched(
        &["-rate", "10", "-requests", "10", "-timeout", "1s"],
        &format!("GET {}\n", server.url("/")),
    );
    r.assert_clean();
    assert_all_failed_with(&r.hits, "timeout");
    assert!(
        r.peak_rss_kib < 64 * 1024,
        "peak RSS {} KiB",
        r.peak_rss_kib
    );
}

/// mimalloc would ask for transparent huge pages, and each thread's heap
/// would then be resident 2 MiB at a time (peak RSS at 20,000/s 18-24 MiB
/// instead of 11-12): barrage turns them off for itself (`no_thp`, and
/// PR_SET_THP_DISABLE for kernels that use them unasked).
#[test]
fn m0_attack_keeps_off_transparent_huge_pages() {
    let server = Server::http();
    let child = spawn_attack(&server, &["-rate", "2000", "-duration", "2s"], "/");
    assert!(child.wait_records(1000, WATCHDOG), "1000 records in time");
    let proc_file = |name: &str| {
        std::fs::read_to_string(format!("/proc/{}/{name}", child.pid())).unwrap_or_default()
    };
    let field = |text: &str, key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
    };
    let status = proc_file("status");
    let rollup = proc_file("smaps_rollup");
    // THP_enabled is in /proc since Linux 6.0; AnonHugePages stays 0 on a
    // kernel without THP, where the check holds trivially.
    if let Some(v) = field(&status, "THP_enabled:") {
        assert_eq!(v, "0", "THP_enabled in /proc/PID/status");
    }
    let huge = field(&rollup, "AnonHugePages:");
    assert_eq!(
        huge.as_deref(),
        Some("0 kB"),
        "AnonHugePages in smaps_rollup"
    );
    let r = child.wait(WATCHDOG);
    assert_eq!(r.code, Some(0));
    r.assert_clean();
    assert_eq!(r.hits.len(), 4000);
}

#[test]
fn t9_huge_body_is_counted_not_kept() {
    let server = RawServer::start(Script::Huge(256 << 20));
    let r = common::attack_watched(
        &[
            "-rate",
            "10",
            "-requests",
            "4",
            "-max-body",
            "1KiB",
            "-timeout",
            "60s",
        ],
        &format!("GET {}\n", server.url("/")),
    );
    r.assert_clean();
    for h in &r.hits {
        assert_eq!(h.bytes_in, 268_435_456);
        assert_eq!(h.body.len(), 1024);
    }
    assert!(
        r.peak_rss_kib < 64 * 1024,
        "peak RSS {} KiB",
        r.peak_rss_kib
    );
}

#[test]
fn t9b_a_body_over_the_kept_maximum_is_cut_and_the_stream_stays_readable() {
    // -max-body -1 keeps at most 128 MiB: the stream's frames hold 256 MiB,
    // and a bigger record would make the whole stream unreadable (issue 22).
    let server = RawServer::start(Script::Huge(130 << 20));
    let r = common::attack_watched(
        &[
            "-rate",
            "10",
            "-requests",
            "2",
            "-max-body",
            "-1",
            "-timeout",
            "60s",
        ],
        &format!("GET {}\n", server.url("/")),
    );
    r.assert_clean();
    assert_eq!(r.hits.len(), 2);
    for h in &r.hits {
        assert_eq!(h.bytes_in, 130 << 20, "the whole body is counted");
        assert_eq!(h.body.len(), 128 << 20, "the kept body is cut at 128 MiB");
    }
}

#[test]
fn t9c_a_hanging_handshake_does_not_hold_the_start() {
    // At 5,000/s connections are opened ahead; against a server that
    // accepts and never answers the TLS handshake, that held the first
    // request back for the warm-up's whole second (issue 22). It now gives
    // up after 250 ms without a connection. The bound below is the
    // behaviour (not a speed figure): well under the old second.
    let server = RawServer::start(Script::Stall);
    let url = server.url("/").replace("http://", "https://");
    let spawned = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let r = common::attack_watched(
        &["-rate", "5000", "-requests", "1", "-timeout", "1s"],
        &format!("GET {url}\n"),
    );
    r.assert_clean();
    assert_eq!(r.hits.len(), 1);
    assert!(r.hits[0].error.contains("timeout"), "{:?}", r.hits[0].error);
    let held_ms = (r.hits[0].timestamp - spawned) / 1_000_000;
    assert!(
        held_ms < 900,
        "the request went out {held_ms} ms after the start"
    );
}

#[test]
fn t10_fd_exhaustion_is_recorded_not_fatal() {
    let server = RawServer::start(Script::Stall);
    let args = [
        "attack",
        "-rate",
        "500",
        "-duration",
        "1s",
        "-timeout",
        "2s",
    ];
    let r = Child::spawn(
        bin(),
        &args,
        format!("GET {}\n", server.url("/")).as_bytes(),
        Some("ulimit -n 64 &&"),
    )
    .wait(WATCHDOG);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.assert_clean();
    assert_eq!(r.hits.len(), 500);
    assert!(
        r.hits
            .iter()
            .any(|h| h.error.contains("socket: too many open files")),
        "{:?}",
        r.hits.last().map(|h| &h.error)
    );
    assert!(
        r.stderr.contains("open files limit (NOFILE) is 64"),
        "{}",
        r.stderr
    );
}

#[test]
fn t11_port_exhaustion_in_a_namespace() {
    if !is_root() || std::process::Command::new("ip").arg("-V").output().is_err() {
        return skip("t11 needs root and iproute2 (it runs in CI)");
    }
    let ns = format!("barrage-t11-{}", std::process::id());
    let sh = |cmd: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    if !sh(&format!("ip netns add {ns}")) {
        return skip("t11: cannot create a network namespace here");
    }
    let inns = |c: &str| format!("ip netns exec {ns} {c}");
    assert!(sh(&inns("ip link set lo up")));
    assert!(sh(&inns(
        "sysctl -q -w net.ipv4.ip_local_port_range='40000 40031'"
    )));
    // Loopback may otherwise reuse ports still in TIME_WAIT.
    let _ = sh(&inns("sysctl -q -w net.ipv4.tcp_tw_reuse=0"));
    let bin = bin().display().to_string();
    let mut server = std::process::Command::new("sh")
        .arg("-c")
        .arg(inns(&format!(
            "{bin} serve -addr 127.0.0.1:18999 -delay 500ms"
        )))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(inns(&format!("sh -c 'echo GET http://127.0.0.1:18999/ | {bin} attack -keepalive=false -rate 200 -duration 1s'")))
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let _ = sh(&format!(
        "pkill -f 'serve -addr 127.0.0.1:18999'; ip netns del {ns}"
    ));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = decode(&out.stdout);
    assert_eq!(hits.len(), 200);
    assert!(
        hits.iter()
            .any(|h| h.error.contains("connect: cannot assign requested address")),
        "{:?}",
        hits.last().map(|h| &h.error)
    );
}

#[test]
fn t15_connection_attempts_are_bounded_per_worker() {
    // No SYN is ever answered: each due request finds no connection to
    // reuse. A worker opens at most 16 at once (requests beyond wait for
    // one of them or for a connection given back); before that bound, one
    // that fell behind opened a connection per request due meanwhile, and
    // fell further behind. 200 due requests, one worker thread.
    let hole = Blackhole::start();
    let child = Child::spawn(
        bin(),
        &[
            "attack",
            "-rate",
            "200",
            "-duration",
            "1s",
            "-timeout",
            "1500ms",
            "-cpus",
            "1",
        ],
        format!("GET {}\n", hole.url("/")).as_bytes(),
        None,
    );
    let mut most = 0;
    let until = Instant::now() + Duration::from_millis(1200);
    while Instant::now() < until {
        most = most.max(hole.attempts());
        thread::sleep(Duration::from_millis(20));
    }
    let r = child.wait(WATCHDOG);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.assert_clean();
    assert_eq!(r.hits.len(), 200);
    assert_all_failed_with(&r.hits, "timeout");
    assert!(
        (1..=16).contains(&most),
        "{most} connection attempts at once (at most 16 per worker)"
    );
}

#[test]
fn t12_t13_tls_failures_name_the_reason_and_opt_outs_work() {
    for (cert, reason) in [
        (
            TestCert::generate(),
            "tls: failed to verify certificate: x509: certificate signed by unknown authority",
        ),
        (
            TestCert::expired(),
            "x509: certificate has expired or is not yet valid",
        ),
        (TestCert::wrong_name(), "x509: certificate is "),
    ] {
        let server = Server::https(&cert);
        let t = format!("GET {}\n", server.url("/"));
        // The wrong-name certificate comes from a CA we trust, so that the
        // name is the only thing wrong with it.
        let ca = cert.ca_path().map(|p| p.display().to_string());
        let mut args = vec!["-rate", "100", "-requests", "10"];
        if let Some(ca) = &ca {
            args.extend(["-root-certs", ca.as_str()]);
        }
        let r = common::attack_watched(&args, &t);
        r.assert_clean();
        assert!(r.hits.iter().all(|h| h.code == 0), "no 200 without trust");
        let e = &r.hits[0].error;
        assert!(
            e.contains(reason) && !e.contains("Some(") && !e.contains("Other("),
            "{} should name {reason}",
            r.hits[0].error
        );
        let r = common::attack_watched(&["-insecure", "-rate", "100", "-requests", "10"], &t);
        r.assert_clean();
        assert!(r.hits.iter().all(|h| h.code == 200), "{}", r.hits[0].error);
        assert_eq!(
            r.stderr.lines().filter(|l| l.contains("-insecure")).count(),
            1,
            "{}",
            r.stderr
        );
    }
    let cert = TestCert::ca_signed();
    let server = Server::https(&cert);
    let ca = cert.ca_path().unwrap();
    let r = common::attack_watched(
        &[
            "-root-certs",
            ca.to_str().unwrap(),
            "-rate",
            "100",
            "-requests",
            "10",
        ],
        &format!("GET {}\n", server.url("/")),
    );
    r.assert_clean();
    assert!(r.hits.iter().all(|h| h.code == 200), "{}", r.hits[0].error);
}

#[test]
fn t12b_protocol_mismatches_say_what_happened() {
    // An https URL against a plain HTTP server reads as Go's words, not
    // "received corrupt message of type InvalidContentType" (issue 22).
    let plain = Server::http();
    let url = plain.url("/").replace("http://", "https://");
    let r = common::attack_watched(&["-requests", "2"], &format!("GET {url}\n"));
    r.assert_clean();
    for h in &r.hits {
        assert!(
            h.error
                .ends_with(": http: server gave HTTP response to HTTPS client"),
            "{}",
            h.error
        );
    }
    // -h2c against an HTTP/1.x server: not "frame with invalid size".
    let h1 = RawServer::start(Script::Reply {
        bytes: b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
        trickle: false,
        // Kept open: a close right after the answer can reach the client
        // as a broken pipe on its next write before the answer is read.
        close: false,
    });
    let r = common::attack_watched(
        &["-requests", "2", "-h2c"],
        &format!("GET {}\n", h1.url("/")),
    );
    r.assert_clean();
    for h in &r.hits {
        assert!(
            h.error
                .contains("http2: server gave HTTP/1.x response to HTTP/2 (-h2c) client"),
            "{}",
            h.error
        );
    }
    // And against a server that answers with something else entirely.
    let other = RawServer::start(Script::Reply {
        bytes: b"<html>no</html>\n",
        trickle: false,
        close: false,
    });
    let r = common::attack_watched(
        &["-requests", "1", "-h2c"],
        &format!("GET {}\n", other.url("/")),
    );
    assert!(
        r.hits[0].error.contains("not an HTTP/2 SETTINGS frame"),
        "{}",
        r.hits[0].error
    );
}

#[test]
fn t14_bad_tls_files() {
    let server = Server::http();
    let dir = common::tempdir("t14");
    let garbage = dir.join("garbage.pem");
    std::fs::write(
        &garbage,
        "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let t = format!("GET {}\n", server.url("/"));
    for (args, code) in [
        (vec!["-root-certs", garbage.to_str().unwrap()], 2),
        (vec!["-root-certs", "/nonexistent/ca.pem"], 1),
        (vec!["-cert", garbage.to_str().unwrap()], 2),
        (
            vec!["-cert", "/nonexistent/c.pem", "-key", "/nonexistent/k.pem"],
            1,
        ),
    ] {
        let mut full = vec!["attack", "-requests", "3"];
        full.extend_from_slice(&args);
        let out = run(&full, t.as_bytes());
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(args[1]) && !err.contains("backtrace"), "{err}");
    }
    assert_eq!(server.count(), 0);
}

/// Starts `barrage attack ARGS` with one target: `GET` `path` on `server`.
fn spawn_attack(server: &Server, args: &[&str], path: &str) -> Child {
    let mut full = vec!["attack"];
    full.extend_from_slice(args);
    Child::spawn(
        bin(),
        &full,
        format!("GET {}\n", server.url(path)).as_bytes(),
        None,
    )
}

/// Runs `barrage attack ARGS` at `path` on `server`, sends SIGINT once
/// `records` records are out and checks the exit: code 0, a clean stream,
/// one record per request the server saw. Returns the result and when the
/// signal went (unix ns).
fn interrupt_after(
    server: &Server,
    args: &[&str],
    path: &str,
    records: usize,
) -> (barrage_testkit::ChildResult, i64) {
    let child = spawn_attack(server, args, path);
    assert!(
        child.wait_records(records, WATCHDOG),
        "{records} records within the watchdog"
    );
    let signalled = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    child.signal(libc::SIGINT);
    let r = child.wait(WATCHDOG);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.assert_clean();
    assert_eq!(
        r.hits.len() as u64,
        server.count(),
        "every hit sent is recorded, in flight ones included"
    );
    (r, signalled)
}

#[test]
fn s1_first_sigint_finishes_in_flight_hits() {
    let server = Server::http();
    let (r, _) = interrupt_after(
        &server,
        &["-rate", "50", "-duration", "60s"],
        "/sleep/300",
        20,
    );
    assert!(r.stderr.contains("interrupted"), "{}", r.stderr);
}

#[test]
fn s9_sigint_between_sparse_hits_sends_nothing_due_later() {
    // Two a second on two worker threads: each thread sleeps on a ticket
    // of its own (due within the next second) when the signal comes.
    let server = Server::http();
    let (r, signalled) = interrupt_after(
        &server,
        &["-rate", "2", "-duration", "60s", "-cpus", "2"],
        "/",
        3,
    );
    // The tickets the threads held were due 0.5 and 1 s apart: neither may
    // go out once the stop is seen (250 ms: the signal's way to the stop).
    for h in &r.hits {
        assert!(
            h.scheduled <= signalled + 250_000_000,
            "seq {} was due {} ms after the signal",
            h.seq,
            (h.scheduled - signalled) / 1_000_000
        );
    }
}

#[test]
fn s10_sigint_at_a_fast_rate_records_every_hit_sent() {
    // 20,000/s: the worker threads take turns by tick when the signal
    // comes; what was sent is recorded, once, with contiguous numbers.
    let server = Server::http();
    let (r, _) = interrupt_after(&server, &["-rate", "20000", "-duration", "60s"], "/", 2000);
    let mut hits = r.hits.clone();
    common::assert_seq_complete(&mut hits);
    assert!(
        r.hits.len() < 60 * 20000,
        "the signal did not stop the attack"
    );
}

#[test]
fn s2_second_sigint_exits_130_and_says_what_it_abandoned() {
    // 50/s to a 2 s answer: after 2.5 s about 25 records are out and about
    // 100 requests in flight. The second signal drops those, writes what
    // had finished, completes the stream and says how many went unrecorded.
    let server = Server::http();
    let child = spawn_attack(&server, &["-rate", "50", "-duration", "60s"], "/sleep/2000");
    assert!(
        child.wait_records(5, WATCHDOG),
        "records within the watchdog"
    );
    std::thread::sleep(Duration::from_millis(300));
    child.signal(libc::SIGINT);
    std::thread::sleep(Duration::from_millis(50));
    child.signal(libc::SIGINT);
    let r = child.wait(WATCHDOG);
    assert_eq!(r.code, Some(130), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"));
    r.assert_clean();
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("interrupted again: "))
        .unwrap_or_else(|| panic!("no abandon line in {:?}", r.stderr));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{line}");
    let (abandoned, written) = (numbers[0], numbers[1]);
    assert_eq!(written, r.hits.len() as u64, "{line}");
    assert!(abandoned > 0, "{line}");
    assert!(
        abandoned + written >= server.count(),
        "every request the server saw is either written or counted as abandoned: {line}, server saw {}",
        server.count()
    );
}

/// `barrage ARGS` reading its targets from a pipe left open, once it is
/// blocked reading them (its setup under way, its signals caught).
fn setting_up(args: &[&str]) -> std::process::Child {
    let child = std::process::Command::new(bin())
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The main thread in read(0, ...): /proc's syscall line is the call's
    // number and its arguments.
    let syscall = format!("/proc/{}/syscall", child.id());
    let reading = format!("{} 0x0 ", libc::SYS_read);
    let began = Instant::now();
    while !std::fs::read_to_string(&syscall).is_ok_and(|l| l.starts_with(&reading)) {
        assert!(began.elapsed() < WATCHDOG, "never read its targets");
        thread::sleep(Duration::from_millis(10));
    }
    child
}

fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: a plain call on a child of this test.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// `barrage ARGS` sent `sig` while set up, then given `target` as its
/// targets: its exit code and stderr.
fn signalled_while_setting_up(args: &[&str], sig: i32, target: &str) -> (Option<i32>, String) {
    let mut child = setting_up(args);
    signal(&child, sig);
    // The setup goes on once its targets are in; the run starts stopped.
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, format!("GET {target}\n").as_bytes()).unwrap();
    drop(stdin);
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (done.status.code(), err)
}

#[test]
fn s11_a_signal_while_setting_up_stops_before_the_first_request() {
    // Before, a signal there killed the process (its handler was set up
    // after the targets were read): no stream at all, no exit code.
    let server = Server::http();
    let dir = common::tempdir("setup-signal");
    let out = dir.join("r.bin");
    let out = out.to_str().unwrap();
    let args = ["attack", "-rate", "50", "-duration", "5s", "-output", out];
    let (code, err) = signalled_while_setting_up(&args, libc::SIGTERM, &server.url("/"));
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("stopping before the first request"), "{err}");
    assert!(decode(&std::fs::read(out).unwrap()).is_empty());
    assert_eq!(server.count(), 0, "nothing sent");

    // A sweep likewise starts stopped: no step, an empty table.
    let args = ["sweep", "-rates", "10,20", "-step-duration", "1s"];
    let (code, err) = signalled_while_setting_up(&args, libc::SIGINT, &server.url("/"));
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("stopping before the first step"), "{err}");
    assert!(err.contains("covers the 0 finished steps"), "{err}");
    assert_eq!(server.count(), 0, "nothing sent");
}

#[test]
fn s12_a_second_signal_while_setting_up_quits_at_once() {
    // Its targets never end (a terminal): the second Ctrl-C quits, 130.
    let mut child = setting_up(&["attack", "-rate", "50", "-duration", "5s"]);
    signal(&child, libc::SIGINT);
    // The second once the first is taken (two sent at once may arrive as
    // one).
    let mut said = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut said, &mut line).unwrap();
    assert!(line.contains("stopping before the first request"), "{line}");
    signal(&child, libc::SIGINT);
    let began = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        assert!(
            began.elapsed() < WATCHDOG,
            "still reading after two signals"
        );
        thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(code, Some(130));
}

/// `bash -c SCRIPT` in a process group of its own (a terminal's job).
fn in_own_group(script: &str) -> std::process::Child {
    std::process::Command::new("setsid")
        .args(["bash", "-c", script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn s3_ctrl_c_on_a_pipeline() {
    let server = Server::http();
    let bin = bin().display().to_string();
    // The shell traps INT (a handler, reset in its children) so that it
    // survives to tell how report exited.
    // The README's pipeline, with `tee -i` (a plain tee dies at the
    // first Ctrl-C and everything after it loses the records to come).
    let dir = common::tempdir("s3");
    let file = dir.join("r.bin");
    let script = format!(
        "trap : INT; echo 'GET {}' | {bin} attack -rate 100 -duration 60s | tee -i {} | {bin} report -type json; echo \"report exit ${{PIPESTATUS[3]}}\" >&2",
        server.url("/sleep/100"),
        file.display()
    );
    let child = in_own_group(&script);
    std::thread::sleep(Duration::from_millis(1500));
    // SIGINT to the whole process group, as a terminal's Ctrl-C does.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("report exit 0"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["requests"].as_u64().unwrap() > 50);
    assert_eq!(report["requests"].as_u64().unwrap(), server.count());
    let kept = common::decode(&std::fs::read(&file).unwrap());
    assert_eq!(
        kept.len() as u64,
        server.count(),
        "tee -i kept every record"
    );
}

#[test]
fn s3b_a_second_ctrl_c_on_a_pipeline_still_reports() {
    // Issue 29: a double Ctrl-C in `attack | report` printed no report
    // (PIPESTATUS 0 0 130). The attack exits 130 and says what it
    // abandoned; report reads the stream the attack completes, exit 0.
    let server = Server::http();
    let bin = bin().display().to_string();
    let script = format!(
        "trap : INT; echo 'GET {}' | {bin} attack -rate 50 -duration 60s | {bin} report -type json; echo \"exits ${{PIPESTATUS[*]}}\" >&2",
        server.url("/sleep/2000")
    );
    let child = in_own_group(&script);
    std::thread::sleep(Duration::from_millis(3000));
    for _ in 0..2 {
        // SIGINT to the whole process group, as a terminal's Ctrl-C does.
        unsafe {
            libc::kill(-(child.id() as i32), libc::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exits 0 130 0"), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("interrupted again: "))
        .unwrap_or_else(|| panic!("no abandon line in {err}"));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let written = report["requests"].as_u64().unwrap();
    assert!(written > 0, "{line}");
    assert!(
        line.ends_with(&format!("{written} results written")),
        "{line}"
    );
}

#[test]
fn s4_closed_stdout_stops_the_attack() {
    use std::io::Read;
    let server = Server::http();
    let mut child = std::process::Command::new(bin())
        .args(["attack", "-rate", "100", "-duration", "30s"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        writeln!(child.stdin.take().unwrap(), "GET {}", server.url("/")).unwrap();
    }
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
    assert!(
        server.count() < 1500,
        "{} requests: the attack went on",
        server.count()
    );
}

#[test]
fn s5_report_and_dump_into_a_closed_pipe() {
    let dir = common::tempdir("s5");
    let csv = dir.join("r.csv");
    let gen = std::process::Command::new(fixture("../scripts/gen-results"))
        .arg("100000")
        .output()
        .unwrap();
    std::fs::write(&csv, gen.stdout).unwrap();
    let bin = bin().display().to_string();
    for cmd in [
        "report -type json",
        "dump -dumper csv",
        "dump -dumper json",
        "encode -to bin",
    ] {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "set -o pipefail; {bin} {cmd} {} | head -c 1 > /dev/null; echo ${{PIPESTATUS[0]}}",
                csv.display()
            ))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "0",
            "{cmd}: {err}"
        );
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn s6_s8_full_disk() {
    if !Path::new("/dev/full").exists() {
        return skip("s6/s8 need /dev/full");
    }
    let server = Server::http();
    let out = run(
        &[
            "attack",
            "-rate",
            "100",
            "-duration",
            "1s",
            "-output",
            "/dev/full",
        ],
        format!("GET {}\n", server.url("/")).as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/dev/full") && err.contains("No space left on device"),
        "{err}"
    );
    assert!(server.count() < 100);
    let alpha = fixture("fixtures/alpha.bin");
    for args in [
        vec!["report", "-output", "/dev/full"],
        vec!["dump", "-output", "/dev/full"],
        vec!["report", "-type", "json", "-output", "/dev/full"],
    ] {
        let mut args = args.clone();
        args.push(alpha.to_str().unwrap());
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("No space left on device"),
            "{args:?}"
        );
    }
}

#[test]
fn s7_disk_full_midway_keeps_complete_records() {
    if !is_root() {
        return skip("s7 needs root to mount a 64 KiB tmpfs (it runs in CI)");
    }
    let dir = common::tempdir("s7");
    let mounted = std::process::Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=64k",
            "tmpfs",
            dir.to_str().unwrap(),
        ])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !mounted {
        return skip("s7: cannot mount tmpfs here");
    }
    let server = Server::http();
    let out_path = dir.join("r.bin");
    let out = run(
        &[
            "attack",
            "-rate",
            "5000",
            "-duration",
            "3s",
            "-keep-headers",
            "-output",
            out_path.to_str().unwrap(),
        ],
        format!("GET {}\n", server.url("/")).as_bytes(),
    );
    let written = std::fs::read(&out_path).unwrap_or_default();
    let _ = std::process::Command::new("umount").arg(&*dir).status();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("No space left on device"));
    let (hits, err) = common::decode_lossy(&written);
    assert!(!hits.is_empty());
    match err {
        None => {}
        Some(barrage_stream::StreamError::Truncated { offset, .. }) => {
            assert!(offset as usize <= written.len())
        }
        Some(e) => panic!("unexpected {e}"),
    }
}

#[test]
fn c3_random_buffers_never_panic_the_readers() {
    // 10,000 random buffers, some with a valid header, through `report`'s
    // reader (the library, in-process: spawning 10,000 processes would be slow).
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..10_000 {
        let len = (next() % 300) as usize;
        let mut buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if i % 2 == 0 && buf.len() >= 6 {
            buf[..6].copy_from_slice(&[0xB7, b'B', b'R', b'G', 1, 0]);
        }
        if let Ok(mut r) = barrage_stream::HitReader::open(&buf[..]) {
            let mut h = barrage_stream::Hit::default();
            for _ in 0..1000 {
                match r.read(&mut h) {
                    Ok(true) => {}
                    _ => break,
                }
            }
        }
    }
}

#[test]
fn c6_a_crafted_record_cannot_exhaust_the_readers_memory() {
    // One record claiming 8 million empty header lines: 16 MB on disk,
    // valid checksums. report used 626 MB and dump 779 MB on it (issue 22).
    let n: u64 = 8 << 20;
    let mut payload = vec![0, 1, b'a']; // the string "a"
    payload.extend_from_slice(&[1, 0x02, 0, 0, 0, 0xE8, 0x07, 0xC8, 0x01, 0]); // a record with headers
    payload.extend_from_slice(&[0x80, 0x80, 0x80, 0x04]); // 8 Mi of them
    for _ in 0..n {
        payload.extend_from_slice(&[1, 0]); // "a": ""
    }
    let mut stream = vec![0xB7, b'B', b'R', b'G', 2, 0];
    stream.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    stream.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    stream.extend_from_slice(&payload);
    let dir = common::tempdir("c6");
    let path = dir.join("crafted.bin");
    std::fs::write(&path, &stream).unwrap();
    let path = path.to_str().unwrap();
    for args in [["report", path], ["dump", path], ["encode", path]] {
        let r = Child::spawn(bin(), &args, b"", None).wait(WATCHDOG);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("header lines in one record"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.peak_rss_kib < 96 * 1024,
            "{args:?}: peak RSS {} KiB",
            r.peak_rss_kib
        );
    }
}

#[test]
fn c7_totals_saturate_on_crafted_extremes() {
    // Two records of bytes_in 2^64-1 summed to 2^64-2, and a span of the
    // whole time range came out as 1 ns (issue 22).
    let line = |seq: u32, ts: &str| {
        format!(
            r#"{{"attack":"","seq":{seq},"code":200,"timestamp":"{ts}","latency":9223372036854775807,"bytes_out":18446744073709551615,"bytes_in":18446744073709551615,"error":"","body":null,"method":"GET","url":"http://a/","headers":null}}"#
        )
    };
    let input = format!(
        "{}\n{}\n",
        line(0, "1678-01-01T00:00:00Z"),
        line(1, "2262-04-11T00:00:00Z")
    );
    let out = run(&["report", "-type", "json"], input.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["bytes_in"]["total"], u64::MAX);
    assert_eq!(v["bytes_out"]["total"], u64::MAX);
    assert_eq!(v["duration"], i64::MAX);
    assert!(v["wait"].as_i64().unwrap() >= 0);
}

#[test]
fn c5_old_streams_read_forever() {
    // stream-v1.bin was written by the first release of the format; its dump
    // must not change as the code does.
    let out = run(
        &[
            "dump",
            "-dumper",
            "json",
            fixture("fixtures/stream-v1.bin").to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success());
    common::golden("stream-v1.jsonl", &out.stdout);
    let out = run(
        &[
            "dump",
            "-dumper",
            "csv",
            fixture("fixtures/stream-v1.bin").to_str().unwrap(),
        ],
        b"",
    );
    common::golden("stream-v1.csv", &out.stdout);
}

#[test]
fn i1_malformed_target_files() {
    let cases: &[(&str, &str, Option<u64>)] = &[
        ("01-no-url.http", "bad target: GET", Some(1)),
        ("02-lowercase-method.http", "bad method: get", Some(1)),
        (
            "03-header-without-colon.http",
            "bad header: NoColonHere",
            Some(2),
        ),
        ("04-empty-header-name.http", "bad header", Some(2)),
        ("05-empty-header-value.http", "bad header", Some(2)),
        (
            "06-missing-body-file.http",
            "bad body: /nonexistent/barrage/body.json",
            Some(2),
        ),
        ("07-relative-url.http", "bad URL: /relative/path", Some(1)),
        ("08-unsupported-scheme.http", "bad URL: ftp://", Some(1)),
        ("09-bad-json.json", "bad target", Some(1)),
        (
            "10-json-without-method.json",
            "required method is missing",
            Some(1),
        ),
        (
            "11-json-without-url.json",
            "required url is missing",
            Some(1),
        ),
        ("12-json-bad-base64-body.json", "bad body", Some(1)),
        ("13-json-unknown-field.json", "bad target", Some(1)),
        ("14-empty.http", "no targets to attack", None),
        (
            "15-second-target-bad.http",
            "bad header: Bad Header",
            Some(5),
        ),
        ("16-json-header-not-array.json", "bad target", Some(1)),
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("targets/bad");
    let shown = std::fs::read_dir(&dir).unwrap().count();
    assert!(
        shown >= 12 && shown == cases.len(),
        "every file in targets/bad is a case"
    );
    for (file, want, line) in cases {
        let path = dir.join(file);
        let format = if file.ends_with(".json") {
            "json"
        } else {
            "http"
        };
        let out = run(
            &[
                "attack",
                "-format",
                format,
                "-targets",
                path.to_str().unwrap(),
                "-rate",
                "10",
                "-duration",
                "1s",
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{file}: {err}");
        assert!(err.contains(want), "{file}: {err}");
        if let Some(l) = line {
            assert!(
                err.contains(&format!("{}:{l}: ", path.display())),
                "{file} names its line: {err}"
            );
        }
        assert!(common::no_records(&out.stdout), "{file}: nothing written");
    }
}

#[test]
fn i2_lazy_bad_target_on_line_50() {
    let server = Server::http();
    let mut lines: Vec<String> = (1..50)
        .map(|i| {
            format!(
                "{{\"method\":\"GET\",\"url\":\"{}\"}}",
                server.url(&format!("/status/{}", 200 + i % 2))
            )
        })
        .collect();
    lines.push("{\"method\":\"GET\"}".into());
    lines.push(format!(
        "{{\"method\":\"GET\",\"url\":\"{}\"}}",
        server.url("/")
    ));
    let r = common::attack_watched(
        &["-lazy", "-format", "json", "-rate", "1000"],
        &(lines.join("\n") + "\n"),
    );
    assert_eq!(r.code, Some(2));
    r.assert_clean();
    assert_eq!(
        r.hits.len(),
        49,
        "the good targets before line 50 were sent and recorded"
    );
    assert!(
        r.stderr
            .contains("stdin:50: target: required url is missing"),
        "{}",
        r.stderr
    );
    assert_eq!(server.count(), 49);
}

#[test]
fn m1_flat_memory() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    // The worker cap keeps the number in flight the same whatever the
    // machine's speed (falling behind means more requests in flight, and
    // those do hold memory: that is the open model working, not records
    // piling up), so the two runs differ only in the number of records.
    let small = common::attack_watched(
        &[
            "-rate",
            "10000",
            "-requests",
            "50000",
            "-max-workers",
            "100",
        ],
        &t,
    );
    small.assert_clean();
    assert_eq!(small.hits.len(), 50_000);
    let big = common::attack_watched(
        &[
            "-rate",
            "10000",
            "-requests",
            "100000",
            "-max-workers",
            "100",
        ],
        &t,
    );
    assert_eq!(big.hits.len(), 100_000);
    assert!(
        small.peak_rss_kib < 64 * 1024 && big.peak_rss_kib < 64 * 1024,
        "{} / {} KiB",
        small.peak_rss_kib,
        big.peak_rss_kib
    );
    assert!(
        big.peak_rss_kib * 10 <= small.peak_rss_kib * 11 + 4096 * 10,
        "attack RSS grew with records: {} -> {} KiB",
        small.peak_rss_kib,
        big.peak_rss_kib
    );

    let dir = common::tempdir("m1");
    let mut peaks = vec![];
    for n in [1_000_000u64, 2_000_000] {
        let path = dir.join(format!("{n}.bin"));
        let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut enc = barrage_stream::Encoder::new(file).unwrap();
        let mut hit = barrage_stream::Hit {
            method: "GET".into(),
            url: "http://127.0.0.1:1/".into(),
            code: 200,
            ..Default::default()
        };
        for i in 0..n {
            hit.seq = i;
            hit.scheduled = 1_800_000_000_000_000_000 + i as i64 * 50_000;
            hit.timestamp = hit.scheduled + 20_000;
            hit.latency = 200_000 + (i * 7919) % 800_000;
            enc.write(&hit).unwrap();
        }
        enc.finish().unwrap();
        let r = Child::spawn(bin(), &["report", path.to_str().unwrap()], b"", None).wait(WATCHDOG);
        assert_eq!(r.code, Some(0));
        peaks.push(r.peak_rss_kib);
    }
    eprintln!("report peak RSS for 1M and 2M records: {peaks:?} KiB");
    assert!(peaks[0] < 64 * 1024 && peaks[1] < 64 * 1024, "{peaks:?}");
    assert!(
        peaks[1] * 10 <= peaks[0] * 11,
        "report RSS grew with records: {peaks:?}"
    );
}

#[test]
fn bad_usage_is_one_line_with_the_right_code_and_sends_nothing() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    let dir = common::tempdir("usage");
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["-targets", "/nonexistent/targets.http"],
            1,
            "/nonexistent/targets.http",
        ),
        (vec!["-body", "/nonexistent/body"], 1, "/nonexistent/body"),
        (
            vec!["-output", dir.to_str().unwrap()],
            1,
            dir.to_str().unwrap(),
        ),
        (vec!["-rate", "0"], 2, "-max-workers"),
        (vec!["-rate", "-5"], 2, "rate"),
        (vec!["-rate", "5/0s"], 2, "rate"),
        (vec!["-rate", "lots"], 2, "rate"),
        (vec!["-duration", "-1s"], 2, "duration"),
        (vec!["-duration", "5"], 2, "duration"),
        (vec!["-timeout", "soon"], 2, "duration"),
        (vec!["-max-workers", "0", "-rate", "0"], 2, "-max-workers"),
        (vec!["-no-such-flag"], 2, "no-such-flag"),
        (vec!["-header", "NoColon"], 2, "header"),
        (vec!["-format", "yaml"], 2, "yaml"),
    ];
    for (args, code, names) in cases {
        let mut full = vec!["attack", "-requests", "3"];
        full.extend_from_slice(&args);
        let out = run(&full, t.as_bytes());
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
        assert!(common::no_records(&out.stdout), "{args:?}");
    }
    assert_eq!(server.count(), 0, "the server received nothing");
}
