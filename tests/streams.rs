//! `-stream`: answers read event by event (SSE, NDJSON, chunks), each
//! event stamped, the report's "events" figures, LLM-style filtering, and
//! streams cut by the server, by `-timeout` and by an endless event.

mod common;

use barrage_stream::Hit;
use barrage_testkit::{RawServer, Script, Server};
use common::{decode, run};
use serde_json::Value;

const MS: u64 = 1_000_000;

fn timed() -> std::sync::MutexGuard<'static, ()> {
    common::one_at_a_time()
}

/// An attack of `rate` for 1 s on `target` with `args`: its records.
fn attack_stream(target: &str, args: &[&str]) -> Vec<Hit> {
    let mut all = vec!["attack", "-duration", "1s", "-timeout", "5s"];
    all.extend_from_slice(args);
    let out = run(&all, format!("{target}\n").as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    decode(&out.stdout)
}

/// `hits` as a stream.
fn encode(hits: &[Hit]) -> Vec<u8> {
    let mut enc = barrage_stream::Encoder::new(Vec::new()).unwrap();
    for h in hits {
        enc.write(h).unwrap();
    }
    enc.finish().unwrap()
}

fn report_json(hits: &[Hit]) -> Value {
    let out = run(&["report", "-type", "json"], &encode(hits));
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

fn near(got: &Value, want_ms: u64, tolerance_ms: u64) {
    let got = got.as_u64().unwrap_or_else(|| panic!("{got}"));
    assert!(
        got.abs_diff(want_ms * MS) <= tolerance_ms * MS,
        "{} ms, want {want_ms} ± {tolerance_ms} ms",
        got as f64 / MS as f64
    );
}

#[test]
fn sse_events_are_stamped_one_by_one() {
    let _one = timed();
    let server = Server::http();
    for proto in [&[][..], &["-h2c"][..]] {
        let target = format!("GET {}", server.url("/sse/20/50/200"));
        let mut args = vec!["-rate", "4", "-stream", "sse"];
        args.extend_from_slice(proto);
        let hits = attack_stream(&target, &args);
        assert_eq!(hits.len(), 4);
        for h in &hits {
            assert!(h.error.is_empty(), "{}", h.error);
            assert_eq!((h.events.len(), h.event_count), (20, 20));
            assert!(h.events.windows(2).all(|w| w[0] <= w[1]));
            assert!(*h.events.last().unwrap() <= h.latency);
        }
        let r = report_json(&hits);
        let e = &r["events"];
        assert_eq!(e["total"], 80, "{e}");
        assert_eq!(e["streams"], 4);
        assert_eq!(e["per_record"]["max"], 20);
        assert_eq!(e["cut"], 0);
        // The issue's 5 ms. The test server's events go out on testkit's
        // pacer (a thread's sleep): on tokio's timer they came at up to
        // 206.4 ms in loaded runs, by hand 201.3-203.4 ms; on the pacer
        // 201.5 ms by hand.
        near(&e["first"]["50th"], 200, 5);
        near(&e["gap"]["50th"], 50, 5);
        let rate = e["per_second"]["50th"].as_f64().unwrap();
        assert!((rate - 20.0).abs() < 1.0, "{rate}");
    }
}

#[test]
fn http3_streams_are_stamped_too() {
    let _one = timed();
    let cert = barrage_testkit::TestCert::generate();
    let server = barrage_testkit::H3Server::start(&cert);
    let target = format!("GET {}", server.url("/sse/10/50/100"));
    let roots = cert.cert_path.to_str().unwrap();
    let hits = attack_stream(
        &target,
        &[
            "-http3",
            "-root-certs",
            roots,
            "-rate",
            "2",
            "-stream",
            "sse",
        ],
    );
    assert_eq!(hits.len(), 2);
    for h in &hits {
        assert!(h.error.is_empty(), "{}", h.error);
        assert_eq!((h.events.len(), h.event_count), (10, 10));
    }
    let e = &report_json(&hits)["events"];
    near(&e["first"]["50th"], 100, 10);
    near(&e["gap"]["50th"], 50, 10);
}

#[test]
fn ndjson_chunks_and_auto() {
    let _one = timed();
    let server = Server::http();
    for (path, mode) in [
        ("/ndjson/5/20/50", "ndjson"),
        ("/chunks/5/20/50", "chunks"),
        ("/ndjson/5/20/50", "auto"),
        ("/sse-ka/5/20/50", "auto"),
    ] {
        let target = format!("GET {}", server.url(path));
        let hits = attack_stream(&target, &["-rate", "2", "-stream", mode]);
        for h in &hits {
            assert_eq!(h.event_count, 5, "{path} {mode}: {:?}", h.events);
        }
    }
    // Lines that are no SSE field are skipped and counted, never fatal.
    let hits = attack_stream(
        &format!("GET {}", server.url("/sse-bad/5/10/10")),
        &["-rate", "2", "-stream", "sse"],
    );
    for h in &hits {
        assert!(h.error.is_empty(), "{}", h.error);
        assert_eq!((h.event_count, h.event_malformed), (5, 5));
    }
    let r = report_json(&hits);
    assert_eq!(r["events"]["malformed"], 5 * hits.len() as u64, "{r}");
    let text = String::from_utf8_lossy(&common::ok(&["dump", "-dumper", "json"], &encode(&hits)))
        .into_owned();
    assert!(text.contains("\"event_malformed\":5"), "{text}");
    // The closed model's loops read streams too.
    let hits = attack_stream(
        &format!("GET {}", server.url("/sse/5/20/20")),
        &["-rate", "0", "-max-workers", "2", "-stream", "sse"],
    );
    assert!(hits.len() >= 4 && hits.iter().all(|h| h.event_count == 5));
    // Without -stream nothing changes: no events.
    let hits = attack_stream(
        &format!("GET {}", server.url("/sse/3/10/10")),
        &["-rate", "2"],
    );
    assert!(hits
        .iter()
        .all(|h| h.events.is_empty() && h.event_count == 0));
    let r = report_json(&hits);
    assert!(r.get("events").is_none());
}

#[test]
fn an_llm_stream_counts_its_tokens() {
    let _one = timed();
    let server = Server::http();
    let target = format!(
        "POST {}\nContent-Type: application/json\n@{}",
        server.url("/v1/chat/completions"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/targets/chat.json")
    );
    let filtered = attack_stream(
        &target,
        &[
            "-rate",
            "2",
            "-stream",
            "sse",
            "-event-filter",
            ".choices[0].delta.content",
        ],
    );
    let all = attack_stream(&target, &["-rate", "2", "-stream", "sse"]);
    for h in &filtered {
        assert_eq!(h.event_count, 10, "{:?}", h.events);
        // The first token is due 120 ms after the request arrives, the
        // role 100 ms after: a stamp of at least 120 ms is the token's.
        // The server's clock starts after the client's, and a loaded
        // machine runs it late (CI: all ten stamps 16 ms late), so the
        // top of the range is loose.
        assert!(
            (120 * MS..170 * MS).contains(&h.events[0]),
            "{:?}",
            h.events
        );
    }
    // The role, 10 tokens, the finish and [DONE].
    assert!(all.iter().all(|h| h.event_count == 13));
    let r = report_json(&filtered);
    let first = r["events"]["first"]["50th"].as_u64().unwrap();
    assert!((120 * MS..170 * MS).contains(&first), "{first}");
    near(&r["events"]["gap"]["50th"], 20, 5);
}

#[test]
fn cut_streams_keep_their_events() {
    let _one = timed();
    // The server closes after three events, mid-stream.
    let raw = RawServer::start(Script::Reply {
        bytes: b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n9\r\ndata: 3\n\n\r\n4\r\ndata",
        trickle: false,
        close: true,
    });
    let hits = attack_stream(
        &format!("GET {}", raw.url("/")),
        &["-rate", "2", "-stream", "sse"],
    );
    for h in &hits {
        assert_eq!(h.event_count, 3);
        assert!(
            h.error.starts_with("stream cut after 3 events: "),
            "{}",
            h.error
        );
    }
    let r = report_json(&hits);
    assert_eq!(r["events"]["cut"], hits.len());
    assert!(r["success"].as_f64().unwrap() == 0.0);

    // A stream that never ends ends at -timeout, its events kept.
    let server = Server::http();
    let endless = format!("GET {}", server.url("/sse-endless/50"));
    let out = run(
        &[
            "attack",
            "-rate",
            "2",
            "-duration",
            "1s",
            "-timeout",
            "500ms",
            "-stream",
            "sse",
        ],
        format!("{endless}\n").as_bytes(),
    );
    for h in decode(&out.stdout) {
        assert!((8..=10).contains(&h.event_count), "{}", h.event_count);
        assert!(
            h.error
                .starts_with(&format!("stream cut after {} events: ", h.event_count)),
            "{}",
            h.error
        );
        assert!(h.error.contains("(-timeout)"), "{}", h.error);
    }

    // An event that never ends fails at -max-event-bytes.
    let huge = format!("GET {}", server.url("/sse-huge"));
    let hits = attack_stream(
        &huge,
        &["-rate", "2", "-stream", "sse", "-max-event-bytes", "64KiB"],
    );
    for h in &hits {
        assert!(
            h.error
                .contains("an event longer than -max-event-bytes (65536 bytes)"),
            "{}",
            h.error
        );
    }
}

#[test]
fn event_offsets_survive_json_and_merging() {
    let _one = timed();
    let server = Server::http();
    let hits = attack_stream(
        &format!("GET {}", server.url("/sse/3/10/20")),
        &["-rate", "2", "-stream", "sse", "-max-events", "2"],
    );
    // Past -max-events: counted, not stamped.
    assert!(hits
        .iter()
        .all(|h| h.events.len() == 2 && h.event_count == 3));
    let bin = encode(&hits);
    let dir = common::tempdir("streams");
    let (a, b) = (dir.join("a.bin"), dir.join("b.bin"));
    std::fs::write(&a, &bin).unwrap();
    std::fs::write(&b, &bin).unwrap();
    let json = run(&["dump", "-dumper", "json", a.to_str().unwrap()], b"");
    let first: Value =
        serde_json::from_slice(json.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(first["events"].as_array().unwrap().len(), 2);
    assert_eq!(first["event_count"], 3);
    // JSON lines back to binary, and two files merged: the same events.
    let again = run(&["encode", "-to", "bin"], &json.stdout);
    assert_eq!(decode(&again.stdout), hits);
    let merged = run(
        &[
            "report",
            "-type",
            "json",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        b"",
    );
    let r: Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(r["events"]["total"], 2 * 3 * hits.len());
    // Per -every window and per -by group too.
    let every = run(
        &[
            "report",
            "-type",
            "json",
            "-every",
            "1s",
            a.to_str().unwrap(),
        ],
        b"",
    );
    let window: Value =
        serde_json::from_slice(every.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert!(window["events"]["total"].as_u64().unwrap() > 0, "{window}");
    let rows = run(&["report", "-every", "1s", a.to_str().unwrap()], b"");
    let rows = String::from_utf8_lossy(&rows.stdout);
    let row = rows.lines().nth(1).unwrap_or_default();
    assert!(
        row.contains("  events ") && row.contains(" first-p50 ") && row.contains(" gap-p50 "),
        "{rows}"
    );
    let by = run(
        &["report", "-type", "json", "-by", "url", a.to_str().unwrap()],
        b"",
    );
    assert!(String::from_utf8_lossy(&by.stdout).contains("\"events\":{\"total\":"));
    // And the text report says it in its own lines.
    let text = run(&["report", a.to_str().unwrap()], b"");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Events ") && text.contains("First event ") && text.contains("Event gaps "),
        "{text}"
    );
}

#[test]
fn checks_on_events() {
    let _one = timed();
    let server = Server::http();
    let target = format!("GET {}", server.url("/sse/5/10/10"));
    let hits = attack_stream(
        &target,
        &[
            "-rate",
            "2",
            "-stream",
            "sse",
            "-check",
            "events>=5",
            "-check",
            "event~\"n\":4",
        ],
    );
    assert!(
        hits.iter().all(|h| h.error.is_empty()),
        "{:?}",
        hits[0].error
    );
    let hits = attack_stream(
        &target,
        &["-rate", "2", "-stream", "sse", "-check", "events>=6"],
    );
    assert!(
        hits.iter()
            .all(|h| h.error == "check failed: events 5, want >= 6"),
        "{}",
        hits[0].error
    );
    let hits = attack_stream(
        &target,
        &["-rate", "2", "-stream", "sse", "-check", "event~\"n\":9"],
    );
    assert!(
        hits.iter()
            .all(|h| h.error == "check failed: no event matches /\"n\":9/"),
        "{}",
        hits[0].error
    );
    // Without -stream they are refused before anything is sent.
    let out = run(
        &[
            "attack",
            "-rate",
            "2",
            "-duration",
            "1s",
            "-check",
            "events>=1",
        ],
        format!("{target}\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("go with -stream"));
}

#[test]
fn fail_on_and_sweep_read_the_event_figures() {
    let _one = timed();
    let server = Server::http();
    let target = format!("GET {}", server.url("/sse/3/10/200"));
    let out = run(
        &["attack", "-rate", "2", "-duration", "1s", "-stream", "sse"],
        format!("{target}\n").as_bytes(),
    );
    let stream = out.stdout;
    let fail = run(&["report", "-fail-on", "first.p99>100ms"], &stream);
    assert_eq!(
        fail.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&fail.stderr)
    );
    assert!(String::from_utf8_lossy(&fail.stderr).contains("first.p99>100ms"));
    let pass = run(
        &["report", "-fail-on", "first.p99>1s,gap.p50>100ms"],
        &stream,
    );
    assert!(
        pass.status.success(),
        "{}",
        String::from_utf8_lossy(&pass.stderr)
    );
    // A sweep stops at the first step whose time to first event crosses.
    let out = run(
        &[
            "sweep",
            "-rates",
            "2,4",
            "-step-duration",
            "1s",
            "-stream",
            "sse",
            "-stop-on",
            "first.p50>150ms",
        ],
        format!("{target}\n").as_bytes(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count()
            == 1,
        "{text}\n{err}"
    );
    assert!(
        err.contains("first.p50>150ms") || text.contains("first.p50>150ms"),
        "{text}\n{err}"
    );
}

#[test]
fn websocket_messages_are_events() {
    let _one = timed();
    let server = barrage_testkit::WsServer::start();
    let dir = common::tempdir("streams-ws");
    let body = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    };
    // A subscribe message, then 10 pushed messages 20 ms apart, the first
    // after 50 ms: each an event, the record ends at the tenth.
    let subscribe = body("subscribe", b"subscribe");
    let target = format!("GET {}\n@{subscribe}", server.url("/feed/10/20/50"));
    let hits = attack_stream(
        &target,
        &["-rate", "4", "-ws-events", "10", "-max-body", "-1"],
    );
    assert_eq!(hits.len(), 4);
    let all: String = (0..10).map(|i| format!("{{\"n\":{i}}}")).collect();
    for h in &hits {
        assert!(h.error.is_empty(), "{}", h.error);
        assert_eq!((h.events.len(), h.event_count), (10, 10));
        assert!(*h.events.last().unwrap() <= h.latency);
        assert_eq!(String::from_utf8_lossy(&h.body), all);
    }
    let e = &report_json(&hits)["events"];
    assert_eq!(e["total"], 40, "{e}");
    near(&e["first"]["50th"], 50, 10);
    near(&e["gap"]["50th"], 20, 10);
    // Without a body a request only listens: a feed pushed on connect.
    let hits = attack_stream(
        &format!("GET {}", server.url("/push/3/10")),
        &["-rate", "2", "-ws-events", "3", "-keepalive=false"],
    );
    assert_eq!(hits.len(), 2);
    assert!(
        hits.iter()
            .all(|h| h.error.is_empty() && h.event_count == 3),
        "{hits:?}"
    );
    // A feed that closes early: its events kept, the record failed;
    // -event-filter decides which messages count.
    let target = format!("GET {}\n@{subscribe}", server.url("/feed-close/3/10/10"));
    let hits = attack_stream(
        &target,
        &["-rate", "2", "-ws-events", "5", "-event-filter", ".n"],
    );
    assert_eq!(hits.len(), 2);
    for h in &hits {
        assert_eq!(h.event_count, 3);
        assert!(
            h.error.starts_with("stream cut after 3 events: "),
            "{}",
            h.error
        );
    }
    common::refused(
        &["attack", "-ws-events", "2", "-hold", "2", "-duration", "1s"],
        format!("GET {}\n", server.url("/push/3/10")).as_bytes(),
        "-ws-events",
    );
}

#[test]
fn grpc_server_streams_are_events() {
    let _one = timed();
    let server = Server::http();
    let dir = common::tempdir("streams-grpc");
    let json = dir.join("hello.json");
    std::fs::write(&json, r#"{"name": "ann"}"#).unwrap();
    let json = json.to_str().unwrap().to_string();
    let count = server.url("/test.echo.Echo/Count");
    let say = server.url("/test.echo.Echo/Say");
    // Server reflection (no -proto-set) says Count streams and Say does
    // not, and gives the JSON body its type.
    let target = format!(
        "GRPC {count}\nx-count: 20\nx-first-ms: 200\nx-gap-ms: 50\n@{json}\n\nGRPC {say}\n@{json}"
    );
    let targets = dir.join("targets.http");
    std::fs::write(&targets, &target).unwrap();
    let hits = attack_stream("", &["-targets", targets.to_str().unwrap(), "-rate", "4"]);
    assert_eq!(hits.len(), 4);
    // "ann" as a test.echo.Hello: field 1, 3 bytes.
    let message = b"\x0a\x03ann";
    for h in &hits {
        assert!(h.error.is_empty(), "{}", h.error);
        if h.url == count {
            assert_eq!((h.events.len(), h.event_count), (20, 20));
            assert_eq!(h.bytes_in, 20 * message.len() as u64);
            assert!(*h.events.last().unwrap() <= h.latency);
        } else {
            assert_eq!((h.event_count, h.bytes_in), (0, message.len() as u64));
        }
    }
    let e = &report_json(&hits)["events"];
    assert_eq!(
        (e["total"].as_u64(), e["streams"].as_u64()),
        (Some(40), Some(2)),
        "{e}"
    );
    // ±10 ms (the SSE test's 5 ms, on HTTP/1.1, is the issue's): two
    // streams, the first on a new h2c connection, in a debug build.
    near(&e["first"]["50th"], 200, 10);
    near(&e["gap"]["50th"], 50, 10);
    // With a descriptor set: a stream that ends in an error status keeps
    // its events and fails.
    let set = dir.join("echo.pb");
    std::fs::write(&set, barrage_testkit::echo_descriptor_set()).unwrap();
    std::fs::write(
        &targets,
        format!("GRPC {count}\nx-count: 3\nx-grpc-status: 14\n@{json}\n"),
    )
    .unwrap();
    let hits = attack_stream(
        "",
        &[
            "-targets",
            targets.to_str().unwrap(),
            "-proto-set",
            set.to_str().unwrap(),
            "-rate",
            "2",
        ],
    );
    assert_eq!(hits.len(), 2);
    for h in &hits {
        assert_eq!(h.event_count, 3);
        assert_eq!(
            h.error,
            "stream cut after 3 events: grpc-status 14 (UNAVAILABLE)"
        );
    }
    // Reflection came before the clock: before every call.
    let got = server.received();
    let last_asked = got
        .iter()
        .rposition(|r| r.path.starts_with("/grpc.reflection."));
    let first_call = got.iter().position(|r| r.path.starts_with("/test."));
    assert!(last_asked < first_call, "{last_asked:?} {first_call:?}");
}

/// An answer of `head` and `body` (Content-Length set), as the raw
/// server sends it.
fn reply(head: &str, body: &[u8]) -> RawServer {
    let mut bytes = format!(
        "HTTP/1.1 200 OK\r\n{head}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(body);
    RawServer::start(Script::Reply {
        bytes: Box::leak(bytes.into_boxed_slice()),
        trickle: false,
        close: false,
    })
}

/// Issue 60: a leading BOM was not stripped (WHATWG), an SSE comment
/// over 1 MiB failed the record, `-stream sse` on a `text/plain` answer
/// said nothing of its type, a record ended by `-timeout` said 0 bytes
/// in, and a refused stream read on until `-timeout`.
#[test]
fn streams_read_as_the_spec_says_and_say_what_went_wrong() {
    let _one = timed();
    let one = |server: &RawServer, extra: &[&str]| {
        let mut args = vec!["attack", "-rate", "1", "-requests", "1"];
        if !extra.contains(&"-timeout") {
            args.extend(["-timeout", "5s"]);
        }
        if !extra.contains(&"-stream") {
            args.extend(["-stream", "sse"]);
        }
        args.extend_from_slice(extra);
        let out = run(&args, format!("GET {}\n", server.url("/")).as_bytes());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let hits = decode(&out.stdout);
        assert_eq!(hits.len(), 1);
        hits.into_iter().next().unwrap()
    };
    let sse = "Content-Type: text/event-stream";
    let bom = reply(sse, b"\xEF\xBB\xBFdata: a\n\ndata: b\n\n");
    let h = one(&bom, &[]);
    assert_eq!((h.event_count, h.event_malformed), (2, 0), "{h:?}");
    assert!(h.error.is_empty(), "{}", h.error);
    let mut body = vec![b':'];
    body.extend(std::iter::repeat_n(b'x', 3 << 19));
    body.extend_from_slice(b"\ndata: after\n\n");
    let comment = reply(sse, &body);
    let h = one(&comment, &[]);
    assert_eq!(h.event_count, 1, "{h:?}");
    assert!(h.error.is_empty(), "{}", h.error);
    let plain = reply("Content-Type: text/plain", b"hello world\n");
    let h = one(&plain, &[]);
    assert!(
        h.error
            .contains("Content-Type text/plain, not text/event-stream"),
        "{}",
        h.error
    );
    // An endless answer cut by -timeout: what came is counted.
    let endless = RawServer::start(Script::Endless);
    let h = one(&endless, &["-timeout", "500ms", "-stream", "chunks"]);
    assert!(h.error.contains("timeout after 500ms"), "{}", h.error);
    assert!(h.bytes_in > 0, "{h:?}");
    // An event past -max-event-bytes fails its record at once, not at
    // -timeout.
    let s = Server::http();
    let t = std::time::Instant::now();
    let h = one(
        &RawServer::start(Script::Reply {
            bytes: b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\n\r\ndata: 0123456789012345678901234567890123456789",
            trickle: false,
            close: false,
        }),
        &["-max-event-bytes", "16", "-timeout", "20s"],
    );
    assert!(
        h.error.contains("longer than -max-event-bytes"),
        "{}",
        h.error
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t.elapsed()
    );
    drop(s);
}

/// Issue 60: the README's first stream example pointed at `barrage
/// serve`, which had no SSE route. It has `/sse` and an OpenAI-style
/// `/v1/chat/completions`, and `serve -h` lists its routes.
#[test]
fn serve_streams_events_and_chat_tokens() {
    let _one = timed();
    let server = barrage_testkit::CapacityServer::unlimited();
    let hits = attack_stream(
        &format!("GET {}", server.url("/sse?n=5&gap=20ms&first=100ms")),
        &["-rate", "2", "-stream", "sse"],
    );
    assert_eq!(hits.len(), 2);
    for h in &hits {
        assert_eq!(
            (h.code, h.event_count, h.error.as_str()),
            (200, 5, ""),
            "{h:?}"
        );
        assert!(h.events[0] >= 90 * MS, "first event at {} ns", h.events[0]);
    }
    let dir = common::tempdir("serve-chat");
    let body = dir.join("chat.json");
    std::fs::write(
        &body,
        r#"{"model":"m","stream":true,"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .unwrap();
    let hits = attack_stream(
        &format!(
            "POST {}\nContent-Type: application/json\n@{}",
            server.url("/v1/chat/completions?gap=5ms&first=50ms"),
            body.display()
        ),
        &["-rate", "2", "-stream", "sse", "-check", "event~DONE"],
    );
    assert_eq!(hits.len(), 2);
    for h in &hits {
        assert_eq!((h.code, h.error.as_str()), (200, ""), "{h:?}");
        // A role chunk, 8 tokens, a finish chunk and [DONE] (no usage:
        // the body asks for none).
        assert_eq!(h.event_count, 11, "{h:?}");
    }
    let help = run(&["serve", "-h"], b"");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("/sse?n=20&gap=50ms&first=200ms"), "{text}");
    assert!(text.contains("/v1/chat/completions"), "{text}");
}

/// `-llm openai` against `barrage serve`'s OpenAI-compatible route, whose
/// truth (each token chunk's write, from the request's arrival) rides in
/// its `: barrage-truth` comment: `n` streams of 64 tokens, 150 ms to the
/// first, a chunk every 15 ms, with `query`'s options.
fn llm_streams(
    server: &barrage_testkit::CapacityServer,
    query: &str,
    args: &[&str],
) -> (Vec<Hit>, Vec<Vec<u64>>) {
    let dir = common::tempdir("llm");
    let body = dir.join("chat.json");
    std::fs::write(
        &body,
        r#"{"model":"m","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"say sixty four words"}]}"#,
    )
    .unwrap();
    let target = format!(
        "POST {}\nContent-Type: application/json\n@{}",
        server.url(&format!(
            "/v1/chat/completions?first=150ms&gap=15ms&{query}"
        )),
        body.display()
    );
    let mut all = vec!["-llm", "openai", "-max-body", "1MiB"];
    all.extend_from_slice(args);
    let hits = attack_stream(&target, &all);
    let truth = hits
        .iter()
        .map(|h| {
            let text = String::from_utf8_lossy(&h.body);
            let line = text
                .lines()
                .find_map(|l| l.strip_prefix(": barrage-truth "))
                .unwrap_or_else(|| panic!("no truth in {text}"));
            let v: Value = serde_json::from_str(line).unwrap();
            v["written_ns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
                .collect()
        })
        .collect();
    (hits, truth)
}

/// Issue 62: a vLLM-style stream (a role chunk with empty content first)
/// counted 65 tokens for 64 and a TTFT of 0.37 ms for 200 ms. With
/// `-llm openai`, exactly 64 tokens, by the server's usage and the
/// chunks alike, TTFT and the gaps as the server wrote them, and goodput
/// on TTFT as the truth says.
#[test]
fn llm_tokens_ttft_and_gaps_match_the_servers_truth() {
    let _one = timed();
    let server = barrage_testkit::CapacityServer::unlimited();
    // The role chunk sent at arrival: it is no token, and no first token.
    let (hits, truth) = llm_streams(&server, "role=arrival", &["-rate", "3"]);
    assert_eq!(hits.len(), 3);
    for (h, t) in hits.iter().zip(&truth) {
        let tokens = h.tokens.unwrap_or_else(|| panic!("{h:?}"));
        assert_eq!((tokens.output, tokens.chunks), (Some(64), 64), "{h:?}");
        assert_eq!(tokens.input, Some(4));
        assert_eq!((h.event_count, h.events.len()), (64, 64));
        // The gaps' mean, as written: within 0.2% of 15 ms.
        let mean = |v: &[u64]| (v[63] - v[0]) as f64 / 63.0;
        let (got, wrote) = (mean(&h.events), mean(t));
        assert!(
            (got - wrote).abs() <= 0.002 * 15e6,
            "gap mean {got} ns, written {wrote} ns"
        );
    }
    let r = report_json(&hits);
    let llm = &r["llm"];
    assert_eq!(llm["tokens"]["output"], 192, "{llm}");
    assert_eq!(llm["tokens"]["source"], "server usage", "{llm}");
    assert_eq!(llm["tokens"]["mismatched"], 0, "{llm}");
    let itl = llm["itl"]["mean"].as_f64().unwrap() / 1e6;
    assert!((itl - 15.0).abs() < 0.15, "ITL mean {itl} ms");
    // Goodput on TTFT: none within 140 ms, all within 200 ms.
    for (slo, attained) in [("ttft<=140ms", 0.0), ("ttft<=200ms", 1.0)] {
        let out = run(&["report", "-type", "json", "-slo", slo], &encode(&hits));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["slo"]["attainment"], attained, "{slo}: {}", v["slo"]);
    }
    // The old way, -event-filter on the content: the role chunk's empty
    // content no longer counts.
    let all = attack_stream(
        &format!(
            "POST {}\nContent-Type: application/json\n@{}",
            server.url("/v1/chat/completions?first=50ms&gap=2ms"),
            concat!(env!("CARGO_MANIFEST_DIR"), "/targets/chat.json")
        ),
        &[
            "-rate",
            "2",
            "-stream",
            "sse",
            "-event-filter",
            ".choices[0].delta.content",
        ],
    );
    assert!(all.iter().all(|h| h.event_count == 64), "{all:?}");
}

/// Four tokens a chunk (a batching server): 64 tokens from the usage in
/// 16 chunks (each record a mismatch, said), vLLM's TPOT and the decode
/// time per token as the server's writes give them, the gaps per chunk.
#[test]
fn llm_several_tokens_a_chunk_count_by_usage_and_tpot_is_per_token() {
    let _one = timed();
    let server = barrage_testkit::CapacityServer::unlimited();
    let (hits, truth) = llm_streams(&server, "per=4", &["-rate", "2"]);
    for (h, t) in hits.iter().zip(&truth) {
        let tokens = h.tokens.unwrap();
        assert_eq!((tokens.output, tokens.chunks), (Some(64), 16), "{h:?}");
        assert_eq!(t.len(), 16);
        // TPOT: (E2E − TTFT) / 63, the stream's end being the last
        // chunk's write (its finish, usage and [DONE] in the same one).
        let measured = (h.latency - h.events[0]) as f64 / 63.0;
        let written = (t[15] - t[0]) as f64 / 63.0;
        assert!(
            (measured - written).abs() <= 0.01 * written,
            "TPOT {measured} ns, written {written} ns"
        );
    }
    let r = report_json(&hits);
    let llm = &r["llm"];
    assert_eq!(llm["tokens"]["mismatched"], hits.len(), "{llm}");
    let itl = llm["itl"]["mean"].as_f64().unwrap() / 1e6;
    assert!((itl - 15.0).abs() < 0.15, "ITL mean {itl} ms");
    let tpot = llm["tpot"]["50th"].as_u64().unwrap() as f64 / 1e6;
    assert!(
        (tpot - 15.0 * 15.0 / 63.0).abs() < 0.2,
        "TPOT p50 {tpot} ms"
    );
    // Per token, the first chunk's 4 known from the per-chunk usage:
    // (last − first) / 60, 3.75 ms as written, within 1%.
    let written: Vec<f64> = truth.iter().map(|t| (t[15] - t[0]) as f64 / 60.0).collect();
    let per_token = llm["itl_per_token"]["mean"].as_f64().unwrap();
    let truth_mean = written.iter().sum::<f64>() / written.len() as f64;
    assert!(
        (per_token - truth_mean).abs() <= 0.01 * truth_mean && (truth_mean - 3.75e6).abs() < 0.04e6,
        "ITL per token {per_token} ns, written {truth_mean} ns"
    );
}

/// Issue 62, part 4: 50K-token prompts (about 300 KB bodies). The first
/// token is stamped when its read returns, whatever the request's size:
/// from the send, it is the server's first write (from its arrival) plus
/// the way there (the 300 KB) and back: 0.9 to 1.9 ms in a debug build,
/// never a token gap (15 ms) late.
#[test]
fn a_50k_token_prompt_stamps_the_first_token_when_it_is_read() {
    let _one = timed();
    let server = barrage_testkit::CapacityServer::unlimited();
    let args = ["-rate", "4", "-prompt-tokens", "50000", "-seed", "1"];
    let (hits, truth) = llm_streams(&server, "", &args);
    assert_eq!(hits.len(), 4);
    let mut over: Vec<i64> = Vec::new();
    for (h, t) in hits.iter().zip(&truth) {
        let tokens = h.tokens.unwrap_or_else(|| panic!("{h:?}"));
        assert_eq!(
            (tokens.input, tokens.asked_input),
            (Some(50_000), Some(50_000))
        );
        assert_eq!(tokens.output, Some(64));
        assert!(h.bytes_out > 250_000, "{}", h.bytes_out);
        over.push(h.events[0] as i64 - t[0] as i64);
    }
    over.sort();
    assert!(
        over[0] > -100_000 && over[over.len() / 2] < 3_000_000 && over[3] < 5_000_000,
        "TTFT less the server's first write, ns: {over:?}"
    );
}

/// Under `-max-workers 4` at 6/s (each stream 1.1 s: 3.6/s at most), the
/// TTFT and E2E from the schedule hold the waits for a worker, which
/// those from the send hide; goodput from the schedule counts only the
/// requests that waited little.
#[test]
fn llm_waits_for_a_worker_are_in_the_figures_from_the_schedule() {
    let _one = timed();
    let server = barrage_testkit::CapacityServer::unlimited();
    let (hits, _) = llm_streams(&server, "", &["-rate", "6", "-max-workers", "4"]);
    assert_eq!(hits.len(), 6);
    let r = report_json(&hits);
    let ms = |key: &str| r["llm"][key]["max"].as_u64().unwrap() / MS;
    assert!(ms("ttft") < 400, "{}", r["llm"]);
    // The fifth and sixth wait about 0.45 s for a worker.
    assert!(ms("ttft_scheduled") > 500, "{}", r["llm"]);
    assert!(ms("e2e_scheduled") > ms("e2e") + 300, "{}", r["llm"]);
    let out = run(
        &[
            "report",
            "-type",
            "json",
            "-latency",
            "intended",
            "-slo",
            "ttft<=400ms",
        ],
        &encode(&hits),
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let attained = v["slo"]["attainment"].as_f64().unwrap();
    assert!(attained > 0.5 && attained < 1.0, "{}", v["slo"]);
}

/// Issue 62: a misspelt `-event-filter` matched nothing and the events
/// section vanished, silently. Now the attack says so on stderr, and the
/// report's verdict warns.
#[test]
fn a_filter_that_matches_nothing_is_said_not_silent() {
    let _one = timed();
    let server = Server::http();
    let target = format!(
        "POST {}\nContent-Type: application/json\n@{}\n",
        server.url("/v1/chat/completions"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/targets/chat.json")
    );
    let out = run(
        &[
            "attack",
            "-rate",
            "2",
            "-duration",
            "1s",
            "-stream",
            "sse",
            "-event-filter",
            ".choices[0].delta.contnt",
        ],
        target.as_bytes(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "warning: -event-filter .choices[0].delta.contnt matched no event in 2 answers"
        ),
        "{err}"
    );
    let report = run(&["report"], &out.stdout);
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains(
            "Warning       -event-filter .choices[0].delta.contnt matched no event in 2 records"
        ),
        "{text}"
    );
}
