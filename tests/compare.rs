//! End-to-end: `barrage compare` on runs against a loopback server whose
//! `/delay/US` route waits a thread's sleep (precise to tens of µs). Same
//! server twice must be "no significant change" (for at most 1 seed in
//! 20, as a 95% interval allows); 1 ms against 1.1 ms must be "slower".
//! The runs are short and few, so the figures are loose; the method's
//! power on 20,000 requests is tested in the library on known
//! distributions.

mod common;

use barrage_stream::Encoder;
use barrage_testkit::Server;
use common::{decode, ok, refused, run};
use serde_json::Value;

/// Attacks `url` at `rate` for `seconds`; the stream's path.
fn record_run(dir: &std::path::Path, name: &str, url: &str, rate: u32, seconds: f64) -> String {
    let file = dir.join(name);
    ok(
        &[
            "attack",
            // One core for the attack, one for the server (2 here).
            "-cpus",
            "1",
            "-rate",
            &rate.to_string(),
            "-duration",
            &format!("{seconds}s"),
            "-output",
            file.to_str().unwrap(),
        ],
        format!("GET {url}\n").as_bytes(),
    );
    file.to_str().unwrap().to_string()
}

/// `compare -type json` of `args`. These runs test the statistics, not
/// the generator: a run that fell behind on a busy machine is judged
/// all the same (`-limits`, loose).
fn compare(args: &[&str]) -> Value {
    let mut all = vec!["compare", "-type", "json", "-limits", "lag=10s,rate=0%"];
    all.extend_from_slice(args);
    serde_json::from_slice(&ok(&all, b"")).expect("json")
}

const FIGURES: [&str; 8] = [
    "throughput",
    "success",
    "mean",
    "50th",
    "90th",
    "99th",
    "99.9th",
    "max",
];

/// For each figure, how many of seeds 1..=20 gave another verdict than
/// "same".
fn changed_seeds(files: &[&str]) -> Vec<(&'static str, usize)> {
    let mut counts: Vec<(&str, usize)> = FIGURES.iter().map(|f| (*f, 0)).collect();
    for seed in 1..=20 {
        let s = seed.to_string();
        let mut args = vec!["-seed", &s];
        args.extend_from_slice(files);
        let v = compare(&args);
        assert_eq!(v["total"]["max"]["verdict"], "same", "max is never judged");
        for (f, n) in counts.iter_mut() {
            if v["total"][*f]["verdict"] != "same" {
                *n += 1;
            }
        }
    }
    counts
}

#[test]
fn two_halves_of_one_run_are_no_significant_change() {
    let _one = common::one_at_a_time();
    let server = Server::http();
    let dir = common::tempdir("compare-halves");
    let whole = record_run(&dir, "whole.bin", &server.url("/delay/1000"), 1000, 4.0);
    let hits = decode(&std::fs::read(&whole).unwrap());
    // The halves take turns by half second: a drift of the machine over
    // the run falls on both alike (a drift between two runs is what
    // several runs a side are for; see the next test).
    let t0 = hits.iter().map(|h| h.timestamp).min().unwrap();
    let (first, second): (Vec<_>, Vec<_>) = hits
        .into_iter()
        .partition(|h| ((h.timestamp - t0) / 500_000_000) % 2 == 0);
    let mut files = Vec::new();
    for (name, part) in [("a.bin", &first), ("b.bin", &second)] {
        let mut enc = Encoder::new(Vec::new()).unwrap();
        for h in part.iter() {
            enc.write(h).unwrap();
        }
        let path = dir.join(name);
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let counts = changed_seeds(&[&files[0], &files[1]]);
    eprintln!("halves: {counts:?}");
    eprintln!(
        "{}",
        String::from_utf8_lossy(&ok(&["compare", &files[0], &files[1]], b""))
    );
    // 2,000 records a side: 2 beyond p99.9, too few to judge it.
    let v = compare(&[&files[0], &files[1]]);
    assert_eq!(v["total"]["99.9th"]["judged"], false, "{}", v["total"]);
    assert_eq!(v["total"]["99th"]["judged"], true, "{}", v["total"]);
    for (f, n) in counts {
        assert!(n <= 1, "{f}: {n} of 20 seeds called a change");
    }
}

/// `runs` runs a side, interleaved (a b a b ...) so that a slow spell of
/// the machine falls on both sides: the base's files, `--`, the new's.
fn interleaved(
    dir: &std::path::Path,
    base: &str,
    new: &str,
    runs: usize,
    seconds: f64,
) -> Vec<String> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..runs {
        a.push(record_run(dir, &format!("a{i}.bin"), base, 1000, seconds));
        b.push(record_run(dir, &format!("b{i}.bin"), new, 1000, seconds));
    }
    a.push("--".into());
    a.extend(b);
    a
}

#[test]
fn back_to_back_runs_are_no_significant_change_with_runs_on_each_side() {
    let _one = common::one_at_a_time();
    let server = Server::http();
    let url = server.url("/delay/1000");
    // Seeds redraw one pair of data sets: a data set either holds a
    // change in some figure or not, whatever the seed. A 95% interval
    // calls a change in 1 A/A data set in 20 per figure, and 7 figures
    // are judged, so one try in several fails by design (CI saw the mean
    // called changed by 13 of 20 seeds once). A second try on fresh runs
    // fails with the first at about that chance squared; a method that
    // is wrong fails both.
    let mut tries = Vec::new();
    let (_dir, files) = loop {
        let dir = common::tempdir(&format!("compare-aa{}", tries.len()));
        let files = interleaved(&dir, &url, &url, 3, 1.0);
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let counts = changed_seeds(&refs);
        eprintln!("back to back: {counts:?}");
        match counts.iter().find(|(_, n)| *n > 1) {
            None => break (dir, files),
            Some((f, n)) if tries.is_empty() => tries.push(format!("{f}: {n} of 20 seeds")),
            Some((f, n)) => {
                panic!("two tries: {tries:?}, then {f}: {n} of 20 seeds called a change")
            }
        }
    };
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let v = compare(&files);
    assert_eq!(v["runs"]["base"], 3);
    assert_eq!(v["runs"]["new"], 3);
}

/// Whether `v`'s p50 is "slower", its interval above 0, by a change
/// within `range`; else what it is.
fn slower(v: &Value, range: std::ops::Range<f64>) -> Result<(), String> {
    let row = &v["total"]["50th"];
    let change = row["change"].as_f64().unwrap_or(0.0);
    if row["verdict"] != "slower"
        || row["low"].as_f64().unwrap_or(0.0) <= 0.0
        || !range.contains(&change)
    {
        return Err(format!("50th: {row}"));
    }
    Ok(())
}

/// Runs a side in the A/B test: short and many, so that the machine's
/// drift falls on both sides alike.
const AB_RUNS: usize = 8;

/// An A/B pair's directory and files (base runs, `--`, new runs).
type Pair = (common::TempDir, Vec<String>);

/// An A/B pair of `AB_RUNS` interleaved runs a side, `/delay/1000`
/// against `/delay/{new_us}`, tried up to `tries` times until its p50 is
/// "slower" by a change in `range` (never "faster"). The files, or each
/// try's p50 row (with compare's own noise floor for it).
fn ab_pair(
    server: &Server,
    new_us: u32,
    range: std::ops::Range<f64>,
    tries: usize,
) -> Result<Pair, Vec<String>> {
    let mut failed = Vec::new();
    while failed.len() < tries {
        let dir = common::tempdir(&format!("compare-ab{new_us}-{}", failed.len()));
        let files = interleaved(
            &dir,
            &server.url("/delay/1000"),
            &server.url(&format!("/delay/{new_us}")),
            AB_RUNS,
            0.5,
        );
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let v = compare(&refs);
        // Never "faster" where compare's own noise floor says the machine
        // can decide (10%, as below). In a slow spell it can: a full local
        // run had a 21 ms mean for the 1 ms wait on the base side alone
        // (noise floor ±131%), and that try then counts as failed.
        for m in ["50th", "mean"] {
            let row = &v["total"][m];
            let quiet = row["noise"].as_f64().unwrap_or(f64::MAX) <= 0.1;
            assert!(!(quiet && row["verdict"] == "faster"), "{}", v["total"]);
        }
        match slower(&v, range.clone()) {
            Ok(()) => return Ok((dir, files)),
            Err(e) => {
                eprintln!("/delay/{new_us}, try {}: {e}", failed.len() + 1);
                failed.push(e);
            }
        }
    }
    Err(failed)
}

#[test]
fn a_tenth_of_a_millisecond_more_is_slower_and_fails_the_gate() {
    let _one = common::one_at_a_time();
    let server = Server::http();
    // This machine has slow spells that swamp 0.1 ms in some runs (the
    // method then rightly says "same"): up to three tries, and never
    // "faster". A loaded CI machine once had p50s of 2 to 4 ms for the
    // 1 ms wait and a noise floor of ±38 to 48% in all three tries, and
    // another p50s of 1.56 to 1.75 ms with intervals of -2% to +13%
    // around a +4.3% change (its noise 4.6%): whether 0.1 ms shows on a
    // shared machine is timing, not behaviour. When three tries do not
    // show it, the method and the gate are checked on a 4 ms step
    // instead (said on stderr), never skipped.
    let (gate, (_dir, files)) = match ab_pair(&server, 1100, 0.02..0.2, 3) {
        Ok(pair) => ("p50>+50%", pair),
        Err(tries) => {
            eprintln!("0.1 ms not shown in three tries on this machine now ({tries:?}): a 4 ms step instead");
            match ab_pair(&server, 5000, 0.5..20.0, 2) {
                Ok(pair) => ("p50>+5000%", pair),
                Err(big) => panic!("0.1 ms: {tries:?}; 4 ms, none slower either: {big:?}"),
            }
        }
    };
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    // The gate: past its bound and significant exits 3; within it, 0.
    let gated = |gate: &str, files: &[&str]| {
        let mut args = vec!["compare", "-limits", "lag=10s,rate=0%", "-fail-on", gate];
        args.extend_from_slice(files);
        run(&args, b"")
    };
    let out = gated("p50>+1%", &files);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-fail-on: p50>+1%: 50th changed +"), "{err}");
    assert_eq!(gated(gate, &files).status.code(), Some(0));
    // The other way round it is faster, and a slowdown gate holds still.
    let (base, new) = files.split_at(AB_RUNS);
    let mut swapped: Vec<&str> = new[1..].to_vec();
    swapped.push("--");
    swapped.extend_from_slice(base);
    assert_eq!(compare(&swapped)["total"]["50th"]["verdict"], "faster");
    assert_eq!(gated("p50>+1%", &swapped).status.code(), Some(0));
}

#[test]
fn groups_are_matched_by_key_and_the_unmatched_named() {
    let _one = common::one_at_a_time();
    let server = Server::http();
    let dir = common::tempdir("compare-groups");
    let run_of = |name: &str, paths: &[&str]| {
        let file = dir.join(name);
        let targets: String = paths
            .iter()
            .map(|p| format!("GET {}\n", server.url(p)))
            .collect();
        ok(
            &[
                "attack",
                "-rate",
                "200",
                "-duration",
                "1s",
                "-output",
                file.to_str().unwrap(),
            ],
            targets.as_bytes(),
        );
        file.to_str().unwrap().to_string()
    };
    let base = run_of("base.bin", &["/", "/bytes/10"]);
    let new = run_of("new.bin", &["/", "/status/500"]);
    let out = run(&["compare", "-by", "url", &base, &new], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("=== url: http://"), "{text}");
    assert!(text.contains("=== total"), "{text}");
    assert!(
        text.contains("Only in base: url http://") && text.contains("/bytes/10"),
        "{text}"
    );
    assert!(
        text.contains("Only in new: url http://") && text.contains("/status/500"),
        "{text}"
    );
    assert!(
        err.contains("/bytes/10") && err.contains("only in base"),
        "{err}"
    );
    let v = compare(&["-by", "url", &base, &new]);
    assert_eq!(v["groups"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["only_in_base"].as_array().unwrap().len(), 1);
    // Half the new side's requests fail: success is worse.
    assert_eq!(v["total"]["success"]["verdict"], "worse", "{}", v["total"]);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = common::tempdir("compare-bad");
    let empty = dir.join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let e = empty.to_str().unwrap();
    refused(&["compare", e], b"", "needs two result files");
    refused(&["compare", e, e, e], b"", "(got 3 files)");
    refused(
        &["compare", "-fail-on", "p98>5%", e, e],
        b"",
        "unknown figure",
    );
    refused(
        &["compare", "-fail-on", "p99>5ms", e, e],
        b"",
        "a change in %",
    );
    refused(
        &["compare", "-fail-on", "max>+5%", e, e],
        b"",
        "max cannot be gated",
    );
    refused(&["compare", e, e], b"", "no records on the base side");
    refused(&["compare", "--", e], b"", "no base runs before --");
    refused(&["compare", "-type", "xml", e, e], b"", "xml");
}

/// A synthetic stream of `n` records 10 ms apart, each of `ms`.
fn synthetic(dir: &std::path::Path, name: &str, n: u64, ms: u64) -> String {
    let file = dir.join(name);
    let mut enc = Encoder::new(std::fs::File::create(&file).unwrap()).unwrap();
    for i in 0..n {
        let t = 1_700_000_000_000_000_000 + i as i64 * 10_000_000;
        enc.write(&barrage_stream::Hit {
            seq: i,
            code: 200,
            scheduled: t,
            timestamp: t,
            latency: ms * 1_000_000 + (i % 7) * 10_000,
            ..Default::default()
        })
        .unwrap();
    }
    enc.finish().unwrap();
    file.to_str().unwrap().to_string()
}

/// Issue 60: on short runs the point estimate and its interval
/// contradicted each other (-86% within [+99.8%, +100.4%], "better"), and
/// -fail-on tripped on it; identical runs gave intervals below -100%.
/// Below a minimum sample the verdict is "too few records" and no gate
/// trips; no interval falls below -100%.
#[test]
fn short_runs_are_too_few_records_and_intervals_stay_above_minus_100() {
    let dir = common::tempdir("compare-short");
    let (a, b) = (
        synthetic(&dir, "a.bin", 40, 1),
        synthetic(&dir, "b.bin", 40, 7),
    );
    let c = compare(&[&a, &b]);
    for f in FIGURES {
        let row = &c["total"][f];
        assert_eq!(row["verdict"], "too few records", "{f}: {row}");
        assert_eq!(row["judged"], false, "{f}: {row}");
    }
    let out = run(&["compare", "-fail-on", "p50>+1%", &a, &b], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(ok(&["compare", &a, &b], b"")).unwrap();
    assert!(text.contains("too few records"), "{text}");
    // Enough records: identical runs, every interval above -100%.
    let (a, b) = (
        synthetic(&dir, "c.bin", 3000, 2),
        synthetic(&dir, "d.bin", 3000, 2),
    );
    let c = compare(&[&a, &b]);
    for f in FIGURES {
        let row = &c["total"][f];
        assert!(row["low"].as_f64().unwrap() > -1.0, "{f}: {row}");
        assert_ne!(row["verdict"], "too few records", "{f}: {row}");
    }
}

/// Issue 62: two LLM runs compared on their time to first token
/// (`-latency ttft`): 50 ms against 60 ms to the first token, the same
/// 1 ms gaps, is 20% slower, and the method says what the figures are.
#[test]
fn llm_runs_compare_on_their_time_to_first_token() {
    let _one = common::one_at_a_time();
    let server = barrage_testkit::CapacityServer::unlimited();
    let dir = common::tempdir("compare-llm");
    let body = dir.join("chat.json");
    std::fs::write(&body, r#"{"model":"m","stream":true,"max_tokens":8}"#).unwrap();
    let side = |first: u32| {
        let file = dir.join(format!("ttft{first}.bin"));
        let url = server.url(&format!("/v1/chat/completions?first={first}ms&gap=1ms"));
        let target = format!("POST {url}\n@{}\n", body.display());
        let out = file.to_str().unwrap().to_string();
        let args = [
            "attack",
            "-llm",
            "openai",
            "-rate",
            "50",
            "-duration",
            "3s",
            "-output",
            &out,
        ];
        ok(&args, target.as_bytes());
        out
    };
    let (base, new) = (side(50), side(60));
    let v = compare(&["-latency", "ttft", &base, &new]);
    assert!(
        v["method"]
            .as_str()
            .unwrap()
            .contains("latency figures: time to first token, from the send (-latency ttft)"),
        "{v}"
    );
    let row = |name: &str| v["total"][name].clone();
    for f in ["mean", "50th", "90th"] {
        let r = row(f);
        let change = r["change"].as_f64().unwrap();
        assert!((0.15..0.25).contains(&change), "{f}: {r}");
        assert_eq!(r["verdict"], "slower", "{f}: {r}");
    }
}
