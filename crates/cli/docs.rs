//! `barrage completions SHELL` and `barrage man`: generated from the flag
//! definitions (clap_complete, clap_mangen), so they never drift from them;
//! the words beyond them are docs/manual.md's ([`barrage_flags::manual`]).

use std::io::{self, Write};

use crate::{
    failed::{Failed, Outcome},
    output,
};
use barrage_flags::{
    self as flags,
    manual::{page, pages},
    ManArgs,
};

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
            std::fs::write(&file, page(name, env!("CARGO_PKG_VERSION")))
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
    written(
        out.write_all(&page(name, env!("CARGO_PKG_VERSION")))
            .and_then(|_| out.flush()),
    )
}
