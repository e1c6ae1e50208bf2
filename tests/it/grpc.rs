//! gRPC unary calls against the test server's gRPC side (hyper's HTTP/2
//! server, h2c and TLS): exact records at a rate, JSON through a
//! descriptor set, metadata, `grpc-timeout`, every failure as a record,
//! bad targets refused at file:line.

use crate::common;

use std::{fs, path::Path};

use barrage_stream::Hit;
use barrage_testkit::{Server, TestCert};
use common::*;

const METHOD: &str = "/test.echo.Echo/Say";

/// `Hello { name: "ann", times: 2 }` as protobuf bytes.
const HELLO: &[u8] = b"\x0a\x03ann\x10\x02";

fn descriptors() -> String {
    path("fixtures/grpc/echo.pb")
}

/// The targets file `text` (URL standing for the server's base URL)
/// in `dir`, the attack's records and its stderr.
fn call(server: &Server, dir: &Path, text: &str, args: &[&str]) -> (Vec<Hit>, String) {
    let base = server.url("");
    let file = dir.join("targets.http");
    fs::write(&file, text.replace("URL", base.trim_end_matches('/'))).unwrap();
    let mut all = vec!["attack", "-targets", file.to_str().unwrap()];
    all.extend(args);
    let out = run(&all, b"");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let mut hits = decode(&out.stdout);
    hits.sort_by_key(|h| h.seq);
    (hits, err)
}

fn message_file(dir: &Path) -> String {
    let file = dir.join("hello.bin");
    fs::write(&file, HELLO).unwrap();
    file.to_str().unwrap().to_string()
}

#[test]
fn calls_at_a_rate_over_h2c_and_tls_are_exact_records() {
    let dir = tempdir("grpc-rate");
    let msg = message_file(&dir);
    let target = format!("GRPC URL{METHOD}\nx-tenant: t1\n@{msg}\n");
    let cert = TestCert::generate();
    let roots = cert.cert_path.to_str().unwrap().to_string();
    for (server, extra) in [
        (Server::http(), vec![]),
        (Server::https(&cert), vec!["-root-certs", &roots]),
    ] {
        // The closed model first, on a server of its own: two loops, one
        // call after another.
        let closed = if extra.is_empty() {
            Server::http()
        } else {
            Server::https(&cert)
        };
        let mut args = vec!["-rate", "0", "-max-workers", "2", "-requests", "20"];
        args.extend(extra.iter().copied());
        let (hits, _) = call(&closed, &dir, &target, &args);
        assert_eq!(hits.len(), 20);
        assert!(
            hits.iter()
                .all(|h| h.code == 200 && h.error.is_empty() && h.bytes_in == 7),
            "{:?}",
            hits[0]
        );
        let mut args = vec!["-rate", "100", "-requests", "30"];
        args.extend(extra.iter().copied());
        let (mut hits, _) = call(&server, &dir, &target, &args);
        assert_exact_schedule(&mut hits, 10_000_000);
        for h in &hits {
            assert_eq!((h.code, h.error.as_str()), (200, ""), "{h:?}");
            assert_eq!(h.bytes_in, HELLO.len() as u64, "message bytes");
            assert_eq!(h.bytes_out, HELLO.len() as u64, "message bytes");
            assert_eq!(h.method, "GRPC");
            assert!(h.first_byte > 0 && h.first_byte <= h.latency);
        }
        // Without -proto-set, server reflection was asked once, before
        // the calls, with the target's metadata: the file declaring the
        // service, then the one it imports (this server leaves it out).
        let (asked, got): (Vec<_>, Vec<_>) = server
            .received()
            .into_iter()
            .partition(|r| r.path.starts_with("/grpc.reflection.v1."));
        assert_eq!(asked.len(), 2, "{asked:?}");
        assert!(asked.iter().all(|r| r.header("x-tenant") == Some("t1")));
        assert_eq!(got.len(), 30);
        let r = &got[0];
        assert_eq!(
            (r.method.as_str(), r.path.as_str(), r.version.as_str()),
            ("POST", METHOD, "HTTP/2.0")
        );
        assert_eq!(r.header("content-type"), Some("application/grpc"));
        assert_eq!(r.header("te"), Some("trailers"));
        assert_eq!(r.header("x-tenant"), Some("t1"), "metadata");
        assert_eq!(
            r.header("grpc-timeout"),
            Some("30000m"),
            "-timeout's default, 30s"
        );
        let mut framed = vec![0, 0, 0, 0, HELLO.len() as u8];
        framed.extend_from_slice(HELLO);
        assert_eq!(r.body, framed);
    }
}

#[test]
fn json_messages_go_through_the_descriptor_set() {
    let server = Server::http();
    let dir = tempdir("grpc-json");
    let body = dir.join("hello.json");
    fs::write(&body, r#"{"name": "ann", "times": 2}"#).unwrap();
    let target = format!("GRPC URL{METHOD}\n@{}\n", body.display());
    let ps = descriptors();
    let (hits, _) = call(
        &server,
        &dir,
        &target,
        &[
            "-proto-set",
            &ps,
            "-rate",
            "50",
            "-requests",
            "3",
            "-max-body",
            "-1",
        ],
    );
    for h in &hits {
        assert_eq!((h.code, h.error.as_str()), (200, ""));
        assert_eq!(h.body, HELLO, "the echoed message, as protobuf");
    }
    assert_eq!(&server.received()[0].body[5..], HELLO);
    // The JSON target format, with its body inline.
    let json = format!(
        "{{\"method\":\"GRPC\",\"url\":\"{}{METHOD}\",\"body\":\"eyJuYW1lIjoiYW5uIiwidGltZXMiOjJ9\"}}\n",
        server.url("").trim_end_matches('/')
    );
    let out = ok(
        &[
            "attack",
            "-format",
            "json",
            "-proto-set",
            &ps,
            "-rate",
            "50",
            "-requests",
            "2",
        ],
        json.as_bytes(),
    );
    assert!(decode(&out)
        .iter()
        .all(|h| h.code == 200 && h.error.is_empty() && h.bytes_in == 7));
    // Issue 60: -proto compiles the .proto itself (no protoc), as ghz's
    // --proto: the same message goes out.
    let proto = path("fixtures/grpc/echo.proto");
    let before = server.received().len();
    let (hits, _) = call(
        &server,
        &dir,
        &target,
        &["-proto", &proto, "-rate", "50", "-requests", "2"],
    );
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
    let got = server.received();
    assert_eq!(got.len(), before + 2, "no reflection asked");
    assert_eq!(&got[before].body[5..], HELLO);
    // A .proto that does not compile: one line, exit 2.
    let bad = dir.join("bad.proto");
    fs::write(&bad, "syntax = \"proto3\";\nmessage A { Nope b = 1; }\n").unwrap();
    let file = dir.join("t.http");
    fs::write(&file, target.replace("URL", "http://127.0.0.1:1")).unwrap();
    let err = refused(
        &[
            "attack",
            "-targets",
            file.to_str().unwrap(),
            "-proto",
            bad.to_str().unwrap(),
        ],
        b"",
        "-proto ",
    );
    assert!(err.contains("Nope"), "{err}");
}

#[test]
fn every_failure_is_a_record_naming_its_status() {
    let server = Server::http();
    let dir = tempdir("grpc-fail");
    let msg = message_file(&dir);
    let targets = format!(
        "GRPC URL{METHOD}\nx-grpc-status: 14\nx-grpc-message: upstream down\n@{msg}\n\n\
         GRPC URL{METHOD}\nx-trailers-only: 1\nx-grpc-status: 7\n@{msg}\n\n\
         GRPC URL/test.echo.Echo/Say\nx-reply-bytes: 5000000\n@{msg}\n\n\
         GRPC URL/test.echo.Gone/Call\n@{msg}\n\n\
         GRPC URL{METHOD}\nx-reset: 1\n@{msg}\n\n\
         GRPC URL{METHOD}\nx-delay-ms: 2000\n@{msg}\n\n\
         GRPC URL{METHOD}\nx-gzip: 1\nx-reply-bytes: 1000\n@{msg}\n"
    );
    let (hits, _) = call(
        &server,
        &dir,
        &targets,
        &["-rate", "50", "-requests", "7", "-timeout", "300ms"],
    );
    let got: Vec<(u16, &str)> = hits.iter().map(|h| (h.code, h.error.as_str())).collect();
    assert_eq!(got[0], (200, "grpc-status 14 (UNAVAILABLE): upstream down"));
    assert_eq!(got[1], (200, "grpc-status 7 (PERMISSION_DENIED)"));
    assert_eq!(
        got[2],
        (200, "grpc-status 8 (RESOURCE_EXHAUSTED): grpc: received message larger than max (5000000 vs. 4194304)")
    );
    assert_eq!(
        got[3],
        (200, "grpc-status 12 (UNIMPLEMENTED): unknown method")
    );
    assert_eq!(got[4].0, 0, "a reset stream: {:?}", got[4]);
    assert!(got[4].1.contains(METHOD), "{:?}", got[4]);
    assert_eq!(got[5].0, 0);
    assert!(
        got[5].1.ends_with("timeout after 300ms (-timeout)"),
        "{:?}",
        got[5]
    );
    assert_eq!(got[6], (200, ""), "a gzip answer, decompressed");
    assert_eq!(hits[6].bytes_in, 1000);
    let calls: Vec<_> = server
        .received()
        .into_iter()
        .filter(|r| !r.path.starts_with("/grpc.reflection."))
        .collect();
    assert_eq!(calls[5].header("grpc-timeout"), Some("300m"));
    // A raised limit lets the large answer through.
    let big = format!("GRPC URL{METHOD}\nx-reply-bytes: 5000000\n@{msg}\n");
    let (hits, _) = call(
        &server,
        &dir,
        &big,
        &["-rate", "10", "-requests", "1", "-grpc-max-message", "8MiB"],
    );
    assert_eq!(
        (hits[0].code, hits[0].error.as_str(), hits[0].bytes_in),
        (200, "", 5_000_000)
    );
}

/// Issue 29: each of these counted as success; grpc-go and ghz call each
/// an error, and so does barrage, with grpc-go's code and words. An
/// endless answer after a small message is cut at the second prefix (it
/// was buffered whole: 4.2 GB in 10 s).
#[test]
fn wrong_answers_are_failures_as_grpc_go_says() {
    let server = Server::http();
    let dir = tempdir("grpc-wrong");
    let msg = message_file(&dir);
    let faults = [
        ("http-204", 204, "grpc-status 2 (UNKNOWN): unexpected HTTP status code received from server: 204 (No Content); transport: received unexpected content-type \"text/html\""),
        ("http-302", 302, "grpc-status 2 (UNKNOWN): unexpected HTTP status code received from server: 302 (Found); transport: received unexpected content-type \"text/html\""),
        ("short", 200, "grpc-status 13 (INTERNAL): grpc: the answer ended inside its message (10 of 100 bytes)"),
        ("stub", 200, "grpc-status 13 (INTERNAL): grpc: the answer ended inside a message's prefix (3 of 5 bytes)"),
        ("flag2", 200, "grpc-status 13 (INTERNAL): grpc: received unexpected payload format 2"),
        ("html", 200, "grpc-status 2 (UNKNOWN): transport: received unexpected content-type \"text/html\""),
        ("two", 200, "grpc-status 13 (INTERNAL): cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message"),
        ("none", 200, "grpc-status 13 (INTERNAL): cardinality violation: received no response message from non-server-streaming RPC"),
        ("flood", 200, "grpc-status 13 (INTERNAL): cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message"),
    ];
    let targets: Vec<String> = faults
        .iter()
        .map(|(f, _, _)| format!("GRPC URL{METHOD}\nx-fault: {f}\n@{msg}\n"))
        .collect();
    let n = faults.len().to_string();
    let (hits, _) = call(
        &server,
        &dir,
        &targets.join("\n"),
        &["-rate", "100", "-requests", &n, "-timeout", "5s"],
    );
    assert_eq!(hits.len(), faults.len());
    for (hit, (fault, code, error)) in hits.iter().zip(faults) {
        assert_eq!((hit.code, hit.error.as_str()), (code, error), "{fault}");
    }
    // Every one of them a failure in the report.
    let file = dir.join("wrong.bin");
    let again = run(
        &[
            "attack",
            "-targets",
            dir.join("targets.http").to_str().unwrap(),
            "-rate",
            "100",
            "-requests",
            &n,
            "-output",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert!(again.status.success());
    let json = run(&["report", "-type", "json", file.to_str().unwrap()], b"");
    let text = String::from_utf8_lossy(&json.stdout);
    assert!(text.contains("\"success\":0,"), "{text}");
}

#[test]
fn reports_count_grpc_failures_and_group_them() {
    let server = Server::http();
    let dir = tempdir("grpc-report");
    let msg = message_file(&dir);
    let targets =
        format!("GRPC URL{METHOD}\n@{msg}\n\nGRPC URL{METHOD}\nx-grpc-status: 14\n@{msg}\n");
    let file = dir.join("t.http");
    fs::write(
        &file,
        targets.replace("URL", server.url("").trim_end_matches('/')),
    )
    .unwrap();
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
    let groups = report_groups(&stream, "grpc-status");
    let find = |g: &str| group(&groups, g);
    assert_eq!(find("0 OK")["requests"], 5);
    assert_eq!(find("0 OK")["success"], 1.0);
    assert_eq!(find("14 UNAVAILABLE")["requests"], 5);
    assert_eq!(find("14 UNAVAILABLE")["success"], 0.0);
    let out = ok(&["report"], &stream);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("Success       [ratio]                           50.00%"),
        "{text}"
    );
    assert!(
        text.contains("Error Set:\ngrpc-status 14 (UNAVAILABLE)"),
        "{text}"
    );
}

#[test]
fn bad_grpc_targets_are_refused_at_file_and_line() {
    let dir = tempdir("grpc-bad");
    let file = dir.join("t.http");
    let msg = message_file(&dir);
    fs::write(
        &file,
        format!("GET http://127.0.0.1:1/\n\nGRPC http://127.0.0.1:1/NoMethod\n@{msg}\n"),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    refused(
        &["attack", "-targets", f, "-rate", "1"],
        b"",
        &format!("{f}:3: GRPC http://127.0.0.1:1/NoMethod: the URL must name the method"),
    );
    let json = dir.join("m.json");
    fs::write(&json, r#"{"name": "ann"}"#).unwrap();
    fs::write(
        &file,
        format!("GRPC http://127.0.0.1:1{METHOD}\n@{}\n", json.display()),
    )
    .unwrap();
    // Without -proto-set the server's reflection is asked, before the
    // clock: one that cannot be reached, or does not know the service, or
    // has no reflection, is refused naming the service.
    refused(
        &["attack", "-targets", f, "-rate", "1"],
        b"",
        &format!("{f}:1: GRPC http://127.0.0.1:1{METHOD}: server reflection for service test.echo.Echo failed (give -proto-set FILE instead): "),
    );
    let server = Server::http();
    // A JSON body needs the schema: refused when reflection fails.
    fs::write(
        &file,
        format!(
            "GRPC {}\nx-no-reflection: 1\n@{}\n",
            server.url(METHOD),
            json.display()
        ),
    )
    .unwrap();
    refused(
        &["attack", "-targets", f, "-rate", "1"],
        b"",
        "server reflection for service test.echo.Echo failed (give -proto-set FILE instead): grpc-status 12 (UNIMPLEMENTED)",
    );
    // Issue 60: a binary body is the message already; without reflection
    // (production servers often turn it off) it is sent as it is, the
    // method taken as unary, with one note.
    for (target, says, code) in [
        (
            format!("GRPC {}\n@{msg}\n", server.url("/other.Svc/Call")),
            "server reflection for service other.Svc failed (give -proto-set FILE instead): service other.Svc: not found (NOT_FOUND)",
            "UNIMPLEMENTED",
        ),
        (
            format!("GRPC {}\nx-no-reflection: 1\n@{msg}\n", server.url(METHOD)),
            "server reflection for service test.echo.Echo failed (give -proto-set FILE instead): grpc-status 12 (UNIMPLEMENTED)",
            "",
        ),
    ] {
        fs::write(&file, target).unwrap();
        let out = run(&["attack", "-targets", f, "-rate", "10", "-requests", "2"], b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(err.matches("the body is sent as it is").count(), 1, "{err}");
        let hits = decode(&out.stdout);
        assert_eq!(hits.len(), 2);
        for h in &hits {
            assert!(h.error.contains(code), "{h:?}");
            assert_eq!(h.error.is_empty(), code.is_empty(), "{h:?}");
        }
    }
    fs::write(
        &file,
        format!("GRPC http://127.0.0.1:1{METHOD}\n@{}\n", json.display()),
    )
    .unwrap();
    fs::write(&json, r#"{"name": 5, "nope": 1}"#).unwrap();
    let ps = descriptors();
    refused(
        &["attack", "-targets", f, "-proto-set", &ps, "-rate", "1"],
        b"",
        &format!("{f}:1: GRPC http://127.0.0.1:1{METHOD}: the body is not a test.echo.Hello"),
    );
    refused(
        &["attack", "-targets", f, "-proto-set", f, "-rate", "1"],
        b"",
        "not a descriptor set",
    );
}

#[test]
fn max_header_bytes_bounds_a_grpc_answer_s_headers() {
    let server = Server::http();
    let dir = tempdir("grpc-head");
    let msg = message_file(&dir);
    let target = format!("GRPC URL{METHOD}\nx-header-bytes: 30000\n@{msg}\n");
    // 30 KB of headers: over hyper's 16 KiB, within barrage's 64 KiB
    // default for -max-header-bytes.
    let (hits, _) = call(&server, &dir, &target, &["-rate", "10", "-requests", "1"]);
    assert_eq!((hits[0].code, hits[0].error.as_str()), (200, ""));
    // Within 8 KB: an error record.
    let (hits, _) = call(
        &server,
        &dir,
        &target,
        &["-rate", "10", "-requests", "1", "-max-header-bytes", "8KB"],
    );
    assert_eq!(hits[0].code, 0, "{:?}", hits[0].error);
    assert!(hits[0].error.contains("http2 error"), "{:?}", hits[0].error);
}
