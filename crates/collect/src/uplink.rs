//! The attacker's end: a spool file, written by whoever makes the stream,
//! sent to the collector as it grows, and resent from where the collector
//! stands after a drop.
//!
//! The spool holds everything, so a drop loses nothing: the stream keeps
//! going into the file while the uplink reconnects with backoff, and the
//! collector's `ok BYTES` says where to resume. Only whole frames are
//! sent ([`crate::wire::whole`]), so the end marker never lands inside a
//! frame, even when the file ends in a torn one.

use std::{
    fs::File,
    io::{self, Read, Seek, SeekFrom, Write},
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use rustls::ClientConfig;

use crate::{
    link::{connect, is_timeout, Link},
    wire::{new_origin, now_ns, whole, Hello, Lines, Reply, END},
};

/// How often an idle uplink looks for new bytes and for the collector's
/// word.
const POLL: Duration = Duration::from_millis(10);

/// The longest wait between reconnects.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// How long a write may wait on a collector that takes nothing (its own
/// output blocked, or gone quiet) before the connection counts as lost.
const WRITE_WAIT: Duration = Duration::from_secs(10);

/// How long the collector has to confirm the stream's end (`done BYTES`)
/// once it was sent.
const DONE_WAIT: Duration = Duration::from_secs(30);

/// Where and how to send.
pub struct UplinkConfig {
    /// `host:port`.
    pub addr: String,
    /// TLS, when the address was `tls://`.
    pub tls: Option<Arc<ClientConfig>>,
    /// The shared token.
    pub token: String,
    /// `-shard i/n`, told to the collector.
    pub shard: Option<(u64, u64)>,
    /// Who is sending, for the collector's messages.
    pub label: String,
    /// The file the stream is written to.
    pub spool: PathBuf,
    /// How long to keep reconnecting once the stream is complete.
    pub patience: Duration,
}

/// Why the uplink failed.
#[derive(Debug, thiserror::Error)]
pub enum UplinkError {
    /// The collector said no (a wrong token, most often): bad input.
    #[error("the collector at {addr} refused this stream: {why}")]
    Refused {
        /// `host:port`.
        addr: String,
        /// What it said.
        why: String,
    },
    /// The collector could not be reached, or the spool not read.
    #[error("{0}")]
    Io(String),
    /// The collector's TLS did not verify (its certificate, `BARRAGE_CA`).
    #[error("{0}")]
    Tls(String),
    /// Told to stop waiting (a signal) before the collector held it all.
    #[error("stopped waiting for the collector at {addr}; the whole stream is in {}", spool.display())]
    GaveUp {
        /// `host:port`.
        addr: String,
        /// The spool, kept.
        spool: PathBuf,
    },
}

/// The uplink thread's two flags: the spool is complete; stop at once.
#[derive(Clone, Copy)]
struct Flags<'a> {
    done: &'a AtomicBool,
    abort: &'a AtomicBool,
}

/// What the collector said besides its replies to the stream.
pub enum Told<'a> {
    /// Stop, with the collector's reason.
    Stop(&'a str),
    /// A live control order: its schedule time (unix ns) and words.
    Control(i64, &'a str),
}

/// Called with what the collector says: stop, or a control order.
pub type OnStop = Box<dyn FnMut(Told<'_>) + Send>;

/// A running uplink: [`Uplink::finish`] once the spool is complete.
pub struct Uplink {
    done: Arc<AtomicBool>,
    abort: Arc<AtomicBool>,
    spool: PathBuf,
    addr: String,
    thread: JoinHandle<Result<u64, UplinkError>>,
}

impl Uplink {
    /// Connects and says hello before anything else happens (a refused
    /// token or an unreachable collector is an error now, not after the
    /// attack), then sends the spool as it grows, from a thread.
    pub fn start(config: UplinkConfig, on_stop: OnStop) -> Result<Uplink, UplinkError> {
        let origin = new_origin();
        let file = File::open(&config.spool)
            .map_err(|e| UplinkError::Io(format!("spool {}: {e}", config.spool.display())))?;
        let (session, from) = Session::open(&config, &origin)?;
        let done = Arc::new(AtomicBool::new(false));
        let abort = Arc::new(AtomicBool::new(false));
        let (spool, addr) = (config.spool.clone(), config.addr.clone());
        let thread = {
            let (done, abort) = (done.clone(), abort.clone());
            std::thread::Builder::new()
                .name("barrage-uplink".into())
                .spawn(move || {
                    let flags = Flags {
                        done: &done,
                        abort: &abort,
                    };
                    run(config, origin, file, session, from, flags, on_stop)
                })
                .map_err(|e| UplinkError::Io(e.to_string()))?
        };
        Ok(Uplink {
            done,
            abort,
            spool,
            addr,
            thread,
        })
    }

    /// The spool is complete: sends the rest and the end, and waits for
    /// the collector to hold it all. Returns the bytes it holds. Every
    /// wait inside is bounded (a write the collector does not take for
    /// 10 s is a lost connection, a `done` not said in 30 s a failure,
    /// reconnecting ends after the config's patience); `give_up`, asked
    /// every 20 ms, ends the wait at once (a signal), the spool kept.
    pub fn finish(self, give_up: &dyn Fn() -> bool) -> Result<u64, UplinkError> {
        self.done.store(true, Ordering::SeqCst);
        while !self.thread.is_finished() {
            if give_up() {
                self.abort.store(true, Ordering::SeqCst);
                return Err(UplinkError::GaveUp {
                    addr: self.addr,
                    spool: self.spool,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.thread
            .join()
            .unwrap_or_else(|_| Err(UplinkError::Io("the uplink thread failed".into())))
    }
}

/// One connection, said hello on.
struct Session {
    link: Link,
    lines: Lines,
    replies: std::collections::VecDeque<Reply>,
}

impl Session {
    /// Connects, says hello, reads `ok BYTES`.
    fn open(config: &UplinkConfig, origin: &str) -> Result<(Session, u64), UplinkError> {
        let host = config
            .addr
            .rsplit_once(':')
            .map_or(&*config.addr, |(h, _)| h);
        // A TLS failure in Go's words, as the attack's own requests say
        // it (not rustls's Debug text), and no "is it listening?" hint.
        let io = |e: io::Error| {
            if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) {
                UplinkError::Tls(format!(
                    "{}: {}",
                    config.addr,
                    barrage_client::tls_failure(&e, host.trim_matches(['[', ']']))
                ))
            } else {
                UplinkError::Io(format!("{}: {e}", config.addr))
            }
        };
        let link =
            connect(&config.addr, config.tls.as_ref(), Duration::from_secs(5)).map_err(io)?;
        let mut s = Session {
            link,
            lines: Lines::default(),
            replies: Default::default(),
        };
        let hello = Hello {
            origin: origin.to_string(),
            shard: config.shard,
            label: config.label.clone(),
            clock: now_ns(),
            token: config.token.clone(),
        };
        s.link
            .tcp()
            .set_write_timeout(Some(WRITE_WAIT))
            .map_err(io)?;
        s.link.write_all(&hello.encode()).map_err(io)?;
        s.link.flush().map_err(io)?;
        s.link
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(io)?;
        match s.next().map_err(io)? {
            Reply::Ok(from) => Ok((s, from)),
            Reply::Refused(why) => Err(UplinkError::Refused {
                addr: config.addr.clone(),
                why,
            }),
            other => Err(UplinkError::Io(format!(
                "{}: unexpected {other:?}",
                config.addr
            ))),
        }
    }

    /// The next reply, waiting as long as the read timeout.
    fn next(&mut self) -> io::Result<Reply> {
        loop {
            if let Some(r) = self.replies.pop_front() {
                return Ok(r);
            }
            if !self.read_some()? {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer"));
            }
        }
    }

    /// Reads what has come; false when nothing came within the timeout.
    fn read_some(&mut self) -> io::Result<bool> {
        let mut buf = [0u8; 512];
        match self.link.read(&mut buf) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the collector closed the connection",
            )),
            Ok(n) => {
                for line in self.lines.push(&buf[..n]) {
                    match Reply::parse(&line) {
                        Some(r) => self.replies.push_back(r),
                        None => return Err(io::Error::other(format!("unexpected {line:?}"))),
                    }
                }
                Ok(true)
            }
            Err(e) if is_timeout(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// The thread: sessions one after another until the collector holds the
/// whole spool.
fn run(
    config: UplinkConfig,
    origin: String,
    mut file: File,
    mut session: Session,
    mut from: u64,
    flags: Flags,
    mut on_stop: OnStop,
) -> Result<u64, UplinkError> {
    let done = flags.done;
    let mut stops = Stops::default();
    let mut done_at: Option<Instant> = None;
    loop {
        let err = match pump(
            &mut session,
            &mut file,
            from,
            flags,
            &mut stops,
            &mut on_stop,
        ) {
            Ok(held) => return Ok(held),
            Err(Fault::Aborted) => {
                session.link.close();
                return Err(UplinkError::Io("stopped".into()));
            }
            Err(Fault::Unconfirmed(why)) => {
                session.link.close();
                return Err(UplinkError::Io(format!(
                    "the collector at {} {why}; the whole stream is in {}",
                    config.addr,
                    config.spool.display()
                )));
            }
            Err(Fault::Spool(why)) => {
                session.link.close();
                return Err(UplinkError::Io(format!(
                    "{}: {why}",
                    config.spool.display()
                )));
            }
            Err(Fault::Link(e)) => e,
        };
        session.link.close();
        eprintln!(
            "barrage: lost the collector at {} ({err}); the stream goes on into {} and is resent on reconnecting",
            config.addr,
            config.spool.display()
        );
        let mut backoff = Duration::from_millis(100);
        loop {
            if flags.abort.load(Ordering::SeqCst) {
                return Err(UplinkError::Io("stopped".into()));
            }
            if done.load(Ordering::SeqCst) {
                let at = *done_at.get_or_insert_with(Instant::now);
                if at.elapsed() > config.patience {
                    return Err(UplinkError::Io(format!(
                        "the collector at {} could not be reached for {:?} after the attack ended; the whole stream is in {}",
                        config.addr,
                        config.patience,
                        config.spool.display()
                    )));
                }
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
            match Session::open(&config, &origin) {
                Ok((s, at)) => {
                    eprintln!(
                        "barrage: reconnected to the collector at {}; resending from byte {at}",
                        config.addr
                    );
                    (session, from) = (s, at);
                    break;
                }
                Err(e @ (UplinkError::Refused { .. } | UplinkError::Tls(_))) => return Err(e),
                Err(_) => {}
            }
        }
    }
}

/// The stop reason passed on: the first only (a collector that said a
/// new one every millisecond got a stderr line each, kept in a growing
/// list; the attack is stopping after the first anyway).
#[derive(Default)]
struct Stops(Option<String>);

impl Stops {
    fn take(&mut self, session: &mut Session, on_stop: &mut OnStop) -> Option<u64> {
        let mut held = None;
        while let Some(r) = session.replies.pop_front() {
            match r {
                Reply::Stop(why) if self.0.is_none() => {
                    on_stop(Told::Stop(&why));
                    self.0 = Some(why);
                }
                Reply::Control(at, what) => on_stop(Told::Control(at, &what)),
                Reply::Done(n) => held = Some(n),
                _ => {}
            }
        }
        held
    }
}

/// Why a session ended early.
enum Fault {
    /// The connection's: reconnect.
    Link(io::Error),
    /// The spool's (unreadable, not a result stream): give up.
    Spool(String),
    /// The collector took the whole stream but did not confirm it.
    Unconfirmed(String),
    /// Told to stop.
    Aborted,
}

impl From<io::Error> for Fault {
    fn from(e: io::Error) -> Self {
        Fault::Link(e)
    }
}

/// Sends the spool from byte `from` on this session, whole frames only,
/// until it is complete and held.
fn pump(
    s: &mut Session,
    file: &mut File,
    from: u64,
    flags: Flags,
    stops: &mut Stops,
    on_stop: &mut OnStop,
) -> Result<u64, Fault> {
    let spool = |e: io::Error| Fault::Spool(e.to_string());
    // The collector's `ok` must name a place this spool has: a unit's
    // start within it (a reply beyond it let `done` make a run that sent
    // nothing exit 0).
    if !on_boundary(file, from).map_err(spool)? {
        return Err(Fault::Link(io::Error::other(format!(
            "the collector's ok {from} is no frame boundary of the spool"
        ))));
    }
    file.seek(SeekFrom::Start(from)).map_err(spool)?;
    s.link.set_read_timeout(Some(POLL))?;
    let mut pending: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut at = from;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if flags.abort.load(Ordering::SeqCst) {
            return Err(Fault::Aborted);
        }
        stops.take(s, on_stop);
        // Read `done` before the file: once it is set, what the file
        // holds is all there will be.
        let complete = flags.done.load(Ordering::SeqCst);
        let n = file.read(&mut buf).map_err(spool)?;
        if n > 0 {
            pending.extend_from_slice(&buf[..n]);
            let (units, _) = whole(&pending, at == 0).map_err(|e| Fault::Spool(e.to_string()))?;
            if units > 0 {
                send(&mut s.link, &pending[..units])?;
                pending.drain(..units);
                at += units as u64;
            }
            continue;
        }
        if complete {
            if !pending.is_empty() {
                eprintln!(
                    "barrage: the stream ends in a torn frame ({} bytes at byte {at}); the collector gets every whole one",
                    pending.len()
                );
            }
            send(&mut s.link, &END)?;
            s.link.flush()?;
            s.link.set_read_timeout(Some(POLL))?;
            let asked = Instant::now();
            loop {
                if flags.abort.load(Ordering::SeqCst) {
                    return Err(Fault::Aborted);
                }
                if !s.read_some()? && asked.elapsed() >= DONE_WAIT {
                    return Err(Fault::Unconfirmed(format!(
                        "took the stream's end but did not confirm it within {}s",
                        DONE_WAIT.as_secs()
                    )));
                }
                if let Some(held) = stops.take(s, on_stop) {
                    // `done N` must name the whole spool sent: a number
                    // off it (beyond the spool, or short of it) is no
                    // confirmation of this stream.
                    if held != at {
                        let e = format!("the collector says it holds {held} bytes of {at}");
                        return Err(Fault::Link(io::Error::other(e)));
                    }
                    return Ok(held);
                }
            }
        }
        s.link.flush()?;
        s.read_some()?;
    }
}

/// Whether `at` is 0 or the end of a whole unit of the spool (its
/// header, a frame, a joined stream's header), walking the frames'
/// lengths from the start.
fn on_boundary(file: &mut File, at: u64) -> io::Result<bool> {
    if at == 0 {
        return Ok(true);
    }
    let len = file.metadata()?.len();
    if at > len || at < 6 {
        return Ok(false);
    }
    let mut pos = 6u64;
    let mut word = [0u8; 4];
    while pos < at {
        file.seek(SeekFrom::Start(pos))?;
        if file.read_exact(&mut word).is_err() {
            return Ok(false);
        }
        pos += if word == barrage_stream::MAGIC {
            6
        } else {
            8 + u64::from(u32::from_le_bytes(word))
        };
    }
    Ok(pos == at)
}

/// Writes `bytes` whole; a collector that takes nothing for
/// [`WRITE_WAIT`] is said so, not as `os error 11`.
fn send(link: &mut Link, bytes: &[u8]) -> io::Result<()> {
    link.write_all(bytes).map_err(|e| {
        if is_timeout(&e) {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "it took nothing for {}s: is its output blocked?",
                    WRITE_WAIT.as_secs()
                ),
            )
        } else {
            e
        }
    })
}

/// A fresh spool path in the temporary directory, made empty and
/// readable by its owner only (results may hold bodies and headers);
/// opening it again with `File::create` keeps that mode.
pub fn temp_spool() -> PathBuf {
    use std::os::unix::fs::OpenOptionsExt;
    loop {
        let path = std::env::temp_dir().join(format!(
            "barrage-spool-{}-{:08x}.bin",
            std::process::id(),
            fastrand::u32(..)
        ));
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        match made {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            _ => return path,
        }
    }
}

/// `input` into the spool `out`, a read at a time, until its end or
/// `quit` (the collector's stop: the writer upstream then meets a closed
/// pipe once this process ends).
pub fn spool(mut input: impl Read, mut out: File, quit: &AtomicBool) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 16];
    while !quit.load(Ordering::SeqCst) {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.write_all(&buf[..n])?;
    }
    Ok(())
}
