//! `barrage plot` (and `report -type plot`): latency over time as one HTML
//! page (vegeta's `plot`). A damaged input is still plotted up to its last
//! complete record; then where it broke is said and the exit code is 2.

use barrage_metrics::LatencyView;
use barrage_plot::{DEFAULT_THRESHOLD, DEFAULT_TITLE};

use crate::{failed::Outcome, inputs, output};
use barrage_flags::PlotArgs;

pub fn run(args: PlotArgs) -> Outcome {
    let view = args.latency;
    let merge = inputs::open(&args.files, false)?;
    draw(
        inputs::Records::new(merge, view),
        args.threshold,
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
        DEFAULT_THRESHOLD,
        DEFAULT_TITLE,
        out_path,
        files,
    )
}

/// Every record of `records` on `plot`'s page, written to `out_path`;
/// then what broke in the inputs, if anything.
fn draw(
    mut records: inputs::Records,
    threshold: usize,
    title: &str,
    out_path: &str,
    files: &[String],
) -> Outcome {
    let plot = records.plot(threshold, files);
    inputs::finish_records(&records, None, "plot")?;
    output::write_to(out_path, |out| plot.write_html(title, out))?;
    inputs::finish(&records.merge)
}
