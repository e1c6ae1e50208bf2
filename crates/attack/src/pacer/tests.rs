use super::*;

fn rate(s: &str) -> Rate {
    s.parse().unwrap()
}

#[test]
fn due_from_counts_what_the_duration_still_wanted() {
    let sec = Some(Duration::from_secs(1));
    let p = Pacer::new(rate("100"), sec, None);
    assert_eq!(p.due_from(0), (100, true));
    assert_eq!(p.due_from(40), (60, true));
    assert_eq!(p.due_from(100), (0, true));
    assert_eq!(p.due_from(500), (0, true));
    // A rate no host keeps: counted, not walked.
    let p = Pacer::new(rate("1000000000"), sec, None);
    assert_eq!(p.due_from(12_345), (1_000_000_000 - 12_345, true));
    let p = Pacer::new(rate("1000000000"), sec, Some(5_000));
    assert_eq!(p.due_from(1_000), (4_000, true));
    // Shards split the count: 0/3 has 34 of 100, 2/3 has 33.
    let p = Pacer::new(rate("100"), sec, None).with_shard(Some((0, 3)));
    assert_eq!(p.due_from(0), (34, true));
    let p = Pacer::new(rate("100"), sec, None).with_shard(Some((2, 3)));
    assert_eq!(p.due_from(10), (23, true));
    // Poisson: walked exactly when short, else the expected count.
    let p = Pacer::new(rate("1000"), sec, None).with_arrivals(Arrivals::Poisson(Some(7)), 0);
    let walked = (0..)
        .take_while(|&k| matches!(p.due(k, 0), Due::At(_)))
        .count() as u64;
    assert_eq!(p.due_from(0), (walked, true));
    let p = Pacer::new(rate("10000000"), sec, None).with_arrivals(Arrivals::Poisson(Some(7)), 0);
    assert_eq!(p.due_from(0), (10_000_000, false));
    // Without a duration, or unpaced: nothing is due by an end.
    assert_eq!(
        Pacer::new(rate("100"), None, Some(9)).due_from(0),
        (0, true)
    );
    assert_eq!(Pacer::new(Rate::Max, sec, None).due_from(0), (0, true));
}

#[test]
fn table() {
    let sec = Some(Duration::from_secs(1));
    let two = Some(Duration::from_secs(2));
    let cases: &[(&str, Pacer, u64, u64, Due)] = &[
        (
            "first hit at 0",
            Pacer::new(rate("200"), two, None),
            0,
            0,
            Due::At(0),
        ),
        (
            "5 ms apart",
            Pacer::new(rate("200"), two, None),
            1,
            0,
            Due::At(5_000_000),
        ),
        (
            "last of 400",
            Pacer::new(rate("200"), two, None),
            399,
            0,
            Due::At(1_995_000_000),
        ),
        (
            "401st is past the end",
            Pacer::new(rate("200"), two, None),
            400,
            0,
            Due::Stop,
        ),
        (
            "lateness never moves the schedule",
            Pacer::new(rate("200"), two, None),
            3,
            9_000_000_000,
            Due::At(15_000_000),
        ),
        (
            "requests cap first",
            Pacer::new(rate("200"), two, Some(3)),
            3,
            0,
            Due::Stop,
        ),
        (
            "duration cap first",
            Pacer::new(rate("1"), sec, Some(100)),
            1,
            0,
            Due::Stop,
        ),
        (
            "no duration runs on",
            Pacer::new(rate("1"), None, None),
            1_000_000,
            0,
            Due::At(1_000_000 * 1_000_000_000),
        ),
        (
            "zero duration means none",
            Pacer::new(rate("1"), Some(Duration::ZERO), None),
            5,
            0,
            Due::At(5_000_000_000),
        ),
        (
            "closed model now",
            Pacer::new(Rate::Max, sec, None),
            7,
            10,
            Due::Now,
        ),
        (
            "closed model ends by clock",
            Pacer::new(Rate::Max, sec, None),
            7,
            1_000_000_000,
            Due::Stop,
        ),
        (
            "closed model with count",
            Pacer::new(Rate::Max, None, Some(2)),
            2,
            0,
            Due::Stop,
        ),
        (
            "offset overflow stops",
            Pacer::new(rate("1/1h"), None, None),
            u64::MAX / 2,
            0,
            Due::Stop,
        ),
        (
            "shard 1 of 3: its first is the schedule's second",
            Pacer::new(rate("200"), two, None).with_shard(Some((1, 3))),
            0,
            0,
            Due::At(5_000_000),
        ),
        (
            "shard 1 of 3: its third is the schedule's eighth",
            Pacer::new(rate("200"), two, None).with_shard(Some((1, 3))),
            2,
            0,
            Due::At(35_000_000),
        ),
        (
            "shard 2 of 3: -requests counts the whole schedule",
            Pacer::new(rate("200"), two, Some(10)).with_shard(Some((2, 3))),
            3,
            0,
            Due::Stop,
        ),
        (
            "shard 2 of 3: the last of 10 is its third",
            Pacer::new(rate("200"), two, Some(10)).with_shard(Some((2, 3))),
            2,
            0,
            Due::At(40_000_000),
        ),
        (
            "stages instead of the rate",
            Pacer::new(rate("200"), None, None).with_stages("1s:1000".parse().ok()),
            125,
            0,
            Due::At(500_000_000),
        ),
        (
            "stages end the schedule",
            Pacer::new(rate("200"), None, None).with_stages("1s:1000".parse().ok()),
            500,
            0,
            Due::Stop,
        ),
        (
            "-duration cuts the stages",
            Pacer::new(rate("200"), sec, None).with_stages("2s:1000".parse().ok()),
            250,
            0,
            Due::Stop,
        ),
    ];
    for (name, pacer, seq, elapsed, want) in cases {
        assert_eq!(pacer.due(*seq, *elapsed), *want, "{name}");
    }
}

fn offsets(p: &Pacer, n: u64) -> Vec<u64> {
    (0..n)
        .map_while(|k| match p.due(k, 0) {
            Due::At(at) => Some(at),
            _ => None,
        })
        .collect()
}

#[test]
fn poisson_is_a_function_of_its_seed_and_shards_make_one_schedule() {
    let poisson = |shard| {
        Pacer::new(rate("1000"), None, Some(30_000))
            .with_arrivals(Arrivals::Poisson(Some(42)), 0)
            .with_shard(shard)
    };
    let whole = offsets(&poisson(None), 40_000);
    assert_eq!(whole.len(), 30_000);
    assert_eq!(
        whole,
        offsets(&poisson(None), 40_000),
        "same seed, same offsets"
    );
    assert!(whole.windows(2).all(|w| w[0] <= w[1]));
    let mut union: Vec<(u64, u64)> = Vec::new();
    for i in 0..3 {
        let p = poisson(Some((i, 3)));
        for (k, at) in offsets(&p, 40_000).into_iter().enumerate() {
            union.push((p.global(k as u64), at));
        }
    }
    union.sort();
    assert_eq!(union.len(), 30_000);
    assert!(union
        .iter()
        .enumerate()
        .all(|(i, (seq, at))| *seq == i as u64 && *at == whole[i]));
    // The mean rate is the rate's: 30,000 at 1,000/s end near 30 s.
    let end = whole[29_999] as f64 / 1e9;
    assert!((end - 30.0).abs() < 0.6, "{end}");
    let other = offsets(
        &Pacer::new(rate("1000"), None, Some(100)).with_arrivals(Arrivals::Poisson(Some(43)), 0),
        100,
    );
    assert_ne!(other, whole[..100]);
}

#[test]
fn poisson_follows_stages_and_duration() {
    // 0 to 2,000/s over 10 s: 10,000 requests, the first half after
    // 7.07 s (the integral of a ramp grows with the square of time).
    let p = Pacer::new(rate("1"), None, None)
        .with_stages("10s:2000".parse().ok())
        .with_arrivals(Arrivals::Poisson(Some(5)), 0);
    let all = offsets(&p, 20_000);
    assert!((all.len() as i64 - 10_000).abs() < 300, "{}", all.len());
    let half = all[all.len() / 2] as f64 / 1e9;
    assert!((half - 7.07).abs() < 0.15, "{half}");
    let cut = Pacer::new(rate("1000"), Some(Duration::from_secs(1)), None)
        .with_arrivals(Arrivals::Poisson(Some(5)), 0);
    assert!(offsets(&cut, 5_000).iter().all(|&at| at < 1_000_000_000));
}

#[test]
fn a_recording_replays_its_offsets_scaled_and_looped() {
    let ms = |m: u64| m * 1_000_000;
    let rec = [0, ms(100), ms(350)];
    let p = Pacer::new(rate("1"), None, Some(7)).with_recording(&rec, 1.0);
    // A pass lasts 350 ms and one mean gap (175 ms) more.
    assert_eq!(
        offsets(&p, 10),
        [0, ms(100), ms(350), ms(525), ms(625), ms(875), ms(1050)]
    );
    let fast = Pacer::new(rate("1"), None, Some(3)).with_recording(&rec, 2.0);
    assert_eq!(offsets(&fast, 10), [0, ms(50), ms(175)]);
    let once = Pacer::new(rate("1"), None, None).with_recording(&[0], 1.0);
    assert_eq!(offsets(&once, 10), [0]);
    let cut =
        Pacer::new(rate("1"), Some(Duration::from_millis(600)), None).with_recording(&rec, 1.0);
    assert_eq!(offsets(&cut, 10), [0, ms(100), ms(350), ms(525)]);
}
