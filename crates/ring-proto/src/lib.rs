//! Issue 67's prototypes: the open-model (and closed-model) HTTP/1.1
//! exchange on two completion-based runtimes, monoio and compio, each
//! parking in `io_uring_enter`, measured by `scripts/bench` beside
//! barrage, wrk2 and the floors (`crates/testkit/examples/uring_floor.rs`).
//!
//! What both binaries share lives here: the arguments, the answer's
//! framing (httparse, as barrage's engine reads a head), the schedule
//! (`floor.rs`'s: request n due at n/rate, wake-ups at most one a 300 µs
//! tick) and the one JSON line both floors print. What differs is the
//! runtime under the exchange: a task per request, a pool of keep-alive
//! connections, a 30 s timeout per request on the runtime's timer, as
//! barrage's own workers do on tokio.
//!
//! ```text
//! ring_monoio HOST:PORT PATH RATE SECONDS [CONNS]
//! ring_compio HOST:PORT PATH RATE SECONDS [CONNS]
//! ```
//!
//! A rate of 0 is the closed model: CONNS connections (50 unless given),
//! each sending again as soon as its answer is whole.

use std::time::{Duration, Instant};

/// barrage's tick (`scheduler::TICK`): wake-ups at most one a tick;
/// `PROTO_TICK_US` sets another, to compare the runtimes on one pattern of
/// wake-ups (monoio's timer rounds sleeps up to whole milliseconds).
pub fn tick() -> Duration {
    let us = std::env::var("PROTO_TICK_US")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    Duration::from_micros(us)
}

/// Each request's timeout, on the runtime's timer, as barrage's `-timeout`.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// A connection's first read buffer (grown when an answer is longer).
pub const BUF: usize = 4 << 10;

/// How to call the binary `name`.
pub fn usage(name: &str) -> String {
    format!("usage: {name} HOST:PORT PATH RATE SECONDS [CONNS]")
}

/// What the command line asked for.
pub struct Args {
    pub addr: String,
    pub rate: f64,
    pub duration: Duration,
    pub conns: usize,
    /// The request's bytes, made once.
    pub request: &'static [u8],
}

impl Args {
    /// Parses `HOST:PORT PATH RATE SECONDS [CONNS]` (`None`: see [`usage`]).
    pub fn parse() -> Option<Args> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let (addr, path, rate, secs, conns) = match args.as_slice() {
            [a, p, r, s] => (a, p, r, s, "50"),
            [a, p, r, s, c] => (a, p, r, s, c.as_str()),
            _ => return None,
        };
        let rate: f64 = rate.parse().ok()?;
        let secs: f64 = secs.parse().ok()?;
        let conns: usize = conns.parse().ok()?;
        if rate < 0.0 || secs <= 0.0 || conns == 0 {
            return None;
        }
        let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes();
        Some(Args {
            addr: addr.clone(),
            rate,
            duration: Duration::from_secs_f64(secs),
            conns,
            request: Box::leak(request.into_boxed_slice()),
        })
    }

    /// The open model's request count.
    pub fn total(&self) -> u64 {
        (self.duration.as_secs_f64() * self.rate).round() as u64
    }

    /// When request `n` is due after `start`.
    pub fn due(&self, start: Instant, n: u64) -> Instant {
        start + Duration::from_secs_f64(n as f64 / self.rate)
    }
}

/// Whether `got` holds a whole answer: `Some(2xx)` once it does.
/// `Err` for bytes that are no HTTP/1.1 answer.
pub fn answer(got: &[u8]) -> Result<Option<bool>, httparse::Error> {
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut res = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(head) = res.parse(got)? else {
        return Ok(None);
    };
    let length = res
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| {
            std::str::from_utf8(h.value)
                .ok()?
                .trim()
                .parse::<usize>()
                .ok()
        })
        .unwrap_or(0);
    let good = res.code.is_some_and(|c| (200..300).contains(&c));
    Ok((got.len() >= head + length).then_some(good))
}

/// What a run found: every request's outcome and latency.
#[derive(Default)]
pub struct Tally {
    pub sent: u64,
    pub ok: u64,
    pub errors: u64,
    pub latencies: Vec<Duration>,
    /// Lag: how late each request went out after it was due.
    pub lags: Vec<Duration>,
}

impl Tally {
    /// One request's end: its latency from when it went out.
    pub fn done(&mut self, ok: bool, latency: Duration, lag: Duration) {
        self.ok += u64::from(ok);
        self.errors += u64::from(!ok);
        self.latencies.push(latency);
        self.lags.push(lag);
    }

    /// The floors' JSON line, with errors and lag p99 beside.
    pub fn print(mut self) {
        fn pct(v: &mut [Duration], p: f64) -> f64 {
            v.sort_unstable();
            v.get(((v.len() as f64 * p) as usize).min(v.len().saturating_sub(1)))
                .map_or(0.0, |d| d.as_secs_f64() * 1e3)
        }
        let (p50, p99) = (
            pct(&mut self.latencies, 0.50),
            pct(&mut self.latencies, 0.99),
        );
        let lag99 = pct(&mut self.lags, 0.99);
        println!(
            "{{\"sent\":{},\"ok\":{},\"errors\":{},\"p50_ms\":{p50:.4},\"p99_ms\":{p99:.4},\"lag_p99_ms\":{lag99:.4}}}",
            self.sent, self.ok, self.errors
        );
    }
}
