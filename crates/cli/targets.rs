//! `barrage targets`: reads targets in one format and writes them in
//! another, so that anything barrage reads a user can see and edit.

use std::{
    fs::File,
    io::{self, BufRead, BufReader, Write},
};

use barrage_targets::{write_http, write_json, Defaults, Format, TargetReader};

use crate::{
    failed::{Failed, Outcome},
    flags::TargetsArgs,
    output,
};

pub fn run(a: TargetsArgs) -> Outcome {
    if !matches!(a.to, Format::Json | Format::Http) {
        return Err(Failed::usage(
            "-to: json or http (curl and HAR are read, not written)",
        ));
    }
    if a.bodies.is_some() && a.to != Format::Http {
        return Err(Failed::usage("-bodies goes with -to http"));
    }
    let name = a.file.clone().unwrap_or_else(|| "stdin".into());
    let input: Box<dyn BufRead + Send> = match a.file.as_deref() {
        None | Some("-") => Box::new(BufReader::new(io::stdin())),
        Some(path) => match File::open(path) {
            Ok(f) => Box::new(BufReader::new(f)),
            Err(e) => return Err(Failed::io(format!("{path}: {e}"))),
        },
    };
    let mut reader = TargetReader::new(input, &name, a.format, Defaults::default())
        .with_har_filter(a.har_filter.clone());
    reader.load().map_err(Failed::usage)?;
    for note in reader.take_notes() {
        eprintln!("barrage targets: note: {note}");
    }
    let out =
        output::open(&a.output).map_err(|e| Failed::io(format!("-output {}: {e}", a.output)))?;
    let mut out = io::BufWriter::new(out);
    let mut n = 0u64;
    let written = loop {
        let target = match reader.next() {
            Ok(Some(t)) => t,
            Ok(None) => break out.flush(),
            Err(e) => {
                let _ = out.flush();
                return Err(Failed::usage(e));
            }
        };
        n += 1;
        let r = if a.to == Format::Json {
            write_json(&target, &mut out)
        } else {
            let body = match (&a.bodies, target.body.is_empty()) {
                (_, true) => None,
                (None, false) => {
                    let _ = out.flush();
                    return Err(Failed::usage(format!(
                        "target {n} ({} {}) has a body: give -bodies DIR for its file",
                        target.method, target.url
                    )));
                }
                (Some(dir), false) => {
                    let path = dir.join(format!("body-{n}.bin"));
                    std::fs::create_dir_all(dir)
                        .and_then(|()| std::fs::write(&path, &target.body))
                        .map_err(|e| Failed::io(format!("{}: {e}", path.display())))?;
                    Some(path.display().to_string())
                }
            };
            write_http(&target, body.as_deref(), &mut out)
        };
        if let Err(e) = r {
            break Err(e);
        }
    };
    match written {
        Err(e) if !output::is_closed_pipe(&e) => {
            Err(Failed::io(format!("writing {}: {e}", a.output)))
        }
        _ => Ok(()),
    }
}
