use std::{ffi::OsString, time::Duration};

use super::*;
use crate::normalize;

#[test]
fn every_spelling_parses() {
    for args in [
        ["barrage", "attack", "-rate", "7"],
        ["barrage", "attack", "-rate=7", ""],
        ["barrage", "attack", "--rate", "7"],
        ["barrage", "attack", "--rate=7", ""],
    ] {
        let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
        let cli = Cli::try_parse_from(normalize(args.iter().map(OsString::from))).unwrap();
        let Command::Attack(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.rate.per_second(), 7.0, "{args:?}");
    }
}

#[test]
fn defaults_match_vegeta() {
    let cli = Cli::try_parse_from(["barrage", "attack"]).unwrap();
    let Command::Attack(a) = cli.command else {
        panic!()
    };
    assert_eq!(a.rate.per_second(), 50.0);
    assert_eq!(a.timeout.0, Duration::from_secs(30));
    assert_eq!((a.workers, a.connections, a.redirects), (10, 10_000, 10));
    assert!(a.keepalive && a.http2 && !a.h2c && !a.insecure && !a.session_tickets);
    assert_eq!(a.dns_ttl, DnsTtl(Some(Duration::ZERO)), "cached for ever");
    assert_eq!(a.max_body, 0);
}

#[test]
fn bools_take_go_syntax() {
    let cli = Cli::try_parse_from(normalize(
        [
            "barrage",
            "attack",
            "-keepalive=false",
            "-insecure",
            "-redirects",
            "-1",
            "-max-body",
            "-1",
        ]
        .map(OsString::from),
    ))
    .unwrap();
    let Command::Attack(a) = cli.command else {
        panic!()
    };
    assert!(!a.keepalive && a.insecure);
    assert_eq!((a.redirects, a.max_body), (-1, -1));
}

#[test]
fn dns_ttl_values() {
    for (v, want) in [
        ("-1", None),
        ("-1s", None),
        ("0", Some(Duration::ZERO)),
        ("5s", Some(Duration::from_secs(5))),
        ("250ms", Some(Duration::from_millis(250))),
    ] {
        let cli = Cli::try_parse_from(normalize(
            ["barrage", "attack", &format!("-dns-ttl={v}")].map(OsString::from),
        ))
        .unwrap_or_else(|e| panic!("{v}: {e}"));
        let Command::Attack(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.dns_ttl, DnsTtl(want), "{v}");
    }
    assert!(Cli::try_parse_from(["barrage", "attack", "-dns-ttl", "soon"]).is_err());
}

#[test]
fn bad_values_are_refused() {
    for args in [
        ["barrage", "attack", "-rate", "-5"],
        ["barrage", "attack", "-duration", "-1s"],
        ["barrage", "attack", "-duration", "abc"],
        ["barrage", "attack", "-header", "nocolon"],
        ["barrage", "attack", "-max-body", "lots"],
        ["barrage", "attack", "-format", "yaml"],
        ["barrage", "attack", "-bogus", "1"],
    ] {
        assert!(
            Cli::try_parse_from(normalize(args.map(OsString::from))).is_err(),
            "{args:?}"
        );
    }
}
