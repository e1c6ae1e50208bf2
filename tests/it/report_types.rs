//! End-to-end: every report type, live windows, grouping, success rules,
//! thresholds and merging, on committed fixtures and live attacks.

use crate::common;

use barrage_testkit::Server;
use common::{golden, ok, path, run};

/// `lag.bin`: a real attack (50/s for 1 s, one worker, a 30 ms server, two
/// targets, one a 404), so its requests went out late by up to 600 ms.
#[test]
fn golden_files_for_every_report_type() {
    let lag = path("fixtures/lag.bin");
    let alpha = path("fixtures/alpha.bin");
    let cases: &[(&str, &[&str])] = &[
        ("lag-text.txt", &["report", &lag]),
        ("lag-json.json", &["report", "-type", "json", &lag]),
        (
            "lag-intended.txt",
            &["report", "-latency", "intended", &lag],
        ),
        (
            "lag-percentiles.txt",
            &["report", "-percentiles", "50,90,99,99.9,99.99", &lag],
        ),
        (
            "lag-percentiles.json",
            &["report", "-type", "json", "-percentiles", "50,99.9", &lag],
        ),
        ("lag-by-url.txt", &["report", "-by", "url", &lag]),
        (
            "lag-by-code.json",
            &["report", "-by", "code", "-type", "json", &lag],
        ),
        ("lag-every.txt", &["report", "-every", "200ms", &lag]),
        (
            "lag-every.json",
            &["report", "-every", "200ms", "-type", "json", &lag],
        ),
        ("lag-success.txt", &["report", "-success", "2xx,404", &lag]),
        (
            "alpha-hist.txt",
            &["report", "-type", "hist[0,100us,200us,500us,1ms]", &alpha],
        ),
        (
            "alpha-hist-buckets.txt",
            &[
                "report",
                "-type",
                "hist",
                "-buckets",
                "[0,250us,300us,350us]",
                &alpha,
            ],
        ),
        ("alpha-hdrplot.txt", &["report", "-type", "hdrplot", &alpha]),
        (
            "alpha-buckets.json",
            &[
                "report",
                "-type",
                "json",
                "-buckets",
                "[0,100us,1ms]",
                &alpha,
            ],
        ),
    ];
    for (name, args) in cases {
        golden(name, &ok(args, b""));
    }
}

#[test]
fn hist_matches_vegeta_exactly() {
    let out = ok(
        &[
            "report",
            "-type",
            "hist[0,100us,200us,500us,1ms]",
            &path("fixtures/vegeta/alpha.csv"),
        ],
        b"",
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        std::fs::read_to_string(path("fixtures/vegeta/hist-alpha.txt")).unwrap()
    );
    // `hist[...]` without a leading 0 gets one, as in vegeta.
    let out = String::from_utf8(ok(
        &[
            "report",
            "-type",
            "hist[100us,1ms]",
            &path("fixtures/vegeta/alpha.csv"),
        ],
        b"",
    ))
    .unwrap();
    assert!(out.lines().nth(1).unwrap().starts_with("[0s,"), "{out}");
}

#[test]
fn hdrplot_matches_vegeta_but_for_values() {
    let ours = String::from_utf8(ok(
        &[
            "report",
            "-type",
            "hdrplot",
            &path("fixtures/vegeta/alpha.csv"),
        ],
        b"",
    ))
    .unwrap();
    let want = std::fs::read_to_string(path("fixtures/vegeta/hdrplot-alpha.txt")).unwrap();
    assert_eq!(ours.lines().count(), want.lines().count());
    let mut lat: Vec<f64> = std::fs::read_to_string(path("fixtures/vegeta/alpha.csv"))
        .unwrap()
        .lines()
        .map(|l| l.split(',').nth(2).unwrap().parse::<f64>().unwrap() / 1e6)
        .collect();
    lat.sort_by(f64::total_cmp);
    for (o, w) in ours.lines().zip(want.lines()).skip(1) {
        let (oc, wc): (Vec<&str>, Vec<&str>) = (
            o.split_whitespace().collect(),
            w.split_whitespace().collect(),
        );
        assert_eq!(
            oc[1..],
            wc[1..],
            "percentile, count and 1/(1-p) columns are identical"
        );
        // The value is the exact nearest-rank quantile to 3 significant digits
        // (vegeta's t-digest estimate can be 10% off at the tail).
        let q: f64 = oc[1].parse().unwrap();
        let exact = lat[((q * lat.len() as f64).ceil() as usize).clamp(1, lat.len()) - 1];
        let got: f64 = oc[0].parse().unwrap();
        assert!(
            (got - exact).abs() <= exact * 0.001 + 1e-6,
            "{o}: exact {exact}"
        );
    }
    assert!(
        ours.ends_with("1.014415   1.000000    300         10000000.000000\n"),
        "max is exact"
    );
}

#[test]
fn json_buckets_match_vegeta() {
    let ours: serde_json::Value = serde_json::from_slice(&ok(
        &[
            "report",
            "-type",
            "json",
            "-buckets",
            "[0,100us,1ms]",
            &path("fixtures/vegeta/alpha.csv"),
        ],
        b"",
    ))
    .unwrap();
    let want: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(path("fixtures/vegeta/report-alpha-buckets.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(ours["buckets"], want["buckets"]);
    let keys: Vec<&String> = ours.as_object().unwrap().keys().collect();
    let vkeys: Vec<&String> = want.as_object().unwrap().keys().collect();
    assert_eq!(
        keys[..vkeys.len()],
        vkeys[..],
        "vegeta's keys first, in order"
    );
}

#[test]
fn bad_report_flags_are_one_line_exit_2() {
    let alpha = path("fixtures/alpha.bin");
    for (args, want) in [
        (vec!["report", "-type", "hist"], "needs -buckets"),
        (vec!["report", "-type", "hist[5ms,1ms]"], "must increase"),
        (vec!["report", "-buckets", "[1x]"], "bad bucket bound"),
        (vec!["report", "-percentiles", "50,abc"], "bad percentile"),
        (vec!["report", "-latency", "sideways"], "unknown -latency"),
        (vec!["report", "-by", "color"], "unknown -by"),
        (vec!["report", "-success", "9xx"], "bad -success"),
        (vec!["report", "-fail-on", "p99>fast"], "bad -fail-on"),
        (
            vec!["report", "-every", "1s", "-by", "url"],
            "cannot be combined",
        ),
    ] {
        let mut args = args.clone();
        args.push(&alpha);
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(want) && err.trim_end().lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(common::no_records(&out.stdout));
    }
}

#[test]
fn fail_on_exits_3_after_the_report_naming_the_condition() {
    let lag = path("fixtures/lag.bin");
    let out = run(
        &[
            "report",
            "-fail-on",
            "success<99.9%,p99>1s,lag.p99>5ms",
            &lag,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("Requests"),
        "report printed first"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("success<99.9% (actual 50.00%)"), "{err}");
    assert!(err.contains("lag.p99>5ms"), "{err}");
    assert!(
        !err.contains("p99>1s"),
        "conditions that do not hold are not listed: {err}"
    );
    let out = run(&["report", "-fail-on", "p99>1s,success<10%", &lag], b"");
    assert_eq!(out.status.code(), Some(0));
    let out = run(
        &[
            "report",
            "-success",
            "2xx,404",
            "-fail-on",
            "success<99.9%",
            &lag,
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "-success changes what -fail-on sees"
    );
}

#[test]
fn every_streams_windows_while_the_attack_runs() {
    use std::{
        io::{BufRead, BufReader, Write},
        process::Stdio,
        time::{Duration, Instant},
    };
    let server = Server::http();
    let mut attack = common::bin()
        .args(["attack", "-rate", "100", "-duration", "3s"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    writeln!(attack.stdin.take().unwrap(), "GET {}", server.url("/")).unwrap();
    let mut report = common::bin()
        .args(["report", "-every", "500ms", "-type", "json"])
        .stdin(attack.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut lines = BufReader::new(report.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let first_at = started.elapsed();
    assert!(
        first_at < Duration::from_millis(2500),
        "first window printed live, after {first_at:?}"
    );
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert!(
        v["start"].is_string() && v["requests"].as_u64().unwrap() > 0,
        "{first}"
    );
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert!(attack.wait().unwrap().success());
    assert!(report.wait().unwrap().success());
    let windows: Vec<serde_json::Value> = std::iter::once(v)
        .chain(rest.iter().map(|l| serde_json::from_str(l).unwrap()))
        .collect();
    let (rows, fin) = windows.split_at(windows.len() - 1);
    let summed: u64 = rows.iter().map(|w| w["requests"].as_u64().unwrap()).sum();
    assert_eq!(
        fin[0]["requests"], 300,
        "the final line is the whole report"
    );
    assert_eq!(summed, 300, "windows add up to the total");
    assert!(rows.len() >= 6, "{} windows", rows.len());
}

#[test]
fn two_half_rate_attacks_merge_to_one_full_rate_attack() {
    let server = Server::http();
    let spawn = || {
        let mut child = common::bin()
            .args(["attack", "-rate", "500", "-duration", "2s"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        writeln!(child.stdin.take().unwrap(), "GET {}", server.url("/")).unwrap();
        child
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let dir = common::tempdir("merge");
    let (pa, pb) = (dir.join("a.bin"), dir.join("b.bin"));
    std::fs::write(&pa, &a.stdout).unwrap();
    std::fs::write(&pb, &b.stdout).unwrap();
    let merged: serde_json::Value = serde_json::from_slice(&ok(
        &[
            "report",
            "-type",
            "json",
            pa.to_str().unwrap(),
            pb.to_str().unwrap(),
        ],
        b"",
    ))
    .unwrap();
    assert_eq!(merged["requests"], 2000);
    let rate = merged["rate"].as_f64().unwrap();
    assert!((rate - 1000.0).abs() < 30.0, "merged rate {rate}");
    assert_eq!(merged["status_codes"]["200"], 2000);
    // Any mix of encodings merges too.
    let csv = ok(&["dump", "-dumper", "csv", pb.to_str().unwrap()], b"");
    let pc = dir.join("b.csv");
    std::fs::write(&pc, csv).unwrap();
    let mixed: serde_json::Value = serde_json::from_slice(&ok(
        &[
            "report",
            "-type",
            "json",
            pa.to_str().unwrap(),
            pc.to_str().unwrap(),
        ],
        b"",
    ))
    .unwrap();
    assert_eq!(mixed["requests"], 2000);
    assert_eq!(mixed["latencies"], merged["latencies"]);
}

#[test]
fn every_zero_is_refused() {
    let out = common::run(&["report", "-every", "0s"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-every must be above 0"), "{err}");
}

/// Issue 17: vegeta's CSV and JSON have no scheduled time and no first
/// byte; those figures read as absent, never as zeros.
#[test]
fn figures_an_input_does_not_have_read_as_absent() {
    let csv = common::fixture("fixtures/vegeta/alpha.csv");
    let csv = csv.to_str().unwrap();
    let jsonl = common::fixture("fixtures/vegeta/alpha.jsonl");
    let jsonl = jsonl.to_str().unwrap();
    let out = common::run(&["report", "-type", "json", csv], b"");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["lag"].is_null(), "{}", v["lag"]);
    for (view, input, says) in [
        ("intended", csv, "has no scheduled send times"),
        ("first-byte", csv, "has no times to first byte"),
        ("first-byte", jsonl, "has no times to first byte"),
    ] {
        for command in [
            vec!["report", "-latency", view, input],
            vec!["plot", "-latency", view, input],
        ] {
            let out = common::run(&command, b"");
            assert_eq!(out.status.code(), Some(2), "{command:?}");
            assert!(
                common::no_records(&out.stdout),
                "nothing written: {command:?}"
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(&format!("-latency {view}: {input} {says}")),
                "{err}"
            );
        }
    }
    // Mixed with a barrage stream: the lag is the stream's, and stderr
    // says which records have none.
    let bin = common::fixture("fixtures/lag.bin");
    let out = common::run(
        &["report", "-type", "json", bin.to_str().unwrap(), csv],
        b"",
    );
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["lag"]["max"].as_u64().unwrap() > 0, "{}", v["lag"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("records with scheduled send times; the ")
            && err.contains(&format!("from {csv} have none")),
        "{err}"
    );
}

/// Issue 17: autocannon's per-second samples, in JSON and as a -type of
/// their own (vegeta's text layout unchanged).
#[test]
fn per_second_samples_as_autocannon_prints_them() {
    let bin = common::fixture("fixtures/alpha.bin");
    let bin = bin.to_str().unwrap();
    let out = common::run(&["report", "-type", "seconds", bin], b"");
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("Stat") && lines[0].contains("2.5%") && lines[0].ends_with("Min"),
        "{table}"
    );
    assert!(
        lines[1].starts_with("Req/Sec") && lines[2].starts_with("Bytes/Sec"),
        "{table}"
    );
    let out = common::run(&["report", "-type", "json", bin], b"");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ps = &v["per_second"];
    assert_eq!(ps["samples"], 2);
    assert_eq!(ps["requests"]["50"], 100.0);
    let text = common::run(&["report", bin], b"");
    assert!(!String::from_utf8_lossy(&text.stdout).contains("Req/Sec"));
}
