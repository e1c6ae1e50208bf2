//! The manual's words beyond the flags: for each page (`barrage` and each
//! subcommand), sections drawn from the README (the formats, the exit
//! codes, examples), written as plain text and turned into roff here.
//! The flags themselves come from their definitions (clap_mangen).

/// The words, one file for the pages and for readers of the repository.
const SOURCE: &str = include_str!("../../docs/manual.md");

/// A section: its title and its paragraphs. A paragraph whose lines all
/// start with two spaces is an example, set as it is.
pub struct Section {
    pub title: &'static str,
    pub text: String,
}

/// The sections of `page` (`barrage` or a subcommand's name), in the
/// source's order: those whose `<!-- pages: ... -->` names it or `*`.
pub fn sections(page: &str) -> Vec<Section> {
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
pub fn roff(sections: &[Section]) -> String {
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
