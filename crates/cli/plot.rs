//! `barrage plot` (and `report -type plot`): latency over time as one HTML
//! page (vegeta's `plot`). A damaged input is still plotted up to its last
//! complete record; then where it broke is said and the exit code is 2.

use std::io::{self, BufWriter, Write};

use barrage_metrics::LatencyView;
use barrage_plot::{Plot, Sample, DEFAULT_THRESHOLD, DEFAULT_TITLE};

use crate::{
    failed::{Failed, Outcome},
    inputs, output,
};
use barrage_flags::PlotArgs;

pub fn run(args: PlotArgs) -> Outcome {
    let view = args.latency;
    let merge = inputs::open(&args.files, false)?;
    draw(
        inputs::Records::new(merge, view),
        Plot::new(args.threshold, sample(view)),
        &args.title,
        &args.output,
        &args.files,
    )
}

/// `report -type plot`: the page with the default title and threshold.
pub fn from_report(
    merge: inputs::Merge,
    view: LatencyView,
    out_path: &str,
    files: &[String],
) -> Outcome {
    draw(
        inputs::Records::new(merge, view),
        Plot::new(DEFAULT_THRESHOLD, sample(view)),
        DEFAULT_TITLE,
        out_path,
        files,
    )
}

fn sample(view: LatencyView) -> Sample {
    match view {
        LatencyView::Actual => Sample::Actual,
        LatencyView::Intended => Sample::Intended,
        LatencyView::FirstByte => Sample::FirstByte,
    }
}

/// Folds every record into `plot`, writes the page to `out_path`, then
/// says what broke in the inputs, if anything.
fn draw(
    mut records: inputs::Records,
    mut plot: Plot,
    title: &str,
    out_path: &str,
    files: &[String],
) -> Outcome {
    let mut run = barrage_plot::run::RunFacts::new();
    while let Some((hit, _)) = records.next_record() {
        plot.add(hit);
        run.add(hit);
    }
    run.facts(&records.merge.meta());
    run.inputs(files);
    plot.set_run(run.html());
    inputs::finish_records(&records, None, "plot")?;
    let written = (|| -> io::Result<()> {
        let mut out = BufWriter::new(output::open(out_path)?);
        plot.write_html(title, &mut out)?;
        out.flush()
    })();
    if let Err(e) = written {
        if !output::is_closed_pipe(&e) {
            return Err(Failed::io(format!("writing {out_path}: {e}")));
        }
    }
    inputs::finish(&records.merge)
}
