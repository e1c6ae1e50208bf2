use super::*;

#[test]
fn tallies_reach_the_board_and_the_line() {
    let board = Board::default();
    let mut tally = Tally::default();
    for i in 0..100u64 {
        board.written();
        tally.add(&Hit {
            code: if i < 98 { 200 } else { 500 },
            error: if i < 98 {
                String::new()
            } else {
                "500 Internal Server Error".into()
            },
            latency: 1_000_000 + i * 10_000,
            scheduled: 0,
            timestamp: 20_000_000,
            ..Hit::default()
        });
    }
    board.publish(&mut tally);
    let (written, ok, errors, recent) = board.read();
    assert_eq!((written, ok, errors), (100, 98, 2));
    let (p50, p99, lag) = recent.unwrap();
    assert!(p50 < p99 && lag >= 19_000_000, "{p50} {p99} {lag}");
    let f = Figures {
        elapsed: Duration::from_secs(3),
        total: Total::Time(Duration::from_secs(10)),
        sent: 110,
        rate: 36.7,
        in_flight: 10,
        held: None,
        written,
        ok,
        errors,
        recent,
        behind_at: Duration::from_millis(10),
        so_far: None,
    };
    let line = f.line(true);
    assert!(
        line.starts_with("3.0s/10.0s [######..............]  30%"),
        "{line}"
    );
    assert!(
        line.contains("sent 110 (37/s) | in flight 10 | 98.00% ok, 2 errors"),
        "{line}"
    );
    assert!(line.ends_with("BEHIND"), "{line}");
    assert!(!f.line(false).contains('['));
    // Before the first record: no success rate, not 100%.
    let none = Figures {
        written: 0,
        ok: 0,
        errors: 0,
        recent: None,
        ..f
    };
    assert!(
        none.line(false)
            .contains("in flight 10 | 0 results, 0 errors"),
        "{}",
        none.line(false)
    );
    // The verdict so far: lag since the start, the self-audit's
    // busiest thread.
    assert_eq!(
        board.so_far(),
        Some(SoFar {
            lag_p99: lag,
            busiest: None
        })
    );
    board.audited(&barrage_model::Audit {
        span: 1_000_000_000,
        cpu_max: 500_000_000,
        ..Default::default()
    });
    let so_far = board.so_far().unwrap();
    assert_eq!(so_far.busiest, Some(0.5));
    assert!(!so_far.said().0, "{so_far:?}");
    assert!(so_far.said().1.starts_with("lag p99 "), "{so_far:?}");
    let calm = SoFar {
        lag_p99: 200_000,
        busiest: Some(0.5),
    };
    assert_eq!(calm.said(), (true, String::new()));
}

/// Issue 29: the line fits the terminal, dropping the least needed
/// fields first, and always keeps time, success and BEHIND.
#[test]
fn the_line_fits_the_width() {
    let f = Figures {
        elapsed: Duration::from_secs(3),
        total: Total::Time(Duration::from_secs(300)),
        sent: 1_234_567,
        rate: 4_999.6,
        in_flight: 12_345,
        held: Some(18_000),
        written: 1_222_222,
        ok: 1_222_000,
        errors: 222,
        recent: Some((1_234_567, 98_765_432, 20_000_000)),
        behind_at: Duration::from_millis(10),
        so_far: Some(SoFar {
            lag_p99: 20_000_000,
            busiest: Some(0.99),
        }),
    };
    let whole = f.line(true);
    assert!(whole.len() > 120, "{whole}");
    for width in [120, 80, 60] {
        let line = f.fitted(true, width);
        assert!(line.len() <= width, "{width}: {line}");
        assert!(line.starts_with("3.0s/300.0s"), "{line}");
        assert!(line.ends_with("BEHIND"), "{width}: {line}");
    }
    assert!(
        whole.contains(" | NOT VALID (lag p99 20ms, cpu 99%)"),
        "{whole}"
    );
    let at80 = f.fitted(true, 79);
    assert!(
        at80.contains("ok, 222 errors") && at80.contains("| NOT VALID"),
        "{at80}"
    );
    assert!(f.fitted(true, 100).contains("held 18000"));
    assert!(!at80.contains('['), "the bar goes first: {at80}");
}
