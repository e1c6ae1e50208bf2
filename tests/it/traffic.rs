//! Traffic as it really arrives (issue 35): weighted targets, a `-mix`
//! of groups with their own rates, Poisson arrivals and recorded timings,
//! end to end against loopback servers, and their bad input.

use crate::common;

use barrage_stream::Hit;
use barrage_testkit::Server;
use common::{decode, ok, refused, tempdir};

/// Weights 7:2:1 over 10,000 requests: exactly 7,000, 2,000 and 1,000 at
/// the server, and every run of 10 consecutive requests holds 7, 2 and 1.
#[test]
fn weights_give_each_target_exactly_its_share() {
    let s = Server::http();
    let targets = format!(
        "GET {}\n:weight 7\n:name read\n\nGET {}\n:weight 2\n:name search\n\nGET {}\n:name write\n",
        s.url("/read"),
        s.url("/search"),
        s.url("/write")
    );
    let stream = ok(
        &["attack", "-rate", "5000", "-requests", "10000"],
        targets.as_bytes(),
    );
    let mut hits = decode(&stream);
    common::assert_exact_schedule(&mut hits, 200_000);
    let received = s.received();
    assert_eq!(received.len(), 10_000);
    let count = |p: &str| received.iter().filter(|r| r.path == p).count();
    assert_eq!(
        (count("/read"), count("/search"), count("/write")),
        (7_000, 2_000, 1_000)
    );
    let kind: Vec<u8> = hits
        .iter()
        .map(|h| match h.name.as_str() {
            "read" => 0,
            "search" => 1,
            _ => 2,
        })
        .collect();
    for (i, w) in kind.windows(10).enumerate() {
        let n = |k: u8| w.iter().filter(|&&x| x == k).count();
        assert_eq!((n(0), n(1), n(2)), (7, 2, 1), "window from seq {i}");
    }
    // The mix as sent, by name and by URL.
    let by_name = common::report_groups(&stream, "name");
    assert_eq!(common::group(&by_name, "read")["requests"], 7_000);
    assert_eq!(common::group(&by_name, "write")["requests"], 1_000);
    let by_url = common::report_groups(&stream, "url");
    assert_eq!(common::group(&by_url, &s.url("/search"))["requests"], 2_000);
    // The names survive JSON lines both ways.
    let lines = ok(&["dump", "-dumper", "json"], &stream);
    // (Records are written as they finish: seq 0's line need not be first.)
    let text = String::from_utf8_lossy(&lines);
    let seq0 = text
        .lines()
        .find(|l| l.contains("\"seq\":0,"))
        .expect("seq 0 dumped");
    assert!(seq0.contains(",\"name\":\"read\""), "{seq0}");
    let back = common::report_groups(&lines, "name");
    assert_eq!(common::group(&back, "search")["requests"], 2_000);
}

/// The records of `group`, sorted by seq.
fn of(hits: &[Hit], group: &str) -> Vec<Hit> {
    let mut g: Vec<Hit> = hits.iter().filter(|h| h.attack == group).cloned().collect();
    g.sort_by_key(|h| h.seq);
    g
}

/// Two groups at 300/s and 100/s for 5 s: exactly 1,500 and 500
/// records, each on its own exact schedule, with the group's own headers
/// and its name as the records' attack name.
#[test]
fn a_mix_runs_each_group_on_its_own_exact_schedule() {
    let s = Server::http();
    let dir = tempdir("mix");
    std::fs::write(
        dir.join("reads.http"),
        format!("GET {}\n", s.url("/bytes/1")),
    )
    .unwrap();
    let mix = dir.join("mix.yaml");
    std::fs::write(
        &mix,
        format!(
            "groups:\n  - name: reads\n    targets: reads.http\n    rate: 300\n  - name: writes\n    target: POST {}\n    rate: 100/1s\n    max-workers: 20\n    timeout: 2s\n    headers: [\"X-Group: writes\"]\n",
            s.url("/bytes/2")
        ),
    )
    .unwrap();
    let stream = ok(
        &["attack", "-mix", mix.to_str().unwrap(), "-duration", "5s"],
        b"",
    );
    let hits = decode(&stream);
    let (mut reads, mut writes) = (of(&hits, "reads"), of(&hits, "writes"));
    assert_eq!((reads.len(), writes.len()), (1_500, 500));
    for (g, rate) in [(&mut reads, 300), (&mut writes, 100)] {
        common::assert_seq_complete(g);
        let start = g[0].scheduled;
        for h in g.iter() {
            assert_eq!(
                h.scheduled - start,
                h.seq as i64 * 1_000_000_000 / rate,
                "seq {}",
                h.seq
            );
            assert!(h.timestamp >= h.scheduled);
        }
    }
    // One timeline: both start together.
    assert_eq!(reads[0].scheduled, writes[0].scheduled);
    if let Some(h) = reads
        .iter()
        .find(|h| !h.url.ends_with("/bytes/1") || !h.is_success())
    {
        panic!("{} {} {} {:?}", h.seq, h.url, h.code, h.error);
    }
    let received = s.received();
    let posts: Vec<_> = received.iter().filter(|r| r.path == "/bytes/2").collect();
    assert_eq!(posts.len(), 500);
    assert!(posts.iter().all(|r| r.header("x-group") == Some("writes")));
    assert!(received
        .iter()
        .filter(|r| r.path == "/bytes/1")
        .all(|r| r.header("x-group").is_none()));
    let by = common::report_groups(&stream, "attack");
    assert_eq!(common::group(&by, "writes")["requests"], 500);
}

/// A mix with -shard: three shards of one mix send every group's
/// schedule exactly once between them.
#[test]
fn shards_of_a_mix_make_one_schedule() {
    let s = Server::http();
    let dir = tempdir("mix-shards");
    let mix = dir.join("mix.yaml");
    std::fs::write(
        &mix,
        format!(
            "groups:\n  - name: a\n    target: GET {}\n    rate: 200\n  - name: b\n    target: GET {}\n    rate: 100\n",
            s.url("/a"),
            s.url("/b")
        ),
    )
    .unwrap();
    let mut all = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let m = mix.to_str().unwrap();
        all.extend(decode(&ok(
            &["attack", "-mix", m, "-requests", "30", "-shard", &shard],
            b"",
        )));
    }
    let (mut a, mut b) = (of(&all, "a"), of(&all, "b"));
    common::assert_seq_complete(&mut a);
    common::assert_seq_complete(&mut b);
    assert_eq!((a.len(), b.len()), (30, 30));
}

/// The scheduled offsets (ns from the first) of a stream's records.
fn offsets(stream: &[u8]) -> Vec<i64> {
    let mut hits = decode(stream);
    hits.sort_by_key(|h| h.seq);
    let start = hits.first().map_or(0, |h| h.scheduled);
    hits.iter().map(|h| h.scheduled - start).collect()
}

/// The same Poisson seed sends at the same offsets; the report names it.
#[test]
fn poisson_arrivals_repeat_from_their_seed() {
    let s = Server::http();
    let target = format!("GET {}\n", s.url("/"));
    let run = |seed: &str| {
        ok(
            &[
                "attack",
                "-rate",
                "500",
                "-requests",
                "300",
                "-arrivals",
                seed,
            ],
            target.as_bytes(),
        )
    };
    let (one, two, other) = (run("poisson:11"), run("poisson:11"), run("poisson:12"));
    let first = offsets(&one);
    assert_eq!(first.len(), 300);
    assert_eq!(first, offsets(&two));
    assert_ne!(first, offsets(&other));
    // Not a metronome: the gaps vary, their mean is the rate's.
    let gaps: Vec<i64> = first.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().any(|g| *g < 1_000_000) && gaps.iter().any(|g| *g > 4_000_000));
    let mean = first[299] as f64 / 299.0 / 1e6;
    assert!((mean - 2.0).abs() < 0.4, "mean gap {mean} ms");
    let report = String::from_utf8(ok(&["report"], &one)).unwrap();
    assert!(
        report.contains("Arrivals      poisson:11 (repeat with -arrivals poisson:11)"),
        "{report}"
    );
    // Without a seed, one is drawn, said and stored.
    let out = common::run(
        &[
            "attack",
            "-rate",
            "200",
            "-requests",
            "5",
            "-arrivals",
            "poisson",
        ],
        target.as_bytes(),
    );
    let said = String::from_utf8_lossy(&out.stderr);
    let seed = said
        .split("-arrivals poisson:")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no seed said: {said}"))
        .to_string();
    let report = String::from_utf8(ok(&["report"], &out.stdout)).unwrap();
    assert!(report.contains(&format!("poisson:{seed}")), "{report}");
}

/// Gamma arrivals (`-arrivals gamma:B:SEED`, vLLM's burstiness): the same
/// seed sends at the same offsets, at the rate's mean; burstier than
/// Poisson at B = 0.25 (gaps spread about twice as wide); the report
/// names the law, and one drawn without a seed is said.
#[test]
fn gamma_arrivals_repeat_and_spread_as_their_burstiness() {
    let s = Server::http();
    let target = format!("GET {}\n", s.url("/"));
    let run = |law: &str| {
        let out = common::run(
            &[
                "attack",
                "-rate",
                "500",
                "-requests",
                "400",
                "-arrivals",
                law,
            ],
            target.as_bytes(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let (one, two) = (run("gamma:0.25:5"), run("gamma:0.25:5"));
    let first = offsets(&one.stdout);
    assert_eq!(first, offsets(&two.stdout));
    let cv = |at: &[i64]| {
        let gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        (mean / 1e6, var.sqrt() / mean)
    };
    let (mean, bursty) = cv(&first);
    assert!((mean - 2.0).abs() < 0.5, "mean gap {mean} ms");
    let (_, poisson) = cv(&offsets(&run("poisson:5").stdout));
    assert!(
        bursty > 1.4 * poisson,
        "cv {bursty} against Poisson's {poisson}"
    );
    let report = String::from_utf8(ok(&["report"], &one.stdout)).unwrap();
    assert!(report.contains("Arrivals      gamma:0.25:5"), "{report}");
    let drawn = run("gamma:2");
    let said = String::from_utf8_lossy(&drawn.stderr);
    assert!(said.contains("-arrivals gamma:2:"), "{said}");
}

/// A HAR with entries at 0, 100 and 350 ms replays at those offsets, and
/// at half of them with -har-speed 2, in the order they were recorded.
#[test]
fn har_timing_replays_the_recorded_offsets() {
    let s = Server::http();
    let dir = tempdir("har-timing");
    let har = dir.join("t.har");
    let entry = |path: &str, at: &str| {
        format!(
            "{{\"startedDateTime\": \"2026-01-01T00:00:{at}Z\", \"request\": {{\"method\": \"GET\", \"url\": \"{}\", \"headers\": []}}}}",
            s.url(path)
        )
    };
    // Written out of order: they are sent in the order they were recorded.
    std::fs::write(
        &har,
        format!(
            "{{\"log\": {{\"version\": \"1.2\", \"entries\": [{}, {}, {}]}}}}",
            entry("/c", "10.350"),
            entry("/a", "10.000"),
            entry("/b", "10.100")
        ),
    )
    .unwrap();
    let h = har.to_str().unwrap();
    for (speed, want) in [("1", [0, 100, 350]), ("2", [0, 50, 175])] {
        let stream = ok(
            &[
                "attack",
                "-format",
                "har",
                "-targets",
                h,
                "-har-timing",
                "-har-speed",
                speed,
                "-requests",
                "3",
            ],
            b"",
        );
        let mut hits = decode(&stream);
        hits.sort_by_key(|h| h.seq);
        let urls: Vec<&str> = hits
            .iter()
            .map(|h| h.url.rsplit('/').next().unwrap())
            .collect();
        assert_eq!(urls, ["a", "b", "c"]);
        let ms: Vec<i64> = offsets(&stream).iter().map(|o| o / 1_000_000).collect();
        assert_eq!(ms, want, "-har-speed {speed}");
        // The intended offsets are exact (above); when each really went
        // is the record's lag, bounded loosely here: a loaded test machine
        // is no place for a timing assertion (README gives the measured
        // lag).
        for h in &hits {
            assert!(
                h.lag() < 50_000_000,
                "seq {} went {} ns late",
                h.seq,
                h.lag()
            );
        }
    }
}

#[test]
fn bad_weights_mixes_and_arrivals_are_refused_in_one_line() {
    let dir = tempdir("traffic-bad");
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let http = |w: &str| file("w.http", &format!("GET http://127.0.0.1:1/\n:weight {w}\n"));
    for (w, needle) in [
        ("0", "w.http:2: bad weight: \"0\""),
        ("-2", "w.http:2: bad weight: \"-2\""),
        ("lots", "w.http:2: bad weight: \"lots\""),
    ] {
        refused(
            &["attack", "-targets", &http(w), "-requests", "1"],
            b"",
            needle,
        );
    }
    let json = file(
        "w.json",
        "{\"method\":\"GET\",\"url\":\"http://127.0.0.1:1/\",\"weight\":0}\n",
    );
    refused(
        &[
            "attack",
            "-format",
            "json",
            "-targets",
            &json,
            "-requests",
            "1",
        ],
        b"",
        "w.json:1: bad weight: 0",
    );
    let over = file(
        "over.http",
        "GET http://127.0.0.1:1/a\n:weight 999999\n\nGET http://127.0.0.1:1/b\n:weight 2\n",
    );
    refused(
        &["attack", "-targets", &over, "-requests", "1"],
        b"",
        "add up to 1000001",
    );
    // -lazy finds the weight as it reads, after the stream has started:
    // a stream of no records and the one line.
    let lazy = common::run(
        &["attack", "-targets", &http("2"), "-lazy", "-requests", "1"],
        b"",
    );
    let said = String::from_utf8_lossy(&lazy.stderr);
    assert_eq!(lazy.status.code(), Some(2), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains(
            "w.http:1: -lazy sends targets in the order read: :weight needs them read up front"
        ),
        "{said}"
    );
    assert!(decode(&lazy.stdout).is_empty());
    let mix = |text: &str| file("m.yaml", text);
    for (text, needle) in [
        ("groups:\n  - name: a\n    target: GET http://127.0.0.1:1/\n    rate: 5\n    colour: red\n", "m.yaml:5: bad mix file: groups[0]: unknown field `colour`"),
        ("groups:\n  - name: a\n    rate: 5\n", "m.yaml:2: group \"a\": no targets"),
        ("groups:\n  - name: a\n    target: GET http://127.0.0.1:1/\n    rate: often\n", "m.yaml:2: group \"a\": invalid rate \"often\""),
        ("groups:\n  - name: a\n    target: GET http://127.0.0.1:1/\n    rate: 0\n", "a group needs a rate above 0"),
        // Issue 60: a flow group went out as independent requests (no
        // jar, no extraction); refused, a two-flow mix and a flow beside
        // plain requests alike.
        ("groups:\n  - name: browse\n    format: flow\n    target: GET http://127.0.0.1:1/\n    rate: 8\n  - name: buy\n    format: flow\n    target: GET http://127.0.0.1:1/\n    rate: 2\n", "m.yaml:2: group \"browse\": format: flow is not run as sessions in a mix"),
        ("groups:\n  - name: plain\n    target: GET http://127.0.0.1:1/\n    rate: 8\n  - name: buy\n    format: flow\n    target: GET http://127.0.0.1:1/\n    rate: 2\n", "m.yaml:5: group \"buy\": format: flow is not run as sessions in a mix"),
    ] {
        refused(&["attack", "-mix", &mix(text), "-duration", "1s"], b"", needle);
    }
    let good = mix("groups:\n  - name: a\n    target: GET http://127.0.0.1:1/\n    rate: 5\n");
    refused(
        &["attack", "-mix", &good, "-lazy"],
        b"",
        "-mix does not take -lazy",
    );
    refused(
        &["attack", "-mix", &good, "-rate", "5"],
        b"",
        "'-mix' cannot be used with '-rate'",
    );
    // A file that cannot be read is the tool's own I/O: exit 1, as for -targets.
    let missing = common::run(&["attack", "-mix", "/nonexistent/m.yaml"], b"");
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("-mix /nonexistent/m.yaml: No such file")
    );
    let target = b"GET http://127.0.0.1:1/\n";
    refused(&["attack", "-arrivals", "gamma"], target, "-arrivals");
    refused(
        &["attack", "-arrivals", "poisson:x"],
        target,
        "poisson:SEED",
    );
    refused(
        &[
            "attack",
            "-arrivals",
            "poisson:1",
            "-rate",
            "0",
            "-max-workers",
            "2",
        ],
        target,
        "-arrivals poisson (or gamma) spreads requests around a rate",
    );
    refused(&["attack", "-arrivals", "gamma:0"], target, "gamma:B:SEED");
    refused(
        &["attack", "-har-timing"],
        target,
        "-har-timing replays a HAR file's times",
    );
    refused(
        &["attack", "-har-speed", "2"],
        target,
        "-har-speed goes with -har-timing",
    );
    refused(&["attack", "-har-speed", "0"], target, "-har-speed");
    let har = file(
        "n.har",
        "{\"log\": {\"version\": \"1.2\", \"entries\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://127.0.0.1:1/\", \"headers\": []}}]}}",
    );
    refused(
        &["attack", "-format", "har", "-targets", &har, "-har-timing"],
        b"",
        "has no startedDateTime",
    );
    refused(
        &["report", "-by", "weight"],
        b"",
        "name, remote, conn, step or phase",
    );
}
