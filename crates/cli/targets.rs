//! `barrage targets`: reads targets in one format and writes them in
//! another, so that anything barrage reads a user can see and edit.

use std::{
    fs::File,
    io::{self, BufRead, BufReader, Write},
};

use barrage_targets::{convert, ConvertError, Defaults, Format, TargetReader};

use crate::{
    failed::{Failed, Outcome},
    output,
};
use barrage_flags::TargetsArgs;

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
    let r = convert(
        &mut reader,
        a.to == Format::Http,
        a.bodies.as_deref(),
        &mut out,
    );
    let r = r.and_then(|_| out.flush().map_err(ConvertError::Output));
    match r {
        Ok(_) => Ok(()),
        Err(ConvertError::Output(e)) if output::is_closed_pipe(&e) => Ok(()),
        Err(ConvertError::Output(e)) => Err(Failed::io(format!("writing {}: {e}", a.output))),
        Err(e @ ConvertError::BodyFile { .. }) => Err(Failed::io(e)),
        Err(e) => {
            let _ = out.flush();
            Err(Failed::usage(e))
        }
    }
}
