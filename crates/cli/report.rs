//! `barrage report`: checks the flags, opens the inputs, hands them to the
//! report stage (whole, per group or per interval) and turns the outcome
//! into an exit code: a damaged input still reports its complete records,
//! then says where it broke and exits 2; `-fail-on` conditions that hold
//! exit 3 after the report.

use barrage_metrics::Options;
use barrage_report::Kind;

use crate::{
    failed::{Failed, Outcome},
    inputs, output,
};
use barrage_flags::ReportArgs;

/// `-type html`: the page, with a sweep's table and charts when the
/// records are a sweep's steps; `-fail-on` as for the other types.
fn html(args: &ReportArgs, merge: inputs::Merge, options: Options) -> Outcome {
    let mut records = inputs::Records::new(merge, options.latency);
    let warm = records.warm_up(args.warmup, &args.files, &options);
    warm.map_err(inputs::failed)?;
    let mut report = barrage_report::html::Report::new(options, args.by);
    let mut steps = barrage_sweep::Collect::default();
    let mut run = barrage_plot::run::RunFacts::new();
    while let Some((hit, lacks, markers)) = records.next_marked() {
        report.add(hit, lacks, markers);
        steps.add(hit);
        run.add(hit);
    }
    records.tell(&mut run);
    run.inputs(&args.files);
    report.set_run(run.html());
    barrage_report::Source::run_facts(&records).add_to(report.total_mut());
    inputs::finish_records(&records, Some(report.total()), "report")?;
    let rows = steps.rows(barrage_sweep::Bounds::default());
    let sections: Vec<_> = barrage_sweep::report_section(&rows)
        .map(|html| barrage_report::html::Section {
            title: "Sweep".into(),
            html,
        })
        .into_iter()
        .collect();
    output::write_to(&args.output, |out| {
        report.write("Barrage Report", &args.percentiles, &sections, out)
    })?;
    inputs::warn_of_shards(&records, args.max_skew, "report");
    inputs::finish(&records.merge)?;
    thresholds(args, report.total())
}

/// `-fail-on`: exit 3 with a line per condition that holds.
fn thresholds(args: &ReportArgs, total: &barrage_metrics::Metrics) -> Outcome {
    Failed::fail_on(
        args.fail_on
            .iter()
            .flat_map(|f| &f.0)
            .filter_map(|t| t.check(total)),
    )
}

pub fn run(args: ReportArgs) -> Outcome {
    let options = args.options().map_err(Failed::usage)?;
    let merge = inputs::open(&args.files, false)?;
    let kind = args.kind.kind;
    if kind == Kind::Plot {
        return crate::plot::from_report(merge, options.latency, &args.output, &args.files);
    }
    if kind == Kind::Html {
        return html(&args, merge, options);
    }
    let mut out = output::open(&args.output)
        .map_err(|e| Failed::io(format!("-output {}: {e}", args.output)))?;
    let p = &args.percentiles;
    let mut records = inputs::Records::new(merge, options.latency);
    let warm = records.warm_up(args.warmup, &args.files, &options);
    warm.map_err(inputs::failed)?;
    let (records, total, written) = match args.every {
        Some(every) => match barrage_report::live(kind, options, p, records, every, out) {
            Ok(end) => {
                if let Some(note) = end.late_note() {
                    eprintln!("barrage report: {note}");
                }
                inputs::finish_records(&end.source, Some(&end.total), "report")?;
                (end.source, end.total, end.written)
            }
            Err(e) => return Err(Failed::io(e)),
        },
        None => {
            let mut records = records;
            let (mut total, groups) = barrage_report::whole(&mut records, options, args.by);
            barrage_report::Source::run_facts(&records).add_to(&mut total);
            // Before anything is written: a view the inputs do not have.
            inputs::finish_records(&records, Some(&total), "report")?;
            let written = match &groups {
                Some(g) => barrage_report::write_groups(kind, g, &total, p, &mut out),
                None => barrage_report::write(kind, &total, p, &mut out),
            }
            .and_then(|()| barrage_report::write_run_facts(kind, &records.merge.meta(), &mut out));
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
    thresholds(&args, &total)
}
