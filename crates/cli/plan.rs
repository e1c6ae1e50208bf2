//! The attack's own check of its plan, before the first request
//! (`barrage doctor`'s checks, silent unless the plan cannot fit).

use barrage_attack::{AttackConfig, Targets};
use barrage_doctor::{Destination, Host};

use crate::failed::{Failed, Kind};
use barrage_flags::AttackArgs;

/// Where `targets` go: each distinct host and port, once (a `-lazy` or
/// templated source is not read ahead: none).
pub fn destinations(targets: &Targets) -> Vec<Destination> {
    let mut out: Vec<Destination> = Vec::new();
    for t in targets.known() {
        let Some(host) = t.uri.host() else { continue };
        let secure = matches!(t.uri.scheme_str(), Some("https" | "wss"));
        let d = Destination::new(host, t.uri.port_u16(), secure);
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// One warning on stderr naming the first limit the plan runs into, or
/// nothing; an impossible rate is refused (exit 1) unless `-force`
/// (issue 60: `-rate 1000000000 -duration 1s` ran for 30 s).
pub fn warn_if_unfit(
    a: &AttackArgs,
    config: &AttackConfig,
    targets: &Targets,
) -> Result<(), Failed> {
    let plan = a.plan(config.mix_peak, destinations(targets));
    let host = Host::this();
    if !a.force {
        barrage_doctor::impossible(&plan, a.requests, &host).map_err(|e| Failed {
            kind: Kind::Unfit,
            lines: vec![e.to_string()],
        })?;
    }
    if let Some(limit) = barrage_doctor::first_limit(&barrage_doctor::check(&plan, &host)) {
        eprintln!("barrage attack: warning: this host cannot hold the plan: {limit} (barrage doctor lists every limit and its fix)");
    }
    Ok(())
}
