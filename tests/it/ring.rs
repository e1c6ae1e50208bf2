//! `-io ring`: barrage's HTTP/1.1 engine on worker threads that park in
//! io_uring_enter (monoio, `crates/attack/src/ring.rs`): the exact
//! schedule, one record per request, the closed model and its
//! pipelining, the same records
//! as epoll's for errors, timeouts and redirects, and what it refuses
//! before sending. The fault matrix runs it too (tests/matrix.rs,
//! `Way::Ring`, `Way::RingClosed`, `Way::RingPipelined`).

use crate::common;

use std::{
    io::Write,
    process::Stdio,
    time::{Duration, Instant},
};

use barrage_model::Hit;
use barrage_testkit::{RawServer, Script, Server, TestCert};
use common::{assert_exact_schedule, assert_seq_complete, bin, decode};

/// How far off a ring thread's next wake may be for an answer to wait
/// for it (`proto/h1/later.rs`).
const LATER: &str = "BARRAGE_RING_LATER";

/// Whether `pid` runs a thread named `barrage-ring-…`, looked at for up
/// to 3 s while it runs.
fn runs_ring_threads(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        let named = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .any(|c| c.starts_with("barrage-ring-"));
        if named {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// `barrage attack ARGS` on `target`: its records, and whether it ran
/// ring threads while it ran.
fn attack(args: &[&str], target: &str) -> (Vec<Hit>, bool) {
    attack_later(args, target, None)
}

/// [`attack`], with how far off a ring thread's next wake may be for its
/// answers to be read then (`BARRAGE_RING_LATER`; `None`: the default).
fn attack_later(args: &[&str], target: &str, later: Option<&str>) -> (Vec<Hit>, bool) {
    let mut cmd = bin();
    cmd.arg("attack")
        .args(args)
        .env_remove("BARRAGE_IO")
        .env_remove(LATER);
    if let Some(most) = later {
        cmd.env(LATER, most);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn barrage");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("GET {target}\n").as_bytes())
        .unwrap();
    let ring = runs_ring_threads(child.id());
    let out = child.wait_with_output().unwrap();
    common::assert_no_panic(&out);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (decode(&out.stdout), ring)
}

#[test]
fn ring_keeps_the_exact_schedule_one_record_a_request() {
    let _one = common::one_at_a_time();
    let server = Server::http();
    // One request per tick at most (each loop sleeps until its next), and
    // more (the thread takes every ticket due by its tick).
    for (rate, n) in [(1000u64, 300u64), (5000, 1500)] {
        let (rate_s, n_s) = (rate.to_string(), n.to_string());
        let before = server.count();
        let (mut hits, ring) = attack(
            &[
                "-io",
                "ring",
                "-rate",
                &rate_s,
                "-requests",
                &n_s,
                "-timeout",
                "5s",
            ],
            &server.url("/"),
        );
        assert!(ring, "-io ring ran no ring thread");
        assert_eq!(hits.len() as u64, n, "{rate}/s");
        assert_exact_schedule(&mut hits, (1_000_000_000 / rate) as i64);
        assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
        assert_eq!(server.count() - before, n, "the server saw each once");
    }
}

#[test]
fn ring_holds_hundreds_of_answers_awaited() {
    // Past 256 answers awaited on a thread, a receive polls for readable
    // before it lends its buffer (proto/h1/ring.rs): 600 at once here.
    let server = Server::http();
    let (hits, ring) = attack(
        &[
            "-io",
            "ring",
            "-cpus",
            "1",
            "-rate",
            "2000",
            "-requests",
            "800",
            "-timeout",
            "10s",
        ],
        &server.url("/sleep/300"),
    );
    assert!(ring);
    assert_eq!(hits.len(), 800);
    assert!(
        hits.iter().all(|h| h.code == 200 && h.error.is_empty()),
        "{:?}",
        hits.iter().find(|h| h.code != 200)
    );
}

#[test]
fn ring_runs_the_closed_model() {
    let server = Server::http();
    let (mut hits, ring) = attack(
        &[
            "-io",
            "ring",
            "-rate",
            "0",
            "-max-workers",
            "4",
            "-requests",
            "400",
        ],
        &server.url("/"),
    );
    assert!(ring);
    assert_eq!(hits.len(), 400);
    assert_seq_complete(&mut hits);
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
}

/// `-pipeline 10` on `-io ring`: `server`'s answers (each its request's
/// sequence number) matched in order, records as `-io epoll`'s.
fn pipelined(server: &RawServer, io: &str, workers: &str, requests: &str) -> Vec<Hit> {
    let mut r = common::attack_watched(
        &[
            "-io",
            io,
            "-rate",
            "0",
            "-max-workers",
            workers,
            "-pipeline",
            "10",
            "-requests",
            requests,
            "-max-body",
            "-1",
        ],
        &format!("GET {}\n", server.url("/")),
    );
    r.assert_clean();
    common::assert_seq_complete(&mut r.hits);
    r.hits
}

#[test]
fn ring_pipelines_the_closed_model() {
    let server = RawServer::start(Script::EchoSeq {
        close_after: None,
        delay: Duration::ZERO,
    });
    let hits = pipelined(&server, "ring", "4", "400");
    assert_eq!(hits.len(), 400);
    for h in &hits {
        assert_eq!((h.code, h.error.as_str()), (200, ""), "{h:?}");
        assert_eq!(h.body, h.seq.to_string().as_bytes(), "answer matched");
    }
    assert!(server.connections() <= 4, "{}", server.connections());
    assert_eq!(server.requests(), 400, "nothing sent twice");

    // A server that answers 3 of each 10 and closes: the same records as
    // epoll's, a new connection per batch, nothing sent again.
    let words = |hits: &[Hit], url: &str| -> Vec<(u64, u16, String)> {
        hits.iter()
            .map(|h| (h.seq, h.code, h.error.replace(url, "URL")))
            .collect()
    };
    let mut seen = Vec::new();
    for io in ["ring", "epoll"] {
        let server = RawServer::start(Script::EchoSeq {
            close_after: Some(3),
            delay: Duration::ZERO,
        });
        let hits = pipelined(&server, io, "1", "20");
        assert_eq!(hits.len(), 20, "{io}");
        assert_eq!((server.connections(), server.requests()), (2, 20), "{io}");
        seen.push(words(&hits, &server.url("/")));
    }
    assert_eq!(seen[0], seen[1], "-io ring's records differ from epoll's");
}

/// What the records of `path` on `server` say, on `io`: code, error and
/// body, request by request.
fn outcomes(
    server: &str,
    io: &str,
    extra: &[&str],
    later: Option<&str>,
) -> Vec<(u16, String, Vec<u8>)> {
    let mut args = vec![
        "-io",
        io,
        "-rate",
        "20",
        "-requests",
        "3",
        "-max-body",
        "-1",
    ];
    args.extend_from_slice(extra);
    let (mut hits, _) = attack_later(&args, server, later);
    hits.sort_by_key(|h| h.seq);
    hits.into_iter()
        .map(|h| (h.code, h.error, h.body))
        .collect()
}

/// Each case (a URL and flags) makes the same records on ring as on
/// epoll (ring's answers read at its next wake as far off as `later`).
fn same_as_epoll(cases: &[(String, Vec<&str>)], later: Option<&str>) {
    for (url, extra) in cases {
        let ring = outcomes(url, "ring", extra, later);
        let epoll = outcomes(url, "epoll", extra, None);
        assert_eq!(ring.len(), 3, "{url}");
        assert_eq!(
            ring, epoll,
            "{url} {extra:?}: -io ring's records differ from epoll's"
        );
    }
}

#[test]
fn ring_records_what_epoll_records() {
    let server = Server::http();
    let refused = "http://127.0.0.1:1/".to_string();
    let cases = [
        (server.url("/status/503"), vec![]),
        (server.url("/redirect/2"), vec![]),
        (server.url("/redirect/3"), vec!["-redirects", "1"]),
        (server.url("/bytes/70000"), vec![]),
        (server.url("/sleep/3000"), vec!["-timeout", "300ms"]),
        (refused, vec![]),
    ];
    same_as_epoll(&cases, None);
}

/// Answers read at the ring thread's next wake (`proto/h1/later.rs`:
/// one `recvmsg` then, not a wake for each answer), here 50 ms on (20/s,
/// the wait allowed up to 60 ms): the records epoll makes, for answers,
/// errors, long bodies and timeouts (300 ms: no wait then, as a wait could
/// outlast it).
#[test]
fn ring_reads_answers_at_its_next_wake_as_epoll_reads_them() {
    let server = Server::http();
    let cases = [
        (server.url("/"), vec![]),
        (server.url("/status/503"), vec![]),
        (server.url("/redirect/2"), vec![]),
        (server.url("/bytes/70000"), vec![]),
        (server.url("/sleep/3000"), vec!["-timeout", "300ms"]),
        (server.url("/sleep/100"), vec![]),
    ];
    same_as_epoll(&cases, Some("60ms"));
}

/// An answer read at the next wake ends when it came (the kernel's
/// stamp, `SO_TIMESTAMPNS`), not when it was read: wakes 500 ms apart
/// here, so a record ended by its read would say about 500 ms.
#[test]
fn ring_ends_an_answer_read_at_the_next_wake_when_it_came() {
    let server = Server::http();
    let args = [
        "-io",
        "ring",
        "-rate",
        "2",
        "-requests",
        "3",
        "-timeout",
        "5s",
    ];
    let (mut hits, ring) = attack_later(&args, &server.url("/"), Some("1s"));
    assert!(ring);
    hits.sort_by_key(|h| h.seq);
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
    // The last is read at once: no wake follows it.
    for h in &hits[..2] {
        assert!(
            h.latency < 250_000_000,
            "seq {}: {} ns, as read rather than as it came",
            h.seq,
            h.latency
        );
    }
    let (off, _) = attack_later(&args, &server.url("/"), Some("off"));
    assert_eq!(off.len(), 3);
}

/// https:// on ring (`-http2=false`: HTTP/1.1 over rustls on monoio):
/// the records epoll makes, for answers and for each handshake's failure,
/// the handshake's time on a connection's first record, and pipelining.
#[test]
fn ring_speaks_https_with_http2_off() {
    let signed = TestCert::ca_signed();
    let ca = signed.ca_path().unwrap();
    let ca = ca.to_str().unwrap();
    let tls = Server::https(&signed);
    let stranger = Server::https(&TestCert::generate());
    let expired = Server::https(&TestCert::expired());
    let plain = Server::http();
    let off = "-http2=false";
    let cases = [
        (tls.url("/"), vec![off, "-root-certs", ca]),
        (tls.url("/redirect/2"), vec![off, "-root-certs", ca]),
        (tls.url("/bytes/70000"), vec![off, "-root-certs", ca]),
        (
            tls.url("/sleep/3000"),
            vec![off, "-root-certs", ca, "-timeout", "300ms"],
        ),
        (stranger.url("/"), vec![off]),
        (expired.url("/"), vec![off, "-root-certs", ca]),
        (plain.url("/").replace("http:", "https:"), vec![off]),
    ];
    same_as_epoll(&cases, None);
    let url = tls.url("/");
    let on_ring = |more: &[&str]| {
        attack(
            &[&["-io", "ring", off, "-root-certs", ca], more].concat(),
            &url,
        )
    };
    let (mut hits, ring) = on_ring(&["-rate", "50", "-requests", "20"]);
    assert!(ring);
    hits.sort_by_key(|h| h.seq);
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
    let first = hits[0].link.expect("the first record's connection");
    assert!(!first.reused && first.tls > 0, "{first:?}");
    assert!(hits[19].link.is_some_and(|c| c.reused && c.tls == 0));
    let pipelined = [
        "-rate",
        "0",
        "-max-workers",
        "2",
        "-pipeline",
        "4",
        "-requests",
        "40",
    ];
    let (hits, _) = on_ring(&pipelined);
    assert_eq!(hits.len(), 40);
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
}

#[test]
fn ring_refuses_what_it_does_not_carry() {
    let target = b"GET http://127.0.0.1:1/\n";
    for (args, flag) in [
        (vec!["-pipeline", "2"], "-pipeline with a rate"),
        (vec!["-h2c"], "-h2c"),
        (vec!["-stream", "sse"], "-stream"),
        (vec!["-resolvers", "127.0.0.1:53"], "-resolvers"),
    ] {
        let mut full = vec!["attack", "-io", "ring", "-rate", "10", "-duration", "1s"];
        full.extend(args);
        common::refused(&full, target, &format!("-io ring: not with {flag}"));
    }
    // A target it cannot send (known only as it is read) fails alone:
    // https:// with HTTP/2 offered.
    let (hits, _) = attack(
        &["-io", "ring", "-rate", "10", "-requests", "2"],
        "https://127.0.0.1:1/",
    );
    assert_eq!(hits.len(), 2);
    let no = "-io ring sends https:// only with -http2=false";
    assert!(hits.iter().all(|h| h.code == 0 && h.error.contains(no)));
}

#[test]
fn auto_takes_ring_where_it_carries_the_attack() {
    let server = Server::http();
    let url = server.url("/");
    let paced = ["-rate", "200", "-requests", "100"];
    let closed = ["-rate", "0", "-max-workers", "2", "-requests", "100"];
    // 5 ms answers: 100 closed requests on loopback could end before
    // the threads were looked at.
    let slow = server.url("/delay/5000");
    // https:// with HTTP/2 not offered too.
    let cert = TestCert::generate();
    let tls = Server::https(&cert);
    let secure = [&paced[..], &["-http2=false", "-insecure"]].concat();
    let tls_url = tls.url("/");
    for (sched, target) in [
        (&paced[..], &url),
        (&closed[..], &slow),
        (&secure[..], &tls_url),
    ] {
        let (hits, ring) = attack(sched, target);
        assert!(ring, "{sched:?}: -io auto ran no ring threads");
        assert_eq!(hits.len(), 100, "{sched:?}");
        assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
    }
    // -lazy: not (its one line read as requests go, one request).
    let (hits, ring) = attack(&["-lazy", "-rate", "100", "-requests", "20"], &url);
    assert!(!ring, "-lazy: -io auto ran ring threads");
    assert_eq!(hits.len(), 1);
    // A -mix: yes.
    let dir = common::tempdir("ring-auto-mix");
    let mix = dir.join("mix.yaml");
    let text = format!("groups:\n  - name: a\n    target: GET {url}\n    rate: 100\n");
    std::fs::write(&mix, text).unwrap();
    let (hits, ring) = attack(&["-mix", mix.to_str().unwrap(), "-requests", "20"], &url);
    assert!(ring, "-mix: -io auto ran no ring threads");
    assert_eq!(hits.len(), 20);
    // What ring does not carry: the engine auto took before, quietly.
    for (extra, target) in [
        (vec!["-insecure"], tls.url("/")),
        (vec!["-max-connections", "4"], url.clone()),
        (vec!["-resolvers", "127.0.0.1:53"], url.clone()),
    ] {
        let mut args = vec!["-rate", "100", "-requests", "20"];
        args.extend(&extra);
        let (hits, ring) = attack(&args, &target);
        assert!(!ring, "{extra:?}: -io auto ran ring threads");
        assert_eq!(hits.len(), 20, "{extra:?}");
        assert!(
            hits.iter().all(|h| h.code == 200 && h.error.is_empty()),
            "{extra:?}: {:?}",
            hits[0].error
        );
    }
}

/// `-lazy` on ring: the pacer thread reads each target as its request
/// comes due and hands it to a ring thread (with `-max-workers`, with its
/// slot): every target read is sent once, in order, on the schedule.
#[test]
fn ring_reads_targets_as_requests_go() {
    let server = Server::http();
    let lines: String = (0..60)
        .map(|i| format!("GET {}\n", server.url(&format!("/?i={i}"))))
        .collect();
    for extra in [&[][..], &["-max-workers", "2"]] {
        let mut args = vec!["-io", "ring", "-lazy", "-rate", "250"];
        args.extend(extra);
        let (mut hits, _) = common::attack_ok(&args, &lines);
        assert_eq!(hits.len(), 60, "{extra:?}");
        assert_exact_schedule(&mut hits, 4_000_000);
        for h in &hits {
            assert!(
                h.code == 200 && h.error.is_empty(),
                "{extra:?}: {}",
                h.error
            );
            assert!(
                h.url.ends_with(&format!("={}", h.seq)),
                "{} sent {}",
                h.seq,
                h.url
            );
        }
    }
    assert_eq!(server.count(), 120);
}

/// A `-mix` on ring: each group on its own schedule, named in its
/// records, held to its own `-timeout` (a deadline queue of its own) and
/// its own `-max-workers`.
#[test]
fn ring_runs_a_mix_with_each_groups_timeout() {
    let server = Server::http();
    let dir = common::tempdir("ring-mix");
    let mix = dir.join("mix.yaml");
    let slow = server.url("/delay/400000");
    std::fs::write(
        &mix,
        format!(
            "groups:\n  - name: quick\n    target: GET {slow}\n    rate: 20\n    timeout: 100ms\n  \
             - name: patient\n    target: GET {slow}\n    rate: 20\n    max-workers: 2\n"
        ),
    )
    .unwrap();
    let mix = mix.to_str().unwrap();
    let args = [
        "-io",
        "ring",
        "-mix",
        mix,
        "-requests",
        "6",
        "-timeout",
        "5s",
    ];
    let (hits, _) = common::attack_ok(&args, "");
    let of = |name: &str| -> Vec<&Hit> { hits.iter().filter(|h| h.attack == name).collect() };
    assert_eq!((of("quick").len(), of("patient").len()), (6, 6), "{hits:?}");
    assert!(of("quick")
        .iter()
        .all(|h| h.code == 0 && h.error.contains("timeout")));
    assert!(of("patient")
        .iter()
        .all(|h| h.code == 200 && h.error.is_empty()));
    // Two at a time, 400 ms each: the last two went out about 600 ms
    // late (due at 200 and 250 ms, sent after the fourth's answer).
    let late = of("patient")
        .iter()
        .map(|h| h.timestamp - h.scheduled)
        .max();
    assert!(late.unwrap_or(0) >= 500_000_000, "{late:?}");
}
