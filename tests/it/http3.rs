//! HTTP/3 end to end (issue 30): `-http3` against testkit's quinn + h3
//! server: every route, bodies both ways, many streams on one
//! connection, the server's faults as records, certificates, `-timeout`.

use crate::common;

use barrage_stream::Hit;
use barrage_testkit::{H3Server, TestCert};
use common::*;

/// `attack -http3` trusting `cert`, the targets on stdin, `args` after;
/// the records in sequence order.
fn attack_h3(cert: &TestCert, targets: &str, args: &[&str]) -> Vec<Hit> {
    let roots = cert.cert_path.to_str().unwrap();
    let mut all = vec!["attack", "-http3", "-root-certs", roots];
    all.extend_from_slice(args);
    let mut hits = decode(&ok(&all, targets.as_bytes()));
    assert_seq_complete(&mut hits);
    hits
}

#[test]
fn every_route_answers_over_http3() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let targets = [
        ("/", 200, "hello\n"),
        ("/status/503", 503, "status 503\n"),
        ("/redirect/2", 200, "landed\n"),
        ("/bytes/10", 200, "xxxxxxxxxx"),
        ("/nowhere", 404, "not found\n"),
    ];
    for (path, code, body) in targets {
        let t = format!("GET {}\n", server.url(path));
        let hits = attack_h3(
            &cert,
            &t,
            &["-rate", "100", "-requests", "3", "-max-body", "-1"],
        );
        assert_eq!(hits.len(), 3, "{path}");
        for h in &hits {
            assert_eq!(h.code, code, "{path}: {}", h.error);
            assert_eq!(String::from_utf8_lossy(&h.body), body, "{path}");
            assert_eq!(h.error.is_empty(), code < 400, "{path}: {}", h.error);
        }
    }
    let seen = server.received();
    assert!(
        seen.iter().all(|r| r.version == "HTTP/3.0"),
        "{:?}",
        seen[0]
    );
    // Three of each path, and the two hops of each redirect.
    assert_eq!(server.count(), 3 * 5 + 3 * 2);
    let dump = ok(
        &["dump", "-dumper", "json"],
        &ok(
            &[
                "attack",
                "-http3",
                "-insecure",
                "-rate",
                "100",
                "-requests",
                "1",
            ],
            format!("GET {}\n", server.url("/")).as_bytes(),
        ),
    );
    let line = String::from_utf8(dump).unwrap();
    assert!(line.contains("\"proto\":\"HTTP/3\""), "{line}");
}

#[test]
fn a_mebibyte_goes_up_and_comes_down() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let dir = tempdir("h3-body");
    let body = dir.join("mib");
    std::fs::write(&body, vec![b'y'; 1 << 20]).unwrap();
    let t = format!(
        "POST {}\n@{}\n\nGET {}\n",
        server.url("/echo"),
        body.display(),
        server.url("/bytes/1048576")
    );
    let hits = attack_h3(
        &cert,
        &t,
        &["-rate", "100", "-requests", "4", "-max-body", "0"],
    );
    for h in &hits {
        assert_eq!((h.code, h.error.as_str()), (200, ""));
        assert_eq!(h.bytes_in, 1 << 20, "{} {}", h.method, h.url);
    }
    let posts: Vec<_> = hits.iter().filter(|h| h.method == "POST").collect();
    assert_eq!(posts.len(), 2);
    assert!(posts.iter().all(|h| h.bytes_out == 1 << 20));
    let seen = server.received();
    assert!(seen
        .iter()
        .filter(|r| r.method == "POST")
        .all(|r| r.body.len() == 1 << 20));
}

/// 100 requests in flight at once share one QUIC connection, each its
/// own stream; `-h3-streams` caps how many are in flight.
#[test]
fn a_hundred_streams_share_one_connection() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let t = format!("GET {}\n", server.url("/sleep/300"));
    let hits = attack_h3(
        &cert,
        &t,
        &[
            "-cpus",
            "1",
            "-rate",
            "0",
            "-max-workers",
            "100",
            "-requests",
            "100",
        ],
    );
    let bad = hits
        .iter()
        .filter(|h| h.code != 200 || !h.error.is_empty())
        .count();
    eprintln!(
        "DEBUG bad {bad} conns {} most {}",
        server.connections(),
        server.most_at_once()
    );
    assert_eq!(bad, 0);
    assert_eq!(server.connections(), 1, "one QUIC connection");
    assert_eq!(server.most_at_once(), 100, "all at once");

    let capped = H3Server::start(&cert);
    let t = format!("GET {}\n", capped.url("/sleep/100"));
    let hits = attack_h3(
        &cert,
        &t,
        &[
            "-cpus",
            "1",
            "-rate",
            "0",
            "-max-workers",
            "40",
            "-requests",
            "40",
            "-h3-streams",
            "10",
        ],
    );
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
    assert_eq!(capped.most_at_once(), 10, "-h3-streams 10");
}

/// A stream reset, a refused stream and a closed connection are each a
/// record with an error naming the HTTP/3 code; the other requests go on.
#[test]
fn the_servers_faults_are_records_in_words() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let t = format!(
        "GET {}\nGET {}\nGET {}\nGET {}\n",
        server.url("/h3/reset"),
        server.url("/h3/refuse"),
        server.url("/"),
        server.url("/h3/close"),
    );
    let hits = attack_h3(&cert, &t, &["-cpus", "1", "-rate", "20", "-requests", "8"]);
    assert_eq!(hits.len(), 8);
    for h in &hits {
        let path = h.url.rsplit_once(':').unwrap().1;
        let want = match path.split_once('/').unwrap().1 {
            "h3/reset" => "stream reset by server: H3_REQUEST_CANCELLED (0x10c)",
            "h3/refuse" => "stream reset by server: H3_REQUEST_REJECTED (0x10b)",
            "h3/close" => "connection closed by server: CONNECTION_CLOSE H3_INTERNAL_ERROR (0x102)",
            _ => "",
        };
        if want.is_empty() {
            assert_eq!((h.code, h.error.as_str()), (200, ""), "{}", h.url);
        } else {
            assert_eq!(h.code, 0, "{}", h.url);
            assert!(h.error.contains(want), "{}: {}", h.url, h.error);
            assert!(h.error.starts_with("Get \""), "{}", h.error);
        }
    }
    // Each close costs a connection; the next request opens another.
    assert!(server.connections() >= 2);
}

#[test]
fn a_host_without_quic_is_named() {
    let silent = H3Server::silent();
    let t = format!("GET {}\n", silent.url("/"));
    let hits = decode(&ok(
        &[
            "attack",
            "-http3",
            "-insecure",
            "-rate",
            "100",
            "-requests",
            "1",
        ],
        t.as_bytes(),
    ));
    assert_eq!(hits.len(), 1);
    let want = format!("no QUIC answer from {} within 5s", silent.addr());
    assert!(hits[0].error.ends_with(&want), "{}", hits[0].error);
    assert_eq!(hits[0].code, 0);
}

#[test]
fn a_certificate_for_another_name_is_refused_unless_insecure() {
    let cert = TestCert::wrong_name();
    let server = H3Server::start(&cert);
    let t = format!("GET {}\n", server.url("/"));
    let ca = cert.ca_path().unwrap();
    let args = [
        "attack",
        "-http3",
        "-root-certs",
        ca.to_str().unwrap(),
        "-rate",
        "100",
        "-requests",
        "2",
    ];
    let hits = decode(&ok(&args, t.as_bytes()));
    assert_eq!(hits.len(), 2);
    let want = "tls: failed to verify certificate: x509: certificate is valid for example.invalid, not 127.0.0.1";
    for h in &hits {
        assert_eq!(h.code, 0);
        assert!(h.error.ends_with(want), "{}", h.error);
    }
    let hits = decode(&ok(
        &[
            "attack",
            "-http3",
            "-insecure",
            "-rate",
            "100",
            "-requests",
            "2",
        ],
        t.as_bytes(),
    ));
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
}

#[test]
fn timeout_ends_a_slow_answer() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let t = format!(
        "GET {}\nGET {}\n",
        server.url("/sleep/3000"),
        server.url("/")
    );
    let hits = attack_h3(
        &cert,
        &t,
        &["-rate", "100", "-requests", "2", "-timeout", "300ms"],
    );
    let slow = hits
        .iter()
        .find(|h| h.url.ends_with("/sleep/3000"))
        .unwrap();
    assert_eq!(slow.code, 0);
    assert!(
        slow.error.ends_with("timeout after 300ms (-timeout)"),
        "{}",
        slow.error
    );
    let fast = hits.iter().find(|h| h.url.ends_with('/')).unwrap();
    assert_eq!((fast.code, fast.error.as_str()), (200, ""));
}

/// With `-session-tickets`, connections after the first resume their
/// TLS session and send in 0-RTT.
#[test]
fn session_tickets_resume_in_zero_rtt() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let t = format!("GET {}\n", server.url("/"));
    let hits = attack_h3(
        &cert,
        &t,
        &[
            "-cpus",
            "1",
            "-session-tickets",
            "-keepalive=false",
            "-rate",
            "20",
            "-requests",
            "5",
        ],
    );
    assert!(
        hits.iter().all(|h| h.code == 200 && h.error.is_empty()),
        "{:?}",
        hits[0].error
    );
    assert_eq!(server.connections(), 5);
    assert!(
        server.early_data_sessions() >= 3,
        "{} in 0-RTT",
        server.early_data_sessions()
    );
}

/// One attack over HTTP/1.1, HTTP/2 and HTTP/3 at once: each record keeps
/// its protocol, `report -by proto` groups by it and `dump` names it.
#[test]
fn report_by_proto_separates_the_versions() {
    let cert = TestCert::generate();
    let h3 = H3Server::start(&cert);
    let plain = barrage_testkit::Server::http();
    let t = format!("GET {}\nGET {}\n", h3.url("/"), plain.url("/"));
    let args = [
        "attack",
        "-http3",
        "-insecure",
        "-rate",
        "100",
        "-requests",
        "6",
    ];
    let stream = ok(&args, t.as_bytes());
    let groups = report_groups(&stream, "proto");
    assert_eq!(group(&groups, "HTTP/3")["requests"], 3, "{}", groups.1);
    assert_eq!(group(&groups, "HTTP/1.1")["requests"], 3, "{}", groups.1);
    let h2c = ok(
        &["attack", "-h2c", "-rate", "100", "-requests", "2"],
        format!("GET {}\n", plain.url("/")).as_bytes(),
    );
    let groups = report_groups(&h2c, "proto");
    assert_eq!(group(&groups, "HTTP/2")["requests"], 2, "{}", groups.1);
    // The JSON dump names it, and reads it back.
    let json = ok(&["dump", "-dumper", "json"], &stream);
    let text = String::from_utf8_lossy(&json);
    assert_eq!(text.matches("\"proto\":\"HTTP/3\"").count(), 3, "{text}");
    let back = report_groups(&json, "proto");
    assert_eq!(group(&back, "HTTP/1.1")["requests"], 3, "{}", back.1);
}

/// What works for HTTP/2 works for HTTP/3: -stages, -shard, -check, a
/// template, the closed model, and sweep's steps.
#[test]
fn http3_takes_what_http2_takes() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let t = format!("GET {}\n", server.url("/"));
    // A ramp 0 -> 40/s over 1 s: 20 requests.
    let hits = attack_h3(&cert, &t, &["-stages", "1s:40"]);
    assert_eq!(hits.len(), 20);
    // Shard 1 of 2 of 10 requests: five, numbered as in the whole.
    let roots = cert.cert_path.to_str().unwrap();
    let args = [
        "attack",
        "-http3",
        "-root-certs",
        roots,
        "-rate",
        "100",
        "-requests",
        "10",
        "-shard",
        "1/2",
    ];
    let mut seqs: Vec<u64> = decode(&ok(&args, t.as_bytes()))
        .iter()
        .map(|h| h.seq)
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, [1, 3, 5, 7, 9]);
    // A check that fails is a failure of every record.
    let hits = attack_h3(
        &cert,
        &t,
        &["-rate", "100", "-requests", "3", "-check", "body~^bye"],
    );
    assert!(
        hits.iter().all(|h| h.error.starts_with("check failed: ")),
        "{}",
        hits[0].error
    );
    // A template: a path per request from -feed.
    let dir = tempdir("h3-feed");
    let feed = dir.join("feed.csv");
    std::fs::write(&feed, "n\n1\n2\n3\n").unwrap();
    let tmpl = format!("GET {}\n", server.url("/bytes/{{n}}"));
    let hits = attack_h3(
        &cert,
        &tmpl,
        &[
            "-rate",
            "100",
            "-requests",
            "3",
            "-feed",
            feed.to_str().unwrap(),
        ],
    );
    let mut sizes: Vec<u64> = hits.iter().map(|h| h.bytes_in).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [1, 2, 3]);
    // The closed model.
    let hits = attack_h3(
        &cert,
        &t,
        &["-rate", "0", "-max-workers", "4", "-requests", "40"],
    );
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
    // sweep: two steps of half a second.
    let out = run(
        &[
            "sweep",
            "-http3",
            "-root-certs",
            roots,
            "-rates",
            "20,40",
            "-step-duration",
            "500ms",
            "-type",
            "csv",
        ],
        t.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = String::from_utf8_lossy(&out.stdout).lines().count();
    assert_eq!(
        rows,
        3,
        "a header and two steps: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(server.received().iter().all(|r| r.version == "HTTP/3.0"));
}

/// A burst of more requests than a worker opens connections at once
/// (16), before the first connection is up: over HTTP/2 the ones beyond
/// waited for a connection given back, which a shared one never is, and
/// timed out (68 of 100). Every one is answered now, over HTTP/2 and 3.
#[test]
fn a_burst_before_the_first_connection_is_answered() {
    let cert = TestCert::generate();
    let h2 = barrage_testkit::Server::https(&cert);
    let h3 = H3Server::start(&cert);
    for (url, http3) in [(h2.url("/sleep/300"), false), (h3.url("/sleep/300"), true)] {
        let mut args = vec!["attack", "-insecure", "-cpus", "1", "-rate", "0"];
        args.extend(["-max-workers", "100", "-requests", "100", "-timeout", "10s"]);
        if http3 {
            args.push("-http3");
        }
        let hits = decode(&ok(&args, format!("GET {url}\n").as_bytes()));
        let bad = hits.iter().filter(|h| h.code != 200).count();
        assert_eq!(
            (hits.len(), bad),
            (100, 0),
            "{url}: {:?}",
            hits.iter().find(|h| h.code != 200)
        );
    }
}

/// Bad input is one line and exit 2: -http3 with a Unix socket, a
/// `proto` no barrage writes in JSON results, an unknown -by.
#[test]
fn bad_http3_input_is_refused_in_one_line() {
    refused(
        &[
            "attack",
            "-http3",
            "-unix-socket",
            "/nonexistent.sock",
            "-rate",
            "1",
            "-requests",
            "1",
        ],
        b"GET https://127.0.0.1:1/\n",
        "-http3 goes over UDP (QUIC): it does not take -unix-socket",
    );
    let line = br#"{"code":200,"timestamp":"2026-01-01T00:00:00Z","latency":1,"proto":"HTTP/9"}"#;
    // report still reports the records before the bad line (none here).
    let out = run(&["report"], line);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("line 1") && stderr.contains("unknown \"proto\" \"HTTP/9\""),
        "{stderr}"
    );
    refused(
        &["report", "-by", "protocol"],
        b"",
        "use url, method, code, attack, error, grpc-status, proto, name, remote, conn, step or phase",
    );
}

/// Issue 60: an answer whose body differs from its content-length is
/// malformed (RFC 9114 §4.1.2), a failure as over HTTP/2, where a body of
/// 1 MiB for `content-length: 10` was a 200; the connection serves on.
#[test]
fn a_body_that_belies_its_content_length_fails() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let t = format!(
        "GET {}\nGET {}\nGET {}\n",
        server.url("/h3/long"),
        server.url("/h3/short"),
        server.url("/"),
    );
    let hits = attack_h3(&cert, &t, &["-cpus", "1", "-rate", "30", "-requests", "9"]);
    for h in &hits {
        if h.url.ends_with("/h3/long") {
            assert_eq!(h.code, 0, "{h:?}");
            assert!(
                h.error.contains("body longer than its content-length (10)"),
                "{}",
                h.error
            );
        } else if h.url.ends_with("/h3/short") {
            assert_eq!(h.code, 0, "{h:?}");
            assert!(
                h.error
                    .contains("body of 10 bytes, content-length 100: unexpected EOF"),
                "{}",
                h.error
            );
        } else {
            assert_eq!((h.code, h.error.as_str()), (200, ""), "{}", h.url);
        }
    }
    assert_eq!(server.connections(), 1, "one connection served them all");
    // Issue 60: the connection's record names its real local address, and
    // an IP literal took no DNS lookup.
    let first = hits
        .iter()
        .find_map(|h| h.link.filter(|l| l.is_new()))
        .expect("a record that opened the connection");
    let local = first.local.expect("a local address");
    assert!(local.ip().is_loopback(), "{local}");
    assert_eq!(first.dns, 0, "{first:?}");
}

/// Issue 60: a request ended by its timeout is cancelled alone (its
/// stream reset, not finished mid-frame: the server then failed the
/// whole connection); the others on its connection go on. Both an
/// upload cut short and an answer that never ends.
#[test]
fn a_timeout_cancels_its_stream_not_the_connection() {
    let cert = TestCert::generate();
    let server = H3Server::start(&cert);
    let dir = tempdir("h3-cancel");
    let big = dir.join("big.bin");
    std::fs::write(&big, vec![b'x'; 128 << 20]).unwrap();
    // The upload, or else the answer's 3 s, outlasts -timeout.
    let mut t = format!(
        "POST {}\n@{}\n\nGET {}\n",
        server.url("/sleep/3000"),
        big.display(),
        server.url("/h3/endless")
    );
    for _ in 0..18 {
        t.push_str(&format!("GET {}\n", server.url("/")));
    }
    let args = [
        "-cpus",
        "1",
        "-rate",
        "20",
        "-requests",
        "20",
        "-timeout",
        "300ms",
    ];
    let hits = attack_h3(&cert, &t, &args);
    for cut in &hits[..2] {
        assert_eq!(cut.code, 0);
        assert!(
            cut.error.ends_with("timeout after 300ms (-timeout)"),
            "{}",
            cut.error
        );
    }
    for h in &hits[2..] {
        assert_eq!((h.code, h.error.as_str()), (200, ""), "{}", h.seq);
    }
    assert_eq!(
        server.connections(),
        1,
        "the connection outlived the timeouts"
    );
}
