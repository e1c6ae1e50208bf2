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

use std::{
    fmt,
    net::IpAddr,
    path::{Path, PathBuf},
    time::Duration,
};

/// Descriptors a process uses besides its connections (standard streams,
/// epoll and the runtime's threads, the output file, DNS sockets).
pub const BASE_DESCRIPTORS: u64 = 64;

/// barrage's memory per open connection, bytes: 1.68–1.95 KiB measured
/// holding 18,000 connections (README, "Sizing"), rounded up.
pub const BYTES_PER_CONNECTION: u64 = 2 * 1024;

/// barrage's memory besides its connections, bytes (about 10 MiB).
pub const BASE_BYTES: u64 = 10 << 20;

/// The open-model rate one core carries with room to spare (README,
/// "Sizing": 93,000–109,000/s measured at 20,000/s; plan 40,000).
pub const RATE_PER_CORE: f64 = 40_000.0;

/// How long a closed TCP connection's port stays in TIME_WAIT on Linux
/// (`TCP_TIMEWAIT_LEN`, fixed at build time).
pub const TIME_WAIT_SECS: u64 = 60;

/// How long conntrack keeps a closed connection's entry
/// (`nf_conntrack_tcp_timeout_time_wait`'s default).
pub const CONNTRACK_TIME_WAIT_SECS: u64 = 120;

/// Where an attack sends: a host and port, and whether it is this machine
/// (its listen queue is then this kernel's `somaxconn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// Host name or address, as the targets name it.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Whether it is on this host (a loopback address or `localhost`).
    pub local: bool,
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.host.parse::<IpAddr>() {
            Ok(IpAddr::V6(_)) => write!(f, "[{}]:{}", self.host, self.port),
            _ => write!(f, "{}:{}", self.host, self.port),
        }
    }
}

/// What an attack's flags ask of the host.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Requests per second in the open model (`None`: the closed model,
    /// `-rate 0` with `-max-workers`).
    pub rate: Option<f64>,
    /// `-timeout` (zero: none).
    pub timeout: Duration,
    /// `-max-workers` (`None`: unbounded).
    pub max_workers: Option<u64>,
    /// `-max-connections` (`None`: unbounded).
    pub max_connections: Option<u64>,
    /// `-hold N`: WebSocket connections held open.
    pub hold: Option<u64>,
    /// `-keepalive`.
    pub keepalive: bool,
    /// Whether every request goes on one shared connection per host and
    /// thread (`-h2c`, `-http3`; HTTP/2 by ALPN is known only later).
    pub multiplexed: bool,
    /// barrage's worker threads (`-cpus`).
    pub threads: u64,
    /// `-laddr` (empty: the kernel's choice, one address).
    pub laddrs: Vec<IpAddr>,
    /// Where the targets go (empty: not known; counted as one).
    pub destinations: Vec<Destination>,
    /// Over a Unix socket (`-unix-socket`): no ports, no conntrack.
    pub unix_socket: bool,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            rate: Some(50.0),
            timeout: Duration::from_secs(30),
            max_workers: None,
            max_connections: None,
            hold: None,
            keepalive: true,
            multiplexed: false,
            threads: 1,
            laddrs: Vec::new(),
            destinations: Vec::new(),
            unix_socket: false,
        }
    }
}

/// What a plan needs, estimated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Needs {
    /// Connections open at once, at most, over all destinations.
    pub connections: u64,
    /// Of them, toward the busiest destination.
    pub per_destination: u64,
    /// Descriptors: the connections and [`BASE_DESCRIPTORS`].
    pub descriptors: u64,
    /// New connections a second in steady state (without keep-alive).
    pub new_per_second: f64,
    /// Connections opened at once at the start (closed model, `-hold`)
    /// or in a 10 ms burst (open model).
    pub burst: u64,
    /// The connections the plan is sure to need: all of them in the
    /// closed model and with `-hold`; in the open model those of answers
    /// that take a second ([`LIKELY_LATENCY`]). Past a limit, a failure;
    /// only `connections` past it, a warning.
    pub likely: u64,
}

/// The answer time the open model is sure to meet under load, seconds:
/// a server past its capacity answers in a second or more (one SYN resent
/// is a second), and every request waits in flight meanwhile.
pub const LIKELY_LATENCY: f64 = 1.0;

impl Plan {
    /// Destinations counted (at least one).
    fn destination_count(&self) -> u64 {
        self.destinations.len().max(1) as u64
    }

    /// What the plan needs: in the open model, every request in flight
    /// for the whole `-timeout` (the most the rate and the timeout allow:
    /// what a server that slows down to the timeout makes barrage hold);
    /// in the closed model, `-max-workers`; with `-hold`, its count; each
    /// capped by `-max-workers` and `-max-connections`. A multiplexed
    /// protocol holds one connection per host and thread.
    pub fn needs(&self) -> Needs {
        let timeout = if self.timeout.is_zero() {
            // No timeout: a request may wait for ever; count a minute.
            60.0
        } else {
            self.timeout.as_secs_f64()
        };
        let in_flight = |secs: f64| {
            let mut c = match (self.hold, self.rate) {
                (Some(n), _) => n,
                (None, Some(rate)) => (rate * secs).ceil() as u64,
                (None, None) => self.max_workers.unwrap_or(1),
            };
            if let Some(w) = self.max_workers {
                c = c.min(w);
            }
            if self.multiplexed && self.hold.is_none() {
                c = c.min(self.threads.max(1) * self.destination_count());
            }
            if let Some(m) = self.max_connections.filter(|&m| m > 0) {
                c = c.min(m);
            }
            c
        };
        let connections = in_flight(timeout);
        let likely = in_flight(LIKELY_LATENCY.min(timeout));
        let per_destination = connections.div_ceil(self.destination_count());
        let new_per_second = match (self.keepalive, self.rate) {
            (false, Some(rate)) => rate,
            _ => 0.0,
        };
        let burst = match (self.hold, self.rate) {
            (None, Some(rate)) => ((rate / 100.0).ceil() as u64).min(per_destination),
            _ => per_destination,
        };
        Needs {
            connections,
            per_destination,
            descriptors: connections + BASE_DESCRIPTORS,
            new_per_second,
            burst,
            likely,
        }
    }
}

/// How a plan stands against a wall that holds `room` connections: a
/// failure when even its likely connections pass it, a warning (saying at
/// what answer time) when only its most do.
fn judge(
    name: &'static str,
    plan: &Plan,
    needs: &Needs,
    room: u64,
    detail: String,
    fix: String,
) -> Check {
    if needs.connections <= room {
        return Check::ok(name, detail);
    }
    if needs.likely > room {
        return Check::fail(name, detail, room, fix);
    }
    let when = match plan.rate {
        Some(rate) if rate > 0.0 => format!(
            "; answers slower than {:.1}s would pass it (every request waits in flight until its answer or -timeout)",
            room as f64 / rate
        ),
        _ => String::new(),
    };
    Check {
        name,
        verdict: Verdict::Warn,
        detail: format!("{detail}{when}"),
        fails_at: Some(room),
        fix: Some(fix),
    }
}

/// The machine's side: `/proc` under `root`, the open-files limits and
/// the cores. [`Host::this`] reads this machine; tests point one at a
/// fake tree.
#[derive(Debug, Clone)]
pub struct Host {
    /// The directory `proc/` is read under (`/` here).
    pub root: PathBuf,
    /// `RLIMIT_NOFILE`: soft and hard (`None`: unreadable).
    pub nofile: Option<(u64, u64)>,
    /// CPU cores this process may run on.
    pub cores: u64,
}

impl Host {
    /// This machine.
    pub fn this() -> Self {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
        Host {
            root: PathBuf::from("/"),
            nofile: ok.then_some((lim.rlim_cur, lim.rlim_max)),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
        }
    }

    /// A file under `root` (`proc/sys/fs/file-max`), trimmed; `None` when
    /// absent or unreadable.
    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(rel))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// A file's first number.
    fn number(&self, rel: &str) -> Option<u64> {
        self.read(rel)?.split_whitespace().next()?.parse().ok()
    }

    /// A file's numbers.
    fn numbers(&self, rel: &str) -> Option<Vec<u64>> {
        self.read(rel)?
            .split_whitespace()
            .map(|n| n.parse().ok())
            .collect()
    }

    /// `MemAvailable` in `/proc/meminfo`, bytes.
    fn mem_available(&self) -> Option<u64> {
        let info = self.read("proc/meminfo")?;
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    /// The root, for messages.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The plan fits.
    Ok,
    /// It fits, but something is close or depends on the server.
    Warn,
    /// The plan cannot fit: it will fail at about [`Check::fails_at`].
    Fail,
}

/// One wall and how the plan stands against it.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What is checked (`open files`, `ports`, ...).
    pub name: &'static str,
    /// The verdict.
    pub verdict: Verdict,
    /// What was found, in a sentence.
    pub detail: String,
    /// For a failure: about how many connections the plan reaches before
    /// it fails.
    pub fails_at: Option<u64>,
    /// How to move the wall: a command or a config line.
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: String) -> Check {
        Check {
            name,
            verdict: Verdict::Ok,
            detail,
            fails_at: None,
            fix: None,
        }
    }

    fn fail(name: &'static str, detail: String, at: u64, fix: String) -> Check {
        Check {
            name,
            verdict: Verdict::Fail,
            detail,
            fails_at: Some(at),
            fix: Some(fix),
        }
    }

    fn warn(name: &'static str, detail: String, fix: Option<String>) -> Check {
        Check {
            name,
            verdict: Verdict::Warn,
            detail,
            fails_at: None,
            fix,
        }
    }
}

impl fmt::Display for Check {
    /// `ok    open files: ...`, then the fix on a line of its own.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self.verdict {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
        };
        write!(f, "{word:<5} {}: {}", self.name, self.detail)?;
        if let Some(at) = self.fails_at {
            write!(f, "; will fail at about {} connections", n(at))?;
        }
        if let Some(fix) = &self.fix {
            write!(f, "\n      fix: {fix}")?;
        }
        Ok(())
    }
}

/// A count with thousands separators (`1,234,567`).
pub fn n(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Every check of `plan` against `host`, in the order the walls are met.
pub fn check(plan: &Plan, host: &Host) -> Vec<Check> {
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

fn open_files(plan: &Plan, needs: &Needs, host: &Host) -> Check {
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

fn nr_open(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
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

fn file_max(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
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
        format!("sysctl -w fs.file-max={}", used + needs.descriptors * 2),
    ))
}

/// `net.ipv4.ip_local_port_range`: (low, high).
fn port_range(host: &Host) -> Option<(u64, u64)> {
    let v = host.numbers("proc/sys/net/ipv4/ip_local_port_range")?;
    match v[..] {
        [lo, hi] if hi >= lo => Some((lo, hi)),
        _ => None,
    }
}

/// Ports held in TIME_WAIT per local address and destination when they
/// cannot be reused (0 when `tcp_tw_reuse` lets new connections take
/// them).
fn time_wait_ports(plan: &Plan, needs: &Needs, host: &Host) -> u64 {
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
fn reuses_time_wait(plan: &Plan, host: &Host) -> bool {
    match host.number("proc/sys/net/ipv4/tcp_tw_reuse") {
        Some(1) => true,
        Some(2) => !plan.destinations.is_empty() && plan.destinations.iter().all(|d| d.local),
        _ => false,
    }
}

fn ports(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
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
    let more = ((open + waiting) * laddrs)
        .div_ceil(range)
        .max(2)
        .next_power_of_two();
    let addrs = if local {
        let prefix = 32 - more.trailing_zeros();
        // 127.1.0.0 is aligned for any range -laddr takes (up to a /16).
        format!("-laddr 127.1.0.0/{prefix} ({more} local addresses)")
    } else {
        format!("-laddr with {more} or more local addresses")
    };
    // The connections all pairs hold before a pair runs out.
    let room = range.saturating_sub(waiting) * laddrs * plan.destination_count();
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

fn time_wait(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
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
    if held + needs.likely <= room {
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

fn conntrack(plan: &Plan, needs: &Needs, host: &Host) -> Check {
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
        count + (needs.connections + closing) * 2
    );
    // Closing connections fill the table by time, whatever is open.
    if closing + needs.likely > room {
        let secs = room as f64 / needs.new_per_second.max(1.0);
        let detail = format!("{detail}: full after about {secs:.0}s");
        return Check::fail(name, detail, room, fix);
    }
    judge(name, plan, needs, room - closing, detail, fix)
}

fn somaxconn(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
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

fn memory(plan: &Plan, needs: &Needs, host: &Host) -> Option<Check> {
    let available = host.mem_available()?;
    let need = BASE_BYTES + needs.connections * BYTES_PER_CONNECTION;
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

fn cpu(plan: &Plan, host: &Host) -> Option<Check> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake `/proc` tree with this machine's usual values, some
    /// replaced.
    struct Fake {
        dir: PathBuf,
    }

    impl Fake {
        fn new(tag: &str, files: &[(&str, &str)]) -> Fake {
            let dir =
                std::env::temp_dir().join(format!("barrage-doctor-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let defaults = [
                ("proc/sys/fs/nr_open", "1048576"),
                ("proc/sys/fs/file-max", "9223372036854775807"),
                ("proc/sys/fs/file-nr", "1024\t0\t9223372036854775807"),
                ("proc/sys/net/ipv4/ip_local_port_range", "32768\t60999"),
                ("proc/sys/net/ipv4/tcp_tw_reuse", "2"),
                ("proc/sys/net/ipv4/tcp_fin_timeout", "60"),
                ("proc/sys/net/core/somaxconn", "4096"),
                (
                    "proc/meminfo",
                    "MemTotal: 24000000 kB\nMemAvailable: 20000000 kB\n",
                ),
            ];
            for (rel, text) in defaults.iter().chain(files) {
                let path = dir.join(rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            Fake { dir }
        }

        fn host(&self, nofile: (u64, u64)) -> Host {
            Host {
                root: self.dir.clone(),
                nofile: Some(nofile),
                cores: 2,
            }
        }
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn local() -> Vec<Destination> {
        vec![Destination {
            host: "127.0.0.1".into(),
            port: 8080,
            local: true,
        }]
    }

    fn remote() -> Vec<Destination> {
        vec![Destination {
            host: "10.1.2.3".into(),
            port: 80,
            local: false,
        }]
    }

    fn find<'a>(checks: &'a [Check], name: &str) -> &'a Check {
        checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no check {name}: {checks:#?}"))
    }

    #[test]
    fn a_small_plan_fits_everywhere() {
        let fake = Fake::new("small", &[]);
        let plan = Plan {
            destinations: local(),
            ..Plan::default()
        };
        let checks = check(&plan, &fake.host((1024, 524288)));
        assert!(fits(&checks), "{checks:#?}");
        assert_eq!(
            find(&checks, "conntrack").detail,
            "not loaded: no table to fill"
        );
        assert!(
            checks.iter().all(|c| c.verdict == Verdict::Ok),
            "{checks:#?}"
        );
    }

    #[test]
    fn open_files_fail_past_the_hard_limit_and_pass_below_it() {
        let fake = Fake::new("nofile", &[]);
        // 20,000/s for 10 s: 200,000 in flight at the worst.
        let plan = Plan {
            rate: Some(20_000.0),
            timeout: Duration::from_secs(10),
            destinations: remote(),
            ..Plan::default()
        };
        let checks = check(&plan, &fake.host((1024, 20_000)));
        let c = find(&checks, "open files");
        assert_eq!(c.verdict, Verdict::Fail);
        assert_eq!(c.fails_at, Some(20_000 - BASE_DESCRIPTORS));
        assert!(
            c.fix.as_ref().unwrap().starts_with("ulimit -n 200064"),
            "{c}"
        );
        // 1,000/s for up to 30 s: past the limit only when answers take
        // over 19.9 s (the open model's worst, not its likely): a warning.
        let slow = Plan {
            rate: Some(1_000.0),
            timeout: Duration::from_secs(30),
            ..plan.clone()
        };
        let c = find(&check(&slow, &fake.host((1024, 20_000))), "open files").clone();
        assert_eq!(
            (c.verdict, c.fails_at),
            (Verdict::Warn, Some(19_936)),
            "{c}"
        );
        assert!(
            c.detail.contains("answers slower than 19.9s would pass it"),
            "{c}"
        );
        assert!(fits(&[c]));
        // Under the hard limit: raised at start.
        let plan = Plan {
            max_workers: Some(10_000),
            ..plan
        };
        let c = find(&check(&plan, &fake.host((1024, 20_000))), "open files").clone();
        assert_eq!(c.verdict, Verdict::Ok, "{c}");
        assert!(c.detail.contains("raises it"), "{c}");
    }

    #[test]
    fn nr_open_and_file_max_are_the_systems_walls() {
        let fake = Fake::new(
            "fs",
            &[
                ("proc/sys/fs/nr_open", "100000"),
                ("proc/sys/fs/file-max", "150000"),
                ("proc/sys/fs/file-nr", "100000\t0\t150000"),
            ],
        );
        let plan = Plan {
            rate: None,
            max_workers: Some(120_000),
            destinations: remote(),
            laddrs: (0..8).map(|i| IpAddr::from([10, 0, 0, i])).collect(),
            ..Plan::default()
        };
        let checks = check(&plan, &fake.host((1 << 20, 1 << 20)));
        let c = find(&checks, "fs.nr_open");
        assert_eq!(c.verdict, Verdict::Fail);
        assert_eq!(c.fix.as_deref(), Some("sysctl -w fs.nr_open=120064"));
        let c = find(&checks, "fs.file-max");
        assert_eq!((c.verdict, c.fails_at), (Verdict::Fail, Some(50_000 - 64)));
        assert!(c
            .fix
            .as_ref()
            .unwrap()
            .starts_with("sysctl -w fs.file-max="));
        assert!(!fits(&checks));
    }

    #[test]
    fn ports_run_out_per_local_address_and_destination() {
        let fake = Fake::new("ports", &[]);
        // 50,000 connections to one loopback server: 28,232 ports.
        let plan = Plan {
            rate: None,
            max_workers: Some(50_000),
            destinations: local(),
            ..Plan::default()
        };
        let host = fake.host((1 << 20, 1 << 20));
        let c = find(&check(&plan, &host), "ports").clone();
        assert_eq!(
            (c.verdict, c.fails_at),
            (Verdict::Fail, Some(28_232)),
            "{c}"
        );
        assert_eq!(
            c.fix.as_deref(),
            Some("sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\", or -laddr 127.1.0.0/31 (2 local addresses)")
        );
        // Two local addresses: each holds its own range.
        let plan = Plan {
            laddrs: vec![[127, 0, 0, 2].into(), [127, 0, 0, 3].into()],
            ..plan
        };
        let c = find(&check(&plan, &host), "ports").clone();
        assert_eq!(c.verdict, Verdict::Ok, "{c}");
        assert!(
            c.detail.contains("25,000 open per local address (2)"),
            "{c}"
        );
    }

    #[test]
    fn time_wait_fills_the_ports_unless_reused() {
        // 1,000 new connections a second to a remote server hold 60,000
        // ports in TIME_WAIT: more than the 28,232 of the range.
        let plan = Plan {
            rate: Some(1_000.0),
            timeout: Duration::from_secs(1),
            keepalive: false,
            destinations: remote(),
            ..Plan::default()
        };
        let fake = Fake::new("tw", &[("proc/sys/net/ipv4/tcp_tw_reuse", "0")]);
        let checks = check(&plan, &fake.host((1 << 20, 1 << 20)));
        let c = find(&checks, "TIME_WAIT");
        assert_eq!(c.verdict, Verdict::Fail, "{c}");
        assert!(
            c.detail.contains("the ports run out after about 28s"),
            "{c}"
        );
        assert_eq!(
            c.fix.as_deref(),
            Some("sysctl -w net.ipv4.tcp_tw_reuse=1 (or keep connections alive)")
        );
        assert_eq!(find(&checks, "ports").verdict, Verdict::Fail);
        // tcp_tw_reuse 2 (loopback only) does not reach a remote server...
        let fake = Fake::new("tw2", &[]);
        let checks = check(&plan, &fake.host((1 << 20, 1 << 20)));
        assert_eq!(find(&checks, "TIME_WAIT").verdict, Verdict::Fail);
        // ...and does reach a loopback one.
        let plan = Plan {
            destinations: local(),
            ..plan
        };
        let checks = check(&plan, &fake.host((1 << 20, 1 << 20)));
        let c = find(&checks, "TIME_WAIT");
        assert_eq!(c.verdict, Verdict::Ok, "{c}");
        assert!(c.detail.ends_with("reused"), "{c}");
        // With keep-alive: no check at all.
        let plan = Plan {
            keepalive: true,
            ..plan
        };
        assert!(check(&plan, &fake.host((1 << 20, 1 << 20)))
            .iter()
            .all(|c| c.name != "TIME_WAIT"));
    }

    #[test]
    fn conntrack_counts_open_and_closing_entries() {
        let fake = Fake::new(
            "ct",
            &[
                ("proc/sys/net/netfilter/nf_conntrack_max", "65536"),
                ("proc/sys/net/netfilter/nf_conntrack_count", "5536"),
            ],
        );
        let plan = Plan {
            rate: Some(1_000.0),
            timeout: Duration::from_secs(2),
            keepalive: false,
            destinations: local(),
            ..Plan::default()
        };
        // 2,000 open and 120,000 closing: past the 60,000 free.
        let c = find(&check(&plan, &fake.host((1 << 20, 1 << 20))), "conntrack").clone();
        assert_eq!(
            (c.verdict, c.fails_at),
            (Verdict::Fail, Some(60_000)),
            "{c}"
        );
        assert_eq!(
            c.fix.as_deref(),
            Some("sysctl -w net.netfilter.nf_conntrack_max=249536")
        );
        let plan = Plan {
            keepalive: true,
            ..plan
        };
        let c = find(&check(&plan, &fake.host((1 << 20, 1 << 20))), "conntrack").clone();
        assert_eq!(c.verdict, Verdict::Ok, "{c}");
    }

    #[test]
    fn a_local_target_warns_of_its_listen_queue() {
        let fake = Fake::new("somax", &[("proc/sys/net/core/somaxconn", "128")]);
        let plan = Plan {
            rate: None,
            max_workers: Some(1_000),
            destinations: local(),
            ..Plan::default()
        };
        let checks = check(&plan, &fake.host((1 << 20, 1 << 20)));
        let c = find(&checks, "somaxconn");
        assert_eq!(c.verdict, Verdict::Warn, "{c}");
        assert_eq!(
            c.fix.as_deref(),
            Some("sysctl -w net.core.somaxconn=1024 (and the server's own backlog)")
        );
        assert!(fits(&checks), "a warning is no failure");
        // A remote target's queue is not this host's.
        let plan = Plan {
            destinations: remote(),
            ..plan
        };
        assert!(check(&plan, &fake.host((1 << 20, 1 << 20)))
            .iter()
            .all(|c| c.name != "somaxconn"));
    }

    #[test]
    fn memory_and_cpu_come_from_barrages_measured_costs() {
        let fake = Fake::new("mem", &[("proc/meminfo", "MemAvailable: 102400 kB\n")]);
        // 100 MiB available: 10 MiB base, 2 KiB a connection.
        let plan = Plan {
            rate: Some(200_000.0),
            timeout: Duration::from_secs(1),
            destinations: remote(),
            laddrs: (0..16).map(|i| IpAddr::from([10, 0, 0, i])).collect(),
            ..Plan::default()
        };
        let checks = check(&plan, &fake.host((1 << 20, 1 << 20)));
        let c = find(&checks, "memory");
        assert_eq!(
            (c.verdict, c.fails_at),
            (Verdict::Fail, Some(46_080)),
            "{c}"
        );
        let c = find(&checks, "CPU");
        assert_eq!(c.verdict, Verdict::Warn, "{c}");
        assert_eq!(c.fix.as_deref(), Some("-shard over 3 machines"));
    }

    #[test]
    fn multiplexed_and_capped_plans_need_few_connections() {
        let plan = Plan {
            rate: Some(20_000.0),
            multiplexed: true,
            threads: 2,
            destinations: local(),
            ..Plan::default()
        };
        assert_eq!(plan.needs().connections, 2);
        let plan = Plan {
            multiplexed: false,
            max_connections: Some(500),
            ..plan
        };
        assert_eq!(plan.needs().connections, 500);
        let plan = Plan {
            hold: Some(18_000),
            ..Plan::default()
        };
        assert_eq!(plan.needs().burst, 18_000);
    }

    #[test]
    fn lines_read_as_verdict_name_detail_and_fix() {
        let c = Check::fail("ports", "a".into(), 10, "sysctl -w x=1".into());
        assert_eq!(
            c.to_string(),
            "FAIL  ports: a; will fail at about 10 connections\n      fix: sysctl -w x=1"
        );
        assert_eq!(
            Check::ok("conntrack", "b".into()).to_string(),
            "ok    conntrack: b"
        );
        assert_eq!(n(1234567), "1,234,567");
    }

    #[test]
    fn this_host_reads() {
        let host = Host::this();
        assert!(host.nofile.is_some());
        assert!(port_range(&host).is_some());
        let checks = check(&Plan::default(), &host);
        assert!(fits(&checks), "{checks:#?}");
    }
}
