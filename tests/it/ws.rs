//! WebSocket request–reply against the test WebSocket server: exact
//! records at a rate over ws and wss, kept and per-message connections,
//! every failure as a record, bad targets refused.

use crate::common;

use std::{fs, path::Path};

use barrage_stream::Hit;
use barrage_testkit::{ProxyMode, ProxyServer, RawServer, Script, Server, TestCert, WsServer};
use common::*;

/// Attacks with the http-format `targets`, `args` after; the records in
/// sequence order.
fn attack_ws(dir: &Path, targets: &str, args: &[&str]) -> Vec<Hit> {
    let file = dir.join("targets.http");
    fs::write(&file, targets).unwrap();
    let mut all = vec!["attack", "-targets", file.to_str().unwrap()];
    all.extend(args);
    let mut hits = decode(&ok(&all, b""));
    hits.sort_by_key(|h| h.seq);
    hits
}

/// Waits (at most a second) until `server` has no connection open.
fn drained(server: &WsServer) {
    for _ in 0..50 {
        if server.open() == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn body(dir: &Path, text: &[u8]) -> String {
    let f = dir.join(format!("body-{}.txt", text.len()));
    fs::write(&f, text).unwrap();
    f.to_str().unwrap().to_string()
}

#[test]
fn messages_at_a_rate_over_ws_and_wss_are_exact_records() {
    let dir = tempdir("ws-rate");
    let msg = body(&dir, b"hello, server");
    let cert = TestCert::generate();
    let roots = cert.cert_path.to_str().unwrap().to_string();
    for (server, extra) in [
        (WsServer::start(), vec![]),
        (WsServer::tls(&cert), vec!["-root-certs", roots.as_str()]),
    ] {
        let target = format!(
            "GET {}\nSec-WebSocket-Protocol: chat\nX-Tenant: t1\n@{msg}\n",
            server.url("/echo")
        );
        let mut args = vec!["-rate", "100", "-requests", "30", "-max-body", "-1"];
        args.extend(extra.iter().copied());
        let mut hits = attack_ws(&dir, &target, &args);
        assert_exact_schedule(&mut hits, 10_000_000);
        for h in &hits {
            assert_eq!((h.code, h.error.as_str()), (101, ""), "{h:?}");
            assert_eq!((h.bytes_out, h.bytes_in), (13, 13));
            assert_eq!(h.body, b"hello, server");
            assert!(h.first_byte > 0 && h.first_byte <= h.latency);
        }
        assert_eq!(server.messages(), 30);
        assert!(
            server.opened() <= 10,
            "connections are reused: {}",
            server.opened()
        );
        assert_eq!(
            server.header("sec-websocket-protocol").as_deref(),
            Some("chat")
        );
        assert_eq!(server.header("x-tenant").as_deref(), Some("t1"));
    }
}

#[test]
fn keepalive_false_opens_a_connection_per_message() {
    let dir = tempdir("ws-nokeep");
    let server = WsServer::start();
    let msg = body(&dir, b"x");
    let target = format!("GET {}\n@{msg}\n", server.url("/echo"));
    let hits = attack_ws(
        &dir,
        &target,
        &["-rate", "50", "-requests", "10", "-keepalive=false"],
    );
    assert!(hits.iter().all(|h| h.code == 101 && h.error.is_empty()));
    assert_eq!(server.opened(), 10);
    // The closed model, binary frames, and a ping when there is no body.
    let server = WsServer::start();
    let bin = body(&dir, b"\x00\x01\xff");
    let target = format!(
        "GET {}\n@{bin}\n\nGET {}\n",
        server.url("/echo"),
        server.url("/echo")
    );
    let hits = attack_ws(
        &dir,
        &target,
        &[
            "-rate",
            "0",
            "-max-workers",
            "2",
            "-requests",
            "10",
            "-ws-frame",
            "binary",
            "-max-body",
            "-1",
        ],
    );
    for h in &hits {
        assert_eq!((h.code, h.error.as_str()), (101, ""), "{h:?}");
        if h.seq % 2 == 0 {
            assert_eq!(h.body, b"\x00\x01\xff");
        } else {
            assert_eq!((h.bytes_out, h.bytes_in), (0, 0), "a ping and its pong");
        }
    }
    assert_eq!(server.messages(), 5);
}

#[test]
fn every_failure_is_a_record() {
    let dir = tempdir("ws-fail");
    let server = WsServer::start();
    let msg = body(&dir, b"twenty bytes message");
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let targets = [
        "/silent",
        "/close/1011",
        "/refuse",
        "/fragments",
        "/ping",
        "dead",
        "/echo",
    ]
    .iter()
    .map(|p| {
        let url = if *p == "dead" {
            format!("ws://{dead}/")
        } else {
            server.url(p)
        };
        format!("GET {url}\n@{msg}\n")
    })
    .collect::<Vec<_>>()
    .join("\n");
    let hits = attack_ws(
        &dir,
        &targets,
        &[
            "-rate",
            "50",
            "-requests",
            "7",
            "-timeout",
            "300ms",
            "-ws-max-message",
            "64",
        ],
    );
    let got: Vec<(u16, &str)> = hits.iter().map(|h| (h.code, h.error.as_str())).collect();
    assert_eq!(got[0].0, 0);
    assert!(
        got[0].1.ends_with("timeout after 300ms (-timeout)"),
        "{:?}",
        got[0]
    );
    assert_eq!(
        got[1],
        (0, "websocket: closed by server (1011 internal error)")
    );
    assert_eq!(got[2], (400, "websocket: bad handshake (400 Bad Request)"));
    assert_eq!(got[3], (101, ""), "fragments are one message");
    assert_eq!(hits[3].bytes_in, 20);
    assert_eq!(got[4], (101, ""), "a ping from the server is answered");
    assert_eq!(got[5].0, 0);
    assert!(got[5].1.contains("connection refused"), "{:?}", got[5]);
    assert_eq!(got[6], (101, ""));
    assert!(server.pongs() >= 1, "the client answered the server's ping");
    // A reply over -ws-max-message is an error record.
    let hits = attack_ws(
        &dir,
        &format!("GET {}\n@{msg}\n", server.url("/echo")),
        &["-rate", "10", "-requests", "1", "-ws-max-message", "10"],
    );
    assert_eq!(hits[0].code, 0);
    assert!(
        hits[0].error.starts_with("websocket: "),
        "{:?}",
        hits[0].error
    );
    assert!(
        hits[0].error.contains("too long") || hits[0].error.contains("too big"),
        "{:?}",
        hits[0].error
    );
}

#[test]
fn reports_separate_websocket_and_http_targets() {
    let dir = tempdir("ws-by-url");
    let ws = WsServer::start();
    let http = Server::http();
    let msg = body(&dir, b"hi");
    let targets = format!("GET {}\n@{msg}\n\nGET {}\n", ws.url("/echo"), http.url("/"));
    let file = dir.join("t.http");
    fs::write(&file, targets).unwrap();
    let stream = ok(
        &[
            "attack",
            "-targets",
            file.to_str().unwrap(),
            "-rate",
            "50",
            "-requests",
            "10",
        ],
        b"",
    );
    let groups = report_groups(&stream, "url");
    let group = |url: &str| group(&groups, url);
    assert_eq!(group(&ws.url("/echo"))["status_codes"]["101"], 5);
    assert_eq!(group(&http.url("/"))["status_codes"]["200"], 5);
    assert_eq!(group(&ws.url("/echo"))["success"], 1.0);
}

#[test]
fn bad_websocket_targets_are_refused() {
    let dir = tempdir("ws-bad");
    let file = dir.join("t.http");
    fs::write(&file, "GET ws://127.0.0.1:1/\n\nGET ws:///nohost\n").unwrap();
    let f = file.to_str().unwrap();
    refused(
        &["attack", "-targets", f, "-rate", "1"],
        b"",
        &format!("{f}:3: bad URL: ws:///nohost"),
    );
    refused(
        &["attack", "-targets", f, "-ws-frame", "morse", "-rate", "1"],
        b"",
        "unknown frame type \"morse\"",
    );
}

/// `-hold 20`: twenty connections open at once at the server while the
/// attack runs, each message answered, every connection closed with a
/// close frame at the end.
#[test]
fn hold_keeps_connections_open_and_records_every_message() {
    let dir = tempdir("ws-hold");
    let server = WsServer::start();
    let msg = body(&dir, b"tick");
    let file = dir.join("t.http");
    fs::write(&file, format!("GET {}\n@{msg}\n", server.url("/echo"))).unwrap();
    let args = [
        "attack",
        "-targets",
        file.to_str().unwrap(),
        "-hold",
        "20",
        "-rate",
        "200",
        "-duration",
        "2s",
        "-hold-every",
        "400ms",
    ];
    let child = spawn(&args);
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let open_midway = server.open();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(open_midway, 20, "held at the server");
    let mut hits = decode(&out.stdout);
    assert_seq_complete(&mut hits);
    assert!(
        hits.iter().all(|h| h.code == 101 && h.error.is_empty()),
        "{:?}",
        hits[0]
    );
    // Issue 29: each open is a record of its own (no body), and each
    // connection sends at once and then every 0.4 s while a message is
    // due before the end: at 0, 0.4, 0.8, 1.2 and 1.6 s of its life.
    let opens = hits.iter().filter(|h| h.bytes_in == 0).count();
    let replies = hits.iter().filter(|h| h.bytes_in == 4).count();
    assert_eq!((opens, replies), (20, 100), "{} records", hits.len());
    assert_eq!(
        server.messages(),
        replies as u64,
        "every message answered, one record each"
    );
    drained(&server);
    assert_eq!(server.closes(), 20, "a close frame from each");
}

/// Held connections the server closes, or that cannot open, are records;
/// Ctrl-C closes the rest with close frames and leaves a valid stream.
#[test]
fn hold_records_closes_and_failures_and_stops_cleanly() {
    let dir = tempdir("ws-hold-end");
    let server = WsServer::start();
    let msg = body(&dir, b"tick");
    let file = dir.join("t.http");
    fs::write(
        &file,
        format!(
            "GET {}\n@{msg}\n\nGET {}\n@{msg}\n\nGET {}\n@{msg}\n",
            server.url("/echo"),
            server.url("/close/1001"),
            server.url("/refuse")
        ),
    )
    .unwrap();
    let args = [
        "attack",
        "-targets",
        file.to_str().unwrap(),
        "-hold",
        "6",
        "-rate",
        "0",
        "-duration",
        "30s",
        "-hold-every",
        "200ms",
    ];
    let child = spawn(&args);
    std::thread::sleep(std::time::Duration::from_millis(1000));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut hits = decode(&out.stdout);
    assert_seq_complete(&mut hits);
    let count = |f: &dyn Fn(&Hit) -> bool| hits.iter().filter(|h| f(h)).count();
    assert_eq!(
        count(&|h| h.code == 400 && h.error == "websocket: bad handshake (400 Bad Request)"),
        2,
        "refused: one record each"
    );
    assert_eq!(
        count(&|h| h.error == "websocket: closed by server (1001 going away)"),
        2,
        "closed by the server: one record each"
    );
    assert!(
        count(&|h| h.code == 101 && h.error.is_empty()) >= 2 * 3,
        "the held ones' messages"
    );
    drained(&server);
    assert_eq!(server.open(), 0);
    assert_eq!(
        server.closes(),
        2,
        "Ctrl-C closed the two held connections with close frames"
    );
}

#[test]
fn hold_replies_are_checked() {
    let dir = tempdir("ws-hold-check");
    let server = WsServer::start();
    let msg = body(&dir, b"tick");
    let targets = format!("GET {}\n@{msg}\n", server.url("/echo"));
    let held = |check: &str| {
        attack_ws(
            &dir,
            &targets,
            &[
                "-hold",
                "3",
                "-rate",
                "100",
                "-duration",
                "1s",
                "-hold-every",
                "300ms",
                "-check",
                check,
            ],
        )
    };
    let passing = held("body~ti");
    assert!(!passing.is_empty());
    assert!(passing.iter().all(|h| h.code == 101 && h.error.is_empty()));
    // Issue 29: a failed check is a failed record and the connection goes
    // on: 3 connections, messages at 0, 0.3, 0.6 and 0.9 s each. The
    // opens (no body) are not judged by the checks.
    let failing = held("body~tock");
    let replies: Vec<&Hit> = failing.iter().filter(|h| h.bytes_in > 0).collect();
    assert_eq!(replies.len(), 12, "{failing:?}");
    assert!(
        replies
            .iter()
            .all(|h| h.code == 101 && h.error.starts_with("check failed: ")),
        "{:?}",
        replies[0]
    );
    assert_eq!(failing.len() - replies.len(), 3, "one open record each");
}

/// Issue 29: a server that accepts TCP and never answers the upgrade; the
/// held connections' opens time out at -timeout, one record each, and the
/// attack ends (it hung for good before, Ctrl-C included).
#[test]
fn hold_ends_when_the_upgrade_never_comes() {
    let server = RawServer::start(Script::Stall);
    let url = server.url("/").replacen("http://", "ws://", 1);
    let started = std::time::Instant::now();
    let out = run(
        &[
            "attack",
            "-hold",
            "5",
            "-rate",
            "0",
            "-duration",
            "2s",
            "-timeout",
            "1s",
            "-hold-every",
            "1s",
        ],
        format!("GET {url}\n").as_bytes(),
    );
    assert_no_panic(&out);
    assert!(out.status.success(), "{out:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let mut hits = decode(&out.stdout);
    assert_seq_complete(&mut hits);
    assert_eq!(hits.len(), 5, "{hits:?}");
    assert!(
        hits.iter().all(|h| h.code == 0
            && h.error == "websocket: timeout after 1s (-timeout) waiting for the upgrade"),
        "{:?}",
        hits[0]
    );
}

/// Issue 29: refused with -hold: -requests, -hold-every 0.
#[test]
fn hold_refuses_what_it_cannot_honour() {
    let t = b"GET ws://127.0.0.1:1/\n";
    for (flags, needle) in [
        (
            &["-requests", "5", "-rate", "10"],
            "-hold does not take -requests: -hold N is the number",
        ),
        (
            &["-hold-every", "0s", "-rate", "10"],
            "-hold-every must be above 0s",
        ),
    ] {
        let mut args = vec!["attack", "-hold", "2", "-duration", "1s"];
        args.extend_from_slice(flags);
        refused(&args, t, needle);
    }
}

#[test]
fn ws_goes_through_an_http_proxy_by_connect() {
    let dir = tempdir("ws-proxy");
    let server = WsServer::start();
    let addr: std::net::SocketAddr = server
        .url("")
        .trim_start_matches("ws://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let proxy = ProxyServer::start(ProxyMode::Tunnel(addr));
    let msg = body(&dir, b"hi");
    let file = dir.join("t.http");
    // A name nobody resolves: through the proxy, barrage never looks it up.
    fs::write(&file, format!("GET ws://chat.test/echo\n@{msg}\n")).unwrap();
    let out = bin()
        .args(["attack", "-targets", file.to_str().unwrap()])
        .args(["-rate", "100", "-requests", "5"])
        .env("HTTP_PROXY", proxy.url())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_no_panic(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = decode(&out.stdout);
    assert_eq!(hits.len(), 5);
    assert!(
        hits.iter()
            .all(|h| h.code == 101 && h.error.is_empty() && h.bytes_in == 2),
        "{:?}",
        hits[0]
    );
    let seen = proxy.seen();
    assert!(!seen.is_empty());
    assert!(
        seen.iter()
            .all(|r| r.line == "CONNECT chat.test:80 HTTP/1.1"),
        "{seen:?}"
    );
    assert_eq!(server.messages(), 5);
}

/// One message to `/raw/NAME` on a server of its own: the record and
/// the close codes the server got.
fn raw_answer(dir: &Path, name: &str, args: &[&str]) -> (Hit, Vec<u16>) {
    let server = WsServer::start();
    let msg = body(dir, b"hello");
    let mut all = vec!["-rate", "10", "-requests", "1", "-timeout", "5s"];
    all.extend(args);
    let hits = attack_ws(
        dir,
        &format!("GET {}\n@{msg}\n", server.url(&format!("/raw/{name}"))),
        &all,
    );
    assert_eq!(hits.len(), 1, "{name}: one record");
    // The close frame reaches the server after the attack has its record.
    for _ in 0..50 {
        if server.closes() > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (hits.into_iter().next().unwrap(), server.close_codes())
}

#[test]
fn a_server_breaking_rfc_6455_fails_the_connection_with_its_code() {
    let dir = tempdir("ws-rfc");
    // (answer, the record's error, the close code the server gets back)
    let cases = [
        (
            "bigping",
            "websocket: protocol error: a control frame of 126 bytes (at most 125)",
            1002,
        ),
        (
            "fragping",
            "websocket: protocol error: a control frame in pieces",
            1002,
        ),
        (
            "badutf8",
            "websocket: protocol error: a text message that is not UTF-8",
            1007,
        ),
        (
            "cututf8",
            "websocket: protocol error: a text message that is not UTF-8",
            1007,
        ),
        (
            "close1005",
            "websocket: protocol error: the server closed with 1005 (no status), a code not allowed on the wire",
            1002,
        ),
        (
            "close1006",
            "websocket: protocol error: the server closed with 1006 (abnormal closure), a code not allowed on the wire",
            1002,
        ),
        (
            "close2999",
            "websocket: protocol error: the server closed with 2999 (unknown close code), a code not allowed on the wire",
            1002,
        ),
    ];
    for (name, error, code) in cases {
        let (hit, codes) = raw_answer(&dir, name, &[]);
        assert_eq!((hit.code, hit.error.as_str()), (0, error), "{name}");
        assert_eq!(codes, vec![code], "{name}: the close code sent back");
    }
    // A character cut between two fragments is good UTF-8.
    let (hit, codes) = raw_answer(&dir, "splitutf8", &["-keepalive=false", "-max-body", "-1"]);
    assert_eq!((hit.code, hit.error.as_str()), (101, ""));
    assert_eq!(hit.body, "€".as_bytes());
    assert_eq!(codes, vec![1000]);
}

#[test]
fn a_big_message_keeps_only_max_body_and_counts_the_rest() {
    let dir = tempdir("ws-big");
    let (hit, _) = raw_answer(
        &dir,
        "big",
        &["-max-body", "10", "-ws-max-message", "64MiB"],
    );
    assert_eq!((hit.code, hit.error.as_str()), (101, ""));
    assert_eq!(hit.bytes_in, 32 << 20, "the whole message is counted");
    assert_eq!(hit.body, b"xxxxxxxxxx", "-max-body 10 is what is kept");
}

#[test]
fn a_ping_flood_is_answered_by_far_fewer_pongs() {
    let dir = tempdir("ws-pingflood");
    let server = WsServer::start();
    let msg = body(&dir, b"hello");
    let hits = attack_ws(
        &dir,
        &format!("GET {}\n@{msg}\n", server.url("/raw/pingflood")),
        &[
            "-rate",
            "10",
            "-requests",
            "1",
            "-timeout",
            "10s",
            "-max-body",
            "-1",
        ],
    );
    assert_eq!((hits[0].code, hits[0].error.as_str()), (101, ""));
    assert_eq!(hits[0].body, b"after the flood");
    let pongs = server.pongs();
    // The last ping of each read is answered: at least one pong, and not
    // one write per ping.
    assert!(
        (1..10_000).contains(&pongs),
        "{pongs} pongs for 100,000 pings"
    );
}

#[test]
fn a_ping_storm_on_one_connection_leaves_the_others_their_turn() {
    // One worker thread: a connection flooded with pings for ever and
    // HTTP requests share it. The storm's request times out; every HTTP
    // request is answered (bench figures in issue 29's note: the HTTP
    // p50 with the storm went from 99 µs to 38 µs, 26 µs without it).
    let dir = tempdir("ws-pingstorm");
    let ws = WsServer::start();
    let http = Server::http();
    let msg = body(&dir, b"hello");
    let targets = format!(
        "GET {}\n@{msg}\n\nGET {}\n\nGET {}\n\nGET {}\n",
        ws.url("/raw/pingstorm"),
        http.url("/"),
        http.url("/"),
        http.url("/")
    );
    let hits = attack_ws(
        &dir,
        &targets,
        &[
            "-cpus",
            "1",
            "-rate",
            "40",
            "-requests",
            "40",
            "-timeout",
            "1s",
        ],
    );
    assert_eq!(hits.len(), 40);
    for h in &hits {
        if h.url.starts_with("ws://") {
            assert!(h.error.contains("timeout"), "{h:?}");
        } else {
            assert_eq!((h.code, h.error.as_str()), (200, ""), "{h:?}");
        }
    }
}

/// Issue 30: -hold's opens follow the one schedule: -stages ramps them
/// and -shard i/n opens the shard's share of -hold N.
#[test]
fn hold_opens_follow_stages_and_shards() {
    let server = WsServer::start();
    let t = format!("GET {}\n", server.url("/echo"));
    let opens = |args: &[&str]| {
        let mut all = vec!["attack", "-hold", "40", "-duration", "1500ms"];
        all.extend_from_slice(args);
        let mut hits = decode(&ok(&all, t.as_bytes()));
        assert!(hits.iter().all(|h| h.code == 101 && h.error.is_empty()));
        hits.sort_by_key(|h| h.scheduled);
        let start = hits.first().map_or(0, |h| h.scheduled);
        hits.iter()
            .map(|h| (h.scheduled - start) as f64 / 1e6)
            .collect::<Vec<f64>>()
    };
    // 0 -> 40/s over 1 s: 20 opens, the later ones closer together; the
    // 10th is due at sqrt(10/20) s, about 707 ms.
    let ramp = opens(&["-stages", "1s:40"]);
    assert_eq!(ramp.len(), 20, "{ramp:?}");
    let tenth = ramp[9];
    assert!((500.0..900.0).contains(&tenth), "10th open at {tenth} ms");
    // Shard 1 of 4 at 80/s: opens 1, 5, 9, ... of 40: ten, 50 ms apart.
    let shard = opens(&["-rate", "80", "-shard", "1/4"]);
    assert_eq!(shard.len(), 10, "{shard:?}");
    let span = shard[9] - shard[0];
    assert!((300.0..700.0).contains(&span), "10 opens over {span} ms");
}
