//! `barrage report`: checks the flags, opens the inputs, hands them to the
//! report stage (whole, per group or per interval) and turns the outcome
//! into an exit code: a damaged input still reports its complete records,
//! then says where it broke and exits 2; `-fail-on` conditions that hold
//! exit 3 after the report.

use barrage_metrics::Options;
use barrage_report::Kind;

use crate::{
    failed::{Failed, Kind as FailKind, Outcome},
    flags::ReportArgs,
    inputs, output,
};

/// What the flags ask that clap cannot check alone.
fn check(a: &ReportArgs) -> Result<Options, String> {
    let mut buckets = a.buckets.clone();
    if a.kind.buckets.is_some() {
        buckets = a.kind.buckets.clone();
    }
    if a.kind.kind == Kind::Hist && buckets.is_none() {
        return Err(
            "-type hist needs -buckets '[0,1ms,5ms]' (or write -type 'hist[0,1ms,5ms]')".into(),
        );
    }
    if a.every.is_some_and(|e| e.is_zero()) {
        return Err("-every must be above 0 (such as 1s)".into());
    }
    if a.every.is_some() && a.by.is_some() {
        return Err("-every and -by cannot be combined".into());
    }
    if a.kind.kind == Kind::Plot && (a.every.is_some() || a.by.is_some() || a.fail_on.is_some()) {
        return Err("-type plot takes none of -every, -by and -fail-on".into());
    }
    Ok(Options {
        latency: a.latency,
        success: a.success.clone(),
        buckets,
    })
}

/// Under a text report, what the stream says of how it was made: the
/// Poisson seed of `-arrivals`, to repeat the schedule.
fn facts(
    kind: Kind,
    merge: &barrage_stream::Merge,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    if kind != Kind::Text {
        return Ok(());
    }
    for (key, value) in merge.meta() {
        if key == "arrivals" {
            writeln!(out, "Arrivals      {value} (repeat with -arrivals {value})")?;
        }
    }
    Ok(())
}

pub fn run(args: ReportArgs) -> Outcome {
    let options = check(&args).map_err(Failed::usage)?;
    let merge = inputs::open(&args.files, false)?;
    let kind = args.kind.kind;
    if kind == Kind::Plot {
        return crate::plot::from_report(merge, options.latency, &args.output);
    }
    let mut out = output::open(&args.output)
        .map_err(|e| Failed::io(format!("-output {}: {e}", args.output)))?;
    let p = &args.percentiles;
    let records = inputs::Records::new(merge, options.latency);
    let (records, total, written) = match args.every {
        Some(every) => match barrage_report::live(kind, options, p, records, every, out) {
            Ok(end) => {
                if end.late > 0 {
                    eprintln!(
                            "barrage report: {} results arrived after their interval was printed; they count in the final report only",
                            end.late
                        );
                }
                inputs::finish_records(&end.source, Some(&end.total), "report")?;
                (end.source, end.total, end.written)
            }
            Err(e) => return Err(Failed::io(e)),
        },
        None => {
            let mut records = records;
            let (total, groups) = barrage_report::whole(&mut records, options, args.by);
            // Before anything is written: a view the inputs do not have.
            inputs::finish_records(&records, Some(&total), "report")?;
            let written = match &groups {
                Some(g) => barrage_report::write_groups(kind, g, &total, p, &mut out),
                None => barrage_report::write(kind, &total, p, &mut out),
            }
            .and_then(|()| facts(kind, &records.merge, &mut out));
            (records, total, written)
        }
    };
    inputs::warn_of_shards(&records, args.max_skew, "report");
    if let Err(e) = written {
        if !output::is_closed_pipe(&e) {
            return Err(Failed::io(format!("writing {}: {e}", args.output)));
        }
    }
    inputs::finish(&records.merge)?;
    let failed: Vec<String> = args
        .fail_on
        .iter()
        .flat_map(|f| &f.0)
        .filter_map(|t| t.check(&total))
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    Err(Failed {
        kind: FailKind::Threshold,
        lines: failed.iter().map(|f| format!("-fail-on: {f}")).collect(),
    })
}
