//! What a new user meets first: flag errors that say what is wrong where
//! it was typed, help in the README's spelling, exit codes as documented,
//! completions and a man page, and the README's examples working against
//! `barrage serve`.

use crate::common;

use barrage_testkit::CapacityServer;
use common::run;

fn err(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn flag_errors_echo_the_flag_as_typed_and_point_to_the_subcommands_help() {
    for (args, says) in [
        (
            vec!["attack", "-bogus", "1"],
            "unexpected argument '-bogus' found (see barrage attack -h)",
        ),
        (
            vec!["attack", "--bogus", "1"],
            "unexpected argument '--bogus' found (see barrage attack -h)",
        ),
        (
            vec!["attack", "-rate", "abc"],
            "invalid value 'abc' for '-rate': invalid rate",
        ),
        (
            vec!["attack", "-requests", "-1"],
            "'-requests': \"-1\" is not a whole number of at least 1",
        ),
        (
            vec!["attack", "-requests", "0"],
            "'-requests': \"0\" is not a whole number of at least 1",
        ),
        (
            vec!["attack", "-workers", "0"],
            "'-workers': \"0\" is not a whole number of at least 1",
        ),
        (vec!["report", "-type", "foo"], "(see barrage report -h)"),
        (vec!["report", "-every", "0s"], "-every must be above 0"),
        (vec!["sweep", "-rates", "0"], "(see barrage sweep -h)"),
    ] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = err(&out);
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
}

#[test]
fn help_uses_the_one_dash_spelling_and_agrees_with_the_guide() {
    let out = run(&["attack", "-h"], b"");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("\n      -rate <RATE>"), "{help}");
    assert!(!help.contains("--rate"), "{help}");
    assert!(
        help.contains("-workers <WORKERS>")
            && help.contains("Connections opened to each host before the clock starts"),
        "{help}"
    );
    let readme = std::fs::read_to_string(common::fixture("../docs/reference/client.md")).unwrap();
    assert!(readme.contains("connections opened to each host before the clock starts"));
}

#[test]
fn a_file_that_cannot_be_opened_exits_1_and_names_it() {
    for args in [
        vec!["attack", "-targets", "/nonexistent/t.txt"],
        vec!["report", "/nonexistent/r.bin"],
        vec!["dump", "/nonexistent/r.bin"],
    ] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            err(&out).contains("/nonexistent/"),
            "{args:?}: {}",
            err(&out)
        );
    }
}

#[test]
fn completions_and_the_man_page_come_from_the_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell], b"");
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(
            script.contains("barrage") && script.contains("rate"),
            "{shell}"
        );
    }
    let out = run(&["man"], b"");
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH barrage 1"), "{page}");
    assert!(page.contains("sweep"), "{page}");
}

/// Issue 37: a page per subcommand, from the flags and the README's
/// words, each read by man(1) as a person would, without a warning.
#[test]
fn every_subcommand_has_a_manual_page_that_man_reads() {
    let dir = common::tempdir("man");
    let out = run(&["man", "-dir", dir.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", err(&out));
    let mut pages: Vec<String> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    let want = [
        "barrage-attack.1",
        "barrage-collect.1",
        "barrage-compare.1",
        "barrage-completions.1",
        "barrage-doctor.1",
        "barrage-dump.1",
        "barrage-encode.1",
        "barrage-export.1",
        "barrage-man.1",
        "barrage-plot.1",
        "barrage-report.1",
        "barrage-send.1",
        "barrage-serve.1",
        "barrage-sweep.1",
        "barrage-targets.1",
        "barrage.1",
    ];
    assert_eq!(pages, want);
    for page in want {
        let shown = std::process::Command::new("man")
            .arg("-l")
            .arg(dir.join(page))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .expect("man (man-db) runs");
        let text = String::from_utf8_lossy(&shown.stdout);
        let warn = String::from_utf8_lossy(&shown.stderr);
        assert!(
            shown.status.success() && warn.trim().is_empty(),
            "{page}: {warn}"
        );
        for heading in ["NAME", "SYNOPSIS", "EXIT STATUS", "SEE ALSO"] {
            assert!(text.contains(heading), "{page} lacks {heading}: {text}");
        }
        // The flags (SYNOPSIS to the manual's own sections) in the one-dash
        // spelling; the prose may quote curl's --url.
        let flags: String = text
            .lines()
            .skip_while(|l| *l != "SYNOPSIS")
            .skip(1)
            .take_while(|l| {
                l.starts_with(' ') || l.is_empty() || *l == "DESCRIPTION" || *l == "OPTIONS"
            })
            .collect();
        assert!(
            !flags.contains("--") && flags.contains(" -h"),
            "{page}: {flags}"
        );
    }
    // The README's explanations, not only the flags.
    let attack = std::fs::read_to_string(dir.join("barrage-attack.1")).unwrap();
    for words in ["TARGET FORMATS", "SCHEDULE", "EXAMPLES", "Copy as cURL"] {
        assert!(attack.contains(words), "{words}");
    }
    // One page at a time, by name; sweep's page leaves out what it refuses.
    let sweep = run(&["man", "sweep"], b"");
    assert!(sweep.status.success());
    let sweep = String::from_utf8_lossy(&sweep.stdout);
    assert!(
        sweep.contains(".TH barrage-sweep 1") && sweep.contains("\\-rates"),
        "{sweep}"
    );
    assert!(
        !sweep.contains("\\-rate \\fI") && !sweep.contains("[\\fB\\-duration\\fR]"),
        "{sweep}"
    );
    let bad = run(&["man", "atack"], b"");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        err(&bad).contains("no manual page for \"atack\" (the pages: barrage, attack"),
        "{}",
        err(&bad)
    );
}

/// Issue 37: `sweep -h` lists only what sweep takes, with its defaults.
#[test]
fn sweep_help_lists_only_what_sweep_accepts() {
    let out = run(&["sweep", "-h"], b"");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for hidden in [
        " -rate <",
        " -duration <",
        " -requests <",
        " -stages <",
        "[default: stdout]",
    ] {
        assert!(!help.contains(hidden), "{hidden}: {help}");
    }
    assert!(
        help.contains("-rates <") && help.contains("[default: none]"),
        "{help}"
    );
    let out = run(&["sweep", "-rates", "10", "-requests", "5"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err(&out).contains("sweep sets -requests itself"),
        "{}",
        err(&out)
    );
}

/// Issue 37: a misspelt flag or subcommand, and other tools' habits, get
/// what to type instead; each is one line and exit 2.
#[test]
fn usage_errors_say_what_to_type_instead() {
    for (args, says) in [
        (vec!["attack", "-rat", "5"], "did you mean '-rate'?"),
        (vec!["atack"], "did you mean 'attack'?"),
        (
            vec!["attack", "-c", "100", "-n", "1000"],
            "-c/-n are ab's and hey's and oha's, not barrage's: for -c 100 -n 1000 use echo 'GET URL' | barrage attack -rate 0 -max-workers 100 -requests 1000 | barrage report",
        ),
        (
            vec!["attack", "-t", "2", "-c", "10", "-d", "10s"],
            "-t/-c/-d are wrk's, not barrage's",
        ),
        (vec!["attack", "-c", "10", "-p", "8"], "-pipeline 8"),
    ] {
        let out = run(&args, b"");
        let e = err(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
}

/// Issue 37: an attack that fails before its first request leaves a
/// stream saying why, and `report` downstream says it, printing no report
/// of nothing; a filter's empty output is still a report of no records.
#[test]
fn a_report_after_a_failed_attack_says_why() {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{b} attack -c 100 -n 1000 | {b} report; echo \"codes $?\"; echo 'GET 127.0.0.1:8080/' | {b} attack -rate 10 -duration 1s | {b} report",
            b = env!("CARGO_BIN_EXE_barrage")
        ))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(stdout.trim(), "codes 2", "no report of nothing: {stdout}");
    assert!(
        stderr.contains("barrage report: stdin: the attack that writes this stream failed before its first request, so there is nothing to report: -c/-n are ab's"),
        "{stderr}"
    );
    assert!(
        stderr.contains("a URL needs its scheme: http://127.0.0.1:8080/")
            && stderr.matches("a URL needs its scheme").count() == 2,
        "{stderr}"
    );
    let empty = run(&["report"], b"");
    assert!(empty.status.success());
    assert!(String::from_utf8_lossy(&empty.stdout).starts_with("Requests"));
}

/// Issue 37: input errors that say how to fix them.
#[test]
fn target_errors_say_how_to_fix_them() {
    let dir = common::tempdir("beside");
    std::fs::create_dir_all(dir.join("t")).unwrap();
    std::fs::write(dir.join("t/body.txt"), "x").unwrap();
    std::fs::write(
        dir.join("t/t.http"),
        "POST http://127.0.0.1:1/\n@body.txt\n",
    )
    .unwrap();
    let targets = dir.join("t/t.http");
    for (stdin, args, says) in [
        (
            "GET 127.0.0.1:8080/\n",
            vec![],
            "stdin:1: bad URL: 127.0.0.1:8080/, a URL needs its scheme: http://127.0.0.1:8080/".to_string(),
        ),
        (
            "http://127.0.0.1:8080/\n",
            vec![],
            "stdin:1: bad target: http://127.0.0.1:8080/ (expected METHOD URL, e.g. GET http://127.0.0.1:8080/)".to_string(),
        ),
        (
            "",
            vec!["-targets", targets.to_str().unwrap()],
            format!(
                "{}/t/body.txt is beside the targets file: @ paths are read from the working directory, as in vegeta; write @{}/t/body.txt",
                dir.display(),
                dir.display()
            ),
        ),
    ] {
        let mut full = vec!["attack", "-requests", "1", "-output", "/dev/null"];
        full.extend(args);
        let out = run(&full, stdin.as_bytes());
        let e = err(&out);
        assert_eq!(out.status.code(), Some(2), "{e}");
        assert!(e.contains(&says), "{e}");
    }
    // Targets from a terminal: said once where they come from.
    let out = std::process::Command::new("script")
        .args([
            "-qfec",
            &format!(
                "printf 'GET http://127.0.0.1:1/\\n' | true; {} attack -requests 1 -output /dev/null < /dev/tty & sleep 1; kill $!",
                env!("CARGO_BIN_EXE_barrage")
            ),
            "/dev/null",
        ])
        .output()
        .expect("script runs");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains("reading targets from this terminal, one per line (METHOD URL, e.g. GET http://127.0.0.1:8080/); Ctrl-D ends them"),
        "{screen:?}"
    );
}

/// The README's and `targets/`'s examples, pointed at a `serve` target.
#[test]
fn the_readme_examples_work_against_serve() {
    let server = CapacityServer::unlimited();
    let here = server.addr().to_string();
    let at = |text: &str| text.replace("127.0.0.1:8080", &here);
    let cases: Vec<(Vec<&str>, String, u64)> = vec![
        (
            vec![],
            at(&std::fs::read_to_string(common::fixture("../targets/example.http")).unwrap()),
            // The second target asks for a 404 on purpose.
            2,
        ),
        (
            vec!["-format", "json"],
            at(&std::fs::read_to_string(common::fixture("../targets/example.json")).unwrap()),
            0,
        ),
        (
            vec![],
            at("POST http://127.0.0.1:8080/api\nContent-Type: application/json\n\nGET http://127.0.0.1:8080/health\n"),
            0,
        ),
        (
            vec!["-lazy", "-format", "json"],
            (0..20)
                .map(|i| at(&format!("{{\"method\":\"GET\",\"url\":\"http://127.0.0.1:8080/{i}\"}}\n")))
                .collect(),
            0,
        ),
    ];
    for (extra, targets, failures) in cases {
        let mut args = vec!["attack", "-rate", "100", "-requests", "6"];
        args.extend(extra.iter().copied());
        let out = run(&args, targets.as_bytes());
        assert!(out.status.success(), "{args:?}: {}", err(&out));
        let hits = common::decode(&out.stdout);
        assert_eq!(hits.len(), 6);
        let failed = hits
            .iter()
            .filter(|h| !(200..400).contains(&h.code))
            .count() as u64;
        assert_eq!(failed, failures, "{args:?}: {hits:?}");
    }
}
