//! The live meeting point: `barrage collect`, `barrage send`, and the
//! attack's `-output tcp://HOST:PORT` (an uplink beside its spool).

use std::{
    fs::File,
    io,
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc, Mutex,
    },
};

use barrage_collect::{parse_address, CollectConfig, Collector, Uplink, UplinkConfig, UplinkError};
use barrage_stream::Encoder;

use crate::{
    failed::{Failed, Kind, Outcome},
    output,
};
use barrage_flags::{CollectArgs, SendArgs};

/// The environment variable that holds the shared token.
pub const TOKEN_VAR: &str = "BARRAGE_TOKEN";

/// The environment variable that names the CA (PEM) a `tls://` uplink
/// trusts.
pub const CA_VAR: &str = "BARRAGE_CA";

/// The token: the flag, else the environment; one of them is required.
fn token(flag: &Option<String>, what: &str) -> Result<String, Failed> {
    let token = flag
        .clone()
        .or_else(|| std::env::var(TOKEN_VAR).ok())
        .unwrap_or_default();
    if token.is_empty() {
        // `attack` takes the token from the environment only (to keep it
        // out of `ps`): its message names no flag.
        let how = if what.starts_with("-output") {
            format!("{TOKEN_VAR}=T in the environment")
        } else {
            format!("-token T or {TOKEN_VAR}=T")
        };
        return Err(Failed::usage(format!(
            "{what} needs the shared token: {how} (the collector refuses streams without it)"
        )));
    }
    if token.chars().any(|c| c.is_control()) {
        return Err(Failed::usage(
            "the token cannot hold line breaks or control characters",
        ));
    }
    Ok(token)
}

/// This host and process, as the collector names a sender.
fn label(name: &str) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = host.trim();
    let host = if host.is_empty() { "localhost" } else { host };
    let mut label = format!("{host}:{}", std::process::id());
    if !name.is_empty() {
        label.push(' ');
        label.push_str(name);
    }
    label
}

/// An uplink on its way, and what to do with its spool at the end.
pub struct Live {
    uplink: Uplink,
    spool: PathBuf,
    keep: bool,
    /// Why the collector stopped us, once it did.
    pub stopped: Arc<Mutex<Option<String>>>,
}

impl Live {
    /// The spool is complete: sends the rest, waits for the collector to
    /// hold it, and removes a spool of our own making. `give_up` (a
    /// signal came) ends the wait at once, the spool kept and named.
    pub fn finish(self, give_up: &dyn Fn() -> bool) -> Result<(), Failed> {
        match self.uplink.finish(give_up) {
            Ok(_) => {
                if !self.keep {
                    let _ = std::fs::remove_file(&self.spool);
                }
                Ok(())
            }
            Err(e) => Err(uplink_error(e)),
        }
    }

    /// Ends the spool with the reason its attack failed before its first
    /// record (the frame `report` reads as "failed before its first
    /// request").
    pub fn abort(&self, reason: &str) {
        use std::io::Write as _;
        let frame = &barrage_stream::aborted_stream(reason)[6..];
        if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(&self.spool) {
            let _ = f.write_all(frame);
        }
    }

    /// The collector's stop, as the command's outcome (exit 3).
    pub fn outcome(&self) -> Outcome {
        match self.stopped.lock().expect("stopped").clone() {
            Some(why) => Err(Failed {
                kind: Kind::Threshold,
                lines: vec![format!("stopped by the collector: {why}")],
            }),
            None => Ok(()),
        }
    }
}

fn uplink_error(e: UplinkError) -> Failed {
    match e {
        UplinkError::Refused { .. } => Failed::usage(e),
        UplinkError::Io(_) | UplinkError::Tls(_) => Failed::io(e),
        UplinkError::GaveUp { .. } => Failed {
            kind: Kind::Interrupted,
            lines: vec![e.to_string()],
        },
    }
}

/// `-output tcp://HOST:PORT` (or `tls://`): the spool's path, ready for
/// the stream; `None` for a file or stdout.
pub fn spool_for(output: &str, spool: &Option<PathBuf>) -> Result<Option<(PathBuf, bool)>, Failed> {
    match parse_address(output) {
        None => Ok(None),
        Some(Err(e)) => Err(Failed::usage(format!("-output {e}"))),
        Some(Ok(_)) => Ok(Some(match spool {
            Some(p) => (p.clone(), true),
            None => (barrage_collect::temp_spool(), false),
        })),
    }
}

/// Connects the spool (its header already written) to the collector at
/// `address`; `on_stop` is called when the collector says stop. When it
/// cannot (a bad address, no token, a refusal), a spool of our own
/// making is removed: nothing was sent, and its name was never said.
pub fn start(
    address: &str,
    token_flag: &Option<String>,
    (spool, keep): (PathBuf, bool),
    shard: Option<(u64, u64)>,
    name: &str,
    on_stop: Box<dyn Fn() + Send>,
) -> Result<Live, Failed> {
    // A spool of our own making goes if the collector cannot be had:
    // nothing was sent, and its name was never said.
    let mut made = Made((!keep).then(|| spool.clone()));
    let what = format!("-output {address}");
    let (addr, tls) = match parse_address(address) {
        Some(Ok(a)) => a,
        Some(Err(e)) => return Err(Failed::usage(e.to_string())),
        None => {
            return Err(Failed::usage(format!(
                "{address}: want tcp://HOST:PORT or tls://HOST:PORT"
            )))
        }
    };
    let token = token(token_flag, &what)?;
    let tls = if tls {
        let ca = std::env::var_os(CA_VAR).map(PathBuf::from);
        Some(
            barrage_collect::link::client_tls(ca.as_deref())
                .map_err(|e| Failed::usage(format!("{CA_VAR}: {e}")))?,
        )
    } else {
        None
    };
    let stopped = Arc::new(Mutex::new(None));
    let config = UplinkConfig {
        addr,
        tls,
        token,
        shard,
        label: label(name),
        spool: spool.clone(),
        patience: std::time::Duration::from_secs(60),
    };
    let said = stopped.clone();
    let uplink = Uplink::start(
        config,
        Box::new(move |why: &str| {
            eprintln!("barrage: the collector says stop: {why}");
            *said.lock().expect("stopped") = Some(why.to_string());
            on_stop();
        }),
    )
    .map_err(|e| match e {
        UplinkError::Io(m) => {
            Failed::io(format!("{what}: {m} (is barrage collect listening there?)"))
        }
        e => uplink_error(e),
    })?;
    made.0 = None;
    Ok(Live {
        uplink,
        spool,
        keep,
        stopped,
    })
}

/// A temporary spool, removed when dropped still holding its path.
struct Made(Option<PathBuf>);

impl Drop for Made {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// `barrage send ADDRESS [FILE]`.
pub fn send(a: SendArgs) -> Outcome {
    if parse_address(&a.address).is_none() {
        return Err(Failed::usage(format!(
            "{}: want tcp://HOST:PORT or tls://HOST:PORT",
            a.address
        )));
    }
    token(&a.token, "send")?;
    let quit = Arc::new(AtomicBool::new(false));
    let (spool, keep, copier) = match &a.file {
        Some(f) if f != "-" && f != "stdin" => {
            File::open(f).map_err(|e| Failed::io(format!("{f}: {e}")))?;
            (PathBuf::from(f), true, None)
        }
        _ => {
            let (path, keep) = match &a.spool {
                Some(p) => (p.clone(), true),
                None => (barrage_collect::temp_spool(), false),
            };
            let out = File::create(&path)
                .map_err(|e| Failed::io(format!("-spool {}: {e}", path.display())))?;
            let quit = quit.clone();
            let copier =
                std::thread::spawn(move || barrage_collect::spool(io::stdin().lock(), out, &quit));
            (path, keep, Some(copier))
        }
    };
    let stop = quit.clone();
    let live = start(
        &a.address,
        &a.token,
        (spool, keep),
        None,
        "send",
        Box::new(move || stop.store(true, Ordering::SeqCst)),
    )?;
    // The first Ctrl-C or SIGTERM stops reading stdin (what is spooled is
    // still sent); the next one stops waiting for the collector.
    let signals = Arc::new(AtomicUsize::new(0));
    count_signals(signals.clone());
    if let Some(c) = copier {
        while !c.is_finished() && signals.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if c.is_finished() {
            c.join()
                .unwrap_or_else(|_| Err(io::Error::other("the copy failed")))
                .map_err(|e| Failed::io(format!("reading stdin: {e}")))?;
        } else {
            quit.store(true, Ordering::SeqCst);
            eprintln!("barrage send: interrupted: sending what was read (again to stop waiting)");
        }
    }
    let outcome = live.outcome();
    let seen = signals.load(Ordering::SeqCst);
    live.finish(&|| signals.load(Ordering::SeqCst) > seen)?;
    outcome
}

/// `barrage collect`.
pub fn collect(a: CollectArgs) -> Outcome {
    let token = token(&a.token, "collect")?;
    output::refuse_terminal(&a.output)?;
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(c), Some(k)) => Some(barrage_collect::link::server_tls(c, k).map_err(Failed::usage)?),
        (None, None) => None,
        _ => return Err(Failed::usage("-tls-cert and -tls-key go together")),
    };
    let tls_on = tls.is_some();
    let config = CollectConfig {
        token,
        tls,
        interval: a.interval,
        attackers: a.attackers,
        join_timeout: Some(a.join_timeout).filter(|d| !d.is_zero()),
        silence: Some(a.silence).filter(|d| !d.is_zero()),
        fail_on: a.fail_on.map(|f| f.0).unwrap_or_default(),
        min_requests: a.min_requests,
        max_skew: a.max_skew,
    };
    if a.interval < std::time::Duration::from_millis(1) {
        return Err(Failed::usage(
            "-interval must be at least 1ms (it is how long a record waits for a slower attacker)",
        ));
    }
    if !a.listen.ip().is_loopback() && !tls_on {
        eprintln!("barrage collect: warning: -listen {} without -tls-cert: the token and the results cross the network in clear", a.listen);
    }
    let collector = Collector::bind(a.listen, config)
        .map_err(|e| Failed::io(format!("-listen {}: {e}", a.listen)))?;
    let addr = collector
        .local_addr()
        .map_err(|e| Failed::io(format!("-listen {}: {e}", a.listen)))?;
    if !matches!(a.output.as_str(), "stdout" | "-") {
        output::stream_elsewhere();
    }
    let out =
        output::open(&a.output).map_err(|e| Failed::io(format!("-output {}: {e}", a.output)))?;
    let mut encoder = match Encoder::new(out).and_then(|mut e| e.flush().map(|()| e)) {
        Ok(e) => e,
        Err(e) if output::is_closed_pipe(&e) => return Ok(()),
        Err(e) => return Err(Failed::io(format!("-output {}: {e}", a.output))),
    };
    let scheme = if tls_on { "tls" } else { "tcp" };
    eprintln!("barrage collect: listening on {scheme}://{addr}");
    let signals = Arc::new(AtomicUsize::new(0));
    count_signals(signals.clone());
    let summary = match collector.run(&mut encoder, &signals) {
        Ok(s) => s,
        Err(e) if output::is_closed_pipe(&e) => return Ok(()),
        Err(e) => return Err(Failed::io(format!("writing {}: {e}", a.output))),
    };
    let show = |ns: u64| {
        barrage_model::duration::format(barrage_model::duration::round_for_report(ns as i64))
    };
    eprintln!(
        "barrage collect: {} records from {} attackers; added latency p50 {}, p99 {}, max {} (from a record's end to its place in the merged stream)",
        summary.records,
        summary.attackers,
        show(summary.added.quantile(0.5)),
        show(summary.added.quantile(0.99)),
        show(summary.added.max())
    );
    if !summary.failed.is_empty() {
        return Err(Failed {
            kind: Kind::Threshold,
            lines: summary
                .failed
                .iter()
                .map(|f| format!("-fail-on: {f}"))
                .collect(),
        });
    }
    if !summary.unfinished.is_empty() {
        return Err(Failed {
            kind: Kind::Io,
            lines: summary.unfinished,
        });
    }
    Ok(())
}

/// Ctrl-C and SIGTERM, counted.
fn count_signals(count: Arc<AtomicUsize>) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("barrage-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        });
}
