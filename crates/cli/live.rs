//! The live meeting point's commands: `barrage collect`, `barrage send`,
//! and the attack's `-output tcp://HOST:PORT`, wired to
//! [`barrage_collect`] (which holds their logic: [`barrage_collect::live`]).

use barrage_collect::{
    live::{Blame, LiveError},
    Collector,
};
use barrage_stream::Encoder;

use crate::{
    failed::{Failed, Kind, Outcome},
    output,
};
use barrage_flags::{CollectArgs, SendArgs};

/// A sender's failure as the command's.
impl From<LiveError> for Failed {
    fn from(e: LiveError) -> Self {
        Failed {
            kind: match e.blame() {
                Blame::Usage => Kind::Usage,
                Blame::Io => Kind::Io,
                Blame::Interrupted => Kind::Interrupted,
            },
            lines: vec![e.to_string()],
        }
    }
}

/// The collector's stop, as the command's outcome (exit 3).
pub fn stopped(why: Option<String>) -> Outcome {
    match why {
        Some(why) => Err(Failed {
            kind: Kind::Threshold,
            lines: vec![format!("stopped by the collector: {why}")],
        }),
        None => Ok(()),
    }
}

/// `barrage send ADDRESS [FILE]`.
pub fn send(a: SendArgs) -> Outcome {
    let config = barrage_collect::live::SendConfig {
        address: a.address,
        token: a.token,
        file: a.file,
        spool: a.spool,
    };
    stopped(barrage_collect::live::send(config)?)
}

/// `barrage collect`.
pub fn collect(a: CollectArgs) -> Outcome {
    let token = barrage_collect::live::token(&a.token, "collect")?;
    output::refuse_terminal(&a.output)?;
    let tls = match a.tls_files().map_err(Failed::usage)? {
        Some((c, k)) => Some(barrage_collect::link::server_tls(c, k).map_err(Failed::usage)?),
        None => None,
    };
    let tls_on = tls.is_some();
    let config = a.config(token.clone(), tls).map_err(Failed::usage)?;
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
    if let Some(at) = a.start_control(collector.orders(), &token)? {
        eprintln!("barrage collect: control at http://{at}/");
    }
    let signals = barrage_collect::live::count_signals();
    let summary = match collector.run(&mut encoder, &signals) {
        Ok(s) => s,
        Err(e) if output::is_closed_pipe(&e) => return Ok(()),
        Err(e) => return Err(Failed::io(format!("writing {}: {e}", a.output))),
    };
    eprintln!("barrage collect: {summary}");
    Failed::fail_on(&summary.failed)?;
    if !summary.unfinished.is_empty() {
        return Err(Failed {
            kind: Kind::Io,
            lines: summary.unfinished,
        });
    }
    Ok(())
}
