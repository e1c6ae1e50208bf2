//! `-io`: connections through io_uring or epoll, the `BARRAGE_IO`
//! override, and the fallback when io_uring is denied (a real seccomp
//! filter on `io_uring_setup`, as a container's default profile has).
//! The fault matrix (tests/matrix.rs) runs every cell on both back ends.

use crate::common;

use std::{
    io::Write,
    os::unix::process::CommandExt,
    process::{Child, Command, Output, Stdio},
    time::{Duration, Instant},
};

use barrage_testkit::Server;
use common::{bin, decode};

/// `io_uring_setup`'s number (the same on every architecture's table).
const IO_URING_SETUP: u32 = 425;

/// Denies `io_uring_setup` (EPERM) to the process about to run, with a
/// seccomp filter: what Docker's default profile does.
fn deny_io_uring(cmd: &mut Command) {
    let filter = [
        // The syscall's number.
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: IO_URING_SETUP,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    // SAFETY: between fork and exec only prctl runs (async-signal-safe);
    // the filter lives in this closure, copied into the child.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The paced schedule of most tests here: 200 requests at 200/s.
const PACED: [&str; 4] = ["-rate", "200", "-requests", "200"];

/// An attack on `server` on schedule `sched` with `args`, started; `io`
/// is `BARRAGE_IO` (unset when `None`).
fn start(server: &Server, sched: &[&str], args: &[&str], io: Option<&str>, denied: bool) -> Child {
    let mut cmd = bin();
    cmd.args(["attack", "-timeout", "5s"])
        .args(sched)
        .args(args);
    match io {
        Some(v) => cmd.env("BARRAGE_IO", v),
        None => cmd.env_remove("BARRAGE_IO"),
    };
    if denied {
        deny_io_uring(&mut cmd);
    }
    fed(cmd, server)
}

/// `cmd` spawned with its pipes, `server`'s `/` as its one target.
fn fed(mut cmd: Command, server: &Server) -> Child {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn barrage");
    let target = format!("GET {}\n", server.url("/"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(target.as_bytes())
        .unwrap();
    child
}

/// Whether `pid` holds an io_uring ring, looked at for up to 3 s while
/// it runs.
fn holds_a_ring(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten();
        if fds
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .any(|l| l.to_string_lossy().contains("io_uring"))
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Runs the attack to its end: whether it held a ring, and its output.
fn attack_io(args: &[&str], io: Option<&str>, denied: bool) -> (bool, Output, u64) {
    let server = Server::http();
    let child = start(&server, &PACED, args, io, denied);
    let ring = holds_a_ring(child.id());
    let out = child.wait_with_output().unwrap();
    common::assert_no_panic(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (ring, out, server.count())
}

/// Every record a success, one per request, the server saw them all.
fn all_good(out: &Output, seen: u64) {
    let hits = decode(&out.stdout);
    assert_eq!(hits.len(), 200);
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
    assert_eq!(seen, 200);
}

fn note(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn uring_is_used_when_asked_and_epoll_otherwise() {
    let (ring, out, seen) = attack_io(&["-io", "uring"], None, false);
    assert!(ring, "-io uring holds no ring: {}", note(&out));
    all_good(&out, seen);
    assert!(!note(&out).contains("io_uring"), "{}", note(&out));
    // -max-connections: auto without -io ring's engine (tests/it/ring.rs),
    // paced.
    for asked in [
        &["-io", "epoll"][..],
        &["-io", "auto", "-max-connections", "4"],
    ] {
        let (ring, out, seen) = attack_io(asked, None, false);
        assert!(!ring, "{asked:?} holds a ring");
        all_good(&out, seen);
    }
}

#[test]
fn auto_takes_io_uring_for_the_closed_model_only() {
    let server = Server::http();
    let closed = ["-rate", "0", "-max-workers", "2", "-duration", "1s"];
    // -max-connections: not -io ring's engine, which auto takes where
    // it can (tests/it/ring.rs).
    let child = start(&server, &closed, &["-max-connections", "4"], None, false);
    assert!(
        holds_a_ring(child.id()),
        "-rate 0 with -io auto holds no ring"
    );
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", note(&out));
    let hits = decode(&out.stdout);
    assert!(!hits.is_empty() && hits.iter().all(|h| h.code == 200));
    assert!(!note(&out).contains("io_uring"), "{}", note(&out));
    // Paced: epoll (uring_is_used_when_asked_and_epoll_otherwise).
}

#[test]
fn the_environment_overrides_the_flag() {
    let (ring, out, seen) = attack_io(&["-io", "epoll"], Some("uring"), false);
    assert!(ring, "BARRAGE_IO=uring holds no ring: {}", note(&out));
    all_good(&out, seen);
    let (ring, out, seen) = attack_io(&["-io", "uring"], Some("epoll"), false);
    assert!(!ring, "BARRAGE_IO=epoll holds a ring");
    all_good(&out, seen);
}

#[test]
fn denied_io_uring_falls_back_to_epoll_with_one_note() {
    let (ring, out, seen) = attack_io(&["-io", "uring"], None, true);
    assert!(!ring);
    all_good(&out, seen);
    let err = note(&out);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("io_uring")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].contains("-io uring")
            && notes[0].contains("not available")
            && notes[0].contains("using epoll"),
        "{err}"
    );
    // Denied through the override too; nothing said when not asked.
    let (ring, out, _) = attack_io(&[], Some("uring"), true);
    assert!(!ring);
    assert!(note(&out).contains("using epoll"), "{}", note(&out));
    let (_, out, _) = attack_io(&["-io", "auto"], None, true);
    assert!(!note(&out).contains("io_uring"), "{}", note(&out));
}

#[test]
fn a_bad_io_value_is_refused_by_name() {
    let out = common::run(&["attack", "-io", "iouring"], b"");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-io") && err.contains("iouring"), "{err}");
    assert!(err.contains("uring, epoll, ring or auto"), "{err}");
}

#[test]
fn sweep_takes_io_uring_for_concurrency_steps_and_epoll_for_rates() {
    let server = Server::http();
    for (steps, uring) in [
        (["-concurrency", "2,4"], true),
        (["-rates", "50,100"], false),
    ] {
        let mut cmd = bin();
        cmd.args(["sweep", "-step-duration", "1s", "-timeout", "5s"])
            .args(steps)
            .env_remove("BARRAGE_IO");
        let child = fed(cmd, &server);
        assert_eq!(holds_a_ring(child.id()), uring, "sweep {steps:?}");
        let out = child.wait_with_output().unwrap();
        common::assert_no_panic(&out);
        assert!(out.status.success(), "{}", note(&out));
    }
}
