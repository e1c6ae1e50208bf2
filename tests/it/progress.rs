//! `attack`'s live progress and the words around it: a line redrawn on a
//! terminal (a pseudo-terminal made by `script`), one plain line a second
//! with `-progress` on a pipe, what a stop waits for, falling behind, and
//! the refusal to write the binary stream to a terminal.

use crate::common;

use std::{path::Path, process::Command, time::Duration};

use barrage_testkit::{Child, Server};
use common::{run, tempdir};

const WATCHDOG: Duration = Duration::from_secs(60);

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_barrage"))
}

/// Runs `shell` on a pseudo-terminal (stdin, stdout and stderr are it)
/// and returns what it printed there.
fn on_terminal(shell: &str) -> (Option<i32>, String) {
    let out = Command::new("script")
        .args(["-qfec", shell, "/dev/null"])
        .output()
        .expect("script (bsdutils) runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_terminal_gets_one_line_redrawn_and_finished() {
    let server = Server::http();
    let dir = tempdir("progress-tty");
    let out = dir.join("r.bin");
    // Issue 29: at 80 columns the line was ~135 and left a new line at
    // every redraw. Each redraw now fits, fields dropped by rank.
    for cols in [80, 160] {
        let (code, screen) = on_terminal(&format!(
            "stty rows 40 cols {cols}; echo 'GET {}' | {} attack -rate 100 -duration 2s -output {}",
            server.url("/"),
            bin().display(),
            out.display()
        ));
        assert_eq!(code, Some(0), "{screen}");
        let redraws = screen.matches("\r\x1b[2K").count();
        assert!(redraws >= 4, "{redraws} redraws: {screen:?}");
        for line in screen.split("\r\x1b[2K").skip(1) {
            let line = line.trim_end_matches(['\r', '\n']);
            // A message said once ("behind schedule" on a loaded machine,
            // "stopping") is printed after a clear and wraps like any
            // other line on stderr; only the redrawn line must fit.
            if line.starts_with("barrage attack: ") {
                continue;
            }
            assert!(
                line.chars().count() < cols && !line.contains('\n'),
                "{} columns at {cols}: {line:?}",
                line.chars().count()
            );
        }
        assert!(screen.contains("% ok, 0 errors"), "{screen:?}");
        if cols == 160 {
            // A run the verdict holds NOT VALID (a loaded machine: CI saw
            // lag p99 89 ms at 100/s) gives the verdict the bar's room.
            assert!(
                screen.contains("2.0s [") || screen.contains("NOT VALID ("),
                "a bar toward -duration: {screen:?}"
            );
            assert!(screen.contains("| lag p99 "), "{screen:?}");
        }
        assert!(
            screen.ends_with("\r\n") || screen.ends_with('\n'),
            "finished cleanly: {screen:?}"
        );
        // The stream went to the file, whole.
        let hits = common::decode(&std::fs::read(&out).unwrap());
        assert_eq!(hits.len(), 200);
    }
}

#[test]
fn progress_on_a_pipe_is_a_plain_line_a_second_and_stdout_stays_the_stream() {
    let server = Server::http();
    let out = run(
        &["attack", "-rate", "100", "-duration", "2s", "-progress"],
        format!("GET {}\n", server.url("/")).as_bytes(),
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("| sent ")).collect();
    assert!(lines.len() >= 2, "{err}");
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    assert!(lines.last().unwrap().contains("sent 200 "), "{err}");
    assert_eq!(common::decode(&out.stdout).len(), 200);
    // Off by default on a pipe, and -progress=false everywhere.
    let quiet = run(
        &["attack", "-rate", "100", "-duration", "1s"],
        format!("GET {}\n", server.url("/")).as_bytes(),
    );
    // Nothing but, on a loaded machine, the one behind-schedule notice
    // (a debug build's lag past 10 ms is not what this test is about).
    let quiet_err = String::from_utf8_lossy(&quiet.stderr);
    assert!(
        quiet_err
            .lines()
            .all(|l| l.starts_with("barrage attack: behind schedule:")),
        "{quiet_err}"
    );
    let dir = tempdir("progress-off");
    let (_, screen) = on_terminal(&format!(
        "echo 'GET {}' | {} attack -rate 100 -duration 1s -progress=false -output {}",
        server.url("/"),
        bin().display(),
        dir.join("r.bin").display()
    ));
    assert!(!screen.contains("| sent "), "{screen:?}");
}

#[test]
fn a_stop_says_what_it_waits_for() {
    let server = Server::http();
    let child = Child::spawn(
        bin(),
        &["attack", "-rate", "50", "-duration", "60s"],
        format!("GET {}\n", server.url("/sleep/2000")).as_bytes(),
        None,
    );
    std::thread::sleep(Duration::from_millis(800));
    child.signal(libc::SIGINT);
    let r = child.wait(WATCHDOG);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("stopping: "))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(
        line.ends_with("requests in flight, waiting up to 30s (Ctrl-C again to quit)"),
        "{line}"
    );
    r.assert_clean();
}

#[test]
fn falling_behind_the_schedule_is_said_once_with_the_figure() {
    // One request at a time against a 500 ms answer, 10 offered a second.
    let server = Server::http();
    let out = run(
        &[
            "attack",
            "-rate",
            "10",
            "-duration",
            "1s",
            "-max-workers",
            "1",
        ],
        format!("GET {}\n", server.url("/sleep/500")).as_bytes(),
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("behind schedule").count(), 1, "{err}");
    assert!(err.contains("requests went out up to "), "{err}");
}

#[test]
fn the_binary_stream_is_not_written_to_a_terminal() {
    let server = Server::http();
    let (code, screen) = on_terminal(&format!(
        "echo 'GET {}' | {} attack -rate 10 -requests 3",
        server.url("/"),
        bin().display()
    ));
    assert_eq!(code, Some(2), "{screen:?}");
    assert!(
        screen.contains("result stream not written to a terminal; pipe it to `barrage report` or use -output FILE"),
        "{screen:?}"
    );
    assert_eq!(server.count(), 0, "nothing sent");
}
