use super::*;
use crate::Decoder;

/// The payload lengths of the frames of `stream`.
fn frames(stream: &[u8]) -> Vec<usize> {
    let mut at = 6;
    let mut lens = Vec::new();
    while at < stream.len() {
        let len = u32::from_le_bytes(stream[at..at + 4].try_into().unwrap()) as usize;
        lens.push(len);
        at += FRAME_HEADER_LEN + len;
    }
    lens
}

fn hit(body: usize) -> Hit {
    Hit {
        seq: body as u64,
        code: 200,
        method: "GET".into(),
        url: "http://a/".into(),
        body: vec![b'x'; body],
        bytes_in: body as u64,
        ..Hit::default()
    }
}

#[test]
fn no_frame_is_written_past_the_limit() {
    let max = 4096;
    let mut enc = Encoder::new(Vec::new()).unwrap().with_max_frame(max);
    for body in [100, 3000, 3000, 10, 3500] {
        enc.write(&hit(body)).unwrap();
    }
    let err = enc.write(&hit(max)).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("does not fit"), "{err}");
    let out = enc.finish().unwrap();
    let lens = frames(&out);
    assert!(lens.len() >= 3, "{lens:?}");
    assert!(lens.iter().all(|&l| l <= max), "{lens:?}");
    let (hits, err) = Decoder::read_all(&out[..]);
    assert!(err.is_none(), "{err:?}");
    let bodies: Vec<usize> = hits.iter().map(|h| h.body.len()).collect();
    assert_eq!(bodies, [100, 3000, 3000, 10, 3500]);
}

/// Issue 29: the table was bounded in entries only.
#[test]
fn the_table_is_bounded_in_bytes() {
    let mut enc = Encoder::new(Vec::new()).unwrap();
    let n = 600;
    for i in 0..n {
        let mut h = hit(0);
        h.seq = i;
        h.error = format!("{i:05}{}", "e".repeat(60_000));
        enc.write(&h).unwrap();
        assert!(enc.table_bytes <= MAX_TABLE_BYTES);
    }
    assert!(enc.resets >= 3, "{} resets", enc.resets);
    let out = enc.finish().unwrap();
    let (hits, err) = Decoder::read_all(&out[..]);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(hits.len(), n as usize);
    assert!(hits
        .iter()
        .enumerate()
        .all(|(i, h)| h.error.starts_with(&format!("{i:05}"))));
}

#[test]
fn same_text_compares_every_byte() {
    let long = "http://127.0.0.1:18081/a/longer/path?q=1";
    for (a, b) in [("", ""), ("GET", "GET"), (long, long)] {
        assert!(same_text(a.as_bytes(), b.as_bytes()), "{a:?}");
    }
    assert!(!same_text(b"GET", b"PUT"));
    assert!(!same_text(b"GET", b"GETS"));
    // A difference in the whole words and in the tail after them.
    let mut other = long.as_bytes().to_vec();
    for at in [0, 7, 8, 31, long.len() - 1] {
        other[at] ^= 1;
        assert!(!same_text(long.as_bytes(), &other), "byte {at}");
        other[at] ^= 1;
    }
}

#[test]
fn self_audit_samples_come_back_as_written() {
    let a = barrage_model::Audit {
        source: "shard 1/3 (vm)".into(),
        at: 1_700_000_000_000_000_000,
        span: 1_000_123_456,
        threads: 7,
        cpu_max: 901_000_000,
        cpu_user: 1_200_000_000,
        cpu_sys: 300_000_000,
        wait_max: 12_000,
        sent: 5_000,
        written: 4_990,
        gaps: 300,
        stacked: 7,
    };
    let mut out = Vec::new();
    {
        let mut e = Encoder::new(&mut out).unwrap();
        e.audit(&a).unwrap();
        e.write(&Hit {
            seq: 1,
            code: 200,
            ..Hit::default()
        })
        .unwrap();
        e.audit(&barrage_model::Audit {
            source: String::new(),
            ..a.clone()
        })
        .unwrap();
        e.flush().unwrap();
    }
    let mut d = crate::Decoder::new(&out[..]).unwrap();
    let mut h = Hit::default();
    while d.read(&mut h).unwrap() {}
    assert_eq!(d.audits().len(), 2);
    assert_eq!(d.audits()[0], a);
    assert_eq!(d.audits()[1].source, "");
}
