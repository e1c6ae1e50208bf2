//! The attack's own check at its start: a rate no host of this size can
//! send is refused, and the first wall the plan runs into is named.

use crate::{checks::n, Check, Host, Plan, Verdict, IMPOSSIBLE_FACTOR, RATE_PER_CORE};

/// A rate [`IMPOSSIBLE_FACTOR`] times what this host's cores send.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("-rate {}: this host sends about {}/s ({cores} cores at about {}/s each), {:.0} times less; -shard it over machines, or -force to run it anyway (sending stops at -duration and the rest is counted as dropped)", n(rate.min(u64::MAX as f64) as u64), n(*carried as u64), n(RATE_PER_CORE as u64), *rate / *carried)]
pub struct Impossible {
    /// The rate asked for, a second.
    pub rate: f64,
    /// What the host sends, a second.
    pub carried: f64,
    /// Its cores.
    pub cores: u64,
}

/// Refuses `plan`'s rate when `host` sends [`IMPOSSIBLE_FACTOR`] times
/// less; a few requests (`requests`, no more than a second of the host's
/// sending) are a burst at any rate.
pub fn impossible(plan: &Plan, requests: Option<u64>, host: &Host) -> Result<(), Impossible> {
    let Some(rate) = plan.rate else {
        return Ok(());
    };
    let cores = host.cores.max(1);
    let carried = cores as f64 * RATE_PER_CORE;
    let many = requests.is_none_or(|n| n as f64 > carried);
    if many && rate > carried * IMPOSSIBLE_FACTOR {
        return Err(Impossible {
            rate,
            carried,
            cores,
        });
    }
    Ok(())
}

/// The first failing check, as a warning's words: its name, its detail
/// and where it fails.
pub fn first_limit(checks: &[Check]) -> Option<String> {
    let c = checks.iter().find(|c| c.verdict == Verdict::Fail)?;
    let at = c
        .fails_at
        .map(|at| format!(", at about {} connections", n(at)))
        .unwrap_or_default();
    Some(format!("{}: {}{at}", c.name, c.detail))
}

impl crate::Destination {
    /// `host` (brackets of an IPv6 address dropped) at `port`, or the
    /// scheme's (`secure`: 443, else 80); local when it is `localhost`
    /// or a loopback address.
    pub fn new(host: &str, port: Option<u16>, secure: bool) -> Self {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let local = host == "localhost"
            || host.ends_with(".localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        crate::Destination {
            host: host.to_string(),
            port: port.unwrap_or(if secure { 443 } else { 80 }),
            local,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Destination;

    #[test]
    fn a_destination_knows_its_port_and_whether_it_is_here() {
        assert_eq!(
            Destination::new("[::1]", None, true),
            Destination {
                host: "::1".into(),
                port: 443,
                local: true
            }
        );
        assert!(!Destination::new("example.com", Some(8080), false).local);
        assert!(Destination::new("api.localhost", None, false).local);
    }

    #[test]
    fn only_a_rate_far_past_the_cores_is_impossible() {
        let host = Host {
            cores: 2,
            ..Host::this()
        };
        let at = |rate: f64| Plan {
            rate: Some(rate),
            ..Plan::default()
        };
        assert!(impossible(&at(1e6), None, &host).is_ok());
        let e = impossible(&at(1e9), None, &host).unwrap_err();
        assert!(e.to_string().starts_with("-rate 1,000,000,000: "), "{e}");
        assert!(impossible(&at(1e9), Some(10), &host).is_ok());
    }
}
