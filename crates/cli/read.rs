//! Reading the files the attack's flags name: whole and bounded, and the
//! `-header`/`-body` defaults every target starts from.

use barrage_targets::Defaults;

use crate::failed::Failed;
use barrage_flags::AttackArgs;

/// The file `flag` names, read whole up to `limit` bytes: a file that
/// cannot be read is exit 1, one over the limit (or a device without
/// end) exit 2.
pub(crate) fn bounded(flag: &'static str, path: &str, limit: u64) -> Result<Vec<u8>, Failed> {
    Ok(barrage_attack::load::read_bounded(flag, path, limit)?)
}

/// `-header` and `-body`, for every target that has none of its own.
pub(crate) fn defaults(a: &AttackArgs) -> Result<Defaults, Failed> {
    let body = match (&a.body, &a.body_text) {
        (_, Some(text)) => bytes::Bytes::from(text.clone().into_bytes()),
        (None, None) => bytes::Bytes::new(),
        (Some(path), None) => {
            bounded("-body", &path.to_string_lossy(), barrage_targets::MAX_BODY)?.into()
        }
    };
    Ok(Defaults {
        headers: a.headers.clone(),
        body,
    })
}

/// Where an attack's targets come from: the URLs given as arguments
/// (each a GET), nothing for a `-mix` (its file names them), `-targets`
/// or stdin.
pub(crate) fn target_input(
    a: &barrage_flags::AttackArgs,
) -> Result<Box<dyn std::io::BufRead + Send>, Failed> {
    use std::{
        fs::File,
        io::{self, BufRead, BufReader, IsTerminal},
    };
    let input: Box<dyn BufRead + Send> = if !a.urls.is_empty() {
        // oha's and hey's habit: each URL a GET target.
        let lines: String = a.urls.iter().map(|u| format!("GET {u}\n")).collect();
        Box::new(io::Cursor::new(lines.into_bytes()))
    } else if a.mix.is_some() {
        // A mix's targets are named in its file.
        Box::new(io::empty())
    } else if a.targets == "stdin" || a.targets == "-" {
        // A newcomer who typed `barrage attack | barrage report` waited in
        // silence (issue 37): say once where targets come from.
        if io::stdin().is_terminal() {
            eprintln!(
                "barrage attack: reading targets from this terminal, one per line (METHOD URL, e.g. GET http://127.0.0.1:8080/); Ctrl-D ends them"
            );
        }
        Box::new(BufReader::new(io::stdin()))
    } else {
        match File::open(&a.targets) {
            Ok(f) => Box::new(BufReader::new(f)),
            Err(e) => return Err(Failed::io(format!("-targets {}: {e}", a.targets))),
        }
    };
    Ok(input)
}
