//! barrage-doctor: whether this host can hold an attack's plan.
//!
//! A big test hits the generator's own walls halfway through, each with a
//! cryptic error: the open-files limit ("too many open files"), the
//! ephemeral ports toward one destination ("cannot assign requested
//! address"), ports held in TIME_WAIT, conntrack's table ("nf_conntrack:
//! table full, dropping packet"), a server's listen queue (connects that
//! take a second: the SYN resent). [`check`] estimates what a [`Plan`]
//! needs and sets it against what a [`Host`] allows, one [`Check`] per
//! wall, each failing one with its fix.
//!
//! Every input comes through [`Host`]: `/proc` under a root directory
//! (`/` on this machine, a fake tree in tests), the open-files limits,
//! the cores.

#![deny(missing_docs)]

mod checks;
mod costs;
mod gate;
mod host;
mod plan;
mod walls;

pub use checks::{n, Check, Verdict};
pub use costs::{
    BASE_BYTES, BASE_DESCRIPTORS, BYTES_PER_CONNECTION, CONNTRACK_TIME_WAIT_SECS, RATE_PER_CORE,
    TIME_WAIT_SECS,
};
pub use gate::{first_limit, impossible, Impossible};
pub use host::Host;
pub use plan::{Destination, Needs, Plan, EXPECTED_LATENCY, LIKELY_MARGIN};
pub use walls::IMPOSSIBLE_FACTOR;

/// Every check of `plan` against `host`, in the order the walls are met.
pub fn check(plan: &Plan, host: &Host) -> Vec<Check> {
    use walls::*;
    let needs = plan.needs();
    let mut out = vec![open_files(plan, &needs, host)];
    out.extend(nr_open(plan, &needs, host));
    out.extend(file_max(plan, &needs, host));
    if !plan.unix_socket {
        out.extend(ports(plan, &needs, host));
        out.extend(time_wait(plan, &needs, host));
        out.push(conntrack(plan, &needs, host));
        out.extend(somaxconn(plan, &needs, host));
    }
    out.extend(memory(plan, &needs, host));
    out.extend(cpu(plan, host));
    out
}

/// Whether every check passed (warnings pass).
pub fn fits(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.verdict != Verdict::Fail)
}

/// The plan in a line: what it needs and why.
pub fn summary(plan: &Plan) -> String {
    let needs = plan.needs();
    let why = match (plan.hold, plan.rate) {
        (Some(h), _) => format!("-hold {h}"),
        (None, Some(rate)) => format!(
            "{rate}/s with every request in flight for -timeout {}s",
            plan.timeout.as_secs()
        ),
        (None, None) => format!("-max-workers {}", plan.max_workers.unwrap_or(1)),
    };
    let dests = match plan.destinations.len() {
        0 => "the target".to_string(),
        1 => plan.destinations[0].to_string(),
        k => format!("{k} destinations"),
    };
    let mut s = format!(
        "plan: up to {} connections to {dests} ({why}), {} descriptors",
        n(needs.connections),
        n(needs.descriptors)
    );
    if needs.new_per_second > 0.0 {
        s.push_str(&format!(
            ", {} new connections a second (-keepalive=false)",
            n(needs.new_per_second as u64)
        ));
    }
    s
}

#[cfg(test)]
mod tests;
