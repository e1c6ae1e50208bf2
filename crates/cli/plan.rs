//! The plan an attack's flags and targets describe, as `barrage doctor`
//! checks it, and the same checks, silent unless the plan cannot fit, at
//! the start of every attack.

use barrage_attack::{AttackConfig, Targets};
use barrage_doctor::{Destination, Host, Plan, Verdict};

use barrage_flags::AttackArgs;

/// Where `targets` go: each distinct host and port, once (a `-lazy` or
/// templated source is not read ahead: none).
pub fn destinations(targets: &Targets) -> Vec<Destination> {
    let all: Vec<&barrage_client::PreparedTarget> = match targets {
        Targets::Fixed(t) => t.iter().map(|t| &**t).collect(),
        Targets::Groups(groups) => groups
            .iter()
            .flat_map(|g| g.targets.iter().map(|t| &**t))
            .collect(),
        Targets::Flow(plan) => plan.steps.iter().map(|s| &*s.prepared).collect(),
        Targets::Lazy(_) => Vec::new(),
    };
    let mut out: Vec<Destination> = Vec::new();
    for t in all {
        let Some(host) = t.uri.host() else { continue };
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let secure = matches!(t.uri.scheme_str(), Some("https" | "wss"));
        let port = t.uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
        let local = host == "localhost"
            || host.ends_with(".localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        let d = Destination { host, port, local };
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// The plan `a` describes, toward `destinations`; `config` as the attack
/// built it (a `-mix`'s peak rate).
pub fn plan(a: &AttackArgs, config: &AttackConfig, destinations: Vec<Destination>) -> Plan {
    let rate = match (&a.stages, config.mix_peak) {
        (_, Some(peak)) => Some(peak),
        (Some(s), None) => Some(s.peak_per_second()),
        (None, None) => match a.rate {
            barrage_attack::Rate::Max => None,
            r => Some(r.per_second()),
        },
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    // -connect-to sends elsewhere: its destinations are the ones that count.
    let destinations = if a.connect_to.is_empty() {
        destinations
    } else {
        a.connect_to
            .iter()
            .map(|m| Destination {
                local: m.to.0 == "localhost"
                    || m.to
                        .0
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback()),
                host: m.to.0.clone(),
                port: m.to.1,
            })
            .collect()
    };
    Plan {
        rate,
        timeout: a.timeout.0,
        expect_latency: a.expect_latency,
        max_workers: a.max_workers,
        max_connections: (a.max_connections > 0).then_some(a.max_connections as u64),
        hold: a.hold,
        keepalive: a.keepalive,
        multiplexed: a.h2c || a.http3,
        threads: if a.cpus == 0 { cores } else { a.cpus as u64 },
        laddrs: a.laddr.iter().flatten().copied().collect(),
        destinations,
        unix_socket: a.unix_socket.is_some(),
    }
}

/// The attack's own check, before the first request: one warning on
/// stderr naming the first limit the plan runs into, or nothing; a rate
/// [`barrage_doctor::IMPOSSIBLE_FACTOR`] times what the cores send is refused (exit 1) unless
/// `-force` (issue 60: `-rate 1000000000 -duration 1s` ran for 30 s).
pub fn warn_if_unfit(
    a: &AttackArgs,
    config: &AttackConfig,
    targets: &Targets,
) -> Result<(), crate::failed::Failed> {
    let plan = plan(a, config, destinations(targets));
    let host = Host::this();
    if let Some(rate) = plan.rate.filter(|_| !a.force) {
        let carried = host.cores.max(1) as f64 * barrage_doctor::RATE_PER_CORE;
        // A few requests at any rate are a burst this host sends: only
        // more than a second of its sending is refused.
        let many = a.requests.is_none_or(|n| n as f64 > carried);
        if many && rate > carried * barrage_doctor::IMPOSSIBLE_FACTOR {
            return Err(crate::failed::Failed {
                kind: crate::failed::Kind::Unfit,
                lines: vec![format!(
                    "-rate {}: this host sends about {}/s ({} cores at about {}/s each), {:.0} times less; -shard it over machines, or -force to run it anyway (sending stops at -duration and the rest is counted as dropped)",
                    barrage_doctor::n(rate.min(u64::MAX as f64) as u64),
                    barrage_doctor::n(carried as u64),
                    host.cores.max(1),
                    barrage_doctor::n(barrage_doctor::RATE_PER_CORE as u64),
                    rate / carried
                )],
            });
        }
    }
    let checks = barrage_doctor::check(&plan, &host);
    if let Some(c) = checks.iter().find(|c| c.verdict == Verdict::Fail) {
        let at = c
            .fails_at
            .map(|n| format!(", at about {} connections", barrage_doctor::n(n)))
            .unwrap_or_default();
        eprintln!(
            "barrage attack: warning: this host cannot hold the plan: {}: {}{at} (barrage doctor lists every limit and its fix)",
            c.name, c.detail
        );
    }
    Ok(())
}
