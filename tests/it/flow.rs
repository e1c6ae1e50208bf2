//! `-format flow`: sessions of dependent requests against testkit's
//! stateful app (`/login` gives a token and a cookie, `/me` needs both,
//! `/items` makes an item that only its maker may read back).

use crate::common;

use std::time::Duration;

use barrage_model::{Hit, SessionEnd};
use barrage_testkit::{AppTally, Child, Server};
use common::{decode, ok, refused, run, tempdir};

/// The four-step flow of the app: log in, read me, make an item, read it.
fn app_flow(server: &Server, think: &str) -> String {
    format!(
        "POST {login}\n:name login\n:check status=200\n:extract token json:.access_token\n{think}\n\n\
         GET {me}\nAuthorization: Bearer {{{{token}}}}\n:name me\n:check body~user\n\n\
         POST {items}\nAuthorization: Bearer {{{{token}}}}\n:name make\n:extract id json:.id\n\n\
         GET {items}/{{{{id}}}}\nAuthorization: Bearer {{{{token}}}}\n:name read\n",
        login = server.url("/login"),
        me = server.url("/me"),
        items = server.url("/items"),
    )
}

/// Writes `text` as `name` in `dir`; its path.
fn file(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// `barrage attack`'s arguments for the flow file `flow`, then `args`.
fn flow_args<'a>(flow: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["attack", "-format", "flow", "-targets", flow];
    all.extend_from_slice(args);
    all
}

/// The attack's records, run with `args` on the flow file `flow`.
fn attack_flow(flow: &str, args: &[&str]) -> (Vec<Hit>, Vec<u8>) {
    let out = ok(&flow_args(flow, args), b"");
    (decode(&out), out)
}

/// `report -type json` of `stream`.
fn report(stream: &[u8]) -> serde_json::Value {
    serde_json::from_slice(&ok(&["report", "-type", "json"], stream)).unwrap()
}

#[test]
fn sessions_carry_their_token_cookie_and_item() {
    let server = Server::http();
    let dir = tempdir("flow-app");
    let flow = file(&dir, "app.flow", &app_flow(&server, ""));
    let (hits, stream) = attack_flow(&flow, &["-rate", "100", "-requests", "50"]);
    assert_eq!(hits.len(), 200);
    assert_eq!(
        server.app(),
        AppTally {
            logins: 50,
            me: 50,
            made: 50,
            read: 50,
            refused: 0
        }
    );
    assert!(
        hits.iter().all(|h| h.error.is_empty()),
        "{:?}",
        hits.iter().find(|h| !h.error.is_empty())
    );
    // Session i's first step is on the schedule (10 ms apart); each later
    // step goes after the one before it ended, with its own scheduled time.
    let mut firsts: Vec<&Hit> = hits
        .iter()
        .filter(|h| h.session.unwrap().step == 0)
        .collect();
    firsts.sort_by_key(|h| h.seq);
    assert_eq!(firsts.len(), 50);
    for (i, h) in firsts.iter().enumerate() {
        assert_eq!(h.seq, i as u64);
        assert_eq!(
            h.scheduled - firsts[0].scheduled,
            i as i64 * 10_000_000,
            "session {i}"
        );
        assert_eq!(h.name, "login");
    }
    for id in 0..50 {
        let mut steps: Vec<&Hit> = hits.iter().filter(|h| h.seq == id).collect();
        steps.sort_by_key(|h| h.session.unwrap().step);
        let names: Vec<&str> = steps.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["login", "me", "make", "read"], "session {id}");
        for w in steps.windows(2) {
            assert!(
                w[1].scheduled >= w[0].timestamp + w[0].latency as i64,
                "session {id}"
            );
        }
        let ends: Vec<SessionEnd> = steps.iter().map(|h| h.session.unwrap().end).collect();
        assert_eq!(ends[3], SessionEnd::Completed);
        assert!(ends[..3].iter().all(|e| *e == SessionEnd::Going));
        assert!(steps[3].session.unwrap().took > 0);
    }
    let r = report(&stream);
    let s = &r["sessions"];
    assert_eq!(
        (s["started"].as_u64(), s["completed"].as_u64()),
        (Some(50), Some(50))
    );
    assert_eq!(s["ended"], serde_json::json!({}));
    assert!(s["duration"]["50th"].as_u64().unwrap() > 0, "{s}");
    // dump's JSON names the session and the step.
    let dumped = String::from_utf8(ok(&["dump", "-dumper", "json"], &stream)).unwrap();
    let line: serde_json::Value = serde_json::from_str(dumped.lines().next().unwrap()).unwrap();
    assert!(
        line["session"].is_u64() && line["step"].is_string(),
        "{line}"
    );
    // report -by step: one group a step.
    let text = String::from_utf8(ok(&["report", "-by", "step"], &stream)).unwrap();
    for step in ["login", "me", "make", "read"] {
        assert!(text.contains(&format!("=== step: {step}")), "{text}");
    }
}

#[test]
fn without_cookies_me_is_refused_and_the_session_ends_there() {
    let server = Server::http();
    let dir = tempdir("flow-nocookies");
    let flow = file(&dir, "app.flow", &app_flow(&server, ""));
    let (hits, stream) = attack_flow(
        &flow,
        &["-rate", "100", "-requests", "20", "-cookies=false"],
    );
    // login and me only: no request for the steps after the failed one.
    assert_eq!(hits.len(), 40);
    let tally = server.app();
    assert_eq!(
        (tally.logins, tally.me, tally.made, tally.refused),
        (20, 0, 0, 20)
    );
    for h in hits.iter().filter(|h| h.name == "me") {
        assert_eq!((h.code, h.error.as_str()), (401, "401 Unauthorized"));
        assert_eq!(h.session.unwrap().end, SessionEnd::Failed);
    }
    let s = &report(&stream)["sessions"];
    assert_eq!(s["failed"], 20);
    assert_eq!(s["ended"], serde_json::json!({"me": 20}));
    assert_eq!(s["reasons"]["me"], "401 Unauthorized");
    // A CI gate on sessions: exit 3.
    let out = run(&["report", "-fail-on", "session_success<99%"], &stream);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("session_success<99% (actual 0.00%)"),
        "{out:?}"
    );
    // plot: a series per step, in the flow's order, the failed step's
    // answers as errors.
    let page = String::from_utf8(ok(&["plot"], &stream)).unwrap();
    let chart = &page[..page.find("</svg>").expect("a chart")];
    let legend: Vec<&str> = chart
        .lines()
        .filter(|l| l.starts_with("<text class=\"legend\""))
        .map(|l| &l[l.find('>').unwrap() + 1..l.len() - "</text>".len()])
        .collect();
    assert_eq!(
        legend,
        ["login: OK: 20 requests", "me: ERROR: 20 requests"],
        "{chart}"
    );
}

#[test]
fn an_extraction_miss_ends_the_session_and_says_why() {
    let server = Server::http();
    let dir = tempdir("flow-miss");
    let text = app_flow(&server, "").replace("json:.access_token", "json:.token");
    let flow = file(&dir, "app.flow", &text);
    let (hits, stream) = attack_flow(&flow, &["-rate", "100", "-requests", "10"]);
    assert_eq!(hits.len(), 10);
    assert_eq!(
        server.app().me + server.app().refused,
        0,
        "nothing after login"
    );
    for h in &hits {
        assert_eq!(h.code, 200);
        assert_eq!(h.error, "extract token: json .token not found");
        assert_eq!(h.session.unwrap().end, SessionEnd::Failed);
    }
    let s = &report(&stream)["sessions"];
    assert_eq!(
        (s["started"].as_u64(), s["completed"].as_u64()),
        (Some(10), Some(0))
    );
    assert_eq!(s["ended"], serde_json::json!({"login": 10}));
}

#[test]
fn think_time_follows_its_distribution_and_is_no_lag() {
    let server = Server::http();
    let dir = tempdir("flow-think");
    let text = format!(
        "GET {}\n:name a\n:think 20ms..40ms\n\nGET {}\n:name b\n",
        server.url("/"),
        server.url("/")
    );
    let flow = file(&dir, "think.flow", &text);
    let (hits, _) = attack_flow(&flow, &["-rate", "500", "-requests", "1000"]);
    assert_eq!(hits.len(), 2000);
    let mut gaps = Vec::new();
    let mut lags = Vec::new();
    for id in 0..1000 {
        let a = hits.iter().find(|h| h.seq == id && h.name == "a").unwrap();
        let b = hits.iter().find(|h| h.seq == id && h.name == "b").unwrap();
        gaps.push((b.scheduled - (a.timestamp + a.latency as i64)) as f64 / 1e6);
        lags.push((b.timestamp - b.scheduled) as f64 / 1e6);
    }
    gaps.sort_by(f64::total_cmp);
    lags.sort_by(f64::total_cmp);
    // Uniform over 20..40 ms: each is at least 20 ms; the median near 30
    // (tokio's timer rounds up to whole ms, and a loaded machine wakes
    // late, never early: a run beside clippy saw 0.346 under 30 ms).
    assert!(gaps[0] >= 19.9, "shortest think {} ms", gaps[0]);
    let below = gaps.iter().filter(|g| **g < 30.0).count() as f64 / 1000.0;
    assert!(
        (0.25..=0.6).contains(&below),
        "{below} of thinks under 30 ms"
    );
    // Spread over the range, not all at one end.
    let above = gaps.iter().filter(|g| **g >= 35.0).count() as f64 / 1000.0;
    assert!(above >= 0.1, "{above} of thinks at 35 ms or more");
    // The think is not lag: the second step's send follows its due time.
    assert!(lags[500] < 5.0, "lag p50 {} ms", lags[500]);
    // A session holds its connection through its think time: both steps
    // on one, which no session thinking at the same time shares.
    let local = |h: &Hit| {
        h.link
            .and_then(|l| l.local)
            .expect("a link with its local address")
    };
    for id in 0..1000 {
        let a = hits.iter().find(|h| h.seq == id && h.name == "a").unwrap();
        let b = hits.iter().find(|h| h.seq == id && h.name == "b").unwrap();
        assert_eq!(local(a), local(b), "session {id}");
    }
    let conns: std::collections::HashSet<_> = hits.iter().map(local).collect();
    assert!(
        conns.len() >= 10,
        "{} connections for ~15 sessions at once",
        conns.len()
    );
}

#[test]
fn three_shards_run_every_session_once() {
    let server = Server::http();
    let dir = tempdir("flow-shards");
    let flow = file(&dir, "app.flow", &app_flow(&server, ""));
    let mut all = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let (hits, _) = attack_flow(&flow, &["-rate", "90", "-duration", "1s", "-shard", &shard]);
        assert!(hits.iter().all(|h| h.seq % 3 == i), "shard {shard}");
        all.extend(hits);
    }
    let mut firsts: Vec<u64> = all
        .iter()
        .filter(|h| h.session.unwrap().step == 0)
        .map(|h| h.seq)
        .collect();
    firsts.sort_unstable();
    assert_eq!(firsts, (0..90).collect::<Vec<_>>());
    assert_eq!(server.app().logins, 90);
}

#[test]
fn ctrl_c_mid_flow_leaves_every_request_its_record() {
    let server = Server::http();
    let dir = tempdir("flow-interrupt");
    let text = app_flow(&server, ":think 150ms");
    let flow = file(&dir, "app.flow", &text);
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_barrage"));
    let args = flow_args(&flow, &["-rate", "50", "-duration", "10s"]);
    let child = Child::spawn(bin, &args, b"", None);
    assert!(child.wait_records(20, Duration::from_secs(10)));
    child.signal(libc::SIGINT);
    let r = child.wait(Duration::from_secs(10));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stream_error.is_none(), "{:?}", r.stream_error);
    // Every request the app answered has its record, and no session went
    // on after the stop.
    let t = server.app();
    assert_eq!(
        r.hits.len() as u64,
        t.logins + t.me + t.made + t.read + t.refused
    );
    assert!(r.hits.len() < 500 * 4 / 10, "{} records", r.hits.len());
    assert!(
        r.hits.iter().all(|h| h.error.is_empty()),
        "{:?}",
        r.hits.iter().find(|h| !h.error.is_empty())
    );
}

#[test]
fn bad_flows_are_refused_at_their_line() {
    let dir = tempdir("flow-bad");
    let url = "http://127.0.0.1:9/";
    let cases: &[(&str, &str)] = &[
        (
            "GET http://127.0.0.1:9/{{token}}\n",
            ":1: step 1: URL: unknown placeholder {{token}}",
        ),
        (
            "GET http://127.0.0.1:9/\n:extract token json:token\n",
            ":2: :extract token json:token: use :extract VAR json:.path",
        ),
        (
            "GET http://127.0.0.1:9/\n:extract token json:.items[x]\n",
            ":2: :extract token json:.items[x]: a path such as",
        ),
        (
            "GET http://127.0.0.1:9/\n\nGET http://127.0.0.1:9/\n:check status=2x\n",
            ":4: :check status=2x: use status=200",
        ),
        (
            "GET http://127.0.0.1:9/\n:think soon\n",
            ":2: bad :think \"soon\"",
        ),
        (
            "GET http://127.0.0.1:9/\n:extract id body~\\d+\n",
            ":2: :extract id body~\\d+: the regex needs a group",
        ),
        ("# nothing\n", ":1: a flow needs at least one step"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let flow = file(&dir, &format!("bad{i}.flow"), text);
        let line = refused(
            &flow_args(&flow, &["-rate", "1", "-duration", "1s"]),
            b"",
            want,
        );
        assert!(line.contains(&flow), "{line}");
    }
    let flow = file(&dir, "ok.flow", &format!("GET {url}\n"));
    refused(
        &flow_args(&flow, &["-lazy", "-rate", "1", "-duration", "1s"]),
        b"",
        "-format flow does not take -lazy",
    );
    let out = run(&flow_args(&flow, &["-rate", "1", "-requests", "1"]), b"");
    assert!(out.status.success());
    // A -feed row that makes a step unsendable: refused up front at its
    // line, as for targets. A step shaped by a variable is not checked.
    let feed = file(&dir, "users.csv", "host,user\n127.0.0.1:9,a\nbad host,b\n");
    let flow = file(
        &dir,
        "feed.flow",
        "GET http://{{host}}/{{user}}\n:name first\n:extract next header:Location\n\nGET http://{{next}}/\n",
    );
    refused(
        &flow_args(&flow, &["-feed", &feed, "-rate", "1", "-duration", "1s"]),
        b"",
        &format!("-feed {feed}:3: step first: bad URL"),
    );
}

#[test]
fn the_closed_model_is_virtual_users_each_looping_over_the_flow() {
    let server = Server::http();
    let dir = tempdir("flow-vus");
    let flow = file(&dir, "app.flow", &app_flow(&server, ":think 50ms"));
    let (hits, stream) = attack_flow(
        &flow,
        &["-rate", "0", "-max-workers", "3", "-duration", "1s"],
    );
    let s = &report(&stream)["sessions"];
    let (started, completed) = (
        s["started"].as_u64().unwrap(),
        s["completed"].as_u64().unwrap(),
    );
    // Three users, one session at a time each: at most one each is left
    // unfinished by the end (none starts a session it cannot go on with).
    assert!(s["unfinished"].as_u64().unwrap() <= 3, "{s}");
    assert!(completed >= 3 && started <= completed + 3, "{s}");
    assert_eq!(server.app().logins, started);
    // Every request the app answered has its record.
    let t = server.app();
    assert_eq!(hits.len() as u64, t.logins + t.me + t.made + t.read);
}

#[test]
fn a_sweep_of_a_flow_steps_through_session_rates() {
    let server = Server::http();
    let dir = tempdir("flow-sweep");
    let flow = file(&dir, "app.flow", &app_flow(&server, ""));
    let out = ok(
        &[
            "sweep",
            "-rates",
            "20,40",
            "-step-duration",
            "500ms",
            "-format",
            "flow",
            "-targets",
            &flow,
            "-output",
            "-",
        ],
        b"",
    );
    let hits = decode(&out);
    let sessions = |name: &str| {
        hits.iter()
            .filter(|h| h.attack == name && h.session.unwrap().step == 0)
            .count()
    };
    // Sessions a second at each step, four requests each.
    assert_eq!((sessions("rate=20"), sessions("rate=40")), (10, 20));
    assert_eq!(
        server.app().read as usize,
        hits.iter().filter(|h| h.name == "read").count()
    );
}

#[test]
fn progress_counts_requests_not_sessions() {
    let server = Server::http();
    let dir = tempdir("flow-progress");
    let flow = file(&dir, "app.flow", &app_flow(&server, ""));
    let args = flow_args(&flow, &["-rate", "50", "-requests", "20", "-progress"]);
    let out = run(&args, b"");
    assert!(out.status.success());
    let hits = decode(&out.stdout);
    assert_eq!(hits.len(), 80);
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err
        .lines()
        .rev()
        .find(|l| l.contains("sent "))
        .unwrap_or_default();
    assert!(last.contains("| sent 80 ("), "{err}");
}

/// A step's redirect carries its headers as a plain request's does (Go's
/// client): its credentials stay within the first URL's domain, and the
/// hop names where it came from in a `Referer`.
#[test]
fn a_steps_redirect_keeps_its_credentials_at_home() {
    let server = Server::http();
    let port = server.addr().port();
    let dir = tempdir("flow-redirect-away");
    let away = format!("http://away.test:{port}/status/200?away");
    let flow = file(
        &dir,
        "away.flow",
        &format!(
            "GET {}\nAuthorization: Bearer t\nX-Keep: k\n:name go\n\nGET {}\nAuthorization: Bearer t\n:name stay\n",
            server.url(&format!("/goto/302?{away}")),
            server.url("/goto/302?/status/200?home"),
        ),
    );
    let to = format!("away.test:{port}:127.0.0.1:{port}");
    let (hits, _) = attack_flow(
        &flow,
        &["-rate", "100", "-requests", "2", "-connect-to", &to],
    );
    assert_eq!(hits.len(), 4);
    assert!(hits.iter().all(|h| h.code == 200), "{hits:?}");
    let got = server.received();
    let landed = |tag: &str| {
        got.iter()
            .filter(|r| r.path == format!("/status/200?{tag}"))
            .map(|r| r.headers.clone())
            .collect::<Vec<_>>()
    };
    let has = |h: &[(String, String)], k: &str| h.iter().any(|(n, _)| n == k);
    let (away, home) = (landed("away"), landed("home"));
    assert_eq!((away.len(), home.len()), (2, 2));
    for h in &away {
        assert!(
            !has(h, "authorization") && has(h, "x-keep") && has(h, "referer"),
            "{h:?}"
        );
    }
    assert!(home.iter().all(|h| has(h, "authorization")), "{home:?}");
}

/// A step can go where an earlier answer points: its URL a variable
/// whole (`GET {{next}}`, a link or a `Location` extracted), checked as
/// each request is made; a value that is no URL is that step's error, as
/// Go words it.
#[test]
fn a_step_goes_where_an_earlier_answer_points() {
    let server = Server::http();
    let dir = tempdir("flow-next");
    let there = server.url("/status/201");
    let flow = file(
        &dir,
        "next.flow",
        &format!(
            "GET {}\n:name ask\n:extract next header:Location\n\nGET {{{{next}}}}\n:name go\n",
            server.url(&format!("/goto/302?{there}")),
        ),
    );
    let (hits, _) = attack_flow(
        &flow,
        &["-rate", "100", "-requests", "3", "-redirects", "-1"],
    );
    assert_eq!(hits.len(), 6);
    let went: Vec<_> = hits.iter().filter(|h| h.url == there).collect();
    assert_eq!(went.len(), 3, "{hits:?}");
    assert!(went.iter().all(|h| h.code == 201 && h.error.is_empty()));
    let bad = file(
        &dir,
        "bad.flow",
        &format!(
            "GET {}\n:extract next body~(h)ello\n\nGET {{{{next}}}}\n",
            server.url("/")
        ),
    );
    let (hits, _) = attack_flow(&bad, &["-rate", "100", "-requests", "1"]);
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[1].error, "Get \"h\": unsupported protocol scheme \"\"");
}

/// A form's login answers 303 with its cookie: the jar keeps it and sends
/// it on the redirect (as Go's client with a jar does) and after.
#[test]
fn a_redirect_carries_the_cookie_its_answer_set() {
    let server = Server::http();
    let dir = tempdir("flow-redirect");
    let flow = file(
        &dir,
        "form.flow",
        &format!(
            "POST {}\n:name login\n:check status=200\n\nGET {}\n:name home\n",
            server.url("/form-login"),
            server.url("/home")
        ),
    );
    let (hits, _) = attack_flow(&flow, &["-rate", "100", "-requests", "20"]);
    assert_eq!(hits.len(), 40);
    assert!(
        hits.iter().all(|h| h.error.is_empty() && h.code == 200),
        "{:?}",
        hits.iter().find(|h| !h.error.is_empty())
    );
    let tally = server.app();
    assert_eq!((tally.logins, tally.me, tally.refused), (20, 40, 0));
    // -redirects -1: the 303 is the login's answer, its cookie kept for
    // the next step.
    let kept = std::fs::read_to_string(&flow)
        .unwrap()
        .replace("status=200", "status=303");
    let (hits, _) = attack_flow(
        &file(&dir, "kept.flow", &kept),
        &["-rate", "100", "-requests", "10", "-redirects", "-1"],
    );
    let codes: Vec<u16> = hits.iter().map(|h| h.code).collect();
    assert_eq!(codes.iter().filter(|c| **c == 303).count(), 10, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 10, "{codes:?}");
    // The jar's hops are bounded by -redirects, as a request's are.
    let hops = file(
        &dir,
        "hops.flow",
        &format!("GET {}\n", server.url("/redirect/3")),
    );
    let (hits, _) = attack_flow(&hops, &["-rate", "100", "-requests", "2"]);
    assert!(
        hits.iter().all(|h| h.code == 200 && h.error.is_empty()),
        "{hits:?}"
    );
    let (hits, _) = attack_flow(
        &hops,
        &["-rate", "100", "-requests", "2", "-redirects", "2"],
    );
    for h in &hits {
        assert!(
            h.error.ends_with("stopped after 2 redirects"),
            "{}",
            h.error
        );
    }
    // Without the jar the redirect goes without the cookie: refused.
    let (hits, _) = attack_flow(&flow, &["-rate", "100", "-requests", "5", "-cookies=false"]);
    assert_eq!(hits.len(), 5);
    assert!(hits.iter().all(|h| h.code == 401), "{hits:?}");
}

/// Issue 60: sessions in flight at the end were neither completed nor
/// ended at a step. Now they have `-grace` to finish (30 s, k6's
/// gracefulStop); those whose next step would start past it are cut and
/// counted as interrupted, after the step they reached, in every report.
#[test]
fn sessions_in_flight_at_the_end_finish_within_the_grace_or_are_interrupted() {
    let server = Server::http();
    let dir = tempdir("flow-grace");
    let text = format!(
        "GET {a}\n:name a\n:think 300ms\n\nGET {a}\n:name b\n:think 300ms\n\nGET {a}\n:name c\n",
        a = server.url("/bytes/1")
    );
    let flow = file(&dir, "grace.flow", &text);
    // The default grace: every session started completes.
    let (hits, stream) = attack_flow(&flow, &["-rate", "20", "-duration", "1s"]);
    let s = &report(&stream)["sessions"];
    assert_eq!(s["started"], 20, "{s}");
    assert_eq!(s["completed"], 20, "{s}");
    assert_eq!(
        (s["interrupted"].as_u64(), s["unfinished"].as_u64()),
        (Some(0), Some(0)),
        "{s}"
    );
    assert_eq!(hits.len(), 60);
    // A grace of 100 ms: sessions whose next step is due past it are cut.
    let (hits, stream) = attack_flow(
        &flow,
        &["-rate", "20", "-duration", "1s", "-grace", "100ms"],
    );
    let s = &report(&stream)["sessions"];
    let (started, completed, interrupted) = (
        s["started"].as_u64().unwrap(),
        s["completed"].as_u64().unwrap(),
        s["interrupted"].as_u64().unwrap(),
    );
    assert_eq!(started, 20, "{s}");
    assert!(interrupted >= 5, "{s}");
    assert_eq!(completed + interrupted, started, "{s}");
    assert_eq!(s["unfinished"], 0, "{s}");
    let after = &s["interrupted_after"];
    assert_eq!(
        after["a"].as_u64().unwrap_or(0) + after["b"].as_u64().unwrap_or(0),
        interrupted,
        "{s}"
    );
    // Each interrupted session's last record says so.
    let cut = hits
        .iter()
        .filter(|h| h.session.unwrap().end == SessionEnd::Interrupted)
        .count() as u64;
    assert_eq!(cut, interrupted);
    let text = String::from_utf8(ok(&["report"], &stream)).unwrap();
    assert!(
        text.contains("Interrupted after a") || text.contains("Interrupted after b"),
        "{text}"
    );
}

/// Issue 60: an extracted value copied into an error text reached the
/// results and Prometheus labels. A step whose URL an extracted token
/// makes unusable fails with the value left out of its error.
#[test]
fn extracted_values_stay_out_of_errors() {
    let server = Server::http();
    let dir = tempdir("flow-secret");
    let text = format!(
        "POST {}\n:name login\n:extract token json:.access_token\n\nGET {{{{token}}}}\n:name use\n",
        server.url("/login")
    );
    let flow = file(&dir, "secret.flow", &text);
    let (hits, _) = attack_flow(&flow, &["-rate", "10", "-requests", "3"]);
    let used: Vec<&Hit> = hits.iter().filter(|h| h.name == "use").collect();
    assert_eq!(used.len(), 3);
    for h in used {
        assert!(!h.error.is_empty(), "{h:?}");
        assert!(h.error.contains("{{…}}"), "{}", h.error);
        assert!(!h.url.is_empty());
        // The error names no part of the value the record's URL holds.
        let value = h.url.trim_start_matches("http://");
        if value.len() >= 3 {
            assert!(!h.error.contains(value), "{}", h.error);
        }
    }
}
