//! The command line as clap sees it, shaped where a derive cannot say it:
//! `sweep` shares `attack`'s flags, but sets some of them itself each step,
//! so those are hidden from its help and refused when typed, and its
//! `-output` means something else (no stream unless asked). Parsing, help,
//! the manual and the completions all go through [`command`], so none of
//! them drifts from what is accepted.

use std::ffi::OsString;

use clap::{error::ErrorKind, parser::ValueSource, CommandFactory, FromArgMatches};

use crate::Cli;

/// The attack flags `sweep` sets itself, each step: `(id, as typed)`.
/// Hidden from `sweep -h`, and refused when given.
pub const SWEEP_SETS: [(&str, &str); 15] = [
    ("rate", "-rate"),
    ("until", "-until"),
    ("duration", "-duration"),
    ("requests", "-requests"),
    ("stages", "-stages"),
    ("shard", "-shard"),
    ("start_at", "-start-at"),
    ("lazy", "-lazy"),
    ("feed", "-feed"),
    ("feed_random", "-feed-random"),
    ("prometheus_addr", "-prometheus-addr"),
    ("control", "-control"),
    ("mix", "-mix"),
    ("har_timing", "-har-timing"),
    ("har_speed", "-har-speed"),
];

/// What `sweep -output` defaults to: no result stream.
pub const SWEEP_NO_OUTPUT: &str = "none";

/// barrage's whole command line, as parsed and as documented.
pub fn command() -> clap::Command {
    Cli::command().mut_subcommand("sweep", |mut sweep| {
        for (id, _) in SWEEP_SETS {
            sweep = sweep.mut_arg(id, |a| a.hide(true));
        }
        sweep = sweep.mut_arg("warmup", |a| {
            a.help("The first part of each step: sent and written (as \"NAME warmup\"), left out of its figures")
        });
        sweep.mut_arg("output", |a| {
            a.default_value(SWEEP_NO_OUTPUT).help(
                "Also write every step's results to this file, as one result stream (- for stdout)",
            )
        })
    })
}

/// Parses a command line already through [`crate::normalize`]: clap's
/// parse of [`command`], then the refusals a derive cannot declare.
pub fn parse(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    if let Some(("sweep", m)) = matches.subcommand() {
        if let Some((_, typed)) = SWEEP_SETS
            .iter()
            .find(|(id, _)| m.value_source(id) == Some(ValueSource::CommandLine))
        {
            let mut sweep = cmd
                .find_subcommand_mut("sweep")
                .cloned()
                .unwrap_or_default();
            let instead = match *typed {
                "-until" => "-step-until ends each step once its figure is sure",
                _ => "give the steps with -rates or -concurrency, and -step-duration",
            };
            return Err(sweep.error(
                ErrorKind::ArgumentConflict,
                format!("sweep sets {typed} itself: {instead}"),
            ));
        }
    }
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{normalize, Command};

    fn parsed(args: &[&str]) -> Result<Cli, clap::Error> {
        parse(normalize(args.iter().map(OsString::from)))
    }

    #[test]
    fn sweep_refuses_what_it_sets_even_at_the_default() {
        let e = parsed(&["barrage", "sweep", "-rates", "10", "-rate", "50"]).unwrap_err();
        assert!(e.to_string().contains("sweep sets -rate itself"), "{e}");
        let ok = parsed(&["barrage", "sweep", "-rates", "10"]).unwrap();
        let Command::Sweep(s) = ok.command else {
            panic!()
        };
        assert_eq!(s.attack.output, SWEEP_NO_OUTPUT);
        // attack keeps its own default.
        let Command::Attack(a) = parsed(&["barrage", "attack"]).unwrap().command else {
            panic!()
        };
        assert_eq!(a.output, "stdout");
    }

    /// The long flags a help text lists, as printed (`-rate`).
    fn listed(help: &str) -> Vec<String> {
        help.lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with('-'))
            .flat_map(|l| l.split_whitespace().take(2))
            .map(|t| t.trim_end_matches(',').split('[').next().unwrap_or(t))
            .filter(|t| t.len() > 2 && t.starts_with('-') && !t.starts_with("--"))
            .map(String::from)
            .collect()
    }

    #[test]
    fn every_help_lists_what_its_parser_accepts_and_nothing_else() {
        let root = command();
        for sub in root.get_subcommands() {
            let name = sub.get_name().to_string();
            let help = crate::one_dash_help(&sub.clone().render_help().to_string());
            let shown = listed(&help);
            assert!(
                !shown.is_empty()
                    || sub
                        .get_arguments()
                        .all(|a| a.is_positional() || a.get_long() == Some("help")),
                "{name}: {help}"
            );
            for flag in &shown {
                let long = &flag[1..];
                if long == "help" {
                    continue;
                }
                let arg = sub
                    .get_arguments()
                    .find(|a| a.get_long() == Some(long))
                    .unwrap_or_else(|| panic!("{name} -h lists {flag}, which it has not"));
                assert!(!arg.is_hide_set(), "{name}: {flag}");
                // Given as typed, with its default where it has one: the
                // parser knows it, and no refusal after clap names it.
                let typed = match arg.get_default_values().first() {
                    Some(v) => format!("{flag}={}", v.to_string_lossy()),
                    None => flag.clone(),
                };
                let args =
                    normalize(["barrage", name.as_str(), typed.as_str()].map(OsString::from));
                if let Err(e) = parse(args) {
                    let said = e.to_string();
                    assert!(
                        e.kind() != ErrorKind::UnknownArgument && !said.contains("itself"),
                        "{name} -h lists {flag}, which it refuses: {said}"
                    );
                }
            }
            // And everything it accepts is listed.
            for arg in sub
                .get_arguments()
                .filter(|a| !a.is_positional() && !a.is_hide_set())
            {
                let flag = format!("-{}", arg.get_long().unwrap_or_default());
                assert!(
                    shown.contains(&flag),
                    "{name} accepts {flag}, its help does not say so"
                );
            }
        }
        // What sweep hides, it refuses.
        for (id, typed) in SWEEP_SETS {
            let sweep = root.find_subcommand("sweep").unwrap();
            let arg = sweep.get_arguments().find(|a| a.get_id() == id).unwrap();
            assert!(arg.is_hide_set(), "{typed}");
            let value = match id {
                "stages" => "1s:10".to_string(),
                "shard" => "0/2".to_string(),
                "start_at" => "1700000000".to_string(),
                "prometheus_addr" | "control" => "127.0.0.1:1".to_string(),
                "until" => "p99±5%".to_string(),
                _ => arg
                    .get_default_values()
                    .first()
                    .map_or("1".to_string(), |v| v.to_string_lossy().into_owned()),
            };
            let given = format!("{typed}={value}");
            let e = parse(normalize(
                ["barrage", "sweep", "-rates", "10", &given].map(OsString::from),
            ))
            .unwrap_err();
            assert!(e.to_string().contains("itself"), "{typed}: {e}");
        }
    }
}
