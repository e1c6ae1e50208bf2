//! `barrage collect`: the listener, and the merge that writes one stream.
//!
//! Records are held for up to one `-interval` and written in the order
//! their answers completed (timestamp + latency), as `attack` writes its
//! own: at every tick, whatever no live attacker can still precede is
//! written, and whatever has waited an interval is written anyway (an
//! attacker that fell silent, or dropped and has not resumed, holds
//! nobody back). Every record also feeds `-fail-on` on arrival, checked
//! every 100 ms, and the shards check, read every 5 s.

use std::{
    collections::HashSet,
    io::{self, Write},
    net::{SocketAddr, TcpListener},
    sync::{
        atomic::{AtomicUsize, Ordering},
        mpsc::{sync_channel, Receiver, RecvTimeoutError},
        Arc,
    },
    time::{Duration, Instant},
};

use barrage_metrics::{Distribution, Metrics, Shards, Threshold};
use barrage_model::Lacks;
use barrage_stream::{Encoder, Hit};
use rustls::ServerConfig;

mod roll;

use crate::{
    origins::{accept_all, Event, Shared},
    wire::{now_ns, Hello},
};

/// How often `-fail-on` is checked.
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// How often the shards check is read.
const SHARDS_EVERY: Duration = Duration::from_secs(5);

/// After the first Ctrl-C or SIGTERM, how long the attackers have to
/// finish their requests in flight (the attack's default `-timeout` is
/// 30 s) and send them, before the collection ends as on a second.
pub const STOP_WAIT: Duration = Duration::from_secs(40);

/// The collector's settings.
pub struct CollectConfig {
    /// The token every sender must give.
    pub token: String,
    /// TLS on the port.
    pub tls: Option<Arc<ServerConfig>>,
    /// How long a record may wait for a slower attacker's earlier ones.
    pub interval: Duration,
    /// How many streams to wait for (else the shard count, else all
    /// that connected).
    pub attackers: Option<usize>,
    /// How long after the start the awaited streams may take to join:
    /// past it the collection stops waiting for the missing (and ends at
    /// once when nobody joined), and fails naming them.
    pub join_timeout: Option<Duration>,
    /// How long an attacker's connection may stay gone before it counts
    /// as lost.
    pub silence: Option<Duration>,
    /// Conditions that stop every attacker.
    pub fail_on: Vec<Threshold>,
    /// Records before `-fail-on` is judged live.
    pub min_requests: u64,
    /// The shards check's tolerance.
    pub max_skew: Duration,
}

/// How the collection ended.
#[derive(Default)]
pub struct Summary {
    /// Records written.
    pub records: u64,
    /// Streams that joined.
    pub attackers: usize,
    /// `-fail-on` conditions that held.
    pub failed: Vec<String>,
    /// Streams that did not end (a second Ctrl-C, a lost attacker) and
    /// attackers that never joined: one line each.
    pub unfinished: Vec<String>,
    /// From a record's end to its place in the merged stream, ns.
    pub added: Distribution,
}

impl std::fmt::Display for Summary {
    /// The collector's last line: what it merged and what merging added.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |ns: u64| {
            barrage_model::duration::format(barrage_model::duration::round_for_report(ns as i64))
        };
        write!(
            f,
            "{} records from {} attackers; added latency p50 {}, p99 {}, max {} (from a record's end to its place in the merged stream)",
            self.records,
            self.attackers,
            show(self.added.quantile(0.5)),
            show(self.added.quantile(0.99)),
            show(self.added.max())
        )
    }
}

/// A bound collector.
pub struct Collector {
    listener: TcpListener,
    config: CollectConfig,
    orders: crate::Orders,
}

/// One attacker, as the merge sees it.
struct Attacker {
    hello: Hello,
    connected: bool,
    ended: bool,
    /// When its connection went, while it is gone.
    left: Option<Instant>,
    /// Gone past `-silence`: no longer waited for.
    lost: bool,
    /// Its stream broke (an attack that failed says why): ended once its
    /// connection is (so that it hears `done` before the collector
    /// exits).
    broken: bool,
    /// Its connection ended with the stream (`done` said).
    finished: bool,
    /// The latest end (timestamp + latency) it sent.
    frontier: i64,
    last: Instant,
    records: u64,
}

/// A record waiting for its place.
struct Held {
    key: i64,
    came: Instant,
    from: usize,
    hit: Box<Hit>,
}

impl Collector {
    /// Binds `addr` (before anything else: a taken port is an error now).
    pub fn bind(addr: SocketAddr, config: CollectConfig) -> io::Result<Collector> {
        Ok(Collector {
            listener: TcpListener::bind(addr)?,
            config,
            orders: Default::default(),
        })
    }

    /// Live control's orders, passed to every attacker (`-control`).
    pub fn orders(&self) -> crate::Orders {
        self.orders.clone()
    }

    /// Where it listens.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Collects until every stream ended (or a second signal), writing
    /// the merged stream to `out`. `signals` counts Ctrl-Cs: the first
    /// stops the attackers, the second ends the collection at once.
    pub fn run<W: Write>(self, out: &mut Encoder<W>, signals: &AtomicUsize) -> io::Result<Summary> {
        let (tx, rx) = sync_channel(1 << 16);
        let mut shared = Shared::new(self.config.token.clone(), self.config.tls.clone(), tx);
        shared.orders = self.orders;
        let shared = Arc::new(shared);
        {
            let shared = shared.clone();
            let listener = self.listener;
            std::thread::Builder::new()
                .name("barrage-collect-accept".into())
                .spawn(move || accept_all(&listener, &shared))?;
        }
        Merge::new(&self.config, &shared).run(rx, out, signals)
    }
}

/// The merge's state.
struct Merge<'a> {
    config: &'a CollectConfig,
    shared: &'a Shared,
    attackers: Vec<Attacker>,
    held: Vec<Held>,
    metrics: Metrics,
    shards: Shards,
    warned: HashSet<String>,
    metas: Vec<(String, String)>,
    summary: Summary,
    first_join: Option<Instant>,
}

impl<'a> Merge<'a> {
    fn new(config: &'a CollectConfig, shared: &'a Shared) -> Self {
        Merge {
            config,
            shared,
            attackers: Vec::new(),
            held: Vec::new(),
            metrics: Metrics::new(),
            shards: Shards::new(),
            warned: HashSet::new(),
            metas: Vec::new(),
            summary: Summary {
                added: Distribution::coarse(),
                ..Summary::default()
            },
            first_join: None,
        }
    }

    fn run<W: Write>(
        mut self,
        rx: Receiver<Event>,
        out: &mut Encoder<W>,
        signals: &AtomicUsize,
    ) -> io::Result<Summary> {
        let start = Instant::now();
        let (mut tick, mut check, mut shards_at) = (
            start + self.config.interval,
            start + CHECK_EVERY,
            start + SHARDS_EVERY,
        );
        let mut interrupted = 0;
        let mut stop_by: Option<Instant> = None;
        let mut gave_up_joining = false;
        loop {
            let due = tick.min(check);
            match rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(event) => self.event(event, out)?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            let now = Instant::now();
            let signalled = signals.load(Ordering::SeqCst);
            if signalled > interrupted {
                interrupted = signalled;
                if interrupted == 1 && self.any_live() {
                    eprintln!(
                        "barrage collect: interrupted: stopping the attackers (again to end now; at most {}s more)",
                        STOP_WAIT.as_secs()
                    );
                    self.stop("the collector was interrupted");
                    stop_by = Some(now + STOP_WAIT);
                } else {
                    self.release(i64::MAX, out)?;
                    self.unfinished();
                    break;
                }
            }
            if stop_by.is_some_and(|t| now >= t) {
                eprintln!(
                    "barrage collect: the attackers did not end within {}s of the stop",
                    STOP_WAIT.as_secs()
                );
                self.release(i64::MAX, out)?;
                self.unfinished();
                break;
            }
            if !gave_up_joining
                && self
                    .config
                    .join_timeout
                    .is_some_and(|t| now.duration_since(start) >= t)
                && self.attackers.len() < self.awaited()
            {
                gave_up_joining = true;
                let t = self.config.join_timeout.unwrap_or_default();
                self.summary.unfinished.push(self.missing(t));
                eprintln!(
                    "barrage collect: {}",
                    self.summary.unfinished.last().expect("a line")
                );
                if self.attackers.is_empty() {
                    break;
                }
            }
            self.lose_silent(now);
            if now >= check {
                check = now + CHECK_EVERY;
                if self.metrics.requests() >= self.config.min_requests {
                    self.check_fail_on();
                }
            }
            if now >= tick {
                tick = now + self.config.interval;
                self.release(self.watermark(now), out)?;
                out.flush()?;
            }
            if now >= shards_at {
                shards_at = now + SHARDS_EVERY;
                self.check_shards(false);
            }
            if self.complete(gave_up_joining) {
                self.release(i64::MAX, out)?;
                break;
            }
        }
        out.flush()?;
        self.check_fail_on();
        self.check_shards(true);
        self.summary.attackers = self.attackers.len();
        Ok(self.summary)
    }

    fn event<W: Write>(&mut self, event: Event, out: &mut Encoder<W>) -> io::Result<()> {
        match event {
            Event::Hit(from, hit) => {
                let key = hit
                    .timestamp
                    .saturating_add(hit.latency.min(i64::MAX as u64) as i64);
                let a = &mut self.attackers[from];
                a.frontier = a.frontier.max(key);
                a.last = Instant::now();
                a.records += 1;
                if !self.config.fail_on.is_empty() {
                    self.metrics.add(&hit);
                }
                self.held.push(Held {
                    key,
                    came: a.last,
                    from,
                    hit,
                });
            }
            Event::Connected {
                index,
                hello,
                peer,
                from,
                heard,
            } => {
                let name = who(&hello);
                if index == self.attackers.len() {
                    let skew = hello.clock - heard;
                    eprintln!("barrage collect: {name} joined from {peer}");
                    if skew.unsigned_abs() > self.config.max_skew.as_nanos() as u64 {
                        let way = if skew > 0 { "ahead of" } else { "behind" };
                        eprintln!(
                            "barrage collect: warning: {name}'s clock is {} {way} the collector's (at least, less the network's delay): shards started with -start-at run that far apart",
                            show(skew.unsigned_abs())
                        );
                    }
                    self.first_join.get_or_insert_with(Instant::now);
                    self.attackers.push(Attacker {
                        hello,
                        connected: true,
                        ended: false,
                        left: None,
                        lost: false,
                        broken: false,
                        finished: false,
                        frontier: i64::MIN,
                        last: Instant::now(),
                        records: 0,
                    });
                } else {
                    eprintln!(
                        "barrage collect: {name} is back from {peer}, resending from byte {from}"
                    );
                    let a = &mut self.attackers[index];
                    a.connected = true;
                    a.left = None;
                    if a.lost {
                        // Back after it was given up on: its stream is
                        // taken again, and waited for.
                        a.lost = false;
                        a.ended = false;
                        let line = format!("{name} ");
                        self.summary.unfinished.retain(|l| !l.starts_with(&line));
                    }
                }
                if let Some(why) = self.shared.stop.lock().expect("stop").clone() {
                    eprintln!("barrage collect: {name} told to stop: {why}");
                }
            }
            Event::Meta(k, v) => {
                if !self.metas.contains(&(k.clone(), v.clone())) {
                    out.meta(&k, &v)?;
                    self.metas.push((k, v));
                }
            }
            Event::Audit(index, mut sample) => {
                // Named by its attacker, so that each keeps its own.
                if sample.source.is_empty() {
                    if let Some(a) = self.attackers.get(index) {
                        sample.source = who(&a.hello);
                    }
                }
                out.audit(&sample)?;
            }
            Event::Sample(sample) => out.sample(&sample)?,
            Event::Marker(index, marker) => {
                // The live view: each attacker's change, as it made it.
                eprintln!(
                    "barrage collect: {}: {} from request {} at {} (by {})",
                    self.attackers
                        .get(index)
                        .map_or("?", |a| a.hello.label.as_str()),
                    marker.what,
                    marker.first,
                    barrage_model::time::format_rfc3339(marker.from),
                    marker.who,
                );
                out.marker(&marker)?
            }
            Event::Finished(index) => {
                let a = &mut self.attackers[index];
                a.finished = true;
                a.ended |= a.broken;
            }
            Event::Left(index, _) if self.attackers[index].broken => {
                let a = &mut self.attackers[index];
                a.connected = false;
                a.ended = true;
            }
            Event::Left(index, why) => {
                self.attackers[index].connected = false;
                self.attackers[index].left = Some(Instant::now());
                eprintln!(
                    "barrage collect: {} dropped ({why}); waiting for it to resend from its spool",
                    who(&self.attackers[index].hello)
                );
            }
            Event::Ended(index) => {
                let a = &mut self.attackers[index];
                a.ended = true;
                eprintln!(
                    "barrage collect: {} done: {} records",
                    who(&a.hello),
                    a.records
                );
            }
            Event::Broken(index, why) => {
                let a = &mut self.attackers[index];
                a.broken = true;
                // Already gone or done (the two threads race): nothing
                // more to wait for.
                a.ended |= !a.connected || a.finished;
                // An attack that failed (before its first request, or
                // on the way) ends its stream saying why: the collection
                // fails with that line, not exit 0 with fewer records.
                let line = format!(
                    "{}'s stream is broken ({why}): its {} records up to there are kept",
                    who(&a.hello),
                    a.records
                );
                eprintln!("barrage collect: {line}");
                self.summary.unfinished.push(line);
            }
            Event::Refused(peer, why) => {
                eprintln!("barrage collect: refused a connection from {peer}: {why}")
            }
        }
        Ok(())
    }

    /// The end no live attacker can still precede.
    fn watermark(&self, now: Instant) -> i64 {
        self.attackers
            .iter()
            .filter(|a| {
                a.connected && !a.ended && now.duration_since(a.last) < self.config.interval
            })
            .map(|a| a.frontier)
            .min()
            .unwrap_or(i64::MAX)
    }

    /// Writes every held record that ends by `mark`, or has waited an
    /// interval, in order of end.
    fn release<W: Write>(&mut self, mark: i64, out: &mut Encoder<W>) -> io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        self.held.sort_unstable_by_key(|h| h.key);
        let interval = self.config.interval;
        let aged = self
            .held
            .iter()
            .filter(|h| h.came.elapsed() >= interval)
            .map(|h| h.key)
            .max()
            .unwrap_or(i64::MIN);
        let cut = mark.max(aged);
        let n = self.held.partition_point(|h| h.key <= cut);
        let now = now_ns();
        for h in self.held.drain(..n) {
            out.write(&h.hit)?;
            self.shards.add(
                h.from,
                &who(&self.attackers[h.from].hello),
                &h.hit,
                Lacks::default(),
            );
            self.summary
                .added
                .record(now.saturating_sub(h.key).max(0) as u64);
            self.summary.records += 1;
        }
        Ok(())
    }

    fn check_fail_on(&mut self) {
        if !self.summary.failed.is_empty() {
            return;
        }
        let held: Vec<String> = self
            .config
            .fail_on
            .iter()
            .filter_map(|t| t.check(&self.metrics))
            .collect();
        if let Some(first) = held.first() {
            eprintln!(
                "barrage collect: -fail-on: {}: stopping every attacker",
                held.join(", ")
            );
            self.stop(&format!("-fail-on: {first}"));
            self.summary.failed = held;
        }
    }

    fn stop(&self, why: &str) {
        let mut stop = self.shared.stop.lock().expect("stop");
        if stop.is_none() {
            *stop = Some(why.to_string());
        }
    }

    /// Prints the shards check's new warnings (all of them at the end),
    /// and shards not yet joined 5 s after the first.
    fn check_shards(&mut self, end: bool) {
        let count = self
            .attackers
            .iter()
            .filter_map(|a| a.hello.shard)
            .map(|(_, n)| n)
            .max();
        if let (Some(n), Some(first)) = (count, self.first_join) {
            if end || first.elapsed() >= SHARDS_EVERY {
                let missing: Vec<String> = (0..n)
                    .filter(|i| {
                        !self
                            .attackers
                            .iter()
                            .any(|a| a.hello.shard.map(|s| s.0) == Some(*i))
                    })
                    .map(|i| format!("{i}/{n}"))
                    .take(16)
                    .collect();
                if !missing.is_empty() {
                    self.warn(
                        format!(
                            "shards {} of the schedule have not joined",
                            missing.join(", ")
                        ),
                        end,
                    );
                }
            }
        }
        if let Some(v) = self.shards.verdict(self.config.max_skew.as_nanos() as u64) {
            for w in v.warnings {
                if !w.contains("are not among the inputs") {
                    self.warn(w, end);
                }
            }
        }
    }

    /// A warning, once per kind (its words, numbers aside) unless `always`.
    fn warn(&mut self, line: String, always: bool) {
        let kind: String = line.chars().filter(|c| !c.is_ascii_digit()).collect();
        if self.warned.insert(kind) || always {
            eprintln!("barrage collect: warning: {line}");
        }
    }
}

/// An attacker as messages name it (its label's control characters
/// escaped).
fn who(h: &Hello) -> String {
    let label = barrage_model::words::printable(&h.label);
    match h.shard {
        Some((i, n)) => format!("shard {i}/{n} ({label})"),
        None => label.into_owned(),
    }
}

/// A duration as the report prints one.
fn show(ns: u64) -> String {
    use barrage_model::duration::{format, round_for_report};
    format(round_for_report(ns.min(i64::MAX as u64) as i64))
}
