//! `barrage dump` (CSV or JSON lines, vegeta's old `dump -dumper`) and
//! `barrage encode` (vegeta's newer `encode -to`, plus `bin`).

use std::io::{self, BufWriter, Write};

use barrage_stream::{CsvWriter, Encoder, Hit, JsonWriter};

use crate::{
    failed::{Failed, Outcome},
    flags::{DumpArgs, EncodeArgs},
    inputs, output,
};

enum Writer<W: Write> {
    Csv(CsvWriter<W>),
    Json(JsonWriter<W>),
    Bin(Encoder<W>),
}

impl<W: Write> Writer<W> {
    fn write(&mut self, hit: &Hit) -> io::Result<()> {
        match self {
            Writer::Csv(w) => w.write(hit),
            Writer::Json(w) => w.write(hit),
            Writer::Bin(w) => w.write(hit),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Writer::Csv(w) => w.flush(),
            Writer::Json(w) => w.flush(),
            Writer::Bin(w) => w.flush(),
        }
    }
}

pub fn run(args: DumpArgs) -> Outcome {
    let mut files = args.inputs;
    files.extend(args.files);
    convert("dump", &args.dumper, &args.output, &files)
}

pub fn encode(args: EncodeArgs) -> Outcome {
    convert("encode", &args.to, &args.output, &args.files)
}

fn convert(cmd: &str, to: &str, out_path: &str, files: &[String]) -> Outcome {
    if !matches!(to, "csv" | "json" | "bin") {
        return Err(Failed::usage(format!(
            "unknown encoding {to:?} (use csv or json{})",
            if cmd == "encode" { " or bin" } else { "" }
        )));
    }
    let mut merge = inputs::open(files)?;
    let result = (|| -> io::Result<()> {
        let out = BufWriter::with_capacity(256 << 10, output::open(out_path)?);
        let mut w = match to {
            "csv" => Writer::Csv(CsvWriter::new(out)),
            "bin" => Writer::Bin(Encoder::new(out)?),
            _ => Writer::Json(JsonWriter::new(out)),
        };
        while let Some(hit) = merge.next_hit() {
            w.write(hit)?;
        }
        w.flush()
    })();
    if let Err(e) = result {
        if !output::is_closed_pipe(&e) {
            return Err(Failed::io(format!("writing {out_path}: {e}")));
        }
        return Ok(());
    }
    inputs::finish(&merge)
}
