//! Flag values clap cannot parse from the types alone: counts, sizes
//! and Go durations with their bounds, and the newtypes clap needs for
//! values given once that hold a list.

use std::time::Duration;

use barrage_model::{duration, size, Stages};
use barrage_stream::Encoding;

use crate::BadFlag;

/// A duration shown in Go's notation (`30s`), for defaults given as a
/// `Duration` where they are defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoDuration(pub Duration);

impl std::fmt::Display for GoDuration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&duration::format(self.0.as_nanos() as i64))
    }
}

/// `-listen`: an IP address and a port (a host name is refused with a
/// hint: the collector binds one address).
pub fn parse_listen(s: &str) -> Result<std::net::SocketAddr, BadFlag> {
    s.parse().map_err(|_| {
        let port = s.rsplit_once(':').map_or("7690", |(_, p)| p);
        format!("{s:?} is not IP:PORT (an address, not a host name: 127.0.0.1:{port}, [::1]:{port} or 0.0.0.0:{port})").into()
    })
}

/// A Go duration flag value as a [`GoDuration`].
pub fn parse_go_duration(s: &str) -> Result<GoDuration, BadFlag> {
    parse_duration(s).map(GoDuration)
}

/// `-requests` and `-workers`: a whole number of at least 1.
pub fn parse_count(s: &str) -> Result<u64, BadFlag> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{s:?} is not a whole number of at least 1").into()),
    }
}

/// A size without `-1` (a limit that must be one): bytes, or a number
/// with a unit; its hint offers no `-1`.
pub fn parse_limit(s: &str) -> Result<i64, BadFlag> {
    match size::parse(s) {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err(format!("{s:?}: a size of at least 1 byte (use 4096, 10KB, 2MiB)").into()),
        Err(_) => Err(format!("invalid size {s:?} (use 4096, 10KB, 2MiB)").into()),
    }
}

/// `-max-header-bytes`: a size from 1 KB to 64 MiB.
pub fn parse_header_bytes(s: &str) -> Result<usize, BadFlag> {
    match size::parse(s).map_err(|e| e.to_string())? {
        n if n < 1024 => Err(format!("{s:?} is under 1KB").into()),
        n if n as usize > barrage_client::MAX_HEAD_BYTES => {
            Err(format!("{s:?} is over 64MiB").into())
        }
        n => Ok(n as usize),
    }
}

/// `-pipeline`: 1 to 1024 requests per connection.
pub fn parse_pipeline(s: &str) -> Result<usize, BadFlag> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("{s:?} is not a number from 1 to 1024").into()),
    }
}

pub use barrage_report::WarmupFlag;

/// `-warmup`: `auto` or a duration.
pub fn parse_warmup(s: &str) -> Result<WarmupFlag, BadFlag> {
    match s {
        "auto" => Ok(WarmupFlag::Auto),
        d => parse_duration(d)
            .map(WarmupFlag::Given)
            .map_err(|e| format!("{}; or auto", e.0).into()),
    }
}

/// A Go duration flag value (`30s`, `1m30s`, `0`); negatives refused.
pub fn parse_duration(s: &str) -> Result<Duration, BadFlag> {
    let ns = duration::parse(s).map_err(|e| e.to_string())?;
    if ns < 0 {
        return Err(format!("negative duration {s:?}").into());
    }
    Ok(Duration::from_nanos(ns as u64))
}

/// `-dns-ttl`: how long looked-up addresses are kept; `None`: not at all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DnsTtl(pub Option<Duration>);

/// `-dns-ttl`: a duration (0 = for ever), or any negative value (no cache).
pub fn parse_dns_ttl(s: &str) -> Result<DnsTtl, BadFlag> {
    if s.trim() == "-1" {
        return Ok(DnsTtl(None));
    }
    let ns = duration::parse(s).map_err(|e| e.to_string())?;
    Ok(DnsTtl((ns >= 0).then(|| Duration::from_nanos(ns as u64))))
}

/// Most addresses one `-laddr` range may name: a /16 of IPv4 (each
/// address holds ~28k ports per destination; 65,536 of them are more than
/// any descriptor limit lets one process use).
pub const MAX_LADDR_RANGE: u128 = 1 << 16;

/// One `-laddr` item: an IP address, or a CIDR range (`127.0.0.0/28`,
/// `10.1.0.0/24`, `fd00::/120`) standing for each of its addresses (all
/// of them: a range of local addresses is not a subnet to route, so its
/// first and last are as usable as the rest).
pub fn parse_laddr(s: &str) -> Result<Vec<std::net::IpAddr>, BadFlag> {
    let s = s.trim();
    if let Ok(ip) = s.parse::<std::net::IpAddr>() {
        return Ok(vec![ip]);
    }
    let net: ipnet::IpNet = s.parse().map_err(|_| {
        BadFlag(format!(
            "bad local address {s:?} (use an IP address or a CIDR range such as 127.0.0.0/28)"
        ))
    })?;
    let bits = net.max_prefix_len() - net.prefix_len();
    if bits >= 128 || (1u128 << bits) > MAX_LADDR_RANGE {
        return Err(BadFlag(format!(
            "local address range {s} holds {} addresses; at most {MAX_LADDR_RANGE} (a /16 of IPv4)",
            if bits >= 128 {
                "2^128".to_string()
            } else {
                (1u128 << bits).to_string()
            }
        )));
    }
    let all: Vec<std::net::IpAddr> = match net {
        ipnet::IpNet::V4(n) => ipnet::Ipv4AddrRange::new(n.network(), n.broadcast())
            .map(std::net::IpAddr::V4)
            .collect(),
        ipnet::IpNet::V6(n) => ipnet::Ipv6AddrRange::new(n.network(), n.broadcast())
            .map(std::net::IpAddr::V6)
            .collect(),
    };
    Ok(all)
}

/// One `-resolvers` server: `ip:port`, `[ipv6]:port`, or an IP (port 53).
pub fn parse_resolver(s: &str) -> Result<std::net::SocketAddr, BadFlag> {
    let s = s.trim();
    s.parse()
        .or_else(|_| s.parse::<std::net::IpAddr>().map(|ip| (ip, 53).into()))
        .map_err(|_| BadFlag(format!("bad resolver {s:?} (use ip:port)")))
}

/// `-stages`.
pub fn parse_stages(s: &str) -> Result<Stages, BadFlag> {
    s.parse()
        .map_err(|e: barrage_model::StagesError| BadFlag(e.why))
}

/// `-arrivals`: uniform, poisson or poisson:SEED.
pub fn parse_arrivals(s: &str) -> Result<barrage_model::Arrivals, BadFlag> {
    s.parse().map_err(|_| {
        format!(
            "{s:?} is not uniform, poisson, poisson:SEED, gamma:B or gamma:B:SEED (a whole-number seed, a burstiness B from 0.01 to 100)"
        )
        .into()
    })
}

/// `-har-speed`: a factor above 0.
pub fn parse_speed(s: &str) -> Result<f64, BadFlag> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("{s:?} is not a number above 0 (2 plays twice as fast)").into()),
    }
}

/// `-header "Name: value"`: split at the first colon, neither part empty.
pub fn parse_header(s: &str) -> Result<(String, String), BadFlag> {
    match s.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
        Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("bad header {s:?} (use \"Name: value\")").into()),
    }
}

/// `-find-max` and `-stop-on`: conditions in `-fail-on`'s grammar, and
/// their text as typed.
#[derive(Clone, Debug)]
pub struct Conditions(pub Vec<barrage_metrics::Threshold>, pub String);

/// Parses `-find-max` and `-stop-on`.
pub fn parse_conditions(s: &str) -> Result<Conditions, barrage_metrics::ParseError> {
    let list = barrage_metrics::Threshold::parse_list(s)?;
    if list.is_empty() {
        return Err(barrage_metrics::ParseError::from(
            "no condition".to_string(),
        ));
    }
    Ok(Conditions(list, s.trim().to_string()))
}

/// A sweep's steps (a newtype: clap reads `Option<Vec<_>>` as a flag
/// given several times).
#[derive(Clone, Debug)]
pub struct Steps(pub Vec<barrage_sweep::Load>);

/// `-rates`: open-model steps.
pub fn parse_rates(s: &str) -> Result<Steps, barrage_sweep::StepsError> {
    barrage_sweep::steps::parse(s, false).map(Steps)
}

/// `-concurrency`: closed-model steps.
pub fn parse_concurrency(s: &str) -> Result<Steps, barrage_sweep::StepsError> {
    barrage_sweep::steps::parse(s, true).map(Steps)
}

/// `-precision`: a share, as `5%` or `0.05`, above 0 and below 1.
pub fn parse_precision(s: &str) -> Result<f64, BadFlag> {
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => s.trim().parse::<f64>(),
    };
    match v {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!("{s:?} is not a share between 0 and 100% (such as 5%)").into()),
    }
}

/// `-buckets`.
pub fn parse_buckets(s: &str) -> Result<barrage_metrics::Buckets, barrage_metrics::ParseError> {
    barrage_metrics::Buckets::parse(s)
}

/// `-fail-on`'s conditions.
#[derive(Clone, Debug, Default)]
pub struct FailOn(pub Vec<barrage_metrics::Threshold>);

/// `-fail-on`: the conditions, all at once.
pub fn parse_fail_on(s: &str) -> Result<FailOn, barrage_metrics::ParseError> {
    barrage_metrics::Threshold::parse_list(s).map(FailOn)
}

/// `-dumper`: csv or json (`bin` is `encode -to`'s alone).
pub fn parse_dumper(s: &str) -> Result<Encoding, BadFlag> {
    match s.parse() {
        Ok(Encoding::Bin) | Err(_) => {
            Err(format!("unknown encoding {s:?} (use csv or json)").into())
        }
        Ok(e) => Ok(e),
    }
}

/// `serve -capacity`: answers a second, above 0.
pub fn parse_capacity(s: &str) -> Result<f64, BadFlag> {
    match s.trim().trim_end_matches("/s").parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("{s:?} is not a rate above 0").into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(size::parse("10KB"), Ok(10_000));
        assert_eq!(size::parse("2MiB"), Ok(2 << 20));
        assert_eq!(size::parse("-1"), Ok(-1));
        assert!(size::parse("-2").is_err());
        assert_eq!(parse_limit("64KiB").unwrap(), 65_536);
        let e = parse_limit("lots").unwrap_err().to_string();
        assert!(
            e.contains("(use 4096, 10KB, 2MiB)") && !e.contains("-1"),
            "{e}"
        );
    }
}

/// `-scrape URL`: an http:// endpoint (scraping goes without TLS).
pub fn parse_scrape(s: &str) -> Result<String, BadFlag> {
    if s.starts_with("https://") {
        return Err(format!(
            "{s:?}: scraping goes over http:// only (a metrics endpoint on loopback or a private network)"
        )
        .into());
    }
    let host = s
        .strip_prefix("http://")
        .map(|r| r.split(['/', '?']).next().unwrap_or(""));
    match host {
        Some(h) if !h.is_empty() && !h.contains(char::is_whitespace) => Ok(s.to_string()),
        _ => {
            Err(format!("{s:?} is not an http:// URL (e.g. http://127.0.0.1:8000/metrics)").into())
        }
    }
}

/// `-har-filter`: a regular expression; its error in one line, with
/// where in the pattern it is (the regex crate's error spans lines, and
/// only the first, "regex parse error:", reached the user).
pub fn parse_filter(s: &str) -> Result<barrage_targets::Filter, BadFlag> {
    barrage_targets::Filter::new(s).map_err(|e| {
        let text = e.to_string();
        let detail = text
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("error: "))
            .unwrap_or(text.lines().last().unwrap_or(""))
            .to_string();
        // The pattern's line is followed by a caret line under the fault.
        let at = text
            .lines()
            .find(|l| l.trim_start().starts_with('^'))
            .map(|l| l.find('^').unwrap_or(0).saturating_sub(4));
        match at {
            Some(at) => format!("{detail} (at byte {at} of the pattern)").into(),
            None => detail.into(),
        }
    })
}

#[cfg(test)]
mod filter_tests {
    #[test]
    fn a_bad_pattern_says_what_and_where_in_one_line() {
        let e = super::parse_filter("ab[").unwrap_err().to_string();
        assert_eq!(e, "unclosed character class (at byte 2 of the pattern)");
        assert!(super::parse_filter("^https://api\\.").is_ok());
    }

    #[test]
    fn laddr_takes_addresses_and_ranges() {
        let ips = |s: &str| -> Vec<String> {
            super::parse_laddr(s)
                .unwrap()
                .iter()
                .map(|ip| ip.to_string())
                .collect()
        };
        assert_eq!(ips("127.0.0.2"), ["127.0.0.2"]);
        assert_eq!(ips("127.0.0.2/31"), ["127.0.0.2", "127.0.0.3"]);
        assert_eq!(ips("127.0.0.0/30").len(), 4);
        assert_eq!(ips("10.1.0.0/24").len(), 256);
        assert_eq!(ips("fd00::/126").len(), 4);
        assert_eq!(ips("10.0.0.0/16").len(), 65_536);
        let too_big = super::parse_laddr("10.0.0.0/15").unwrap_err().to_string();
        assert!(too_big.contains("131072 addresses"), "{too_big}");
        assert!(super::parse_laddr("fd00::/0").is_err());
        let bad = super::parse_laddr("127.0.0.300/30")
            .unwrap_err()
            .to_string();
        assert!(bad.contains("\"127.0.0.300/30\""), "{bad}");
    }
}
