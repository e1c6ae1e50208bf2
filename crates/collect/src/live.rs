//! A sender's side of a live run (`attack -output tcp://`, `barrage
//! send`): the shared token, the spool, and the uplink that sends it, with
//! the signals that end its waits.

use std::{
    fs::File,
    io,
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use crate::{
    link::TlsSetup, parse_address, uplink::Told, wire::WireError, Uplink, UplinkConfig, UplinkError,
};

/// What the collector tells an attacker, for [`Live::start`]'s hook.
pub enum Heard {
    /// Stop as on Ctrl-C.
    Stop,
    /// A live control order (`collect -control`), timed for every
    /// attacker alike.
    Order(barrage_model::Order),
}

/// [`Live::start`]'s hook: what it does with what the collector says
/// (an order it cannot take is said on stderr).
pub type OnHeard =
    Box<dyn Fn(Heard) -> Result<(), Box<dyn std::error::Error + Send + Sync>> + Send>;

/// The environment variable that holds the shared token.
pub const TOKEN_VAR: &str = "BARRAGE_TOKEN";

/// The environment variable that names the CA (PEM) a `tls://` uplink
/// trusts.
pub const CA_VAR: &str = "BARRAGE_CA";

/// Why a sender could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// Neither the flag nor the environment gave a token.
    #[error("{what} needs the shared token: {how} (the collector refuses streams without it)")]
    NoToken {
        /// The command or flag, as typed.
        what: String,
        /// Where a token may come from.
        how: String,
    },
    /// A token with a line break or control character.
    #[error("the token cannot hold line breaks or control characters")]
    BadToken,
    /// Not `tcp://` or `tls://`.
    #[error("{0}: want tcp://HOST:PORT or tls://HOST:PORT")]
    NotAnAddress(String),
    /// A `tcp://` or `tls://` address that does not parse.
    #[error("{flag}{source}")]
    Address {
        /// The flag with a space (`-output `), or nothing.
        flag: &'static str,
        /// What is wrong with it.
        source: WireError,
    },
    /// `BARRAGE_CA` could not be read.
    #[error("{CA_VAR}: {0}")]
    Ca(TlsSetup),
    /// The collector could not be reached at the start.
    #[error("{what}: {message} (is barrage collect listening there?)")]
    Unreachable {
        /// `-output ADDRESS`.
        what: String,
        /// What the connection said.
        message: String,
    },
    /// The uplink failed or was told to stop waiting.
    #[error(transparent)]
    Uplink(#[from] UplinkError),
    /// A file (the stream sent, the spool, stdin) failed.
    #[error("{what}: {source}")]
    File {
        /// The file as named (`-spool PATH`, `reading stdin`).
        what: String,
        /// Its error.
        source: io::Error,
    },
}

/// Whose the failure is, for an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blame {
    /// Bad usage or input.
    Usage,
    /// The tool's own I/O.
    Io,
    /// A second signal ended a wait.
    Interrupted,
}

impl LiveError {
    /// Whose the failure is.
    pub fn blame(&self) -> Blame {
        match self {
            LiveError::NoToken { .. }
            | LiveError::BadToken
            | LiveError::NotAnAddress(_)
            | LiveError::Address { .. }
            | LiveError::Ca(_)
            | LiveError::Uplink(UplinkError::Refused { .. }) => Blame::Usage,
            LiveError::Uplink(UplinkError::GaveUp { .. }) => Blame::Interrupted,
            _ => Blame::Io,
        }
    }
}

/// The token: the flag, else the environment; one of them is required.
/// `what` names the command or flag that needs it.
pub fn token(flag: &Option<String>, what: &str) -> Result<String, LiveError> {
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
        return Err(LiveError::NoToken {
            what: what.to_string(),
            how,
        });
    }
    if token.chars().any(|c| c.is_control()) {
        return Err(LiveError::BadToken);
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

/// `-output tcp://HOST:PORT` (or `tls://`): the spool's path and whether
/// it is the user's to keep (`-spool`); `None` for a file or stdout.
pub fn spool_for(
    output: &str,
    spool: &Option<PathBuf>,
) -> Result<Option<(PathBuf, bool)>, LiveError> {
    match parse_address(output) {
        None => Ok(None),
        Some(Err(source)) => Err(LiveError::Address {
            flag: "-output ",
            source,
        }),
        Some(Ok(_)) => Ok(Some(match spool {
            Some(p) => (p.clone(), true),
            None => (crate::temp_spool(), false),
        })),
    }
}

/// An uplink on its way, and what to do with its spool at the end.
pub struct Live {
    uplink: Uplink,
    spool: PathBuf,
    keep: bool,
    stopped: Arc<Mutex<Option<String>>>,
}

/// A spool of our own making, removed when dropped still holding its path.
struct Made(Option<PathBuf>);

impl Drop for Made {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Live {
    /// Connects the spool (its header already written; `keep`: the
    /// user's) to the collector at `address`; `on_heard` is called when
    /// the collector says stop or gives an order. When it cannot (a bad address, no token,
    /// a refusal), a spool of our own making is removed: nothing was
    /// sent, and its name was never said.
    pub fn start(
        address: &str,
        token_flag: &Option<String>,
        (spool, keep): (PathBuf, bool),
        shard: Option<(u64, u64)>,
        name: &str,
        on_heard: OnHeard,
    ) -> Result<Live, LiveError> {
        let mut made = Made((!keep).then(|| spool.clone()));
        let what = format!("-output {address}");
        let (addr, tls) = match parse_address(address) {
            Some(Ok(a)) => a,
            Some(Err(source)) => return Err(LiveError::Address { flag: "", source }),
            None => return Err(LiveError::NotAnAddress(address.to_string())),
        };
        let token = token(token_flag, &what)?;
        let tls = if tls {
            let ca = std::env::var_os(CA_VAR).map(PathBuf::from);
            Some(crate::link::client_tls(ca.as_deref()).map_err(LiveError::Ca)?)
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
            patience: Duration::from_secs(60),
        };
        let said = stopped.clone();
        let uplink = Uplink::start(
            config,
            Box::new(move |told: Told| match told {
                Told::Stop(why) => {
                    eprintln!("barrage: the collector says stop: {why}");
                    *said.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.to_string());
                    let _ = on_heard(Heard::Stop);
                }
                Told::Control(at, what) => {
                    let done = crate::orders::read(at, what)
                        .map_err(Into::into)
                        .and_then(|order| on_heard(Heard::Order(order)));
                    if let Err(e) = done {
                        eprintln!("barrage: the collector's order {what:?} was not taken: {e}");
                    }
                }
            }),
        )
        .map_err(|e| match e {
            UplinkError::Io(message) => LiveError::Unreachable { what, message },
            e => LiveError::Uplink(e),
        })?;
        made.0 = None;
        Ok(Live {
            uplink,
            spool,
            keep,
            stopped,
        })
    }

    /// The spool is complete: sends the rest, waits for the collector to
    /// hold it, and removes a spool of our own making. `give_up` (a
    /// signal came) ends the wait at once, the spool kept and named.
    pub fn finish(self, give_up: &dyn Fn() -> bool) -> Result<(), LiveError> {
        self.uplink.finish(give_up)?;
        if !self.keep {
            let _ = std::fs::remove_file(&self.spool);
        }
        Ok(())
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

    /// Why the collector stopped us, once it did.
    pub fn stopped(&self) -> Option<String> {
        self.stopped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// What `barrage send` sends.
pub struct SendConfig {
    /// `tcp://HOST:PORT` or `tls://HOST:PORT`.
    pub address: String,
    /// `-token`.
    pub token: Option<String>,
    /// A stream file, or `None` (or `-`, `stdin`) for stdin.
    pub file: Option<String>,
    /// `-spool`: where stdin is kept while it is sent.
    pub spool: Option<PathBuf>,
}

/// `barrage send`: sends a file, or stdin as it comes, to the collector.
/// The first Ctrl-C or SIGTERM stops reading stdin (what is spooled is
/// still sent); the next one stops waiting for the collector. `Ok` holds
/// why the collector stopped us, if it did.
pub fn send(c: SendConfig) -> Result<Option<String>, LiveError> {
    if parse_address(&c.address).is_none() {
        return Err(LiveError::NotAnAddress(c.address));
    }
    token(&c.token, "send")?;
    let quit = Arc::new(AtomicBool::new(false));
    let (spool, keep, copier) = match &c.file {
        Some(f) if f != "-" && f != "stdin" => {
            File::open(f).map_err(|source| LiveError::File {
                what: f.clone(),
                source,
            })?;
            (PathBuf::from(f), true, None)
        }
        _ => {
            let (path, keep) = match &c.spool {
                Some(p) => (p.clone(), true),
                None => (crate::temp_spool(), false),
            };
            let out = File::create(&path).map_err(|source| LiveError::File {
                what: format!("-spool {}", path.display()),
                source,
            })?;
            let quit = quit.clone();
            let copier = std::thread::spawn(move || crate::spool(io::stdin().lock(), out, &quit));
            (path, keep, Some(copier))
        }
    };
    let stop = quit.clone();
    let live = Live::start(
        &c.address,
        &c.token,
        (spool, keep),
        None,
        "send",
        Box::new(move |heard| match heard {
            Heard::Stop => {
                stop.store(true, Ordering::SeqCst);
                Ok(())
            }
            Heard::Order(_) => Err("a stream sent from a file has no schedule to change".into()),
        }),
    )?;
    let signals = count_signals();
    if let Some(copier) = copier {
        while !copier.is_finished() && signals.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
        if copier.is_finished() {
            copier
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the copy failed")))
                .map_err(|source| LiveError::File {
                    what: "reading stdin".into(),
                    source,
                })?;
        } else {
            quit.store(true, Ordering::SeqCst);
            eprintln!("barrage send: interrupted: sending what was read (again to stop waiting)");
        }
    }
    let stopped = live.stopped();
    let seen = signals.load(Ordering::SeqCst);
    live.finish(&|| signals.load(Ordering::SeqCst) > seen)?;
    Ok(stopped)
}

/// Ctrl-C and SIGTERM from now on, counted (by a thread of their own).
pub fn count_signals() -> Arc<AtomicUsize> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let count = Arc::new(AtomicUsize::new(0));
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return count;
    };
    let counted = count.clone();
    let _ = std::thread::Builder::new()
        .name("barrage-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_required_and_plain() {
        // The flag wins over the environment, which a test cannot clear
        // safely: only the flag's cases are asserted.
        assert_eq!(token(&Some("t0k".into()), "send").unwrap(), "t0k");
        let e = token(&Some("a\nb".into()), "send").unwrap_err();
        assert!(matches!(e, LiveError::BadToken));
        assert_eq!(e.blame(), Blame::Usage);
    }

    #[test]
    fn only_a_collectors_address_gets_a_spool() {
        assert!(spool_for("r.bin", &None).unwrap().is_none());
        let mine = PathBuf::from("kept.bin");
        let (path, keep) = spool_for("tcp://127.0.0.1:9", &Some(mine.clone()))
            .unwrap()
            .unwrap();
        assert_eq!((path, keep), (mine, true));
        let e = spool_for("tcp://nohost", &None).unwrap_err();
        assert!(e.to_string().starts_with("-output "), "{e}");
        assert_eq!(e.blame(), Blame::Usage);
    }

    #[test]
    fn a_refusal_is_bad_input_and_giving_up_a_stop() {
        let refused = LiveError::from(UplinkError::Refused {
            addr: "h:1".into(),
            why: "bad token".into(),
        });
        assert_eq!(refused.blame(), Blame::Usage);
        let gave_up = LiveError::from(UplinkError::GaveUp {
            addr: "h:1".into(),
            spool: "s.bin".into(),
        });
        assert_eq!(gave_up.blame(), Blame::Interrupted);
        assert!(gave_up.to_string().contains("s.bin"));
    }
}
