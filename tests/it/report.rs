//! End-to-end: report, dump and encode on committed fixtures.

use crate::common;

use barrage_stream::{Encoder, Hit};
use common::{golden, ok, path, run};

#[test]
fn report_text_and_json_match_golden_files() {
    let bin = path("fixtures/alpha.bin");
    golden("report-alpha.txt", &ok(&["report", &bin], b""));
    golden(
        "report-alpha.json",
        &ok(&["report", "-type", "json", &bin], b""),
    );
    // stdin and -output give the same bytes.
    let stdin = std::fs::read(&bin).unwrap();
    golden("report-alpha.txt", &ok(&["report"], &stdin));
    let dir = common::tempdir("report-out");
    let out = dir.join("r.txt");
    ok(&["report", "-output", out.to_str().unwrap(), &bin], b"");
    golden("report-alpha.txt", &std::fs::read(out).unwrap());
}

/// Exact nearest-rank quantiles of the latencies in a vegeta CSV.
fn exact_quantiles(csv: &str) -> Vec<u64> {
    let mut lat: Vec<u64> = std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
        .collect();
    lat.sort();
    [0.5, 0.9, 0.95, 0.99]
        .iter()
        .map(|q| lat[((q * lat.len() as f64).ceil() as usize).max(1) - 1])
        .collect()
}

fn parse_go_duration(s: &str) -> u64 {
    barrage_model::duration::parse(s.trim()).unwrap() as u64
}

/// Compares a text report with vegeta's: every line identical except the
/// percentile columns of Latencies, which must be within 0.1% (3
/// significant digits) of the exact values.
fn assert_matches_vegeta(ours: &str, vegeta: &str, exact: &[u64]) {
    let (ol, vl): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), vegeta.lines().collect());
    assert_eq!(ol.len(), vl.len(), "ours:\n{ours}\nvegeta:\n{vegeta}");
    for (o, v) in ol.iter().zip(&vl) {
        if !o.starts_with("Latencies") {
            assert_eq!(o, v);
            continue;
        }
        let cols = |l: &str| -> Vec<String> {
            l.split("max]")
                .nth(1)
                .unwrap()
                .split(',')
                .map(|s| s.trim().to_string())
                .collect()
        };
        let (oc, vc) = (cols(o), cols(v));
        assert_eq!(
            (&oc[0], &oc[1], &oc[6]),
            (&vc[0], &vc[1], &vc[6]),
            "min, mean and max are exact"
        );
        for (i, want) in exact.iter().enumerate() {
            let got = parse_go_duration(&oc[2 + i]);
            assert!(
                got.abs_diff(*want) * 1000 <= *want,
                "percentile {i}: {got} vs exact {want}"
            );
        }
    }
}

#[test]
fn report_of_vegeta_results_matches_vegeta() {
    let csv = path("fixtures/vegeta/alpha.csv");
    let exact = exact_quantiles(&csv);
    let want = std::fs::read_to_string(path("fixtures/vegeta/report-alpha.txt")).unwrap();
    let ours = String::from_utf8(ok(&["report", &csv], b"")).unwrap();
    assert_matches_vegeta(&ours, &want, &exact);
    let jsonl =
        String::from_utf8(ok(&["report", &path("fixtures/vegeta/alpha.jsonl")], b"")).unwrap();
    assert_eq!(
        jsonl, ours,
        "JSON lines and CSV of the same results report the same"
    );

    let mut ours: serde_json::Value =
        serde_json::from_slice(&ok(&["report", "-type", "json", &csv], b"")).unwrap();
    let mut want: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(path("fixtures/vegeta/report-alpha.json")).unwrap(),
    )
    .unwrap();
    for (i, key) in ["50th", "90th", "95th", "99th"].iter().enumerate() {
        let got = ours["latencies"][key].as_u64().unwrap();
        assert!(got.abs_diff(exact[i]) * 1000 <= exact[i], "{key}");
        ours["latencies"].as_object_mut().unwrap().remove(*key);
        want["latencies"].as_object_mut().unwrap().remove(*key);
    }
    // barrage's own figures come under keys vegeta does not have; a CSV
    // has no scheduled times, so no lag.
    let theirs_not = ours.as_object_mut().unwrap();
    assert!(theirs_not.remove("lag").unwrap().is_null());
    assert!(theirs_not.remove("verdict").unwrap().is_null());
    assert!(theirs_not.remove("intervals").unwrap().is_null());
    assert_eq!(theirs_not.remove("per_second").unwrap()["samples"], 2);
    assert_eq!(ours, want);
}

#[test]
fn merged_report_matches_vegeta() {
    let (a, b) = (
        path("fixtures/vegeta/alpha.csv"),
        path("fixtures/vegeta/beta.csv"),
    );
    let dir = common::tempdir("merged");
    let both = dir.join("both.csv");
    let mut all = std::fs::read(&a).unwrap();
    all.extend(std::fs::read(&b).unwrap());
    std::fs::write(&both, all).unwrap();
    let exact = exact_quantiles(both.to_str().unwrap());
    let want = std::fs::read_to_string(path("fixtures/vegeta/report-alpha-beta.txt")).unwrap();
    let ours = String::from_utf8(ok(&["report", &a, &b], b"")).unwrap();
    assert_matches_vegeta(&ours, &want, &exact);
}

#[test]
fn dump_then_report_gives_the_same_figures() {
    let bin = path("fixtures/alpha.bin");
    let text = ok(&["report", &bin], b"");
    let json = ok(&["report", "-type", "json", &bin], b"");
    for dumper in ["csv", "json"] {
        let dumped = ok(&["dump", "-dumper", dumper, &bin], b"");
        // vegeta's CSV has no scheduled times: no verdict either.
        let verdictless = |t: &[u8]| -> Vec<u8> {
            let t = String::from_utf8_lossy(t);
            let cut = t.find("\nVerdict ").map_or(t.len(), |i| i + 1);
            t[..cut].as_bytes().to_vec()
        };
        if dumper == "json" {
            assert_eq!(ok(&["report"], &dumped), text, "{dumper}");
        } else {
            assert_eq!(ok(&["report"], &dumped), verdictless(&text), "{dumper}");
        }
        let again = ok(&["report", "-type", "json"], &dumped);
        if dumper == "json" {
            assert_eq!(again, json, "{dumper}");
        } else {
            // vegeta's CSV has no scheduled times: the same figures but
            // the lag, which it cannot have.
            let mut a: serde_json::Value = serde_json::from_slice(&again).unwrap();
            let mut b: serde_json::Value = serde_json::from_slice(&json).unwrap();
            assert!(a.as_object_mut().unwrap().remove("lag").unwrap().is_null());
            b.as_object_mut().unwrap().remove("lag");
            for key in ["verdict", "intervals"] {
                assert!(a.as_object_mut().unwrap().remove(key).unwrap().is_null());
                b.as_object_mut().unwrap().remove(key);
            }
            assert_eq!(a, b, "{dumper}");
        }
    }
    // -inputs, and encode back to binary.
    let csv = ok(&["dump", "-dumper", "csv", "-inputs", &bin], b"");
    assert_eq!(csv.iter().filter(|b| **b == b'\n').count(), 300);
    let back = ok(&["encode", "-to", "bin"], &csv);
    assert_eq!(ok(&["report"], &back), text);
}

#[test]
fn dump_csv_has_vegetas_12_columns() {
    let out = String::from_utf8(ok(
        &["dump", "-dumper", "csv", &path("fixtures/alpha.bin")],
        b"",
    ))
    .unwrap();
    let vegeta = std::fs::read_to_string(path("fixtures/vegeta/alpha.csv")).unwrap();
    assert_eq!(
        out, vegeta,
        "a vegeta CSV survives encode and dump byte for byte"
    );
}

#[test]
fn dump_json_has_vegetas_fields_plus_scheduled() {
    let out = String::from_utf8(ok(
        &["dump", "-dumper", "json", &path("fixtures/alpha.bin")],
        b"",
    ))
    .unwrap();
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    for k in [
        "attack",
        "seq",
        "code",
        "timestamp",
        "latency",
        "bytes_out",
        "bytes_in",
        "error",
        "body",
        "method",
        "url",
        "headers",
        "scheduled",
    ] {
        assert!(keys.iter().any(|x| *x == k), "missing {k}");
    }
    let vegeta = std::fs::read_to_string(path("fixtures/vegeta/alpha.jsonl")).unwrap();
    for (o, v) in out.lines().zip(vegeta.lines()) {
        let (mut o, v): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(o).unwrap(),
            serde_json::from_str(v).unwrap(),
        );
        o.as_object_mut().unwrap().remove("scheduled");
        assert_eq!(o, v);
    }
}

fn multi_frame_stream(records: u64, per_frame: u64) -> Vec<u8> {
    let mut enc = Encoder::new(Vec::new()).unwrap();
    for i in 0..records {
        enc.write(&Hit {
            seq: i,
            scheduled: 1_800_000_000_000_000_000 + i as i64 * 1_000_000,
            timestamp: 1_800_000_000_000_000_000 + i as i64 * 1_000_000,
            latency: 1_000_000,
            code: 200,
            method: "GET".into(),
            url: "http://127.0.0.1:1/".into(),
            ..Hit::default()
        })
        .unwrap();
        if i % per_frame == per_frame - 1 {
            enc.flush().unwrap();
        }
    }
    enc.finish().unwrap()
}

#[test]
fn truncated_stream_reports_complete_records_and_exits_2() {
    let full = multi_frame_stream(100, 10);
    // Cut in the middle of the 6th frame.
    let cut = full.len() * 55 / 100;
    let out = run(&["report", "-type", "json"], &full[..cut]);
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = report["requests"].as_u64().unwrap();
    assert!(n == 50 || n == 60, "complete frames only, got {n}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("stdin: truncated result stream at byte "),
        "{err}"
    );
}

#[test]
fn not_a_stream_and_newer_versions_exit_2() {
    let out = run(&["report"], b"GET http://x/\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a barrage result stream (first bytes 47 45 54 20"),
        "{err}"
    );
    let mut newer = multi_frame_stream(3, 10);
    newer[4] = 12;
    let out = run(&["report"], &newer);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("version 12") && err.contains("up to 11"),
        "{err}"
    );
    let out = run(&["report", "/nonexistent/r.bin"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/r.bin"));
    let out = run(&["dump"], b"1,abc\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
}

#[test]
fn empty_input_reports_zeroes_and_exits_0() {
    // Issue 29: an empty input is a valid stream of zero records (a filter
    // that selected nothing), not bad input.
    let out = run(&["report", "-type", "json"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    for sub in [&["dump"][..], &["dump", "-dumper", "json"], &["plot"]] {
        let out = run(sub, b"");
        assert_eq!(out.status.code(), Some(0), "{sub:?} {out:?}");
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"], 0);
    assert_eq!(v["earliest"], "0001-01-01T00:00:00Z");
    let text = String::from_utf8(run(&["report"], b"").stdout).unwrap();
    assert!(
        text.starts_with("Requests      [total, rate, throughput]         0, 0.00, 0.00\n"),
        "{text}"
    );
}

/// Issue 29: a server's words (a close reason, grpc-message) went into
/// the text report raw, so a line feed and escapes could forge lines.
#[test]
fn a_server_cannot_forge_report_lines() {
    let forged = "bye\nStatus Codes  [code:count]  200:1000\x1b[2J";
    let mut enc = Encoder::new(Vec::new()).unwrap();
    enc.write(&Hit {
        seq: 0,
        scheduled: 1_800_000_000_000_000_000,
        timestamp: 1_800_000_000_000_000_000,
        latency: 1_000_000,
        code: 0,
        error: forged.into(),
        method: "GET".into(),
        url: "ws://127.0.0.1:1/".into(),
        ..Hit::default()
    })
    .unwrap();
    let stream = enc.finish().unwrap();
    for args in [vec!["report"], vec!["report", "-by", "error"]] {
        let out = run(&args, &stream);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success());
        assert!(!text.contains('\x1b'), "{text:?}");
        let tables = text
            .lines()
            .filter(|l| l.starts_with("Status Codes"))
            .count();
        assert_eq!(tables, if args.len() == 1 { 1 } else { 2 }, "{text}");
        assert!(text.contains("bye\\nStatus Codes"), "{text}");
    }
}

/// Issue 29: an error quoting a 10 MB line printed all of it.
#[test]
fn an_error_quotes_a_bounded_part_of_its_input() {
    let mut line = b"GET http://x/ ".to_vec();
    line.extend(std::iter::repeat_n(b'a', 10 << 20));
    line.push(b'\n');
    let out = run(&["attack", "-rate", "1", "-duration", "1s"], &line);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.len() < 2000, "{} bytes", out.stderr.len());
    assert!(String::from_utf8_lossy(&out.stderr).contains("stdin:1:"));
}

/// Issue 60: vegeta's gob result files were refused without a hint.
#[test]
fn a_vegeta_gob_file_is_named_with_its_conversion() {
    let dir = common::tempdir("gob");
    let gob = dir.join("r.gob");
    std::fs::write(
        &gob,
        b"\x8b\xff\x81\x03\x01\x01\x06Result\x01\xff\x82\x00\x01\r\x01\x06Attack\x01\x0c\x00\x01\x03Seq\x01\x06\x00\x01\tTimestamp\x01\xff\x84\x00",
    )
    .unwrap();
    common::refused(
        &["report", gob.to_str().unwrap()],
        b"",
        "a vegeta gob result file: barrage reads vegeta's CSV and JSON; convert it with vegeta encode -to csv FILE | barrage report",
    );
}

/// Issue 63: 30 s at 100/s whose first 8 s answer in 10 ms and the rest
/// in 1 ms, as a stream file.
fn warming_stream(dir: &std::path::Path) -> String {
    let mut bytes = Vec::new();
    {
        let mut enc = Encoder::new(&mut bytes).unwrap();
        for i in 0..3_000u64 {
            let scheduled = 1_765_000_000_000_000_000 + i as i64 * 10_000_000;
            enc.write(&Hit {
                seq: i,
                code: 200,
                scheduled,
                timestamp: scheduled + 50_000,
                latency: if i < 800 {
                    10_000_000
                } else {
                    1_000_000 + i % 7 * 1_000
                },
                method: "GET".into(),
                url: "http://x/".into(),
                ..Hit::default()
            })
            .unwrap();
        }
        enc.flush().unwrap();
    }
    let file = dir.join("warm.bin");
    std::fs::write(&file, bytes).unwrap();
    file.to_string_lossy().into_owned()
}

#[test]
fn a_warm_up_is_found_left_out_and_said() {
    let dir = common::tempdir("warmup");
    let file = warming_stream(&dir);
    let text = String::from_utf8(ok(&["report", &file], b"")).unwrap();
    assert!(
        text.contains("Warning       warm-up: the first 8s differ from the rest"),
        "{text}"
    );
    let auto = String::from_utf8(ok(&["report", "-warmup", "auto", &file], b"")).unwrap();
    assert!(
        auto.starts_with("Requests      [total, rate, throughput]         2200,"),
        "{auto}"
    );
    assert!(
        auto.contains("Warm-up       the first 8s left out, found by MSER: 800 records"),
        "{auto}"
    );
    assert!(auto.contains("Verdict       valid\n"), "{auto}");
    let json: serde_json::Value = serde_json::from_slice(&ok(
        &["report", "-type", "json", "-warmup", "5s", &file],
        b"",
    ))
    .unwrap();
    assert_eq!(
        json["warmup"],
        serde_json::json!({"ns": 5_000_000_000u64, "left_out": 500, "found": false, "marked": false})
    );
    assert_eq!(json["requests"], 2500);
    // auto reads its inputs twice: not stdin.
    let out = run(
        &["report", "-warmup", "auto"],
        &std::fs::read(&file).unwrap(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-warmup auto reads its inputs twice"));
}

/// Issue 64: `report -slo` counts the records that met every objective,
/// gives the share's interval and its decision against `-attain`; a
/// report without it is unchanged.
#[test]
fn slo_attainment_goodput_and_its_decision() {
    let mut bytes = Vec::new();
    {
        let mut enc = Encoder::new(&mut bytes).unwrap();
        for i in 0..4_000u64 {
            let scheduled = 1_765_000_000_000_000_000 + i as i64 * 1_000_000;
            enc.write(&Hit {
                seq: i,
                code: if i % 100 == 7 { 500 } else { 200 },
                scheduled,
                timestamp: scheduled,
                // One in twenty slow (50 ms), spread evenly.
                latency: if (i * 7919) % 20 == 0 {
                    50_000_000
                } else {
                    1_000_000
                },
                method: "GET".into(),
                url: "http://x/".into(),
                ..Hit::default()
            })
            .unwrap();
        }
        enc.flush().unwrap();
    }
    let plain = String::from_utf8(ok(&["report"], &bytes)).unwrap();
    assert!(!plain.contains("SLO"), "{plain}");
    let text = String::from_utf8(ok(
        &["report", "-slo", "latency<=10ms", "-attain", "90%"],
        &bytes,
    ))
    .unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("SLO "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("95.00%, ") && line.ends_with("90.00% needed: pass)"),
        "{line}"
    );
    // Failures miss `success`: 1 in 100 more.
    let json: serde_json::Value = serde_json::from_slice(&ok(
        &[
            "report",
            "-type",
            "json",
            "-slo",
            "latency<=10ms,success",
            "-attain",
            "99%",
        ],
        &bytes,
    ))
    .unwrap();
    let slo = &json["slo"];
    assert_eq!(slo["objectives"], "latency<=10ms,success");
    let met = slo["attainment"].as_f64().unwrap();
    assert!((met - 0.94).abs() < 1e-9, "{slo}");
    assert!(slo["interval"]["low"].as_f64().unwrap() <= met);
    assert_eq!(
        (slo["target"].as_f64(), slo["decision"].as_str()),
        (Some(0.99), Some("fail"))
    );
    let bad = run(&["report", "-slo", "p99<=1ms"], &bytes);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown objective"));
}

/// Issue 62: three significant digits sat up to 0.1% off a sorted
/// truth; `-precision 4` and `5` keep the percentiles within 0.01% and
/// 0.001% of it, in text and JSON.
#[test]
fn precision_brings_percentiles_to_the_sorted_truth() {
    let mut enc = Encoder::new(Vec::new()).unwrap();
    let latency = |i: u64| 150_000_000 + (i * 7_919 % 1_000) * 1_013;
    let mut sorted: Vec<u64> = (0..1_000).map(latency).collect();
    for i in 0..1_000u64 {
        let at = 1_800_000_000_000_000_000 + i as i64 * 1_000_000;
        enc.write(&Hit {
            seq: i,
            scheduled: at,
            timestamp: at,
            latency: latency(i),
            code: 200,
            method: "GET".into(),
            url: "http://127.0.0.1:1/".into(),
            ..Hit::default()
        })
        .unwrap();
    }
    let stream = enc.finish().unwrap();
    sorted.sort();
    // vegeta's rank: the value at ceil(q * n) - 1 of the sorted ones.
    let truth = |q: f64| sorted[((q * 1000.0).ceil() as usize).max(1) - 1] as f64;
    let off = |digits: &str| {
        let out = ok(&["report", "-type", "json", "-precision", digits], &stream);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        ["50th", "90th", "95th", "99th"]
            .iter()
            .zip([0.5, 0.9, 0.95, 0.99])
            .map(|(k, q)| (v["latencies"][k].as_f64().unwrap() / truth(q) - 1.0).abs())
            .fold(0.0, f64::max)
    };
    let (three, four, five) = (off("3"), off("4"), off("5"));
    assert!(
        three <= 1e-3 && four <= 1e-4 && five <= 1e-5,
        "{three} {four} {five}"
    );
    assert!(three > 1e-4, "3 digits are coarse here: {three}");
    common::refused(&["report", "-precision", "6"], b"", "-precision");
}
