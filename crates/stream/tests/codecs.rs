//! Round-trips and damage tests for every codec.

use barrage_model::Hit;
use barrage_stream::{
    CsvReader, CsvWriter, Decoder, Encoder, HitReader, JsonReader, JsonWriter, StreamError,
};
use proptest::prelude::*;

fn arb_hit() -> impl Strategy<Value = Hit> {
    (
        (
            any::<u64>(),
            any::<i64>(),
            any::<i64>(),
            any::<u64>(),
            any::<u16>(),
            any::<u64>(),
        ),
        (
            any::<u64>(),
            any::<u64>(),
            ".{0,20}",
            "[A-Z]{1,7}",
            ".{0,40}",
            ".{0,8}",
        ),
        (
            proptest::collection::vec(any::<u8>(), 0..40),
            proptest::collection::vec(("[A-Za-z-]{1,12}", "[ -~]{0,20}"), 0..4),
        ),
    )
        .prop_map(
            |(
                (seq, scheduled, timestamp, latency, code, first_byte),
                (bytes_out, bytes_in, error, method, url, attack),
                (body, headers),
            )| Hit {
                attack,
                seq,
                scheduled,
                timestamp,
                latency,
                // At most the latency (the encoder keeps only such).
                first_byte: first_byte % latency.saturating_add(1).max(1),
                code,
                bytes_out,
                bytes_in,
                error,
                method,
                url,
                body,
                headers,
                proto: barrage_model::Proto::from_code(bytes_in % 4).unwrap_or_default(),
                // Named, unnamed and renamed records (kind 5, and the name
                // that kinds 1 and 3 keep).
                name: match seq % 3 {
                    0 => String::new(),
                    1 => "read".into(),
                    _ => format!("n{}", latency % 5),
                },
                // Records without a link, on a new connection, and reused
                // ones on a few connections (kind 7, and the addresses it
                // leaves out when they repeat).
                link: match timestamp % 4 {
                    0 => None,
                    1 => Some(barrage_model::Link {
                        reused: false,
                        dns: scheduled as u64 % 1_000_000,
                        connect: latency % 3_000_000,
                        tls: if bytes_in % 2 == 0 {
                            0
                        } else {
                            bytes_out % 9_000_000
                        },
                        remote: Some(format!("127.0.0.{}:8080", 1 + seq % 3).parse().unwrap()),
                        local: Some(format!("[::1]:{}", 40_000 + seq % 7).parse().unwrap()),
                    }),
                    2 => Some(barrage_model::Link {
                        reused: true,
                        remote: Some("127.0.0.1:8080".parse().unwrap()),
                        local: Some(
                            format!("127.0.0.1:{}", 40_000 + latency % 5)
                                .parse()
                                .unwrap(),
                        ),
                        ..Default::default()
                    }),
                    _ => Some(barrage_model::Link {
                        reused: seq % 2 == 0,
                        connect: if seq % 2 == 0 { 0 } else { latency },
                        ..Default::default()
                    }),
                },
                // Streamed answers (kind 8): none, stamped, and some
                // counted past the stamps.
                // Whole microseconds, as the stream keeps them.
                events: (0..seq % 6)
                    .map(|k| (latency % 1_000_000 + k * (bytes_in % 50_000_000)) / 1000 * 1000)
                    .collect(),
                event_count: (seq % 6) + if seq % 12 >= 6 { bytes_out % 4 } else { 0 },
                event_malformed: if seq % 5 == 0 { bytes_in % 3 } else { 0 },
                // A flow's requests (kind 9): none, going on, and each end.
                session: match seq % 7 {
                    0 | 1 => None,
                    k => Some(barrage_model::SessionMark {
                        id: seq / 3,
                        step: (bytes_out % 5) as u32,
                        end: barrage_model::SessionEnd::of_code(k % 3).unwrap(),
                        took: if k % 3 == 0 { 0 } else { latency / 3 },
                    }),
                },
                // LLM token counts (kind 11): none, and each source
                // given or not.
                tokens: (seq % 5 != 0).then(|| {
                    let some = |bit: u64, v: u64| (bytes_out & bit != 0).then_some(v);
                    barrage_model::Tokens {
                        input: some(1, bytes_in % 60_000),
                        running: some(2, latency % 4_000),
                        output: some(4, latency % 4_001),
                        chunks: seq % 70,
                        reasoning_chunks: seq % 3,
                        reasoning: some(8, bytes_in % 17),
                        first_chunk: some(16, seq % 5),
                        asked_input: some(32, bytes_in % 1_000),
                        asked_output: some(64, latency % 300),
                    }
                }),
            },
        )
}

fn encode(hits: &[Hit], flush_every: usize) -> Vec<u8> {
    let mut enc = Encoder::new(Vec::new()).unwrap();
    for (i, h) in hits.iter().enumerate() {
        enc.write(h).unwrap();
        if flush_every > 0 && i % flush_every == flush_every - 1 {
            enc.flush().unwrap();
        }
    }
    enc.finish().unwrap()
}

fn decode_all(bytes: &[u8]) -> (Vec<Hit>, Option<StreamError>) {
    Decoder::read_all(bytes)
}

fn sample(n: u64) -> Vec<Hit> {
    (0..n)
        .map(|i| Hit {
            attack: "a".into(),
            seq: i,
            scheduled: 1_700_000_000_000_000_000 + i as i64 * 5_000_000,
            timestamp: 1_700_000_000_000_050_000 + i as i64 * 5_000_000,
            latency: 300_000 + i * 7,
            first_byte: if i % 4 == 3 { 0 } else { 250_000 + i * 5 },
            code: if i % 4 == 3 { 0 } else { 200 },
            bytes_out: 0,
            bytes_in: 6,
            error: if i % 4 == 3 {
                "connection refused".into()
            } else {
                String::new()
            },
            method: "GET".into(),
            url: format!("http://127.0.0.1:8080/{}", i % 3),
            body: vec![],
            headers: vec![],
            link: None,
            events: vec![],
            event_count: 0,
            event_malformed: 0,
            session: None,
            tokens: None,
            // Changing now and then, unknown for the failures.
            proto: match i % 4 {
                3 => barrage_model::Proto::Unknown,
                _ if i % 10 < 5 => barrage_model::Proto::Http1,
                _ => barrage_model::Proto::Http3,
            },
            // Unnamed: names are the proptest's (a record that renames
            // costs a kind-5 item).
            name: String::new(),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn binary_round_trips(hits in proptest::collection::vec(arb_hit(), 0..30), flush in 0usize..5) {
        let bytes = encode(&hits, flush);
        let (back, err) = decode_all(&bytes);
        prop_assert!(err.is_none(), "{err:?}");
        prop_assert_eq!(back, hits);
    }

    #[test]
    fn concatenated_records_decode_in_order(a in proptest::collection::vec(arb_hit(), 0..10), b in proptest::collection::vec(arb_hit(), 0..10)) {
        let mut enc = Encoder::new(Vec::new()).unwrap();
        for h in a.iter().chain(&b) { enc.write(h).unwrap(); }
        let (back, err) = decode_all(&enc.finish().unwrap());
        prop_assert!(err.is_none());
        prop_assert_eq!(back, a.into_iter().chain(b).collect::<Vec<_>>());
    }

    #[test]
    fn json_round_trips(mut hits in proptest::collection::vec(arb_hit(), 0..20)) {
        for h in &mut hits {
            // JSON carries headers as a map (sorted by name), times in RFC 3339.
            h.headers.sort_by(|x, y| x.0.cmp(&y.0));
            h.timestamp = h.timestamp.rem_euclid(4_000_000_000_000_000_000);
            h.scheduled = h.scheduled.rem_euclid(4_000_000_000_000_000_000);
        }
        let mut w = JsonWriter::new(Vec::new());
        for h in &hits { w.write(h).unwrap(); }
        let bytes = w.into_inner().unwrap();
        let mut r = JsonReader::new(&bytes[..]);
        let mut back = vec![];
        let mut h = Hit::default();
        while r.read(&mut h).unwrap() { back.push(h.clone()); }
        for h in &mut back { h.headers.sort_by(|x, y| x.0.cmp(&y.0)); }
        prop_assert_eq!(back, hits);
    }

    #[test]
    fn csv_round_trips(mut hits in proptest::collection::vec(arb_hit(), 0..20)) {
        for h in &mut hits {
            // CSV has no `scheduled`, `first_byte`, `proto` or `name`
            // column (vegeta's 12); header values are trimmed.
            h.scheduled = h.timestamp;
            h.first_byte = 0;
            h.proto = barrage_model::Proto::Unknown;
            h.name.clear();
            h.link = None;
            h.events.clear();
            h.event_count = 0;
            h.event_malformed = 0;
            h.session = None;
            h.tokens = None;
            for (_, v) in &mut h.headers { *v = v.trim().to_string(); }
        }
        let mut w = CsvWriter::new(Vec::new());
        for h in &hits { w.write(h).unwrap(); }
        let bytes = w.into_inner().unwrap();
        let mut r = CsvReader::new(&bytes[..]);
        let mut back = vec![];
        let mut h = Hit::default();
        while r.read(&mut h).unwrap() { back.push(h.clone()); }
        prop_assert_eq!(back, hits);
    }
}

#[test]
fn truncation_at_every_offset_keeps_complete_frames() {
    let hits = sample(100);
    // A frame every 10 records.
    let bytes = encode(&hits, 10);
    let mut frame_ends = vec![];
    {
        let mut dec = Decoder::new(&bytes[..]).unwrap();
        let mut h = Hit::default();
        let mut n = 0;
        while dec.read(&mut h).unwrap() {
            n += 1;
            if n % 10 == 0 {
                frame_ends.push(dec.offset() as usize);
            }
        }
    }
    assert_eq!(frame_ends.len(), 10);
    assert_eq!(*frame_ends.last().unwrap(), bytes.len());
    for cut in 0..bytes.len() {
        let (back, err) = decode_all(&bytes[..cut]);
        let complete = frame_ends.iter().filter(|&&end| end <= cut).count() * 10;
        assert_eq!(back.len(), complete, "cut at {cut}");
        assert_eq!(back[..], hits[..complete], "cut at {cut}");
        let on_boundary = cut == 6 || frame_ends.contains(&cut);
        match err {
            None => assert!(on_boundary, "cut at {cut} must report an error"),
            Some(StreamError::Truncated { offset, .. }) => {
                assert!(!on_boundary);
                assert!(offset as usize <= cut, "offset {offset} beyond cut {cut}");
            }
            Some(StreamError::NotAStream { .. }) => assert!(cut < 4),
            Some(e) => panic!("cut at {cut}: unexpected {e}"),
        }
    }
}

#[test]
fn every_single_byte_flip_is_caught_or_harmless() {
    let hits = sample(100);
    let bytes = encode(&hits, 25);
    for i in 0..bytes.len() {
        for bit in [0x01u8, 0x80] {
            let mut bad = bytes.clone();
            bad[i] ^= bit;
            let (back, err) = decode_all(&bad);
            // Either an error, or (never, with the CRC) silently different data.
            assert!(err.is_some() || back == hits, "flip at {i} went unnoticed");
            // Whatever was returned before the error is a prefix of the truth.
            assert_eq!(back[..], hits[..back.len()], "flip at {i}");
        }
    }
}

#[test]
fn header_errors_are_named() {
    assert!(matches!(
        Decoder::new(&b"GET http://x/"[..]),
        Err(StreamError::NotAStream { .. })
    ));
    assert!(matches!(
        Decoder::new(&b""[..]),
        Err(StreamError::NotAStream { .. })
    ));
    let newer = [0xB7, b'B', b'R', b'G', 12, 0];
    match Decoder::new(&newer[..]) {
        Err(StreamError::NewerVersion {
            found: 12,
            supported: 11,
        }) => {}
        other => panic!("{:?}", other.err()),
    }
}

#[test]
fn oversized_frame_length_is_rejected_before_allocating() {
    let mut bytes = encode(&sample(1), 0)[..6].to_vec();
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    let (_, err) = decode_all(&bytes);
    assert!(
        matches!(err, Some(StreamError::Corrupt { offset: 6, .. })),
        "{err:?}"
    );
}

#[test]
fn one_target_record_is_small() {
    let hits = sample(10_000);
    let one_url: Vec<Hit> = hits
        .into_iter()
        .map(|mut h| {
            h.url = "http://127.0.0.1:8080/".into();
            h.error.clear();
            h.code = 200;
            h
        })
        .collect();
    let bytes = encode(&one_url, 0);
    let per = bytes.len() as f64 / one_url.len() as f64;
    assert!(per <= 20.0, "{per} bytes per record");
}

#[test]
fn reader_detects_each_format() {
    let hits = sample(5);
    let bin = encode(&hits, 0);
    let mut csv = CsvWriter::new(Vec::new());
    let mut json = JsonWriter::new(Vec::new());
    for h in &hits {
        csv.write(h).unwrap();
        json.write(h).unwrap();
    }
    for (name, bytes) in [
        ("bin", bin),
        ("csv", csv.into_inner().unwrap()),
        ("json", json.into_inner().unwrap()),
    ] {
        let mut r = HitReader::open(&bytes[..]).unwrap();
        let mut h = Hit::default();
        let mut n = 0;
        while r.read(&mut h).unwrap() {
            assert_eq!(h.seq, n, "{name}");
            assert_eq!(h.timestamp, hits[n as usize].timestamp, "{name}");
            assert_eq!(h.url, hits[n as usize].url, "{name}");
            n += 1;
        }
        assert_eq!(n, 5, "{name}");
    }
    assert!(matches!(
        HitReader::open(&b"GET http://x/\n"[..]),
        Err(StreamError::NotAStream { .. })
    ));
    let mut empty = HitReader::open(&b""[..]).unwrap();
    assert!(!empty.read(&mut Hit::default()).unwrap());
}

#[test]
fn reads_vegeta_fixtures() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/vegeta"
    );
    let Ok(csv) = std::fs::read(format!("{dir}/alpha.csv")) else {
        eprintln!("SKIP: vegeta fixtures not found beside the checkout");
        return;
    };
    let json = std::fs::read(format!("{dir}/alpha.jsonl")).unwrap();
    let (mut a, mut b) = (CsvReader::new(&csv[..]), JsonReader::new(&json[..]));
    let (mut ha, mut hb) = (Hit::default(), Hit::default());
    let mut n = 0;
    while a.read(&mut ha).unwrap() {
        assert!(b.read(&mut hb).unwrap());
        hb.headers.sort();
        ha.headers.sort();
        assert_eq!(ha, hb, "record {n}");
        n += 1;
    }
    assert_eq!(n, 300);
    assert!(ha.error.is_empty() || ha.code != 200);
}

#[test]
fn csv_quotes_like_go() {
    let mut w = CsvWriter::new(Vec::new());
    let h = Hit {
        error: "Get \"http://x/\": refused".into(),
        attack: "a,b".into(),
        ..Hit::default()
    };
    w.write(&h).unwrap();
    let line = String::from_utf8(w.into_inner().unwrap()).unwrap();
    assert_eq!(
        line,
        "0,0,0,0,0,\"Get \"\"http://x/\"\": refused\",,\"a,b\",0,,,\n"
    );
}

#[test]
fn bad_lines_name_their_line() {
    let mut r = CsvReader::new(
        &b"1,200,5,0,0,,,a,0,GET,http://x/,\n1,abc,5,0,0,,,a,1,GET,http://x/,\n"[..],
    );
    let mut h = Hit::default();
    assert!(r.read(&mut h).unwrap());
    match r.read(&mut h) {
        Err(StreamError::BadLine { line: 2, what }) => assert!(what.contains("code"), "{what}"),
        other => panic!("{other:?}"),
    }
    let mut j = JsonReader::new(&b"\n{\"timestamp\":\"bad\"}\n"[..]);
    match j.read(&mut h) {
        Err(StreamError::BadLine { line: 2, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn string_table_resets_keep_every_record_intact() {
    // 70,000 distinct URLs and errors force table resets mid-record.
    let hits: Vec<Hit> = (0..70_000u64)
        .map(|i| Hit {
            seq: i,
            url: format!("http://h/{i}"),
            error: format!("error {}", i / 2),
            method: "GET".into(),
            headers: vec![(format!("x-h{}", i % 3), "v".into())],
            ..Hit::default()
        })
        .collect();
    let bytes = encode(&hits, 0);
    let (back, err) = decode_all(&bytes);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(back, hits);
}

/// Records on 300 connections in a scrambled order (more than the 128 a
/// frame's recent list holds, so every code path of kind 7's local
/// addresses is taken), with the table reset and frames cut among them:
/// every record reads back as written.
#[test]
fn many_connections_round_trip() {
    let hits: Vec<Hit> = (0..3000u64)
        .map(|i| Hit {
            seq: i,
            scheduled: 1_700_000_000_000_000_000 + i as i64 * 50_000,
            timestamp: 1_700_000_000_000_000_000 + i as i64 * 50_000 + 7_000,
            latency: 100_000 + i % 13,
            code: if i % 97 == 0 { 503 } else { 200 },
            method: "GET".into(),
            url: "http://127.0.0.1:8080/".into(),
            link: Some(barrage_model::Link {
                reused: i % 50 != 0,
                connect: if i % 50 == 0 { 40_000 } else { 0 },
                remote: Some("127.0.0.1:8080".parse().unwrap()),
                local: Some(
                    format!("127.0.0.1:{}", 30_000 + (i * 7919) % 300)
                        .parse()
                        .unwrap(),
                ),
                ..Default::default()
            }),
            ..Hit::default()
        })
        .collect();
    for flush in [0, 7, 500] {
        let bytes = encode(&hits, flush);
        let (back, err) = decode_all(&bytes);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(back, hits, "flushed every {flush}");
    }
}
