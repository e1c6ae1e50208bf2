//! What a new user meets first: flag errors that say what is wrong where
//! it was typed, help in the README's spelling, exit codes as documented,
//! completions and a man page, and the README's examples working against
//! `barrage serve`.

mod common;

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
fn help_uses_the_one_dash_spelling_and_agrees_with_the_readme() {
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
    let readme = std::fs::read_to_string(common::fixture("../README.md")).unwrap();
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
