//! Issue 66, part 1: `attack -control`, live control of a running
//! attack: a rate change and a pause on the exact schedule, markers in
//! the stream, `report -by phase` and `-every`, bad calls refused with
//! the attack unaffected.

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::Path,
    time::Duration,
};

use barrage_model::Marker;
use barrage_stream::{Decoder, Hit};
use barrage_testkit::{CapacityServer, Child};

use crate::common::{self, tempdir};

/// One call to a control API at `addr`: its status and JSON answer.
pub(crate) fn call(
    addr: &str,
    method: &str,
    path: &str,
    body: &str,
    token: Option<&str>,
) -> (u16, serde_json::Value) {
    let mut s = TcpStream::connect(addr).expect("control API");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().expect("a status");
    let json = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(json).expect("a JSON answer"))
}

/// Every record and marker of the stream in `file`.
pub(crate) fn records_and_markers(file: &Path) -> (Vec<Hit>, Vec<Marker>) {
    let bytes = std::fs::read(file).unwrap();
    let mut d = Decoder::new(&bytes[..]).unwrap();
    let (mut hits, mut h) = (Vec::new(), Hit::default());
    while d.read(&mut h).unwrap() {
        hits.push(h.clone());
    }
    (hits, d.markers().to_vec())
}

/// Records `[from, to)` of `hits` (sorted by number) are due on the line
/// of `rate`/s from request `origin` on, shifted so that request
/// `first` is due at `at`.
fn on_line(
    hits: &[Hit],
    (from, to): (u64, u64),
    (first, at): (u64, i64),
    (rate, origin): (u64, u64),
) {
    let off = |seq: u64| ((seq - origin) * 1_000_000_000 / rate) as i64;
    for h in hits.iter().filter(|h| h.seq >= from && h.seq < to) {
        let want = at + off(h.seq) - off(first);
        assert_eq!(h.scheduled, want, "request {} off its line", h.seq);
    }
}

/// `barrage attack FLAGS -control 127.0.0.1:0` on `server` into `out`
/// (`env`: a shell prefix), and its API's address.
fn controlled(
    server: &CapacityServer,
    flags: &[&str],
    out: &Path,
    env: Option<&str>,
) -> (Child, String) {
    let out = out.to_str().unwrap();
    let mut args = vec!["attack"];
    args.extend_from_slice(flags);
    args.extend(["-control", "127.0.0.1:0", "-output", out]);
    let target = format!("GET {}\n", server.url("/"));
    let bin = Path::new(env!("CARGO_BIN_EXE_barrage"));
    let child = Child::spawn(bin, &args, target.as_bytes(), env);
    let line = child
        .wait_stderr_line("control at http://", Duration::from_secs(20))
        .expect("the control address");
    let addr = line.rsplit_once("http://").unwrap().1;
    (child, addr.trim_end_matches('/').to_string())
}

/// 1,000/s, then 3,000/s from 5 s through the API, 2 s later a 2 s
/// pause:
/// every record is due on the line in force when it was taken, the
/// markers sit at the changes, the per-second rows and the phases show
/// the step, and the pause is no lag. Bad calls along the way change
/// nothing.
#[test]
fn a_rate_change_and_a_pause_keep_the_schedule_exact() {
    let _one = common::one_at_a_time();
    let server = CapacityServer::unlimited();
    let dir = tempdir("control");
    let out = dir.join("run.bin");
    let (child, addr) = controlled(
        &server,
        &["-rate", "1000", "-duration", "11s"],
        &out,
        Some("BARRAGE_TOKEN=sesame"),
    );
    let t = Some("sesame");
    // Bad calls: an error answer each, nothing changed.
    assert_eq!(call(&addr, "GET", "/", "", None).0, 401);
    assert_eq!(call(&addr, "POST", "/pause", "", Some("open")).0, 401);
    let (code, bad) = call(&addr, "POST", "/rate", "{\"rate\":", t);
    assert_eq!(code, 400, "{bad}");
    let (code, bad) = call(&addr, "POST", "/rate", r#"{"rate": -3000}"#, t);
    assert_eq!(
        (code, bad["error"].as_str()),
        (400, Some("rate \"-3000\": a rate cannot be negative"))
    );
    assert_eq!(call(&addr, "POST", "/rate", r#"{"rate": "0"}"#, t).0, 409);
    assert_eq!(call(&addr, "POST", "/resume", "", t).0, 409);
    assert_eq!(call(&addr, "POST", "/faster", "", t).0, 404);
    assert_eq!(call(&addr, "GET", "/rate", "", t).0, 405);
    std::thread::sleep(Duration::from_secs(5));
    let (code, state) = call(&addr, "GET", "/", "", t);
    assert_eq!(code, 200);
    assert_eq!(state["line"], "rate 1000/1s", "{state}");
    assert_eq!(state["paused"], false);
    assert!(state["sent"].as_u64().unwrap() > 3000, "{state}");
    let (code, changed) = call(&addr, "POST", "/rate", r#"{"rate": "3000/s"}"#, t);
    assert_eq!(
        (code, changed["changed"].as_str()),
        (200, Some("rate 3000/1s")),
        "{changed}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(call(&addr, "POST", "/pause", "", t).0, 200);
    assert_eq!(call(&addr, "GET", "/", "", t).1["paused"], true);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(call(&addr, "POST", "/resume", "{}", t).0, 200);
    let end = child.wait(Duration::from_secs(60));
    assert_eq!(end.code, Some(0), "{}", end.stderr);
    let (mut hits, markers) = records_and_markers(&out);
    hits.sort_by_key(|h| h.seq);
    let whats: Vec<&str> = markers.iter().map(|m| m.what.as_str()).collect();
    assert_eq!(whats, ["rate 3000/1s", "pause", "resume"]);
    assert!(markers.iter().all(|m| m.who.starts_with("127.0.0.1:")));
    let (rate, pause, resume) = (&markers[0], &markers[1], &markers[2]);
    // Every scheduled request once, and nothing due while paused.
    for (i, h) in hits.iter().enumerate() {
        assert_eq!(h.seq, i as u64);
        assert!(h.error.is_empty(), "{}", h.error);
        assert!(h.scheduled < pause.from || h.scheduled >= resume.from);
    }
    assert_eq!(pause.first, resume.first);
    // Both lines exactly: 1 ms apart from the start, a 3,000th of a
    // second from the change on (the first on it due at the marker's
    // time), and from the resume on the same line again, moved on.
    let start = hits[0].scheduled;
    let (old, new) = ((1000, 0), (3000, rate.first));
    on_line(&hits, (0, rate.first), (0, start), old);
    on_line(
        &hits,
        (rate.first, pause.first),
        (rate.first, rate.from),
        new,
    );
    on_line(
        &hits,
        (resume.first, u64::MAX),
        (resume.first, resume.from),
        new,
    );
    let at = |m: &Marker| (m.from - start) as f64 / 1e9;
    // About 5 s: the schedule starts a little after the API.
    assert!(
        (3.5..7.0).contains(&at(rate)),
        "the change at {} s",
        at(rate)
    );
    // A pause is not lag: the first records after it were sent near
    // their (new) time, not 2 s behind.
    let after: Vec<&Hit> = hits
        .iter()
        .filter(|h| h.seq >= resume.first)
        .take(100)
        .collect();
    assert!(after.iter().all(|h| h.lag() < 1_500_000_000));
    // The phases and the per-second rows show the step.
    let bytes = std::fs::read(&out).unwrap();
    let groups = common::report_groups(&bytes, "phase");
    let keys: Vec<&str> = groups.0.iter().map(|(k, _)| k.as_str()).collect();
    // Nothing was due while paused: its phase has no records.
    assert_eq!(
        keys,
        ["0 start", "1 rate 3000/1s", "3 resume"],
        "{}",
        groups.1
    );
    let requests = |k: &str| common::group(&groups, k)["requests"].as_u64().unwrap();
    assert_eq!(requests("0 start"), rate.first);
    assert_eq!(requests("1 rate 3000/1s"), pause.first - rate.first);
    assert_eq!(requests("3 resume"), hits.len() as u64 - resume.first);
    let every = common::ok(&["report", "-every", "1s", "-type", "json"], &bytes);
    let rows: Vec<serde_json::Value> = String::from_utf8(every)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("{\"start\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let marked = rows
        .iter()
        .position(|r| r["markers"][0]["what"] == "rate 3000/1s");
    let marked = marked.expect("a window with the change");
    assert!(
        rows[marked - 1]["requests"].as_u64().unwrap() <= 1100,
        "{rows:?}"
    );
    // A whole second at 3,000/s (2,000 leaves room for a loaded host's
    // late sends: the step is what is shown).
    assert!(
        rows[marked + 1]["requests"].as_u64().unwrap() >= 2000,
        "{rows:?}"
    );
    // The page says what run it shows, changes included.
    let page = String::from_utf8(common::ok(&["report", "-type", "html"], &bytes)).unwrap();
    assert!(
        page.contains("rate 1000/1s, then (live control) rate 3000/1s at +"),
        "{page}"
    );
    let text = String::from_utf8(common::ok(&["report"], &bytes)).unwrap();
    assert!(text.contains("Changes "), "{text}");
    assert!(
        text.contains(&format!("rate 3000/1s from request {}", rate.first)),
        "{text}"
    );
}

/// A stop through the API ends the attack as Ctrl-C does: every request
/// sent has its record, the stream is whole and marks the stop.
#[test]
fn a_stop_through_the_api_leaves_a_whole_stream() {
    let server = CapacityServer::unlimited();
    let dir = tempdir("control-stop");
    let out = dir.join("run.bin");
    let (child, addr) = controlled(&server, &["-rate", "200", "-duration", "30s"], &out, None);
    std::thread::sleep(Duration::from_millis(500));
    let (code, stop) = call(&addr, "POST", "/stop", "", None);
    assert_eq!(
        (code, stop["changed"].as_str()),
        (200, Some("stop")),
        "{stop}"
    );
    let end = child.wait(Duration::from_secs(30));
    assert_eq!(end.code, Some(0), "{}", end.stderr);
    let (mut hits, markers) = records_and_markers(&out);
    assert!(!hits.is_empty() && hits.len() < 6000);
    common::assert_seq_complete(&mut hits);
    assert_eq!(markers.len(), 1);
    assert_eq!(markers[0].what, "stop");
}

/// `-control` off loopback needs a token; with `-hold` it is refused; a
/// taken port ends the attack before its stream, which says why.
#[test]
fn control_off_loopback_needs_a_token_and_a_free_port() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().to_string();
    let attack = |at: &str| -> Vec<String> {
        let args = ["attack", "-rate", "10", "-duration", "1s", "-control", at];
        args.map(String::from).to_vec()
    };
    let args = attack(&port);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::run(&args, b"GET http://127.0.0.1:1/\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("-control {port}: ")), "{err}");
    assert!(common::no_records(&out.stdout));
    let report = common::run(&["report"], &out.stdout);
    assert!(String::from_utf8_lossy(&report.stderr).contains("failed before its first request"));
    let off = attack("0.0.0.0:0");
    let err = common::refused(
        &off.iter().map(String::as_str).collect::<Vec<_>>(),
        b"GET http://127.0.0.1:1/\n",
        "-control 0.0.0.0:0: an address off loopback needs a token",
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    common::refused(
        &[
            "attack",
            "-hold",
            "2",
            "-duration",
            "1s",
            "-control",
            "127.0.0.1:0",
        ],
        b"GET ws://127.0.0.1:1/\n",
        "-control steers a schedule of requests: it does not go with -hold",
    );
}

/// The closed model paused and resumed through the API, on tokio's
/// threads and on ring's: no request goes out between the pause and the
/// resume (the first request after the pause is sent after the resume),
/// and a stop ends the stream whole.
#[test]
fn the_closed_model_pauses_on_both_engines() {
    let server = CapacityServer::unlimited();
    for io in ["epoll", "ring"] {
        let dir = tempdir(&format!("control-closed-{io}"));
        let out = dir.join("run.bin");
        let closed = [
            "-io",
            io,
            "-rate",
            "0",
            "-max-workers",
            "2",
            "-duration",
            "30s",
        ];
        let (child, addr) = controlled(&server, &closed, &out, None);
        let addr = addr.as_str();
        for (path, wait) in [("/pause", 300), ("/resume", 500), ("/stop", 300)] {
            std::thread::sleep(Duration::from_millis(wait));
            let (code, said) = call(addr, "POST", path, "", None);
            assert_eq!(code, 200, "{io} {path}: {said}");
        }
        let end = child.wait(Duration::from_secs(30));
        assert_eq!(end.code, Some(0), "{io}: {}", end.stderr);
        let (mut hits, markers) = records_and_markers(&out);
        let whats: Vec<&str> = markers.iter().map(|m| m.what.as_str()).collect();
        assert_eq!(whats, ["pause", "resume", "stop"], "{io}");
        common::assert_seq_complete(&mut hits);
        let (pause, resume) = (&markers[0], &markers[1]);
        assert!(
            hits.iter().any(|h| h.seq >= pause.first),
            "{io}: none after the resume"
        );
        for h in hits.iter().filter(|h| h.seq >= pause.first) {
            assert!(
                h.timestamp >= resume.at,
                "{io}: request {} went out during the pause",
                h.seq
            );
        }
    }
}
