//! `barrage completions SHELL` and `barrage man`: generated from the flag
//! definitions (clap_complete, clap_mangen), so they never drift from them.

use std::io::{self, Write};

use clap::CommandFactory;

use crate::{
    failed::{Failed, Outcome},
    flags::Cli,
    output,
};

fn written(r: io::Result<()>) -> Outcome {
    match r {
        Err(e) if !output::is_closed_pipe(&e) => Err(Failed::io(format!("writing stdout: {e}"))),
        _ => Ok(()),
    }
}

pub fn completions(shell: clap_complete::Shell) -> Outcome {
    let mut out = io::stdout().lock();
    clap_complete::generate(shell, &mut Cli::command(), "barrage", &mut out);
    written(out.flush())
}

pub fn man() -> Outcome {
    let mut out = io::stdout().lock();
    written(clap_mangen::Man::new(Cli::command()).render(&mut out))
}
