//! `barrage completions SHELL` and `barrage man`: generated from the flag
//! definitions (clap_complete, clap_mangen), so they never drift from them;
//! the manual adds the README's explanations (`manual.rs`).

use std::io::{self, Write};

use crate::{
    failed::{Failed, Outcome},
    manual, output,
};
use barrage_flags::{self as flags, ManArgs};

fn written(r: io::Result<()>) -> Outcome {
    match r {
        Err(e) if !output::is_closed_pipe(&e) => Err(Failed::io(format!("writing stdout: {e}"))),
        _ => Ok(()),
    }
}

pub fn completions(shell: clap_complete::Shell) -> Outcome {
    let mut out = io::stdout().lock();
    clap_complete::generate(shell, &mut flags::command(), "barrage", &mut out);
    written(out.flush())
}

/// The pages: `barrage` first, then one per subcommand.
fn pages() -> Vec<String> {
    let mut names = vec!["barrage".to_string()];
    names.extend(
        flags::command()
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .filter(|n| n != "help"),
    );
    names
}

/// One page in roff: clap_mangen's sections from the flags, in the
/// one-dash spelling, then the manual's own, then SEE ALSO.
fn page(name: &str) -> Vec<u8> {
    let root = flags::command();
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
        .source(format!("barrage {}", env!("CARGO_PKG_VERSION")));
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
    out.push_str(&manual::roff(&manual::sections(name)));
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

pub fn man(m: ManArgs) -> Outcome {
    let known = pages();
    if let Some(dir) = &m.dir {
        if m.page.is_some() {
            return Err(Failed::usage(
                "barrage man takes a page or -dir, not both (-dir writes every page)",
            ));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| Failed::io(format!("-dir {}: {e}", dir.display())))?;
        for name in &known {
            let file = if name == "barrage" {
                dir.join("barrage.1")
            } else {
                dir.join(format!("barrage-{name}.1"))
            };
            std::fs::write(&file, page(name))
                .map_err(|e| Failed::io(format!("{}: {e}", file.display())))?;
            eprintln!("barrage man: wrote {}", file.display());
        }
        return Ok(());
    }
    let name = m.page.as_deref().unwrap_or("barrage");
    let name = name.strip_prefix("barrage-").unwrap_or(name);
    if !known.iter().any(|k| k == name) {
        return Err(Failed::usage(format!(
            "no manual page for {name:?} (the pages: {})",
            known.join(", ")
        )));
    }
    let mut out = io::stdout().lock();
    written(out.write_all(&page(name)).and_then(|_| out.flush()))
}
