//! vegeta's flag spelling on clap: `-rate 5000`, `-rate=5000`, `--rate
//! 5000` and `--rate=5000` all work, because single-dash long flags are
//! rewritten to double-dash before clap sees them; help and errors show
//! them back in the one-dash spelling.

use std::ffi::OsString;

/// Rewrites `-name` and `-name=value` to `--name…` so clap parses vegeta's
/// single-dash long flags. Negative numbers (`-1`) and one-letter flags
/// (`-h`) are left alone, as is everything after `--`.
pub fn normalize(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut rest = false;
    for (i, arg) in args.into_iter().enumerate() {
        if i == 0 || rest {
            out.push(arg);
            continue;
        }
        let Some(s) = arg.to_str() else {
            out.push(arg);
            continue;
        };
        if s == "--" {
            rest = true;
            out.push(arg);
            continue;
        }
        let b = s.as_bytes();
        let name_len = s[1.min(s.len())..].split('=').next().map_or(0, str::len);
        if b.len() > 2 && b[0] == b'-' && b[1].is_ascii_alphabetic() && name_len > 1 {
            out.push(format!("-{s}").into());
        } else {
            out.push(arg);
        }
    }
    out
}

/// A clap error line with its flags spelled as the user typed them
/// (`'--bogus'` back to `'-bogus'`, `'--rate <RATE>'` to `'-rate'`), and
/// the subcommand it is about, if any.
pub fn as_typed(line: &str, typed: &[String]) -> (String, Option<String>) {
    const COMMANDS: [&str; 12] = [
        "attack",
        "doctor",
        "compare",
        "export",
        "sweep",
        "report",
        "dump",
        "encode",
        "plot",
        "serve",
        "completions",
        "man",
    ];
    let command = typed
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|a| COMMANDS.contains(&a.as_str()))
        .cloned();
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("'--") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 3..];
        let end = after.find('\'').unwrap_or(after.len());
        let quoted = &after[..end];
        let name = quoted.split([' ', '=']).next().unwrap_or(quoted);
        // The spelling typed for this flag: one dash or two (one, as in
        // vegeta, when it was not typed at all).
        let dashes = typed
            .iter()
            .skip(1)
            .find_map(|a| {
                let bare = a.trim_start_matches('-');
                let flag = bare.split('=').next().unwrap_or(bare);
                (flag == name && a.starts_with('-')).then(|| &a[..a.len() - bare.len()])
            })
            .unwrap_or("-");
        out.push('\'');
        out.push_str(dashes);
        out.push_str(name);
        out.push('\'');
        rest = after.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    (out, command)
}

/// Help text with long flags in the one-dash spelling the README uses
/// (`-rate`, not `--rate`; both work).
pub fn one_dash_help(help: &str) -> String {
    let mut out = String::with_capacity(help.len());
    for line in help.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        let body = &line[indent..];
        out.push_str(&line[..indent]);
        if let Some(flag) = body
            .strip_prefix("--")
            .filter(|f| f.starts_with(|c: char| c.is_ascii_alphabetic()))
        {
            out.push('-');
            out.push_str(flag);
        } else if body.starts_with("Usage:") {
            // Required flags are named in the usage line (`--to <TO>`).
            let mut rest = body;
            while let Some(at) = rest.find(" --") {
                let after = &rest[at + 3..];
                out.push_str(&rest[..at]);
                if after.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    out.push_str(" -");
                } else {
                    out.push_str(" --");
                }
                rest = after;
            }
            out.push_str(rest);
        } else if let Some(rest) = body.strip_prefix("-h, --") {
            out.push_str("-h, -");
            out.push_str(rest);
        } else if let Some(rest) = body.strip_prefix("-V, --") {
            out.push_str("-V, -");
            out.push_str(rest);
        } else {
            out.push_str(body);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        normalize(args.iter().map(OsString::from))
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect()
    }

    #[test]
    fn the_usage_line_names_required_flags_with_one_dash() {
        let help = "Usage: barrage export [OPTIONS] --to <TO> <URL> -- x\n      --to <TO>  Where\n";
        assert_eq!(
            one_dash_help(help),
            "Usage: barrage export [OPTIONS] -to <TO> <URL> -- x\n      -to <TO>  Where\n"
        );
    }

    #[test]
    fn single_dash_long_flags_become_double() {
        assert_eq!(
            norm(&[
                "barrage",
                "attack",
                "-rate",
                "5",
                "-duration=1s",
                "--name",
                "x",
                "-h",
                "-redirects",
                "-1",
                "--",
                "-keep"
            ]),
            [
                "barrage",
                "attack",
                "--rate",
                "5",
                "--duration=1s",
                "--name",
                "x",
                "-h",
                "--redirects",
                "-1",
                "--",
                "-keep"
            ]
        );
    }
}
