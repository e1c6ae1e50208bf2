//! The manual pages: clap_mangen's sections from the flag definitions
//! (so they never drift from them), in the one-dash spelling, then the
//! words beyond the flags from `docs/manual.md` (the formats, the exit
//! codes, examples), written as plain text and turned into roff here.

/// The pages: `barrage` first, then one per subcommand.
pub fn pages() -> Vec<String> {
    let mut names = vec!["barrage".to_string()];
    names.extend(
        crate::command()
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .filter(|n| n != "help"),
    );
    names
}

/// One page in roff (`version`: the binary's): clap_mangen's sections from the flags, in the
/// one-dash spelling, then the manual's own, then SEE ALSO.
pub fn page(name: &str, version: &str) -> Vec<u8> {
    let root = crate::command();
    let (cmd, title) = if name == "barrage" {
        (root.clone(), "barrage".to_string())
    } else {
        let title = format!("barrage-{name}");
        let sub = root
            .find_subcommand(name)
            .cloned()
            .unwrap_or_default()
            .display_name(title.clone())
            .bin_name(format!("barrage {name}"));
        (sub, title)
    };
    let man = clap_mangen::Man::new(cmd)
        .title(title.clone())
        .section("1")
        .manual("barrage manual")
        .source(format!("barrage {version}"));
    let mut clap_part = Vec::new();
    let _ = man.render_title(&mut clap_part);
    let _ = man.render_name_section(&mut clap_part);
    let _ = man.render_synopsis_section(&mut clap_part);
    let _ = man.render_description_section(&mut clap_part);
    let _ = man.render_options_section(&mut clap_part);
    if name == "barrage" {
        let _ = man.render_subcommands_section(&mut clap_part);
    }
    // vegeta's spelling, as the help shows it: -rate, not --rate.
    let mut out = String::from_utf8_lossy(&clap_part).replace("\\-\\-", "\\-");
    out.push_str(&roff(&sections(name)));
    let others: Vec<String> = pages()
        .into_iter()
        .filter(|p| p != name)
        .map(|p| {
            if p == "barrage" {
                "\\fBbarrage\\fR(1)".to_string()
            } else {
                format!("\\fBbarrage\\-{p}\\fR(1)")
            }
        })
        .collect();
    out.push_str(&format!(
        ".SH \"SEE ALSO\"\n{}, \\fBvegeta\\fR(1)\n",
        others.join(", ")
    ));
    out.into_bytes()
}

/// The words, one file for the pages and for readers of the repository.
const SOURCE: &str = include_str!("../../../docs/manual.md");

/// The one table of exit codes, which the manual's EXIT STATUS shows.
pub const EXIT_CODES: &str = include_str!("../../../docs/reference/exit-codes.md");

/// The rows of [`EXIT_CODES`]: each code and when it is given.
pub fn exit_codes() -> Vec<(i32, &'static str)> {
    EXIT_CODES
        .lines()
        .filter_map(|l| {
            let mut cells = l.strip_prefix('|')?.split('|');
            let code = cells.next()?.trim().parse().ok()?;
            Some((code, cells.next()?.trim()))
        })
        .collect()
}

/// A section: its title and its paragraphs. A paragraph whose lines all
/// start with two spaces is an example, set as it is.
struct Section {
    title: &'static str,
    text: String,
}

/// The sections of `page` (`barrage` or a subcommand's name), in the
/// source's order: those whose `<!-- pages: ... -->` names it or `*`.
fn sections(page: &str) -> Vec<Section> {
    let mut out = Vec::new();
    for part in SOURCE.split("\n## ").skip(1) {
        let (title, rest) = part.split_once('\n').unwrap_or((part, ""));
        let Some((pages, text)) = rest
            .strip_prefix("<!-- pages: ")
            .and_then(|r| r.split_once(" -->\n"))
        else {
            continue;
        };
        if !pages.split(' ').any(|p| p == page || p == "*") {
            continue;
        }
        // The exit codes are the reference's table, a paragraph a code.
        if text.contains("<!-- from: reference/exit-codes.md") {
            let text = exit_codes()
                .iter()
                .map(|(code, when)| format!("{code}  {}", when.replace('`', "")))
                .collect::<Vec<_>>()
                .join("\n\n");
            out.push(Section { title, text });
            continue;
        }
        // Markdown's examples are indented four spaces; the pages' two.
        let text = text
            .trim_matches(|c| c == '\n')
            .lines()
            .map(|l| {
                l.strip_prefix("  ")
                    .filter(|e| e.starts_with("  "))
                    .unwrap_or(l)
            })
            .collect::<Vec<_>>()
            .join("\n");
        out.push(Section { title, text });
    }
    out
}

/// Text as roff: backslashes and dashes escaped, a line that would read
/// as a request (a leading `.` or `'`) guarded.
fn escaped(text: &str) -> String {
    let s = text.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with(['.', '\'']) {
        format!("\\&{s}")
    } else {
        s
    }
}

/// `sections` as roff.
fn roff(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!(".SH \"{}\"\n", s.title));
        for para in s.text.split("\n\n") {
            if para.lines().all(|l| l.starts_with("  ")) {
                out.push_str(".PP\n.RS 4\n.nf\n");
                for l in para.lines() {
                    out.push_str(&escaped(&l[2..]));
                    out.push('\n');
                }
                out.push_str(".fi\n.RE\n");
            } else if let Some((head, rest)) = para
                .split_once("  ")
                .filter(|(h, _)| !h.is_empty() && h.bytes().all(|b| b.is_ascii_digit()))
            {
                // An exit code: a tagged paragraph.
                out.push_str(&format!(".TP\n\\fB{head}\\fR\n{}\n", escaped(rest)));
            } else {
                let mut lines = para.lines();
                out.push_str(".PP\n");
                if let Some(first) = lines.next() {
                    out.push_str(&escaped(first));
                    out.push('\n');
                }
                for l in lines {
                    if let Some(example) = l.strip_prefix("  ") {
                        out.push_str(&format!(".br\n{}\n", escaped(example)));
                    } else {
                        out.push_str(&escaped(l));
                        out.push('\n');
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_has_its_words_and_the_exit_codes() {
        for name in pages() {
            let page = String::from_utf8(page(&name, "0")).unwrap();
            assert!(page.contains(".SH \"EXIT STATUS\""), "{name}");
            assert!(page.contains(".SH \"SEE ALSO\""), "{name}");
        }
        let attack = String::from_utf8(page("attack", "0")).unwrap();
        let order = ["SCHEDULE", "TARGET FORMATS", "EXAMPLES", "EXIT STATUS"]
            .map(|t| attack.find(&format!(".SH \"{t}\"")).expect(t));
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    }
}

/// `docs/reference/flags.md`: every subcommand's flags as its `-h` shows
/// them (a test holds the file to the parser).
pub fn flags_reference() -> String {
    let mut out = String::from(
        "# Flags\n\nEvery subcommand's flags, as `barrage SUBCOMMAND -h` prints them. This page is made from the flag definitions (`BARRAGE_UPDATE_GOLDEN=1 cargo test -p barrage-flags` writes it again); the guide explains them.\n",
    );
    for sub in crate::command().get_subcommands() {
        let name = sub.get_name();
        if name == "help" {
            continue;
        }
        let help = crate::one_dash_help(&sub.clone().render_help().to_string());
        out.push_str(&format!(
            "\n## barrage {name}\n\n```text\n{}\n```\n",
            help.trim_end()
        ));
    }
    out
}

#[cfg(test)]
mod reference_tests {
    #[test]
    fn the_flags_reference_is_the_parsers() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/flags.md");
        let made = super::flags_reference();
        if std::env::var_os("BARRAGE_UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &made).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == made,
            "docs/reference/flags.md is not what the parser says: BARRAGE_UPDATE_GOLDEN=1 cargo test -p barrage-flags writes it"
        );
    }
}
