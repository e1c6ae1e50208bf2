//! Helpers for end-to-end tests: run the real binary, decode its stream.
#![allow(dead_code)]

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

use barrage_stream::{Decoder, Hit, StreamError};

/// The built binary, without proxy variables.
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_barrage"));
    for v in barrage_testkit::PROXY_VARS {
        cmd.env_remove(v);
    }
    cmd
}

/// Runs barrage with `args`, feeding `stdin`, and waits.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn barrage");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait barrage");
    let _ = feeder.join();
    assert_no_panic(&out);
    out
}

/// Fails the test if barrage panicked.
pub fn assert_no_panic(out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "barrage panicked: {err}");
}

/// Every record of a binary stream; fails on any decode error.
pub fn decode(bytes: &[u8]) -> Vec<Hit> {
    let (hits, err) = decode_lossy(bytes);
    if let Some(e) = err {
        panic!(
            "stream does not decode cleanly after {} records: {e}",
            hits.len()
        );
    }
    hits
}

/// Whether `bytes` hold no records: nothing at all, or the stream an
/// attack leaves when it fails before its first request (issue 37).
pub fn no_records(bytes: &[u8]) -> bool {
    bytes.is_empty()
        || matches!(
            decode_lossy(bytes),
            (hits, Some(StreamError::Aborted { .. })) if hits.is_empty()
        )
}

/// Records up to the first error, and the error.
pub fn decode_lossy(bytes: &[u8]) -> (Vec<Hit>, Option<StreamError>) {
    Decoder::read_all(bytes)
}

/// Sorts hits by seq and checks that seqs are exactly 0..n.
pub fn assert_seq_complete(hits: &mut [Hit]) {
    hits.sort_by_key(|h| h.seq);
    for (i, h) in hits.iter().enumerate() {
        assert_eq!(h.seq, i as u64, "seq {i} missing or repeated");
    }
}

/// Sorts hits by seq and checks the open model's schedule: seqs exactly
/// 0..n, seq i scheduled `i × period_ns` after seq 0, none sent before
/// it was due.
pub fn assert_exact_schedule(hits: &mut [Hit], period_ns: i64) {
    assert_seq_complete(hits);
    let start = hits.first().map_or(0, |h| h.scheduled);
    for h in hits.iter() {
        assert_eq!(
            h.scheduled - start,
            h.seq as i64 * period_ns,
            "intended offset of seq {}",
            h.seq
        );
        assert!(h.timestamp >= h.scheduled, "seq {} sent early", h.seq);
    }
}

/// A file under tests/.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(rel)
}

/// A fresh temporary directory for one test, removed with what it holds
/// when the value is dropped (also when the test fails).
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh temporary directory for one test; see [`TempDir`].
pub fn tempdir(tag: &str) -> TempDir {
    let d = std::env::temp_dir().join(format!(
        "barrage-test-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&d).expect("tempdir");
    TempDir(d)
}

/// Compares `actual` with the golden file `tests/golden/NAME`, or rewrites
/// it when BARRAGE_UPDATE_GOLDEN=1 (the only way golden files change).
pub fn golden(name: &str, actual: &[u8]) {
    let path = fixture(&format!("golden/{name}"));
    if std::env::var("BARRAGE_UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let want = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with BARRAGE_UPDATE_GOLDEN=1 to create)",
            path.display()
        )
    });
    assert_eq!(
        String::from_utf8_lossy(actual),
        String::from_utf8_lossy(&want),
        "output differs from {}",
        path.display()
    );
}

/// Runs barrage and returns its stdout, failing the test on a non-zero exit.
pub fn ok(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = run(args, stdin);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A file under tests/, as a string argument.
pub fn path(rel: &str) -> String {
    fixture(rel).to_str().unwrap().to_string()
}

/// Runs `barrage ARGS` and checks it refused them as bad usage: exit 2, one
/// line on stderr containing `needle`, no records on stdout (an attack
/// leaves the stream that says it failed). Returns the line.
pub fn refused(args: &[&str], stdin: &[u8], needle: &str) -> String {
    let out = run(args, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    assert!(no_records(&out.stdout), "{args:?}: wrote records to stdout");
    stderr
}

/// `barrage report -by BY -type json` over `stream`: each group's JSON
/// object by its key, and the report's text for failure messages.
pub fn report_groups(stream: &[u8], by: &str) -> (Vec<(String, serde_json::Value)>, String) {
    let out = ok(&["report", "-by", by, "-type", "json"], stream);
    let text = String::from_utf8_lossy(&out).into_owned();
    let groups = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|v| Some((v["group"]["key"].as_str()?.to_string(), v)))
        .collect();
    (groups, text)
}

/// The group `key` of [`report_groups`]' answer (fails naming the text).
pub fn group<'a>(
    groups: &'a (Vec<(String, serde_json::Value)>, String),
    key: &str,
) -> &'a serde_json::Value {
    groups
        .0
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no group {key}: {}", groups.1))
}

/// `barrage ARGS` started with its stdout and stderr piped, not waited for.
pub fn spawn(args: &[&str]) -> std::process::Child {
    bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn barrage")
}

/// The records as a comparable line each, sorted: every field a way of
/// sending can repeat across records (flows, mixes and sweeps share
/// `seq`s) is in it.
pub fn record_keys(hits: &[Hit]) -> Vec<String> {
    let mut k: Vec<String> = hits
        .iter()
        .map(|h| {
            format!(
                "{} {} {} {:?} {} {} {} {} {}",
                h.attack,
                h.name,
                h.seq,
                h.session,
                h.scheduled,
                h.timestamp,
                h.code,
                h.url,
                h.error
            )
        })
        .collect();
    k.sort();
    k
}

/// Held by a test that times what it sees (a compare's verdict, a
/// stream's time to first event, a sweep's knee, a connection's cost):
/// no two such tests run at once, whatever module they are in.
#[allow(dead_code)]
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}

/// `barrage attack ARGS` on `targets` under a 60 s watchdog: its exit,
/// stdout and stderr, however it ended.
#[allow(dead_code)]
pub fn attack_watched(args: &[&str], targets: &str) -> barrage_testkit::ChildResult {
    let mut full = vec!["attack"];
    full.extend_from_slice(args);
    barrage_testkit::Child::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_barrage")),
        &full,
        targets.as_bytes(),
        None,
    )
    .wait(std::time::Duration::from_secs(60))
}

/// `barrage attack ARGS` on `targets`, which must succeed: its records and
/// its output.
#[allow(dead_code)]
pub fn attack_ok(args: &[&str], targets: &str) -> (Vec<Hit>, Output) {
    let mut full = vec!["attack"];
    full.extend_from_slice(args);
    let out = run(&full, targets.as_bytes());
    assert!(
        out.status.success(),
        "attack failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (decode(&out.stdout), out)
}
