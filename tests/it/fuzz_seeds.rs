//! Replays every committed fuzz seed and crash reproducer
//! (`crates/fuzz/seeds/<target>/`) through the fuzz targets' bodies on
//! stable, so a fixed crash stays fixed. `scripts/fuzz` runs the real
//! fuzzers.

#[path = "../../crates/fuzz/src/lib.rs"]
#[allow(dead_code)]
mod bodies;

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/fuzz/seeds")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| body(&data));
        assert!(
            outcome.is_ok(),
            "{target}: {} makes the target fail",
            path.display()
        );
        // Every prefix too: the cheapest way to hit the truncation paths.
        for cut in (0..data.len()).step_by((data.len() / 64).max(1)) {
            body(&data[..cut]);
        }
        n += 1;
    }
    assert!(n > 0, "{target}: no seeds");
}

#[test]
fn stream_decoder_seeds() {
    replay("stream_decoder", bodies::stream_decoder);
}

#[test]
fn http_targets_seeds() {
    replay("http_targets", bodies::http_targets);
}

#[test]
fn json_targets_seeds() {
    replay("json_targets", bodies::json_targets);
}

#[test]
fn results_reader_seeds() {
    replay("results_reader", bodies::results_reader);
}

#[test]
fn h1_response_seeds() {
    replay("h1_response", bodies::h1_response);
}
