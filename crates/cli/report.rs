//! `barrage report`: folds every input into metrics (in total, per group or
//! per interval) and prints them. A damaged input still reports its
//! complete records, then says where it broke and exits 2; `-fail-on`
//! conditions that hold exit 3 after the report.

use std::{
    io::{self, Write},
    sync::{mpsc, Arc, Mutex},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use barrage_metrics::{Buckets, GroupBy, Groups, Metrics, Options, Threshold, Windows};
use barrage_report::Percentiles;

use crate::{flags::ReportArgs, inputs, output, EXIT_IO, EXIT_USAGE};

/// Exit code when a `-fail-on` condition holds.
pub const EXIT_THRESHOLD: i32 = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Json,
    Hist,
    HdrPlot,
    Plot,
}

/// Everything the flags decide, checked before any input is read.
struct Plan {
    kind: Kind,
    options: Options,
    percentiles: Percentiles,
    by: Option<GroupBy>,
    every: Option<Duration>,
    thresholds: Vec<Threshold>,
}

fn plan(a: &ReportArgs) -> Result<Plan, String> {
    let mut buckets = a.buckets.as_deref().map(Buckets::parse).transpose()?;
    let kind = match a.kind.as_str() {
        "text" => Kind::Text,
        "json" => Kind::Json,
        "hdrplot" => Kind::HdrPlot,
        "plot" => Kind::Plot,
        "hist" => {
            if buckets.is_none() {
                return Err(
                    "-type hist needs -buckets '[0,1ms,5ms]' (or write -type 'hist[0,1ms,5ms]')"
                        .into(),
                );
            }
            Kind::Hist
        }
        other if other.starts_with("hist[") && other.ends_with(']') => {
            buckets = Some(Buckets::parse(&other[4..])?);
            Kind::Hist
        }
        other => {
            return Err(format!(
                "unknown -type {other:?} (use text, json, hist[BUCKETS], hdrplot or plot)"
            ))
        }
    };
    let options = Options {
        latency: a.latency.parse()?,
        success: a.success.parse()?,
        buckets,
    };
    let by = a.by.as_deref().map(str::parse).transpose()?;
    let every = a.every.filter(|d| !d.is_zero());
    if every.is_some() && by.is_some() {
        return Err("-every and -by cannot be combined".into());
    }
    let thresholds = a
        .fail_on
        .as_deref()
        .map(Threshold::parse_list)
        .transpose()?
        .unwrap_or_default();
    if kind == Kind::Plot && (every.is_some() || by.is_some() || !thresholds.is_empty()) {
        return Err("-type plot takes none of -every, -by and -fail-on".into());
    }
    Ok(Plan {
        kind,
        options,
        percentiles: a.percentiles.parse()?,
        by,
        every,
        thresholds,
    })
}

fn write_kind(kind: Kind, m: &Metrics, p: &Percentiles, out: &mut dyn Write) -> io::Result<()> {
    match kind {
        Kind::Text => barrage_report::text(m, p, out),
        Kind::Json => barrage_report::json(m, p, out),
        Kind::Hist => barrage_report::hist(m, out),
        Kind::HdrPlot => barrage_report::hdrplot(m, out),
        // Drawn from the records, not the metrics: see `run`.
        Kind::Plot => Ok(()),
    }
}

fn write_groups(
    plan: &Plan,
    groups: &Groups,
    total: &Metrics,
    out: &mut dyn Write,
) -> io::Result<()> {
    let by = groups.by().name();
    for (key, m) in groups.iter() {
        if plan.kind == Kind::Json {
            let obj = barrage_report::json_object(m, &plan.percentiles)?;
            let mut line = format!("{{\"group\":{{\"by\":\"{by}\",\"key\":").into_bytes();
            barrage_model::gojson::push_str(&mut line, key);
            line.extend_from_slice(b"},");
            line.extend_from_slice(&obj[1..]);
            line.push(b'\n');
            out.write_all(&line)?;
        } else {
            writeln!(out, "=== {by}: {key}")?;
            write_kind(plan.kind, m, &plan.percentiles, out)?;
            writeln!(out)?;
        }
    }
    if plan.kind != Kind::Json {
        writeln!(out, "=== total")?;
    }
    write_kind(plan.kind, total, &plan.percentiles, out)
}

pub fn run(args: ReportArgs) -> i32 {
    let plan = match plan(&args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("barrage report: {e}");
            return EXIT_USAGE;
        }
    };
    let merge = match inputs::open("report", &args.files) {
        Ok(m) => m,
        Err(code) => return code,
    };
    if plan.kind == Kind::Plot {
        return crate::plot::from_report(merge, plan.options.latency, &args.output);
    }
    let mut out = match output::open(&args.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("barrage report: -output {}: {e}", args.output);
            return EXIT_IO;
        }
    };
    let (merge, total, written) = match plan.every {
        Some(every) => live(&plan, merge, every, out),
        None => {
            let mut merge = merge;
            let mut total = Metrics::with_options(plan.options.clone());
            let written = match plan.by {
                Some(by) => {
                    let mut groups = Groups::new(by, &total);
                    while let Some(hit) = merge.next() {
                        total.add(hit);
                        groups.add(hit);
                    }
                    write_groups(&plan, &groups, &total, &mut out)
                }
                None => {
                    while let Some(hit) = merge.next() {
                        total.add(hit);
                    }
                    write_kind(plan.kind, &total, &plan.percentiles, &mut out)
                }
            };
            (merge, total, written)
        }
    };
    if let Err(e) = written {
        if !output::is_closed_pipe(&e) {
            eprintln!("barrage report: writing {}: {e}", args.output);
            return EXIT_IO;
        }
    }
    let read = inputs::finish("report", &merge);
    if read != 0 {
        return read;
    }
    let failed: Vec<String> = plan
        .thresholds
        .iter()
        .filter_map(|t| t.check(&total))
        .collect();
    for f in &failed {
        eprintln!("barrage report: -fail-on: {f}");
    }
    if failed.is_empty() {
        0
    } else {
        EXIT_THRESHOLD
    }
}

/// State shared by the reading thread and the ticking one in `-every` mode.
struct Live {
    windows: Windows,
    total: Metrics,
    out: Box<dyn Write + Send>,
    last_data: Instant,
    error: Option<io::Error>,
}

impl Live {
    fn emit(&mut self, ready: Vec<(i64, Metrics)>, plan_kind: Kind, p: &Percentiles) {
        for (start, m) in ready {
            if self.error.is_some() {
                return;
            }
            let every = self.windows.every();
            let res = if plan_kind == Kind::Json {
                barrage_report::window_json(start, every, &m, p, &mut self.out)
            } else {
                barrage_report::window_row(start, every, &m, p, &mut self.out)
            };
            if let Err(e) = res {
                self.error = Some(e);
            }
        }
    }
}

/// `-every`: a reader thread folds records into windows and prints each
/// window once the data shows it complete; this thread also flushes windows
/// when the input has been idle for an interval (a live attack that paused
/// or ended). At the end come the remaining windows and the whole report.
fn live(
    plan: &Plan,
    merge: inputs::Merge,
    every: Duration,
    out: Box<dyn Write + Send>,
) -> (inputs::Merge, Metrics, io::Result<()>) {
    let total = Metrics::with_options(plan.options.clone());
    let every_ns = every.as_nanos().min(i64::MAX as u128) as u64;
    let mut state = Live {
        windows: Windows::new(every_ns, &total),
        total,
        out,
        last_data: Instant::now(),
        error: None,
    };
    if plan.kind != Kind::Json {
        if let Err(e) = barrage_report::window_header(&plan.percentiles, &mut state.out) {
            state.error = Some(e);
        }
    }
    let state = Arc::new(Mutex::new(state));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let reader = {
        let state = state.clone();
        let (kind, p) = (plan.kind, plan.percentiles.clone());
        std::thread::spawn(move || {
            let mut merge = merge;
            while let Some(hit) = merge.next() {
                let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                s.total.add(hit);
                s.windows.add(hit);
                s.last_data = Instant::now();
                let ready = s.windows.ready();
                if !ready.is_empty() {
                    s.emit(ready, kind, &p);
                }
            }
            drop(done_tx);
            merge
        })
    };
    while let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(every) {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        if s.last_data.elapsed() >= every {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64);
            let ready = s.windows.ready_before(now - every_ns as i64);
            s.emit(ready, plan.kind, &plan.percentiles);
        }
    }
    let merge = match reader.join() {
        Ok(m) => m,
        Err(_) => std::process::exit(EXIT_IO),
    };
    let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
    let rest = s.windows.finish();
    s.emit(rest, plan.kind, &plan.percentiles);
    let total = s.total.clone();
    let result = match s.error.take() {
        Some(e) => Err(e),
        None => {
            let late = s.windows.late();
            let out = &mut s.out;
            (|| {
                if plan.kind != Kind::Json {
                    writeln!(out)?;
                }
                write_kind(plan.kind, &total, &plan.percentiles, out)?;
                if late > 0 {
                    eprintln!("barrage report: {late} results arrived after their interval was printed; they count in the final report only");
                }
                Ok(())
            })()
        }
    };
    (merge, total, result)
}
