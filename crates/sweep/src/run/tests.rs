use super::*;

/// A server that holds p99 under 10 ms up to `capacity` requests per
/// second, as a fake step runner.
struct Fake {
    capacity: f64,
    probes: Vec<f64>,
    generator_limit: f64,
}

impl RunStep for Fake {
    type Error = ();

    fn step(&mut self, load: Load) -> Result<Option<Step>, ()> {
        let r = load.amount();
        self.probes.push(r);
        let mut m = Metrics::new();
        let latency = if r <= self.capacity {
            1_000_000
        } else {
            50_000_000
        };
        for i in 0..100u64 {
            m.add(&Hit {
                seq: i,
                timestamp: (i as f64 * 1e9 / r) as i64,
                scheduled: (i as f64 * 1e9 / r) as i64,
                latency,
                code: 200,
                ..Hit::default()
            });
        }
        let mut row = Row::new(load, &m, Bounds::default());
        if r > self.generator_limit {
            row.generator_bound = true;
            row.bound_by = vec!["lag p99 50ms > 10ms".into()];
        }
        Ok(Some(Step { row, metrics: m }))
    }

    fn pause(&mut self, _: Duration) -> bool {
        true
    }
}

fn plan(start: f64, find: &str) -> Plan {
    Plan {
        steps: vec![Load::Rate(start)],
        stop_on: Vec::new(),
        find_max: Some((Threshold::parse_list(find).unwrap(), find.to_string())),
        slo: None,
        precision: 0.05,
        pause: Duration::ZERO,
    }
}

#[test]
fn find_max_grows_then_bisects_to_the_precision() {
    let mut fake = Fake {
        capacity: 12_400.0,
        probes: Vec::new(),
        generator_limit: f64::INFINITY,
    };
    let out = sweep(&plan(1000.0, "p99<=10ms"), &mut fake, |_| {}).unwrap();
    let Some(Found::Max { load, above, .. }) = out.found else {
        panic!("{:?}", out.found)
    };
    let max = load.amount();
    assert!((12_400.0 / 1.05..=12_400.0).contains(&max), "{max}");
    // The bracket: the lowest load that failed, within the precision.
    let above = above.unwrap().amount();
    assert!(above > 12_400.0 && above <= max * 1.05, "{above}");
    assert_eq!(&fake.probes[..5], [1000.0, 2000.0, 4000.0, 8000.0, 16000.0]);
    let rows: Vec<f64> = out.rows.iter().map(|r| r.load.amount()).collect();
    assert!(
        rows.windows(2).all(|w| w[0] < w[1]),
        "rows by load: {rows:?}"
    );
}

#[test]
fn find_max_says_when_the_first_step_fails_or_the_generator_is_the_limit() {
    let mut fake = Fake {
        capacity: 500.0,
        probes: Vec::new(),
        generator_limit: f64::INFINITY,
    };
    let out = sweep(&plan(1000.0, "p99<=10ms"), &mut fake, |_| {}).unwrap();
    assert!(matches!(out.found, Some(Found::FirstFails { .. })));
    let mut fake = Fake {
        capacity: 1e9,
        probes: Vec::new(),
        generator_limit: 5000.0,
    };
    let out = sweep(&plan(1000.0, "p99<=10ms"), &mut fake, |_| {}).unwrap();
    assert_eq!(
        out.found,
        Some(Found::GeneratorBound {
            load: Load::Rate(8000.0),
            held: Some(Load::Rate(4000.0)),
            conditions: "p99<=10ms".into(),
            why: vec!["lag p99 50ms > 10ms".into()],
        })
    );
}

#[test]
fn stop_on_finishes_the_first_step_that_crosses() {
    let mut fake = Fake {
        capacity: 2500.0,
        probes: Vec::new(),
        generator_limit: f64::INFINITY,
    };
    let p = Plan {
        steps: crate::steps::parse("1000..5000/+1000", false).unwrap(),
        stop_on: Threshold::parse_list("p99>20ms").unwrap(),
        find_max: None,
        slo: None,
        precision: 0.05,
        pause: Duration::ZERO,
    };
    let out = sweep(&p, &mut fake, |_| {}).unwrap();
    assert_eq!(fake.probes, [1000.0, 2000.0, 3000.0]);
    assert_eq!(out.rows.len(), 3);
    let (at, why) = out.stopped_on.unwrap();
    assert_eq!(at, Load::Rate(3000.0));
    assert!(why.starts_with("p99>20ms"), "{why}");
}
