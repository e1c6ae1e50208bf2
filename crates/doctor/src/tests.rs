//! The checks against fake `/proc` trees.

use std::{net::IpAddr, path::PathBuf, time::Duration};

use crate::walls::port_range;
use crate::*;

/// A fake `/proc` tree with this machine's usual values, some
/// replaced.
struct Fake {
    dir: PathBuf,
}

impl Fake {
    fn new(tag: &str, files: &[(&str, &str)]) -> Fake {
        let dir = std::env::temp_dir().join(format!("barrage-doctor-{tag}-{}", std::process::id()));
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
    // 20,000/s for 10 s: 200,000 in flight at the worst, 4,000 with
    // answers in twice the expected 100 ms: a warning of the worst
    // (issue 60: it failed, and the attack ran with p99 0.46 ms).
    let plan = Plan {
        rate: Some(20_000.0),
        timeout: Duration::from_secs(10),
        destinations: remote(),
        ..Plan::default()
    };
    let checks = check(&plan, &fake.host((1024, 20_000)));
    let c = find(&checks, "open files");
    assert_eq!(c.verdict, Verdict::Warn, "{c}");
    assert!(c.detail.contains("answers slower than 1.0s"), "{c}");
    // Expected to answer in a second: 40,000 in flight, past the limit.
    let expect = Plan {
        expect_latency: Some(Duration::from_secs(1)),
        ..plan.clone()
    };
    let c = find(&check(&expect, &fake.host((1024, 20_000))), "open files").clone();
    assert_eq!(c.verdict, Verdict::Fail);
    assert_eq!(c.fails_at, Some(20_000 - BASE_DESCRIPTORS));
    assert!(c.detail.contains("with answers taking 2000 ms"), "{c}");
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
        expect_latency: Some(Duration::from_millis(500)),
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
    // Issue 60: a rate no count of this host's cores comes near is a
    // failure, and the counts saturate instead of wrapping around.
    let plan = Plan {
        rate: Some(u64::MAX as f64),
        ..plan
    };
    let checks = check(&plan, &fake.host((1 << 20, 1 << 20)));
    let c = find(&checks, "CPU");
    assert_eq!(c.verdict, Verdict::Fail, "{c}");
    assert!(c.detail.contains("refuses it without -force"), "{c}");
    let c = find(&checks, "open files");
    assert_eq!(c.verdict, Verdict::Fail, "{c}");
    assert!(
        c.detail.starts_with("18,446,744,073,709,551,615 needed"),
        "{c}"
    );
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
