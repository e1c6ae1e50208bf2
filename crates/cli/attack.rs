//! `barrage attack`: reads targets, runs the attack, writes the stream.
//!
//! Order matters for "nothing is sent on bad input": targets, the body file
//! and TLS files are all checked, and the output opened and its header
//! written, before the first request.

use std::io::{self, BufRead, IsTerminal};

use barrage_attack::{Arrivals, Attack, AttackConfig, HitSink, StopReason, Stopper, Targets};
use barrage_client::ClientConfig;
use barrage_report::{
    progress::{Display, Show, Total, Watched},
    Recorder, Watcher,
};
use barrage_serve::Exporter;
use barrage_stream::Hit;
use barrage_targets::TargetReader;

use crate::{
    exit,
    failed::{Failed, Kind as FailKind, Outcome},
    output,
    read::defaults,
    schedule,
};
use barrage_flags::AttackArgs;

/// The attack's targets from `reader`, as the flags say
/// ([`barrage_attack::load`]): the `-feed` and `-proto-set` files read
/// here; not with a `client`, as `doctor` reads them, no server is asked
/// for its gRPC descriptors.
pub(crate) fn targets(
    a: &AttackArgs,
    reader: TargetReader<Box<dyn BufRead + Send>>,
    shard: u64,
    client: Option<&ClientConfig>,
) -> Result<Targets, Failed> {
    use barrage_attack::load;
    let feed = a.feed.as_deref().map(load::feed).transpose()?;
    let protos = load::protos(a.proto_set.as_deref(), a.proto.as_deref(), &a.import_path)?;
    let spec = a.targets_spec(shard, feed, protos);
    Ok(load::targets(spec, reader, client)?)
}

/// Bad usage, in one line.
fn usage(msg: impl std::fmt::Display) -> Outcome {
    Err(Failed::usage(msg))
}

/// The tool's own I/O, in one line.
fn io(msg: impl std::fmt::Display) -> Outcome {
    Err(Failed::io(msg))
}

/// What the flags describe, checked: the targets' reader, the attack and
/// how requests are sent. Shared with `sweep`.
pub struct Setup {
    pub reader: TargetReader<Box<dyn BufRead + Send>>,
    pub config: AttackConfig,
    pub client: ClientConfig,
}

/// Checks the flags an attack and a sweep share and builds their
/// configurations: targets opened, the body file read, the proxies from
/// the environment, the TLS files (by `Attack::new`, later) all checked
/// before anything is sent.
pub fn setup(a: &AttackArgs) -> Result<Setup, Failed> {
    a.input_conflicts().map_err(Failed::usage)?;
    let defaults = defaults(a)?;
    let input = crate::read::target_input(a)?;
    let source = if a.urls.is_empty() {
        a.targets.as_str()
    } else {
        "arguments"
    };
    let mut reader =
        TargetReader::new(input, source, a.format, defaults).with_har_filter(a.har_filter.clone());
    reader.load().map_err(Failed::usage)?;
    for note in reader.take_notes() {
        eprintln!("barrage: note: {note}");
    }
    let shard = a
        .shard
        .map(|s| s.resolve(|var| std::env::var(var).ok()))
        .transpose()
        .map_err(Failed::usage)?;
    let config = a.attack_config(shard, schedule::arrivals(a.arrivals));
    // The proxies Go's ProxyFromEnvironment would use, as vegeta does.
    let proxies =
        barrage_client::Proxies::from_env(|name| std::env::var(name).ok(), a.proxy_headers.clone())
            .map_err(Failed::usage)?;
    // -io auto: io_uring for the closed model, epoll for the open one.
    let closed =
        matches!(a.rate, barrage_model::Rate::Max) && a.stages.is_none() && a.mix.is_none();
    let io = a.io.settle(closed);
    // io_uring asked for and not to be had here: said once, epoll used.
    if let (_, Some(note)) = io.resolve() {
        eprintln!("{note}");
    }
    let stream = a.stream_spec().map_err(Failed::usage)?;
    let client = a.client_config(proxies, io, stream);
    Ok(Setup {
        reader,
        config,
        client,
    })
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
    if let Some(n) = barrage_attack::raise_open_files_limit().filter(|&n| n < LOW_OPEN_FILES) {
        eprintln!("barrage: warning: the open files limit (NOFILE) is {n}; requests beyond it fail with \"socket: too many open files\" (raise it with ulimit -n)");
    }
}

pub fn run(a: AttackArgs) -> Outcome {
    if !matches!(a.output.as_str(), "stdout" | "-") {
        output::stream_elsewhere();
    }
    output::refuse_terminal(&a.output)?;
    a.conflicts().map_err(Failed::usage)?;
    let Setup {
        reader,
        mut config,
        mut client,
    } = setup(&a)?;
    let targets = match &a.mix {
        Some(path) => schedule::mix(&a, path, &mut config)?,
        None => targets(
            &a,
            reader,
            config.shard.map_or(0, |(i, _)| i),
            Some(&client),
        )?,
    };
    if let Targets::Flow(plan) = &targets {
        client.step_reads = plan.reads();
    }
    if a.hold.is_some() {
        targets.holdable().map_err(Failed::usage)?;
    }
    let config_arrivals = config.arrivals;
    let shard = config.shard;
    let spool = barrage_collect::live::spool_for(&a.output, &a.spool)?;
    // What this host allows, set against the plan, before anything is
    // sent: one warning naming the first limit it would hit.
    crate::plan::warn_if_unfit(&a, &config, &targets)?;
    let attack = Attack::new(config, client).map_err(attack_error)?;
    // Bound before anything is written or sent: a taken port ends the
    // attack before it starts.
    let exporter = match a.prometheus_addr.map(Exporter::start).transpose() {
        Ok(e) => e,
        Err(e) => {
            let addr = a.prometheus_addr.map(|a| a.to_string()).unwrap_or_default();
            return io(format!("-prometheus-addr {addr}: {e}"));
        }
    };
    let stream_path = spool
        .as_ref()
        .map_or(a.output.clone(), |(p, _)| p.to_string_lossy().into_owned());
    let metrics_at = exporter.as_ref().map(|e| e.addr());
    let watcher = exporter.map(|e| Box::new(move |h: &Hit| e.add(h)) as Watcher);
    let Some(mut sink) = open_stream(&stream_path, watcher)? else {
        return Ok(());
    };
    // What run this is, for every page made from its stream (issue 60:
    // a page fit for a post-mortem names its target, rate and command).
    for (k, v) in crate::facts::run_facts(&a, &targets) {
        if let Err(e) = sink.meta(k, &v) {
            return io(format!("writing {}: {e}", a.output));
        }
    }
    // The seed goes in the stream, so that a run can be repeated from its
    // results (report shows it).
    if let Arrivals::Poisson(Some(seed)) = config_arrivals {
        if let Err(e) = sink.meta("arrivals", &format!("poisson:{seed}")) {
            return io(format!("writing {}: {e}", a.output));
        }
    }

    if a.insecure {
        eprintln!("barrage attack: warning: -insecure: server certificates are not verified");
    }
    raise_open_files_limit();
    let stopper = Stopper::new();
    // -output tcp://: the collector is reached, and the token taken,
    // before the first request; its `stop` stops us as Ctrl-C does.
    let live = match spool {
        Some(spool) => {
            let stop = stopper.clone();
            Some(barrage_collect::live::Live::start(
                &a.output,
                &None,
                spool,
                shard,
                &a.name,
                Box::new(move || stop.stop()),
            )?)
        }
        None => None,
    };
    stopper.on_signals(|| exit::interrupted());
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
        Err(e) => return io(e),
    };
    if let Some(warning) = report.dropped_warning() {
        eprintln!("barrage attack: {warning}");
    }
    match report.reason {
        StopReason::BadTarget => usage(report.target_error.map(|e| e.0).unwrap_or_default()),
        StopReason::OutputFailed => match report.output_error {
            Some(e) if output::is_closed_pipe(&e) => Ok(()),
            Some(e) => io(format!("writing {}: {e}", a.output)),
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

/// Open files below which the attack warns before starting: every request
/// in flight holds a socket.
const LOW_OPEN_FILES: u64 = 1024;
