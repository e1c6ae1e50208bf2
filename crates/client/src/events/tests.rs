use super::*;

#[test]
fn an_open_streams_tape_fits_in_256_bytes() {
    // With the `Arc`'s two counts: mimalloc's 256-byte class.
    let size = std::mem::size_of::<TapeInner>() + 16;
    assert!(size <= 256, "a tape's block: {size} bytes");
}

#[test]
fn stamps_grow_a_size_class_at_a_time() {
    assert_eq!(
        [64, 65, 256, 257, 300, 2000, 2049, 2304].map(size_class),
        [64, 80, 256, 320, 320, 2048, 2560, 2560]
    );
    let mut s = Stamps::default();
    for i in 0..1000u64 {
        // 10 ms apart, give or take 0.1 to 4 ms: up to two bytes a stamp.
        s.push((i + 1) * 10_000_000 + (i * 7919 % 41) * 100_000, 1);
    }
    assert_eq!(s.len(), 1000);
    assert_eq!(s.bytes.capacity(), size_class(s.bytes.capacity()));
    assert!(s.bytes.capacity() <= 2048, "{} bytes", s.bytes.capacity());
    assert_eq!(
        s.iter().last(),
        Some(10_000_000_000 + 999 * 7919 % 41 * 100_000)
    );
}

#[test]
fn stamps_round_trip_whatever_their_gaps() {
    // Jitter of every size, swings of seconds, zero gaps, one event per
    // push and several: each comes back as the whole microsecond pushed.
    let mut s = Stamps::default();
    let (mut want, mut at, mut x) = (Vec::new(), 0u64, 12345u64);
    for i in 0..5000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let gap = match i % 5 {
            0 => 10_000_000 + (x >> 40) % 100_000,
            1 => (x >> 33) % 3_000_000_000,
            2 => 0,
            3 => 10_000_000 - (x >> 40) % 5_000_000,
            _ => 1_000 * ((x >> 50) % 70),
        };
        at += gap;
        let n = 1 + (i % 3) as usize;
        s.push(at, n);
        want.extend(std::iter::repeat_n(at / 1000 * 1000, n));
    }
    s.push(at + 5, 0);
    assert_eq!(s.len(), want.len());
    assert_eq!(s.iter().collect::<Vec<_>>(), want);
}

fn split(mode: StreamMode, filter: Option<&str>, pieces: &[&[u8]]) -> Taped {
    let spec = Arc::new(StreamSpec {
        mode,
        http: true,
        max_events: 100,
        max_event_bytes: 64,
        filter: filter.map(|f| StreamSpec::filter_of(f).unwrap()),
        patterns: vec![regex::bytes::Regex::new("two").unwrap()],
        llm: None,
        llm_usage: Default::default(),
    });
    // The tape as an exchange's observer: no runtime, no task-local.
    let tape = Tape::new(&spec);
    tape.head(Some(b"text/event-stream; charset=utf-8"));
    for p in pieces {
        tape.data(p, true);
    }
    tape.finish();
    tape.take()
}

#[test]
fn sse_events_end_at_blank_lines_whatever_the_reads() {
    let text = b": hello\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata: one\ndata: two\n\nretry: 5\n\ndata: [DONE]\n\nbogus: 1\n";
    for cut in 0..text.len() {
        let t = split(StreamMode::Sse, None, &[&text[..cut], &text[cut..]]);
        assert_eq!((t.count, t.malformed), (3, 1), "cut at {cut}");
        assert_eq!(t.matched, ["two"]);
    }
    // With a filter, keep-alives and [DONE] do not count.
    let t = split(StreamMode::Sse, Some(".a"), &[text]);
    assert_eq!(t.count, 1);
    // Auto chose sse from the Content-Type.
    assert_eq!(split(StreamMode::Auto, None, &[text]).count, 3);
}

#[test]
fn ndjson_lines_and_chunks() {
    let t = split(
        StreamMode::Ndjson,
        None,
        &[b"{\"a\":1}\n{\"a\"", b":2}\n\n{\"b\":3}"],
    );
    assert_eq!(t.count, 3);
    assert_eq!(
        split(StreamMode::Ndjson, Some(".a"), &[b"{\"a\":1}\n{\"b\":2}\n"]).count,
        1
    );
    assert_eq!(
        split(StreamMode::Chunks, None, &[b"x", b"y", b"z"]).count,
        3
    );
}

#[test]
fn stamps_are_whole_microseconds_coded_against_the_streams_cadence() {
    let mut s = Stamps::default();
    s.push(200_000_999, 1);
    for i in 1..=1000u64 {
        s.push(200_000_000 + i * 10_000_000, 1);
    }
    s.push(210_000_000_000, 3);
    let all: Vec<u64> = s.iter().collect();
    assert_eq!(all.len(), 1004);
    assert_eq!(s.len(), 1004);
    assert_eq!(all[0], 200_000_000);
    assert_eq!(all[1000], 10_200_000_000);
    assert_eq!(&all[1001..], &[210_000_000_000; 3]);
    // A gap equal to the cadence is the symbol 1: two bits once the
    // code has adapted to it, so 1,000 of them take 250 bytes. The
    // first gaps (200 ms, then 190 ms off the cadence) and the 200 s gap
    // are escaped, a few bytes each.
    assert!(
        (250..=280).contains(&s.bytes.len()),
        "{} bytes",
        s.bytes.len()
    );
    // Held in a buffer at most an eighth (or 256 bytes) over, not a
    // doubled one.
    assert!(
        s.bytes.capacity() <= s.bytes.len() * 9 / 8 + 256,
        "{}",
        s.bytes.capacity()
    );
}

#[test]
fn an_endless_event_is_refused_with_bounded_memory() {
    let big = vec![b'x'; 50];
    let t = split(
        StreamMode::Sse,
        None,
        &[b"data: ", &big, &big, &big, b"\n\n"],
    );
    assert_eq!(t.count, 0);
    assert!(t.error.unwrap().contains("-max-event-bytes (64 bytes)"));
}

#[test]
fn a_thousand_jittered_stamps_fit_in_a_kibibyte() {
    // 10 ms apart, each late by 0 to 59 µs (jitter as on a quiet
    // loopback): the Rice code takes under a byte a stamp, so 1,000
    // stay in mimalloc's 1,024-byte block (the varint before took 1,536).
    let (mut s, mut want, mut x) = (Stamps::default(), Vec::new(), 7u64);
    for i in 1..=1000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let at = (i * 10_000 + (x >> 40) % 60) * 1000;
        s.push(at, 1);
        want.push(at);
    }
    assert!(s.bytes.len() < 1000, "{} bytes", s.bytes.len());
    assert!(s.bytes.capacity() <= 1024, "{} bytes", s.bytes.capacity());
    // The widest gaps there are, both ways, come back too.
    for at in [
        u64::MAX / 2,
        u64::MAX / 2,
        u64::MAX / 2 + 1_000,
        u64::MAX - 999,
    ] {
        s.push(at, 2);
        want.extend([at / 1000 * 1000; 2]);
    }
    assert_eq!(s.iter().collect::<Vec<_>>(), want);
}

#[test]
fn zero_gaps_on_a_loaded_machine_take_a_bit_each() {
    // As the streams cell's stamps with the machine saturated: gaps off
    // the 10 ms cadence by up to 2 ms, and a fifth of the reads bring
    // two events (a zero gap). Once zeros are that frequent each symbol
    // gets a bit for zero first: 1.46 bytes an event here, where the
    // Rice code alone took 1.76 (each zero k + 1 bits, k about 11).
    let (mut s, mut want, mut x, mut at) = (Stamps::default(), Vec::new(), 99u64, 0u64);
    for i in 0..1000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        at += 10_000_000 - 2_000_000 + (x >> 33) % 4_000_000;
        let n = if i % 5 == 3 { 2 } else { 1 };
        s.push(at, n);
        want.extend(std::iter::repeat_n(at / 1000 * 1000, n));
    }
    assert_eq!(s.iter().collect::<Vec<_>>(), want);
    let per = s.bytes.len() as f64 / want.len() as f64;
    assert!(per < 1.6, "{per:.3} bytes an event");
}
