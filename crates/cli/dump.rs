//! `barrage dump` (CSV or JSON lines, vegeta's old `dump -dumper`) and
//! `barrage encode` (vegeta's newer `encode -to`, plus `bin`).

use std::io::{self, BufWriter, Write};

use barrage_stream::{CsvWriter, Encoder, Hit, JsonWriter};

use crate::{
    failed::{Failed, Outcome},
    flags::{DumpArgs, EncodeArgs, Encoding},
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
    convert(args.dumper, &args.output, &files)
}

pub fn encode(args: EncodeArgs) -> Outcome {
    convert(args.to, &args.output, &args.files)
}

fn convert(to: Encoding, out_path: &str, files: &[String]) -> Outcome {
    let mut merge = inputs::open(files)?;
    let result = (|| -> io::Result<()> {
        let out = BufWriter::with_capacity(256 << 10, output::open(out_path)?);
        let mut w = match to {
            Encoding::Csv => Writer::Csv(CsvWriter::new(out)),
            Encoding::Bin => Writer::Bin(Encoder::new(out)?),
            Encoding::Json => Writer::Json(JsonWriter::new(out)),
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
