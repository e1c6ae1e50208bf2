//! `barrage attack`: reads targets, runs the attack, writes the stream.
//!
//! Order matters for "nothing is sent on bad input": targets, the body file
//! and TLS files are all checked, and the output opened and its header
//! written, before the first request.

use std::io::{self, IsTerminal};

use barrage_attack::{Attack, HitSink, StopReason, Stopper, Targets};
use barrage_collect::live::Live;
use barrage_report::{
    progress::{Display, Show, Total, Watched},
    Recorder, Watcher,
};
use barrage_stream::Hit;

use crate::{
    exit,
    failed::{Failed, Kind as FailKind, Outcome},
    output,
};
use barrage_flags::{AttackArgs, Setup};

/// An attack's flags made ready ([`AttackArgs::setup`]), its notes said.
pub fn setup(a: &AttackArgs) -> Result<Setup, Failed> {
    let setup = a.setup(
        |var| std::env::var(var).ok(),
        || eprintln!("barrage attack: reading targets from this terminal, one per line (METHOD URL, e.g. GET http://127.0.0.1:8080/); Ctrl-D ends them"),
    )?;
    for note in &setup.notes {
        eprintln!("{note}");
    }
    Ok(setup)
}

/// `Attack::new`'s failure: a TLS file that is not what it should be is
/// bad input, the rest the tool's own I/O.
pub fn attack_error(e: barrage_attack::AttackError) -> Failed {
    match e {
        barrage_attack::AttackError::Tls(e) if !e.is_io() => Failed::usage(e),
        e => Failed::io(e),
    }
}

/// Opens `-output` and writes the stream's header, each record shown to
/// `watcher`; `Ok(None)` when stdout is a pipe already closed (a quiet
/// exit 0).
pub fn open_stream(path: &str, watcher: Option<Watcher>) -> Result<Option<Recorder>, Failed> {
    output::stream_started();
    match output::open(path).and_then(|out| Recorder::start(out, watcher)) {
        Ok(r) => Ok(Some(r)),
        Err(e) if output::is_closed_pipe(&e) => Ok(None),
        Err(e) => Err(Failed::io(format!("-output {path}: {e}"))),
    }
}

/// Raises the open-files limit, warning when even the raised one is low.
pub fn raise_open_files_limit() {
    barrage_attack::open_files_warning().inspect(|w| eprintln!("barrage: warning: {w}"));
}

pub fn run(a: AttackArgs) -> Outcome {
    // Signals caught first: one while the run is set up stops it there.
    let stopper = Stopper::catching(
        || eprintln!("barrage attack: stopping before the first request (Ctrl-C again to quit)"),
        || exit::interrupted(),
    );
    if !matches!(a.output.as_str(), "stdout" | "-") {
        output::stream_elsewhere();
    }
    output::refuse_terminal(&a.output)?;
    a.conflicts().map_err(Failed::usage)?;
    let Setup {
        reader,
        mut config,
        mut client,
        ..
    } = setup(&a)?;
    let targets = a.all_targets(reader, &mut config, Some(&client))?;
    a.auto_ring(&mut client, &targets);
    if let Targets::Flow(plan) = &targets {
        client.step_reads = plan.reads();
    }
    let shard = config.shard;
    let spool = barrage_collect::live::spool_for(&a.output, &a.spool)?;
    if let Some(warning) = a.check_fit(&config, &targets)? {
        eprintln!("barrage attack: warning: {warning}");
    }
    let facts = a.run_facts(command_line(), env!("CARGO_PKG_VERSION"), &config, &targets);
    let mut attack = Attack::new(config, client).map_err(attack_error)?;
    // Bound before anything is written or sent: a taken port ends the
    // attack before it starts.
    let (exporter, control) = (a.start_exporter()?, a.bind_control()?);
    let stream_path = spool
        .as_ref()
        .map_or(a.output.clone(), |(p, _)| p.to_string_lossy().into_owned());
    let metrics_at = exporter.as_ref().map(|e| e.addr());
    let watcher = exporter.map(|e| Box::new(move |h: &Hit| e.add(h)) as Watcher);
    let Some(mut sink) = open_stream(&stream_path, watcher)? else {
        return Ok(());
    };
    if let Some(at) = a.start_control(control, &mut attack, sink.board())? {
        eprintln!("barrage attack: control at http://{at}/");
    }
    if let Some(until) = a.until.clone() {
        let stop = stopper.clone();
        sink.until(
            until,
            Box::new(move |why| {
                eprintln!("barrage attack: {why}");
                stop.met();
            }),
        );
    }
    // What run this is, for every page made from its stream (issue 60).
    for (k, v) in facts {
        if let Err(e) = sink.meta(k, &v) {
            return io_error(format!("writing {}: {e}", a.output));
        }
    }
    raise_open_files_limit();
    // -output tcp://: the collector is reached, and the token taken,
    // before the first request; its `stop` stops us as Ctrl-C does.
    let live = match spool {
        Some(spool) => {
            let heard = barrage_flags::on_heard(stopper.clone(), attack.control());
            Some(Live::start(&a.output, &None, spool, shard, &a.name, heard)?)
        }
        None => None,
    };
    if let Some(addr) = metrics_at {
        eprintln!("barrage attack: metrics at http://{addr}/metrics");
    }
    let total = match (a.duration.is_zero(), a.requests) {
        (false, _) => Total::Time(a.duration),
        (true, Some(n)) => Total::Requests(n),
        (true, None) => Total::Open,
    };
    let (watch, stopped) = (attack.watch(), stopper.clone());
    let signals = stopper.clone();
    let display = Display::start(
        Show::from_flag(a.progress, io::stderr().is_terminal()),
        Watched {
            board: sink.board(),
            sent: Box::new({
                let watch = watch.clone();
                move || watch.sent()
            }),
            held: a
                .hold
                .map(|_| Box::new(move || watch.held()) as Box<dyn Fn() -> u64 + Send>),
            stopped: Box::new(move || stopped.is_signalled()),
            total,
            timeout: Some(a.timeout.0).filter(|d| !d.is_zero()),
        },
        Box::new(io::stderr()),
    );
    stopper.set_up();
    let report = match (a.hold, targets) {
        (Some(n), Targets::Fixed(all)) => {
            let hold = barrage_attack::Hold {
                connections: n,
                every: a.hold_every,
            };
            attack.run_hold(all, hold, Box::new(sink), stopper)
        }
        (_, targets) => attack.run(targets, Box::new(sink), stopper),
    };
    display.finish();
    let collector_stop = match live {
        Some(live) => {
            // An attack that failed before its first record says why in
            // its stream, so that the collector's exit names it (it said
            // "done: 0 records" and exited 0).
            if let Ok(r) = &report {
                if r.written == 0 {
                    if let Some(why) = &r.target_error {
                        live.abort(&why.0);
                    }
                }
            }
            let stopped = crate::live::stopped(live.stopped());
            let seen = signals.signals();
            live.finish(&|| signals.signals() > seen)?;
            stopped
        }
        None => Ok(()),
    };
    let report = match report {
        Ok(r) => r,
        Err(e) => return io_error(e),
    };
    for warning in report.warnings() {
        eprintln!("barrage attack: {warning}");
    }
    match report.reason {
        StopReason::BadTarget => Err(Failed::usage(
            report.target_error.map(|e| e.0).unwrap_or_default(),
        )),
        StopReason::OutputFailed => match report.output_error {
            Some(e) if output::is_closed_pipe(&e) => Ok(()),
            Some(e) => io_error(format!("writing {}: {e}", a.output)),
            None => Ok(()),
        },
        StopReason::Stopped if collector_stop.is_err() => collector_stop,
        StopReason::Stopped => {
            eprintln!(
                "barrage attack: {}",
                report.interrupted().unwrap_or_default()
            );
            Ok(())
        }
        StopReason::Abandoned => Err(Failed {
            kind: FailKind::Interrupted,
            lines: report.interrupted().into_iter().collect(),
        }),
        StopReason::Done | StopReason::TargetsExhausted => Ok(()),
    }
}

/// The command as typed, for a page ([`barrage_model::words::shown_command`]).
pub fn command_line() -> String {
    barrage_model::words::shown_command(std::env::args())
}

/// The tool's own I/O, in one line.
fn io_error(msg: impl std::fmt::Display) -> Outcome {
    Err(Failed::io(msg))
}
