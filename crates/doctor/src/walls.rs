//! Each wall's check: what the host allows, read from `/proc` and the
//! limits, against what the plan needs.

use crate::{
    checks::{judge, n},
    Check, Host, Needs, Plan, BASE_BYTES, BASE_DESCRIPTORS, BYTES_PER_CONNECTION,
    CONNTRACK_TIME_WAIT_SECS, RATE_PER_CORE, TIME_WAIT_SECS,
};

pub(crate) fn open_files(plan: &Plan, needs: &Needs, host: &Host) -> Check {
    let name = "open files";
    let Some((soft, hard)) = host.nofile else {
        return Check::warn(name, "RLIMIT_NOFILE unreadable".into(), None);
    };
    let need = needs.descriptors;
    let raised = if need > soft && need <= hard {
        format!(
            " (barrage raises it to the hard limit, {}, at start)",
            n(hard)
        )
    } else {
        String::new()
    };
    judge(
        name,
        plan,
        needs,
        hard.saturating_sub(BASE_DESCRIPTORS),
        format!(
            "{} needed, soft limit {}, hard limit {} (RLIMIT_NOFILE){raised}",
            n(need),
            n(soft),
            n(hard)
        ),
        format!("ulimit -n {need} (as root; or in /etc/security/limits.conf: * - nofile {need})"),
    )
}

pub(crate) fn nr_open(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
    let max = host.number("proc/sys/fs/nr_open")?;
    Some(judge(
        "fs.nr_open",
        plan,
        needs,
        max.saturating_sub(BASE_DESCRIPTORS),
        format!(
            "{} descriptors per process allowed (the most any RLIMIT_NOFILE can be)",
            n(max)
        ),
        format!("sysctl -w fs.nr_open={}", needs.descriptors),
    ))
}

pub(crate) fn file_max(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
    let max = host.number("proc/sys/fs/file-max")?;
    // file-nr: allocated, free (always 0 now), max.
    let used = host
        .numbers("proc/sys/fs/file-nr")
        .and_then(|v| v.first().copied())
        .unwrap_or(0);
    let room = max.saturating_sub(used);
    Some(judge(
        "fs.file-max",
        plan,
        needs,
        room.saturating_sub(BASE_DESCRIPTORS),
        format!("{} open in the system of {}", n(used), n(max)),
        format!(
            "sysctl -w fs.file-max={}",
            used.saturating_add(needs.descriptors.saturating_mul(2))
        ),
    ))
}

/// `net.ipv4.ip_local_port_range`: (low, high).
pub(crate) fn port_range(host: &Host) -> Option<(u64, u64)> {
    let v = host.numbers("proc/sys/net/ipv4/ip_local_port_range")?;
    match v[..] {
        [lo, hi] if hi >= lo => Some((lo, hi)),
        _ => None,
    }
}

/// Ports held in TIME_WAIT per local address and destination when they
/// cannot be reused (0 when `tcp_tw_reuse` lets new connections take
/// them).
pub(crate) fn time_wait_ports(plan: &Plan, needs: &Needs, host: &Host) -> u64 {
    if needs.new_per_second == 0.0 || reuses_time_wait(plan, host) {
        return 0;
    }
    let per_dest = needs.new_per_second / plan.destination_count() as f64;
    let per_pair = per_dest / plan.laddrs.len().max(1) as f64;
    (per_pair * TIME_WAIT_SECS as f64).ceil() as u64
}

/// Whether new connections may take ports in TIME_WAIT: `tcp_tw_reuse`
/// 1, or 2 (the default since Linux 4.19: loopback only) with every
/// destination on this host.
pub(crate) fn reuses_time_wait(plan: &Plan, host: &Host) -> bool {
    match host.number("proc/sys/net/ipv4/tcp_tw_reuse") {
        Some(1) => true,
        Some(2) => !plan.destinations.is_empty() && plan.destinations.iter().all(|d| d.local),
        _ => false,
    }
}

pub(crate) fn ports(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
    let (lo, hi) = port_range(host)?;
    let range = hi - lo + 1;
    let laddrs = plan.laddrs.len().max(1) as u64;
    let waiting = time_wait_ports(plan, needs, host);
    let open = needs.per_destination.div_ceil(laddrs);
    let pair = if plan.laddrs.is_empty() {
        "toward each destination".to_string()
    } else {
        format!("per local address ({}) and destination", n(laddrs))
    };
    let held = if waiting > 0 {
        format!(" and {} in TIME_WAIT", n(waiting))
    } else {
        String::new()
    };
    let local = plan.destinations.iter().all(|d| d.local) && !plan.destinations.is_empty();
    // Past 2^16 addresses (a /16, the most -laddr takes) no count helps.
    let more = open
        .saturating_add(waiting)
        .saturating_mul(laddrs)
        .div_ceil(range)
        .clamp(2, 1 << 16)
        .next_power_of_two();
    let addrs = if local {
        let prefix = 32 - more.trailing_zeros();
        // 127.1.0.0 is aligned for any range -laddr takes (up to a /16).
        format!("-laddr 127.1.0.0/{prefix} ({more} local addresses)")
    } else {
        format!("-laddr with {more} or more local addresses")
    };
    // The connections all pairs hold before a pair runs out.
    let room = range
        .saturating_sub(waiting)
        .saturating_mul(laddrs)
        .saturating_mul(plan.destination_count());
    Some(judge(
        "ports",
        plan,
        needs,
        room,
        format!(
            "{} open{held} {pair}, {} in ip_local_port_range {lo} {hi}",
            n(open),
            n(range)
        ),
        format!("sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\", or {addrs}"),
    ))
}

pub(crate) fn time_wait(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
    if needs.new_per_second == 0.0 {
        return None;
    }
    let name = "TIME_WAIT";
    let reuse = host.number("proc/sys/net/ipv4/tcp_tw_reuse");
    let fin = host
        .number("proc/sys/net/ipv4/tcp_fin_timeout")
        .map_or("unknown".to_string(), |s| format!("{s}s"));
    let held = (needs.new_per_second * TIME_WAIT_SECS as f64) as u64;
    let detail = format!(
        "{} new connections a second leave {} ports in TIME_WAIT for {TIME_WAIT_SECS}s (tcp_tw_reuse {}, tcp_fin_timeout {fin})",
        n(needs.new_per_second as u64),
        n(held),
        reuse.map_or("unknown".into(), |r| r.to_string())
    );
    if reuses_time_wait(plan, host) {
        return Some(Check::ok(name, format!("{detail}: reused")));
    }
    let (lo, hi) = port_range(host)?;
    let room = (hi - lo + 1) * plan.laddrs.len().max(1) as u64 * plan.destination_count();
    if held.saturating_add(needs.likely) <= room {
        return Some(Check::ok(name, detail));
    }
    let secs = room as f64 / needs.new_per_second;
    Some(Check::fail(
        name,
        format!("{detail}: the ports run out after about {secs:.0}s"),
        room,
        "sysctl -w net.ipv4.tcp_tw_reuse=1 (or keep connections alive)".into(),
    ))
}

pub(crate) fn conntrack(plan: &Plan, needs: &Needs, host: &Host) -> Check {
    let name = "conntrack";
    let Some(max) = host.number("proc/sys/net/netfilter/nf_conntrack_max") else {
        return Check::ok(name, "not loaded: no table to fill".into());
    };
    let count = host
        .number("proc/sys/net/netfilter/nf_conntrack_count")
        .unwrap_or(0);
    let room = max.saturating_sub(count);
    let closing = (needs.new_per_second * CONNTRACK_TIME_WAIT_SECS as f64) as u64;
    let closing_text = if closing > 0 {
        format!(" and {} closing", n(closing))
    } else {
        String::new()
    };
    let detail = format!(
        "{} open{closing_text}, {} used of nf_conntrack_max {}",
        n(needs.connections),
        n(count),
        n(max)
    );
    let fix = format!(
        "sysctl -w net.netfilter.nf_conntrack_max={}",
        count.saturating_add(needs.connections.saturating_add(closing).saturating_mul(2))
    );
    // Closing connections fill the table by time, whatever is open.
    if closing.saturating_add(needs.likely) > room {
        let secs = room as f64 / needs.new_per_second.max(1.0);
        let detail = format!("{detail}: full after about {secs:.0}s");
        return Check::fail(name, detail, room, fix);
    }
    judge(name, plan, needs, room - closing, detail, fix)
}

pub(crate) fn somaxconn(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
    if !plan.destinations.iter().any(|d| d.local) {
        return None;
    }
    let name = "somaxconn";
    let max = host.number("proc/sys/net/core/somaxconn")?;
    if needs.burst <= max {
        return Some(Check::ok(
            name,
            format!(
                "the target is on this host: its listen queue holds up to {} (a burst of {} connects)",
                n(max),
                n(needs.burst)
            ),
        ));
    }
    Some(Check::warn(
        name,
        format!(
            "the target is on this host: a burst of {} connects, its listen queue holds at most {} (net.core.somaxconn); connects past it wait a second (the SYN resent)",
            n(needs.burst),
            n(max)
        ),
        Some(format!(
            "sysctl -w net.core.somaxconn={} (and the server's own backlog)",
            needs.burst.next_power_of_two()
        )),
    ))
}

pub(crate) fn memory(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
    let available = host.mem_available()?;
    let need = BASE_BYTES.saturating_add(needs.connections.saturating_mul(BYTES_PER_CONNECTION));
    let mib = |b: u64| n(b >> 20);
    Some(judge(
        "memory",
        plan,
        needs,
        available.saturating_sub(BASE_BYTES) / BYTES_PER_CONNECTION,
        format!(
            "about {} MiB for barrage ({} KiB a connection), {} MiB available",
            mib(need),
            BYTES_PER_CONNECTION / 1024,
            mib(available)
        ),
        "fewer connections (-max-workers, -max-connections), or shards on more machines (-shard)"
            .into(),
    ))
}

/// A rate this many times what the host's cores send is impossible: a
/// failure, which `attack` refuses without `-force`.
pub const IMPOSSIBLE_FACTOR: f64 = 100.0;

pub(crate) fn cpu(plan: &Plan, host: &Host) -> Option<Check> {
    let rate = plan.rate?;
    let name = "CPU";
    let cores = host.cores.max(1);
    let carried = cores as f64 * RATE_PER_CORE;
    let detail = format!(
        "{}/s on {cores} cores (about {}/s a core)",
        n(rate as u64),
        n(RATE_PER_CORE as u64)
    );
    Some(if rate <= carried {
        Check::ok(name, detail)
    } else if rate > carried * IMPOSSIBLE_FACTOR {
        Check {
            name,
            verdict: crate::Verdict::Fail,
            detail: format!(
                "{detail}: {:.0} times what this host sends; an attack refuses it without -force",
                rate / carried
            ),
            fails_at: None,
            fix: Some(format!(
                "-shard over {} machines",
                n((rate / RATE_PER_CORE / cores as f64)
                    .ceil()
                    .min(u64::MAX as f64) as u64)
            )),
        }
    } else {
        Check::warn(
            name,
            format!("{detail}: barrage would fall behind its schedule (its lag says by how much)"),
            Some(format!(
                "-shard over {} machines",
                (rate / RATE_PER_CORE / cores as f64).ceil() as u64
            )),
        )
    })
}
