//! `barrage report`: folds every input into one set of metrics and prints
//! it; a damaged input still reports its complete records, then says where
//! it broke and exits 2.

use std::io::Write;

use barrage_metrics::Metrics;

use crate::{flags::ReportArgs, inputs, output, EXIT_IO, EXIT_USAGE};

pub fn run(args: ReportArgs) -> i32 {
    let kind = args.kind.as_str();
    if !matches!(kind, "text" | "json") {
        eprintln!("barrage report: unknown -type {kind:?} (use text or json)");
        return EXIT_USAGE;
    }
    let mut merge = match inputs::Merge::open(&args.files) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("barrage report: {}", e.message);
            return if e.bad_input { EXIT_USAGE } else { EXIT_IO };
        }
    };
    let mut metrics = Metrics::new();
    while let Some(hit) = merge.next() {
        metrics.add(hit);
    }
    let written = output::open(&args.output).and_then(|mut out| {
        match kind {
            "json" => barrage_report::json(&metrics, &mut out)?,
            _ => barrage_report::text(&metrics, &mut out)?,
        }
        out.flush()
    });
    if let Err(e) = written {
        if !output::is_closed_pipe(&e) {
            eprintln!("barrage report: writing {}: {e}", args.output);
            return EXIT_IO;
        }
    }
    inputs::finish("report", &merge)
}
