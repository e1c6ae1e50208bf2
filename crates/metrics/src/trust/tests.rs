use barrage_model::{Audit, Hit, Lacks};

use crate::Metrics;

const T0: i64 = 1_700_000_000_000_000_000;
const S: i64 = 1_000_000_000;

/// A run of `secs` seconds at `rate`/s, record i's lag and latency (ns)
/// from `shape(i, t)`, `t` its seconds into the run.
fn run(rate: u64, secs: u64, shape: impl Fn(u64, f64) -> (u64, u64)) -> Metrics {
    let mut m = Metrics::new();
    for i in 0..rate * secs {
        let scheduled = T0 + (i as i64 * S) / rate as i64;
        let (lag, latency) = shape(i, (scheduled - T0) as f64 / 1e9);
        m.add(&Hit {
            seq: i,
            code: 200,
            scheduled,
            timestamp: scheduled + lag as i64,
            latency,
            ..Hit::default()
        });
    }
    m
}

/// A little noise, the same every run.
fn noise(i: u64) -> u64 {
    (i.wrapping_mul(2_654_435_761) % 200_000) + 900_000
}

fn check<'a>(t: &'a crate::Trust, name: &str) -> &'a crate::Check {
    t.checks.iter().find(|c| c.name == name).unwrap()
}

#[test]
fn a_steady_run_is_valid_with_every_check_said() {
    let mut m = run(1000, 30, |i, _| (50_000, noise(i)));
    m.add_run(&[("load".into(), "rate 1000/1s".into())], &[]);
    let t = m.trust(&[50.0, 90.0, 95.0, 99.0]).unwrap();
    assert!(t.valid(), "{t:#?}");
    // No self-audit is no failure: cpu and wait have nothing to judge.
    assert_eq!(t.line(), "valid", "{t:#?}");
    for name in [
        "lag", "rate", "dropped", "arrivals", "cpu", "wait", "tail", "warmup", "trend",
    ] {
        assert!(t.checks.iter().any(|c| c.name == name), "no {name} check");
    }
    assert_eq!(check(&t, "lag").figure, Some(50_000.0 - 50_000.0 % 1.0));
    assert!(check(&t, "arrivals").ok, "{:?}", check(&t, "arrivals"));
}

#[test]
fn lag_past_the_limit_is_not_valid_from_where_it_began() {
    let m = run(1000, 30, |i, t| {
        (if t >= 12.0 { 30_000_000 } else { 50_000 }, noise(i))
    });
    let t = m.trust(&[50.0, 99.0]).unwrap();
    assert!(!t.valid());
    let lag = check(&t, "lag");
    assert!(!lag.ok && lag.from == Some(12.0), "{lag:?}");
    let line = t.line();
    assert!(
        line.starts_with("NOT VALID: the schedule was not kept from 12s (lag p99 30ms > 10ms"),
        "{line}"
    );
    assert!(
        line.contains("no self-audit in the stream to say whether barrage's CPU was the limit"),
        "{line}"
    );
}

#[test]
fn the_self_audit_names_barrage_as_the_limit() {
    let mut m = run(1000, 30, |i, t| {
        (if t >= 12.0 { 30_000_000 } else { 50_000 }, noise(i))
    });
    let audits: Vec<Audit> = (1..=30)
        .map(|s| Audit {
            at: T0 + s * S,
            span: S as u64,
            threads: 4,
            cpu_max: if s > 12 { 990_000_000 } else { 300_000_000 },
            ..Audit::default()
        })
        .collect();
    let refs: Vec<(usize, &Audit)> = audits.iter().map(|a| (0, a)).collect();
    m.add_run(&[], &refs);
    let t = m.trust(&[99.0]).unwrap();
    let line = t.line();
    assert!(
        line.starts_with("NOT VALID: generator-bound from 12s (lag p99 30ms > 10ms"),
        "{line}"
    );
    assert!(line.contains("busiest thread 99% of a core"), "{line}");
    let cpu = check(&t, "cpu");
    assert_eq!((cpu.ok, cpu.from), (false, Some(12.0)));
}

#[test]
fn poisson_gaps_pass_and_the_same_run_made_even_fails() {
    let mut rng = fastrand::Rng::with_seed(5);
    let mut at = T0;
    let mut poisson = Metrics::new();
    let mut even = Metrics::new();
    for i in 0..20_000u64 {
        at += (-(1.0 - rng.f64()).ln() * 1e6) as i64; // 1,000/s
        let hit = Hit {
            seq: i,
            code: 200,
            scheduled: at,
            timestamp: at + 40_000,
            latency: noise(i),
            ..Hit::default()
        };
        poisson.add(&hit);
        even.add(&Hit {
            timestamp: T0 + i as i64 * 1_000_000,
            ..hit
        });
    }
    let facts = [
        ("arrivals".to_string(), "poisson:5".to_string()),
        ("load".to_string(), "rate 1000/1s".to_string()),
    ];
    poisson.add_run(&facts, &[]);
    even.add_run(&facts, &[]);
    let ok = poisson.trust(&[99.0]).unwrap();
    let arrivals = check(&ok, "arrivals");
    assert!(arrivals.ok, "{arrivals:?}");
    assert!(
        arrivals.says.contains("follow the Poisson law"),
        "{arrivals:?}"
    );
    let bad = even.trust(&[99.0]).unwrap();
    let arrivals = check(&bad, "arrivals");
    assert!(
        !arrivals.ok && arrivals.figure.unwrap() > 10.0,
        "{arrivals:?}"
    );
    assert!(
        bad.line().contains("the arrivals are not what was asked"),
        "{}",
        bad.line()
    );
}

#[test]
fn a_far_percentile_on_few_records_warns() {
    let m = run(50, 10, |i, _| (50_000, noise(i)));
    let t = m.trust(&[50.0, 99.9]).unwrap();
    assert!(t.valid());
    let tail = check(&t, "tail");
    assert!(!tail.ok, "{tail:?}");
    assert!(
        tail.says
            .starts_with("p99.9 rests on 1 record beyond it; 10 needed, about 10000 records"),
        "{}",
        tail.says
    );
    let t = m.trust(&[50.0, 90.0]).unwrap();
    assert!(check(&t, "tail").ok);
}

#[test]
fn correlated_latencies_count_as_fewer_records() {
    // Latency that stays high or low for whole seconds.
    let m = run(1000, 30, |i, t| {
        (
            50_000,
            if (t as u64).is_multiple_of(2) {
                1_000_000
            } else {
                5_000_000
            } + i % 7,
        )
    });
    let t = m.trust(&[99.0]).unwrap();
    let tail = check(&t, "tail");
    assert!(tail.says.contains("independent records"), "{}", tail.says);
    assert!(tail.figure.unwrap() < 300.0 * 0.5, "{tail:?}");
}

#[test]
fn a_warm_up_is_found_and_a_rising_latency_is_a_trend() {
    let m = run(200, 60, |i, t| {
        (50_000, if t < 8.0 { 10_000_000 } else { noise(i) })
    });
    let t = m.trust(&[99.0]).unwrap();
    let w = check(&t, "warmup");
    assert!(!w.ok, "{w:?}");
    let found = w.figure.unwrap();
    assert!((5.0..=10.0).contains(&found), "{w:?}");
    assert!(w.says.contains("-warmup"), "{}", w.says);
    assert!(t.valid(), "a warm-up warns only");
    let m = run(200, 60, |i, t| (50_000, noise(i) + (t * 100_000.0) as u64));
    let t = m.trust(&[99.0]).unwrap();
    let trend = check(&t, "trend");
    assert!(
        !trend.ok && trend.says.starts_with("mean latency rose by"),
        "{trend:?}"
    );
    let flat = run(200, 60, |i, _| (50_000, noise(i)));
    let t = flat.trust(&[99.0]).unwrap();
    assert!(check(&t, "warmup").ok && check(&t, "trend").ok, "{t:#?}");
}

#[test]
fn a_run_without_schedules_has_no_verdict_and_windows_gather_nothing() {
    let mut m = Metrics::new();
    let lacks = Lacks {
        scheduled: true,
        first_byte: true,
    };
    m.add_lacking(
        &Hit {
            code: 200,
            timestamp: T0,
            ..Hit::default()
        },
        lacks,
    );
    assert!(m.trust(&[99.0]).is_none());
    let mut w = m.empty_like();
    w.add(&Hit {
        code: 200,
        scheduled: T0,
        timestamp: T0,
        ..Hit::default()
    });
    assert!(w.evidence().is_none());
}

#[test]
fn durations_are_said_to_four_digits() {
    assert_eq!(super::words::ns(1_806_696_447.0), "1.807s");
    assert_eq!(super::words::ns(18_389_557.0), "18.39ms");
    assert_eq!(super::words::ns(218_495.0), "218.5µs");
    assert_eq!(super::words::ns(950.0), "950ns");
}

#[test]
fn requests_never_sent_make_a_run_not_valid() {
    let mut m = run(100, 5, |i, _| (50_000, noise(i)));
    m.add_run(&[("dropped".into(), "12 start=1 shard=0/1".into())], &[]);
    let t = m.trust(&[99.0]).unwrap();
    assert!(!t.valid());
    assert!(
        t.line().contains("12 requests due were never sent"),
        "{}",
        t.line()
    );
}

#[test]
fn the_closed_model_is_not_held_to_a_schedule() {
    let mut m = run(1000, 5, |i, _| (40_000_000, noise(i)));
    m.add_run(&[("load".into(), "8 workers, closed model".into())], &[]);
    let t = m.trust(&[99.0]).unwrap();
    assert!(t.valid(), "{}", t.line());
    assert_eq!(check(&t, "lag").figure, None);
}
