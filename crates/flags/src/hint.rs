//! A usage error in one line, spelt as typed, with what to type instead:
//! clap's suggestion for a misspelt flag or subcommand (`-rat`: did you
//! mean '-rate'?), and the translation of another tool's habits (ab's and
//! hey's `-c 100 -n 1000`, wrk's `-t -c -d`, autocannon's `-p`).

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::as_typed;

/// What a command line clap refused comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// `-h` or `-version`: this on stdout, exit 0 (help with flags in
    /// vegeta's one-dash spelling).
    Help(String),
    /// A subcommand missing its arguments: its help on stderr, exit 2.
    HelpOnStderr(String),
    /// Any other flag error: one line after `barrage: `, flags as typed,
    /// pointing to the subcommand's help, exit 2; `abort`: an attack
    /// writing to stdout leaves a stream that says why
    /// (`barrage attack -c 100 | barrage report`: the report says why,
    /// instead of a report of nothing).
    Usage {
        /// The line.
        line: String,
        /// Whether stdout gets an aborted stream.
        abort: bool,
    },
}

/// What clap's `e` comes to for the command line `typed`.
pub fn refused(e: &clap::Error, typed: &[String]) -> Refused {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            Refused::Help(crate::one_dash_help(&e.render().to_string()))
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            Refused::HelpOnStderr(crate::one_dash_help(&e.render().to_string()))
        }
        _ => {
            let sub = typed.iter().skip(1).find(|a| !a.starts_with('-'));
            let output_typed = typed
                .iter()
                .any(|a| a.trim_start_matches('-').starts_with("output"));
            Refused::Usage {
                line: usage_line(e, typed),
                abort: sub.is_some_and(|s| s == "attack") && !output_typed,
            }
        }
    }
}

/// The line a usage error prints after `barrage: `, ending with the help
/// to read.
pub fn usage_line(e: &clap::Error, typed: &[String]) -> String {
    let text = e.to_string();
    let first = text
        .lines()
        .next()
        .unwrap_or("bad usage")
        .trim_start_matches("error: ");
    let (mut line, command) = as_typed(first, typed);
    let suggested = [ContextKind::SuggestedArg, ContextKind::SuggestedSubcommand]
        .into_iter()
        .find_map(|k| match e.get(k) {
            Some(ContextValue::String(s)) => Some(s.clone()),
            Some(ContextValue::Strings(v)) => v.first().cloned(),
            _ => None,
        });
    // A misspelt subcommand: the nearest by edits, a swap of two
    // letters counting one (clap's own pick made `reprot` 'plot').
    let suggested = match (e.kind(), e.get(ContextKind::InvalidSubcommand)) {
        (ErrorKind::InvalidSubcommand, Some(ContextValue::String(typo))) => {
            nearest_command(e, typo).or(suggested)
        }
        _ => suggested,
    };
    if let Some(s) = suggested {
        let (s, _) = as_typed(&format!("'{s}'"), typed);
        line.push_str(&format!("; did you mean {s}?"));
    }
    if e.kind() == ErrorKind::UnknownArgument {
        if let Some(habit) = other_tool(typed, command.as_deref()) {
            return habit;
        }
    }
    let help = match command {
        Some(c) => format!("barrage {c} -h"),
        None => "barrage -h".to_string(),
    };
    format!("{line} (see {help})")
}

/// The subcommand nearest `typo` (Damerau-Levenshtein), among those
/// clap offered and barrage's own, when it is near enough to mean.
fn nearest_command(e: &clap::Error, typo: &str) -> Option<String> {
    let mut names: Vec<String> = match e.get(ContextKind::SuggestedSubcommand) {
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    names.extend(
        [
            "attack", "report", "plot", "dump", "encode", "sweep", "compare", "doctor", "export",
            "collect", "send", "serve", "targets",
        ]
        .map(String::from),
    );
    names
        .into_iter()
        .map(|n| (strsim::damerau_levenshtein(typo, &n), n))
        .filter(|(d, n)| *d <= (n.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// A flag of another load tool that barrage spells otherwise.
struct Habit {
    flag: &'static str,
    tools: &'static [&'static str],
}

/// The tools [`HABITS`] name, in the order a line names them.
const TOOLS: [&str; 7] = ["ab", "hey", "oha", "wrk", "autocannon", "k6", "ghz"];

const HABITS: [Habit; 13] = [
    Habit {
        flag: "-vus",
        tools: &["k6"],
    },
    Habit {
        flag: "--vus",
        tools: &["k6"],
    },
    Habit {
        flag: "-qps",
        tools: &["ghz"],
    },
    Habit {
        flag: "--qps",
        tools: &["ghz"],
    },
    Habit {
        flag: "-q",
        tools: &["hey", "oha"],
    },
    Habit {
        flag: "-c",
        tools: &["ab", "hey", "oha", "wrk", "autocannon"],
    },
    Habit {
        flag: "-n",
        tools: &["ab", "hey", "oha"],
    },
    Habit {
        flag: "-t",
        tools: &["wrk", "ab"],
    },
    Habit {
        flag: "-d",
        tools: &["wrk", "autocannon"],
    },
    Habit {
        flag: "-z",
        tools: &["hey", "oha"],
    },
    Habit {
        flag: "-p",
        tools: &["autocannon", "ab"],
    },
    Habit {
        flag: "-k",
        tools: &["ab"],
    },
    Habit {
        flag: "-H",
        tools: &["ab", "hey", "oha", "wrk", "autocannon"],
    },
];

/// `-c 100 -n 1000 URL` as barrage says it, when the command line holds
/// another tool's flags.
fn other_tool(typed: &[String], command: Option<&str>) -> Option<String> {
    let args: Vec<&str> = typed.iter().skip(1).map(String::as_str).collect();
    let mut found: Vec<(&Habit, Option<&str>)> = Vec::new();
    let mut url = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        // -c100 as well as -c 100.
        let glued = |h: &Habit| {
            a.strip_prefix(h.flag)
                .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        };
        let habit = HABITS.iter().find(|h| a == h.flag || glued(h));
        match habit {
            Some(h) if h.flag == "-k" => found.push((h, None)),
            Some(h) if a.len() > h.flag.len() => found.push((h, Some(&a[h.flag.len()..]))),
            Some(h) => {
                found.push((h, args.get(i + 1).copied()));
                i += 1;
            }
            None if a.starts_with("http://") || a.starts_with("https://") => url = Some(a),
            None => {}
        }
        i += 1;
    }
    if found.is_empty() {
        return None;
    }
    let value = |flag: &str| {
        found
            .iter()
            .find(|(h, _)| h.flag == flag)
            .and_then(|(_, v)| *v)
    };
    let seconds = |v: &str| {
        if v.bytes().all(|b| b.is_ascii_digit()) {
            format!("{v}s")
        } else {
            v.to_string()
        }
    };
    let mut ours: Vec<String> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let vus = value("-vus").or(value("--vus"));
    let qps = value("-qps").or(value("--qps")).or(value("-q"));
    if let Some(c) = value("-c").or(vus) {
        if qps.is_none()
            && !typed
                .iter()
                .any(|a| a.trim_start_matches('-').starts_with("rate"))
        {
            ours.push("-rate 0".into());
        }
        ours.push(format!("-max-workers {c}"));
    }
    if let Some(q) = qps {
        ours.insert(0, format!("-rate {q}"));
    }
    if let Some(n) = value("-n") {
        ours.push(format!("-requests {n}"));
    }
    if let Some(d) = value("-d").or(value("-z")) {
        ours.push(format!("-duration {}", seconds(d)));
    }
    if let Some(p) = value("-p") {
        if p.bytes().all(|b| b.is_ascii_digit()) {
            ours.push(format!("-pipeline {p}"));
        } else {
            ours.push(format!("-body {p}"));
            words.push("with POST in the target line".into());
        }
    }
    if let Some(h) = value("-H") {
        ours.push(format!("-header '{h}'"));
    }
    if let Some(t) = value("-t") {
        words.push(format!(
            "wrk's -t threads: barrage sizes them itself (-cpus {t} caps them); ab's -t seconds: -duration {}",
            seconds(t)
        ));
    }
    if found.iter().any(|(h, _)| h.flag == "-k") {
        words.push("keep-alive is on by default (-keepalive)".into());
    }
    let flags: Vec<&str> = found.iter().map(|(h, _)| h.flag).collect();
    let mut theirs: Vec<String> = Vec::new();
    for (h, v) in &found {
        theirs.push(match v {
            Some(v) if v.contains(' ') => format!("{} '{v}'", h.flag),
            Some(v) => format!("{} {v}", h.flag),
            None => h.flag.to_string(),
        });
    }
    // The tools whose flags they all are, in TOOLS' order.
    let tools: Vec<&str> = TOOLS
        .into_iter()
        .filter(|t| found.iter().all(|(h, _)| h.tools.contains(t)))
        .collect();
    let whose = if tools.is_empty() {
        "other tools'".to_string()
    } else {
        format!("{}'s", tools.join("'s and "))
    };
    let sub = command.unwrap_or("attack");
    let mut line = format!(
        "{} {} {whose}, not barrage's: for {} use",
        flags.join("/"),
        if flags.len() > 1 { "are" } else { "is" },
        theirs.join(" ")
    );
    if !ours.is_empty() {
        let target = url.map_or("GET URL".to_string(), |u| format!("GET {u}"));
        line.push_str(&format!(
            " echo '{target}' | barrage {sub} {}",
            ours.join(" ")
        ));
        if url.is_some() || sub == "attack" {
            line.push_str(" | barrage report");
        }
    }
    for w in words {
        line.push_str(&format!("; {w}"));
    }
    line.push_str(&format!(" (see barrage {sub} -h)"));
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{normalize, parse};

    fn said(args: &[&str]) -> String {
        let typed: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let e = parse(normalize(args.iter().map(Into::into))).unwrap_err();
        usage_line(&e, &typed)
    }

    #[test]
    fn k6_ghz_hey_and_oha_habits_are_translated() {
        let vus = said(&["barrage", "attack", "-vus", "10"]);
        assert!(vus.starts_with("-vus is k6's, not barrage's"), "{vus}");
        assert!(
            vus.contains("barrage attack -rate 0 -max-workers 10"),
            "{vus}"
        );
        let qps = said(&["barrage", "attack", "-qps", "100"]);
        assert!(qps.contains("barrage attack -rate 100 |"), "{qps}");
        let q = said(&["barrage", "attack", "-q", "100", "-c", "10"]);
        assert!(q.starts_with("-q/-c are hey's and oha's"), "{q}");
        assert!(q.contains("-rate 100 -max-workers 10"), "{q}");
        let typo = said(&["barrage", "reprot"]);
        assert!(typo.contains("did you mean 'report'?"), "{typo}");
    }

    #[test]
    fn a_misspelt_flag_or_subcommand_gets_a_suggestion() {
        let l = said(&["barrage", "attack", "-rat", "5"]);
        assert!(
            l.contains("'-rat'") && l.contains("did you mean '-rate'?"),
            "{l}"
        );
        let l = said(&["barrage", "attack", "--rat", "5"]);
        assert!(
            l.contains("'--rat'") && l.contains("did you mean '-rate'?"),
            "{l}"
        );
        let l = said(&["barrage", "atack"]);
        assert!(l.contains("did you mean 'attack'?"), "{l}");
    }

    #[test]
    fn other_tools_habits_are_translated() {
        let l = said(&["barrage", "attack", "-c", "100", "-n", "1000"]);
        assert_eq!(
            l,
            "-c/-n are ab's and hey's and oha's, not barrage's: for -c 100 -n 1000 use echo 'GET URL' | barrage attack -rate 0 -max-workers 100 -requests 1000 | barrage report (see barrage attack -h)"
        );
        let l = said(&[
            "barrage",
            "attack",
            "-t4",
            "-c",
            "50",
            "-d",
            "30s",
            "http://127.0.0.1:8080/",
        ]);
        assert!(
            l.starts_with("-t/-c/-d are wrk's, not barrage's: for -t 4 -c 50 -d 30s use echo 'GET http://127.0.0.1:8080/' | barrage attack -rate 0 -max-workers 50 -duration 30s | barrage report; wrk's -t threads"),
            "{l}"
        );
        let l = said(&["barrage", "attack", "-c", "10", "-p", "10", "-d", "10"]);
        assert!(
            l.contains("are autocannon's, not barrage's")
                && l.contains("-rate 0 -max-workers 10 -duration 10s -pipeline 10 "),
            "{l}"
        );
        // Our own flags that begin with those letters are not habits.
        let l = said(&["barrage", "attack", "-connections", "5", "-bogus"]);
        assert!(l.starts_with("unexpected argument '-bogus'"), "{l}");
    }
}

#[cfg(test)]
mod refused_tests {
    use super::*;

    fn refused_for(args: &[&str]) -> Refused {
        let typed: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let e = crate::parse(crate::normalize(typed.iter().map(std::ffi::OsString::from)))
            .expect_err("refused");
        refused(&e, &typed)
    }

    #[test]
    fn help_goes_to_stdout_and_an_attack_on_a_pipe_leaves_why() {
        assert!(
            matches!(refused_for(&["barrage", "attack", "-h"]), Refused::Help(h) if h.contains("-rate"))
        );
        let Refused::Usage { line, abort } = refused_for(&["barrage", "attack", "-c", "100"])
        else {
            panic!("not a usage error")
        };
        assert!(line.contains("-c"), "{line}");
        assert!(abort);
        let with_output = refused_for(&["barrage", "attack", "-c", "1", "-output", "r.bin"]);
        assert!(matches!(with_output, Refused::Usage { abort: false, .. }));
    }
}
