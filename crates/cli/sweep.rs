//! `barrage sweep`: checks the flags, builds the attack's setup once, and
//! hands the steps to `barrage_sweep`; then the table (stdout, or stderr
//! when the stream goes to stdout), the chart, and the exit code of
//! `-find-max` (0 found, 3 even the first step fails, 1 the generator was
//! the limit).

use std::{
    io::{self, BufWriter, Write},
    sync::{Arc, Mutex},
};

use barrage_attack::{HitSink, Rate, Stopper};
use barrage_sweep::{Attacker, Bounds, Collect, Found, Load, Row};

use crate::{
    attack, exit,
    failed::{Failed, Kind, Outcome},
    inputs, output,
};
use barrage_flags::{self as flags, Setup, SweepArgs};

pub fn run(s: SweepArgs) -> Outcome {
    let bounds = Bounds {
        lag_p99: s.lag_limit,
        ..Bounds::default()
    };
    if let Some(from) = &s.from {
        return redraw(&s, from, bounds);
    }
    let stopper = Stopper::catching(
        || eprintln!("barrage sweep: stopping before the first step (Ctrl-C again to quit)"),
        || exit::interrupted(),
    );
    let to_stdout = matches!(s.attack.output.as_str(), "-" | "stdout");
    if to_stdout {
        crate::output::refuse_terminal("-")?;
    }
    let plan = s.plan().map_err(Failed::usage)?;
    let Setup {
        reader,
        config,
        mut client,
        ..
    } = attack::setup(&s.attack)?;
    // -concurrency steps are the closed model: -io auto takes io_uring
    // for them, as attack does for -rate 0.
    if s.concurrency.is_some() {
        client.io = s.attack.io.settle(true);
    }
    // A flow: each step's load is sessions.
    let (flow, targets) = if s.attack.format == barrage_targets::Format::Flow {
        let shard = config.shard.map_or(0, |(i, _)| i);
        let plan = s.attack.flow(reader, shard, &client)?;
        client.step_reads = plan.reads();
        (Some(plan), Vec::new())
    } else {
        let targets = barrage_attack::load::plain(&s.attack.targets, reader)?;
        (None, targets)
    };
    // Checked once here (TLS files) before anything is sent.
    let probe = barrage_attack::AttackConfig {
        rate: Rate::Max,
        max_workers: Some(1),
        ..config.clone()
    };
    drop(barrage_attack::Attack::new(probe, client.clone()).map_err(attack::attack_error)?);
    // The stream only where asked for: the table takes stdout otherwise.
    let sink: Box<dyn HitSink> = if s.attack.output == flags::SWEEP_NO_OUTPUT {
        Box::new(barrage_attack::Discard)
    } else {
        let path = if to_stdout {
            "stdout"
        } else {
            s.attack.output.as_str()
        };
        match attack::open_stream(path, None)? {
            Some(sink) => Box::new(sink),
            None => return Ok(()),
        }
    };
    let sink = Arc::new(Mutex::new(sink));
    attack::raise_open_files_limit();
    // The first targets, for the chart's run table.
    let flow_urls = flow
        .iter()
        .flat_map(|p| p.steps.iter().map(|s| &*s.prepared.url_text));
    let urls = targets.iter().map(|t| t.url.as_str()).chain(flow_urls);
    let shown = barrage_model::words::first_distinct(urls, 3);
    let mut attacker = Attacker {
        targets,
        flow,
        base: config,
        client,
        sink: sink.clone(),
        stopper: stopper.clone(),
        step_duration: s.step_duration,
        step_until: s.step_until.clone(),
        slo: plan.slo.clone(),
        warmup: s.attack.warmup,
        bounds,
        prompts: s.attack.prompts()?,
    };
    let started = barrage_model::time::now_ns();
    stopper.set_up();
    let out = barrage_sweep::sweep(&plan, &mut attacker, progress);
    let _ = sink.lock().map(|mut s| s.flush());
    let out = match out {
        Ok(out) => out,
        // The reader of `-output -` went away: a quiet stop, as in attack.
        Err(barrage_sweep::SweepError::Output(e)) if output::is_closed_pipe(&e) => return Ok(()),
        Err(barrage_sweep::SweepError::Attack(e)) => return Err(attack::attack_error(e)),
        // A step that cannot be sent is the command line's fault (exit 2),
        // not an I/O failure (issue 29: it gave 1).
        Err(e @ barrage_sweep::SweepError::Targets(_)) => return Err(Failed::usage(e)),
        Err(e) => return Err(Failed::io(e)),
    };
    if stopper.is_stopped() {
        eprintln!(
            "barrage sweep: interrupted: the table covers the {} finished steps",
            out.rows.len()
        );
    }
    if let Some((load, why)) = &out.stopped_on {
        eprintln!(
            "barrage sweep: stopped after {}: -stop-on {why}",
            load.name()
        );
    }
    let table = if to_stdout {
        Target::Stderr
    } else {
        Target::Stdout
    };
    let run = barrage_sweep::run_table(
        attack::command_line(),
        env!("CARGO_PKG_VERSION"),
        &shown,
        &out.rows,
        (started, barrage_model::time::now_ns()),
    );
    write(&s, &run, &out.rows, out.found.as_ref(), table)?;
    match out.found {
        Some(Found::FirstFails { .. }) => Err(Failed {
            kind: Kind::Threshold,
            lines: Vec::new(),
        }),
        Some(Found::GeneratorBound { .. }) => Err(Failed {
            kind: Kind::Generator,
            lines: Vec::new(),
        }),
        _ => Ok(()),
    }
}

/// One line on stderr per finished step.
fn progress(r: &Row) {
    eprintln!("barrage sweep: {}", r.progress_line());
}

/// Where the table goes.
#[derive(Clone, Copy)]
enum Target {
    Stdout,
    Stderr,
}

/// The table (and `-chart`).
fn write(s: &SweepArgs, run: &str, rows: &[Row], found: Option<&Found>, to: Target) -> Outcome {
    let written = match to {
        Target::Stdout => {
            let mut out = BufWriter::new(io::stdout().lock());
            barrage_sweep::write_table(s.kind, rows, found, &mut out).and_then(|()| out.flush())
        }
        Target::Stderr => barrage_sweep::write_table(s.kind, rows, found, &mut io::stderr()),
    };
    if let Err(e) = written {
        if !output::is_closed_pipe(&e) {
            return Err(Failed::io(format!("writing the table: {e}")));
        }
    }
    if let Some(path) = &s.chart {
        let page = barrage_sweep::write_chart_file(path, &s.title, run, rows, found);
        page.map_err(|e| Failed::io(format!("-chart {}: {e}", path.display())))?;
    }
    Ok(())
}

/// `-from`: the table and chart again from a saved sweep's records.
fn redraw(s: &SweepArgs, from: &str, bounds: Bounds) -> Outcome {
    let mut merge = inputs::open(&[from.to_string()], false)?;
    let mut collect = Collect::default();
    let mut run = barrage_plot::run::RunFacts::new();
    while let Some(hit) = merge.next_hit() {
        collect.add(hit);
        run.add(hit);
    }
    run.facts(&merge.meta());
    run.inputs(&[from.to_string()]);
    let rows = collect.rows(bounds);
    if rows.is_empty() && merge.errors().0.is_empty() {
        return Err(Failed::usage(format!(
            "{from}: no sweep steps (records named like {} or {})",
            Load::Rate(5000.0).name(),
            Load::Concurrency(200).name()
        )));
    }
    write(s, &run.html(), &rows, None, Target::Stdout)?;
    inputs::finish(&merge)
}
