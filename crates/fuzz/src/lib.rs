//! The bodies of barrage's fuzz targets, shared by the cargo-fuzz binaries
//! and by `tests/it/fuzz_seeds.rs`, which replays every committed seed and
//! crash reproducer on stable as an ordinary test.
//!
//! Each body must never panic, hang or allocate without bound on any input;
//! where a value decodes, it must survive a round trip.

use barrage_model::Hit;
use barrage_stream::{Decoder, Encoder, HitReader};
use barrage_targets::{Defaults, Format, TargetReader};

/// Most records or targets a body reads from one input (bounds the time).
const MAX_ITEMS: usize = 10_000;

/// The binary stream decoder: every record it returns re-encodes and
/// decodes to the same record.
pub fn stream_decoder(data: &[u8]) {
    let Ok(mut dec) = Decoder::new(data) else {
        return;
    };
    let mut hits = Vec::new();
    let mut hit = Hit::default();
    while hits.len() < MAX_ITEMS {
        match dec.read(&mut hit) {
            Ok(true) => hits.push(hit.clone()),
            _ => break,
        }
    }
    let mut enc = Encoder::new(Vec::new()).expect("encoding into memory");
    for h in &hits {
        enc.write(h).expect("encoding into memory");
    }
    let bytes = enc.finish().expect("encoding into memory");
    let mut again = Decoder::new(&bytes[..]).expect("own header");
    for h in &hits {
        let mut back = Hit::default();
        assert!(again.read(&mut back).expect("own stream decodes"));
        assert_eq!(&back, h, "round trip changed a record");
    }
}

fn targets(data: &[u8], format: Format) {
    let mut r = TargetReader::new(data, "fuzz", format, Defaults::default());
    for _ in 0..MAX_ITEMS {
        match r.next() {
            Ok(Some(t)) => {
                assert!(!t.method.is_empty() && !t.url.is_empty());
            }
            Ok(None) => break,
            Err(e) => {
                assert!(e.line >= 1, "errors name a line");
                break;
            }
        }
    }
}

/// vegeta's http target format.
pub fn http_targets(data: &[u8]) {
    targets(data, Format::Http);
}

/// The JSON-lines target format.
pub fn json_targets(data: &[u8]) {
    targets(data, Format::Json);
}

/// The format-sniffing results reader (binary, CSV or JSON lines).
pub fn results_reader(data: &[u8]) {
    let Ok(mut r) = HitReader::open(data) else {
        return;
    };
    let mut hit = Hit::default();
    for _ in 0..MAX_ITEMS {
        match r.read(&mut hit) {
            Ok(true) => {}
            _ => break,
        }
    }
}

/// barrage's HTTP/1.1 response reader: the first byte picks the size of
/// the pieces the rest is fed in (1 to 256 bytes; a read may return any
/// amount), the second whether the request was HEAD. Whatever the bytes,
/// it never panics, never claims more bytes than it was given, keeps no
/// more body than asked and no more of a head than the limit.
pub fn h1_response(data: &[u8]) {
    use barrage_client::h1::{Fed, Framer, Limits};
    let (Some(&step), Some(&head)) = (data.first(), data.get(1)) else {
        return;
    };
    let limits = Limits {
        head_bytes: 4096,
        keep_body: 100,
        keep_headers: true,
        jar_only: false,
        stream: false,
    };
    let mut framer = Framer::new(limits, head & 1 == 1);
    let rest = &data[2..];
    let step = usize::from(step).max(1);
    let mut responses = 0;
    for piece in rest.chunks(step) {
        let mut piece = piece;
        loop {
            match framer.feed(piece) {
                Ok(Fed::More) => break,
                Ok(Fed::Complete(n)) => {
                    assert!(n <= piece.len(), "took {n} of {} bytes", piece.len());
                    assert!(
                        framer.body.len() <= 100,
                        "kept {} body bytes",
                        framer.body.len()
                    );
                    responses += 1;
                    if responses > MAX_ITEMS || !framer.reusable() {
                        return;
                    }
                    // The next pipelined response starts where this ended.
                    piece = &piece[n..];
                    framer = Framer::new(limits, head & 1 == 1);
                    if piece.is_empty() {
                        break;
                    }
                }
                Err(_) => return,
            }
        }
        assert!(framer.body.len() <= 100);
    }
    let _ = framer.eof();
}
