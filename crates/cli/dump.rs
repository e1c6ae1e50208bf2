//! `barrage dump` (CSV or JSON lines, vegeta's old `dump -dumper`) and
//! `barrage encode` (vegeta's newer `encode -to`, plus `bin`).

use std::io::{self, BufWriter};

use barrage_stream::{AnyWriter, Encoding};

use crate::{
    failed::{Failed, Outcome},
    inputs, output,
};
use barrage_flags::{DumpArgs, EncodeArgs};

pub fn run(args: DumpArgs) -> Outcome {
    let mut files = args.inputs;
    files.extend(args.files);
    convert(args.dumper, &args.output, &files)
}

pub fn encode(args: EncodeArgs) -> Outcome {
    convert(args.to, &args.output, &args.files)
}

fn convert(to: Encoding, out_path: &str, files: &[String]) -> Outcome {
    let mut merge = inputs::open(files, true)?;
    let result = (|| -> io::Result<()> {
        let out = BufWriter::with_capacity(256 << 10, output::open(out_path)?);
        let mut w = AnyWriter::new(to, out)?;
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
