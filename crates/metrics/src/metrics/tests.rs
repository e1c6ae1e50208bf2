use super::*;
use crate::LatencyView;

fn hit(ts: i64, latency: u64, code: u16, error: &str) -> Hit {
    Hit {
        timestamp: ts,
        scheduled: ts,
        latency,
        code,
        error: error.into(),
        bytes_in: 6,
        ..Hit::default()
    }
}

#[test]
fn crafted_extremes_saturate_instead_of_wrapping() {
    // Issue 22: two records of bytes_in 2^64-1 summed to 2^64-2, and
    // records spanning the whole time range gave a duration of 1 ns.
    let mut m = Metrics::new();
    let mut other = Metrics::new();
    for (ts, into) in [(i64::MIN, &mut m), (i64::MAX, &mut other)] {
        into.add(&Hit {
            bytes_in: u64::MAX,
            bytes_out: u64::MAX,
            latency: u64::MAX,
            ..hit(ts, 0, 200, "")
        });
    }
    let mut merged = m.clone();
    merged.merge(&other);
    m.add(&Hit {
        bytes_in: u64::MAX,
        bytes_out: u64::MAX,
        latency: u64::MAX,
        ..hit(i64::MAX, 0, 200, "")
    });
    for m in [&m, &merged] {
        assert_eq!(m.bytes_in().0, u64::MAX);
        assert_eq!(m.bytes_out().0, u64::MAX);
        assert_eq!(m.duration(), i64::MAX);
        assert!(m.wait() >= 0);
        assert!(m.rate() >= 0.0 && m.throughput() >= 0.0);
    }
}

#[test]
fn empty() {
    let m = Metrics::new();
    assert_eq!(m.requests(), 0);
    assert_eq!(m.duration(), 0);
    assert_eq!(m.rate(), 0.0);
    assert_eq!(m.success_ratio(), 0.0);
    assert_eq!(m.quantile(0.99), 0);
    assert_eq!(m.latency().min(), 0);
    assert!(m.earliest().is_none());
}

#[test]
fn one_record() {
    let mut m = Metrics::new();
    m.add(&hit(5, 300, 200, ""));
    assert_eq!(m.duration(), 0);
    assert_eq!(m.wait(), 300);
    assert_eq!(m.rate(), 1.0);
    assert_eq!(m.throughput(), 1.0);
    assert_eq!(m.quantile(0.5), 300);
    assert_eq!(m.quantile(1.0), 300);
}

#[test]
fn all_errors() {
    let mut m = Metrics::new();
    for i in 0..10 {
        m.add(&hit(i, 5, 0, "connection refused"));
    }
    assert_eq!((m.successes(), m.failures()), (0, 10));
    assert_eq!(m.throughput(), 0.0);
    assert_eq!(m.errors(), ["connection refused"]);
}

#[test]
fn vegeta_definitions() {
    let mut m = Metrics::new();
    m.add(&hit(0, 100, 200, ""));
    m.add(&hit(1_000_000_000, 50, 404, "404 Not Found"));
    m.add(&hit(2_000_000_000, 500, 0, "refused"));
    m.add(&hit(500_000_000, 10, 0, "refused"));
    assert_eq!(m.duration(), 2_000_000_000);
    assert_eq!(m.wait(), 500);
    assert_eq!(m.rate(), 2.0);
    assert!((m.throughput() - 1.0 / 2.0000005).abs() < 1e-12);
    assert_eq!(m.success_ratio(), 0.25);
    assert_eq!(m.latency().mean(), 165);
    assert_eq!((m.latency().min(), m.latency().max()), (10, 500));
    assert_eq!(
        m.status_codes(),
        vec![("0".into(), 2), ("200".into(), 1), ("404".into(), 1)]
    );
    assert_eq!(m.errors(), ["404 Not Found", "refused"]);
    assert_eq!(m.bytes_in(), (24, 6.0));
}

#[test]
fn success_rule_changes_ratio_and_error_set() {
    let opts = Options {
        success: "2xx,404".parse().unwrap(),
        ..Options::default()
    };
    let mut m = Metrics::with_options(opts);
    m.add(&hit(0, 1, 200, ""));
    m.add(&hit(1, 1, 404, "404 Not Found"));
    m.add(&hit(2, 1, 302, ""));
    m.add(&hit(3, 1, 0, "refused"));
    assert_eq!(m.successes(), 2);
    assert_eq!(m.errors(), ["302 Found", "refused"]);
}

#[test]
fn intended_view_adds_lag() {
    let late = Hit {
        scheduled: 0,
        timestamp: 2_000,
        latency: 1_000,
        code: 200,
        ..Hit::default()
    };
    let mut actual = Metrics::new();
    let mut intended = Metrics::with_options(Options {
        latency: LatencyView::Intended,
        ..Options::default()
    });
    actual.add(&late);
    intended.add(&late);
    assert_eq!(actual.latency().max(), 1_000);
    assert_eq!(intended.latency().max(), 3_000);
    assert_eq!(actual.lag().max(), 2_000);
    assert_eq!(
        intended.end(),
        Some(3_000),
        "end is always send + actual latency"
    );
}

#[test]
fn bucket_counts_are_exact() {
    let opts = Options {
        buckets: Some(Buckets::parse("[0,100us,1ms]").unwrap()),
        ..Options::default()
    };
    let mut m = Metrics::with_options(opts);
    for l in [0, 99_999, 100_000, 999_999, 1_000_000, 5_000_000_000] {
        m.add(&hit(0, l, 200, ""));
    }
    assert_eq!(m.buckets().unwrap().1, [2, 2, 2]);
}

#[test]
fn quantiles_are_exact_to_three_digits() {
    let mut m = Metrics::new();
    for v in 1..=100_000u64 {
        m.add(&hit(0, v * 1_000, 200, ""));
    }
    for (q, want) in [
        (0.5, 50_000_000u64),
        (0.9, 90_000_000),
        (0.99, 99_000_000),
        (0.999, 99_900_000),
    ] {
        let got = m.quantile(q);
        assert!(got.abs_diff(want) * 1000 <= want, "q{q}: {got} vs {want}");
    }
    assert_eq!(m.quantile(1.0), 100_000_000);
    assert_eq!(m.quantile(0.0), 1_000);
}

#[test]
fn merge_equals_adding_all() {
    let hits: Vec<Hit> = (0..1000)
        .map(|i| {
            let bad = i % 3 == 0;
            hit(
                i * 1000,
                (i as u64 * 7919) % 100_000,
                if bad { 500 } else { 200 },
                if bad { "500 Internal Server Error" } else { "" },
            )
        })
        .collect();
    let mut all = Metrics::new();
    let (mut a, mut b) = (Metrics::new(), Metrics::new());
    for (i, h) in hits.iter().enumerate() {
        all.add(h);
        if i % 2 == 0 {
            a.add(h)
        } else {
            b.add(h)
        }
    }
    a.merge(&b);
    assert_eq!(a.requests(), all.requests());
    assert_eq!(a.duration(), all.duration());
    assert_eq!(a.wait(), all.wait());
    assert_eq!(a.status_codes(), all.status_codes());
    assert_eq!(a.errors(), all.errors());
    for q in [0.5, 0.9, 0.99] {
        assert_eq!(a.quantile(q), all.quantile(q));
    }
}
