//! The floor a paced HTTP/1.1 client can reach on this machine: the
//! benchmark runs it beside barrage so that CPU per request reads against
//! what the kernel alone costs here, measured in the same minute.
//!
//! No async runtime, no HTTP library, no record per request: one thread,
//! blocking keep-alive connections, `GET` requests written in one call
//! each and answers read up to their `Content-Length`. It keeps time as
//! barrage does (sleeping until each request is due at rates up to one per
//! 300 µs tick, waking once per tick above that and sending what fell
//! due), then reads the answers of what it sent before it sleeps again.
//!
//! ```text
//! floor HOST:PORT PATH RATE SECONDS
//! ```
//!
//! Prints one JSON line: `{"sent":N,"ok":N,"p50_ms":F,"p99_ms":F}`.
use std::{
    io::{self, Read, Write},
    net::TcpStream,
    process::ExitCode,
    thread,
    time::{Duration, Instant},
};

/// barrage's tick (`scheduler::TICK`).
const TICK: Duration = Duration::from_micros(300);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [addr, path, rate, secs] => rate
            .parse::<f64>()
            .ok()
            .zip(secs.parse::<f64>().ok())
            .filter(|(r, s)| *r > 0.0 && *s > 0.0)
            .map(|(r, s)| (addr.clone(), path.clone(), r, s)),
        _ => None,
    };
    let Some((addr, path, rate, secs)) = parsed else {
        eprintln!("usage: floor HOST:PORT PATH RATE SECONDS");
        return ExitCode::from(2);
    };
    match run(&addr, &path, rate, Duration::from_secs_f64(secs)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floor: {addr}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(addr: &str, path: &str, rate: f64, duration: Duration) -> io::Result<()> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes();
    let period = Duration::from_secs_f64(1.0 / rate);
    let total = (duration.as_secs_f64() * rate).round() as u64;
    let mut idle: Vec<Conn> = Vec::new();
    let mut busy: Vec<(Conn, Instant)> = Vec::new();
    let mut latencies: Vec<Duration> = Vec::with_capacity(total as usize);
    let (mut sent, mut ok) = (0u64, 0u64);
    let start = Instant::now();
    let mut wake = start;
    while sent < total {
        // Send everything due by now.
        let now = Instant::now();
        while sent < total && start + period.mul_f64(sent as f64) <= now {
            let mut conn = match idle.pop() {
                Some(c) => c,
                None => Conn::open(addr)?,
            };
            conn.stream.write_all(&request)?;
            busy.push((conn, Instant::now()));
            sent += 1;
        }
        for (mut conn, at) in busy.drain(..) {
            if conn.answer()? {
                ok += 1;
            }
            latencies.push(at.elapsed());
            idle.push(conn);
        }
        // Sleep until the next request is due, at least a tick after the
        // last wake-up.
        let next = start + period.mul_f64(sent as f64);
        wake = next.max(wake + TICK);
        if let Some(d) = wake.checked_duration_since(Instant::now()) {
            thread::sleep(d);
        }
    }
    latencies.sort_unstable();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{{\"sent\":{sent},\"ok\":{ok},\"p50_ms\":{:.4},\"p99_ms\":{:.4}}}",
        pct(0.50),
        pct(0.99)
    );
    Ok(())
}

/// A keep-alive connection and its read buffer.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn open(addr: &str) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(4096),
        })
    }

    /// Reads one answer (head and `Content-Length` body); whether it was
    /// a 2xx.
    fn answer(&mut self) -> io::Result<bool> {
        self.buf.clear();
        let mut chunk = [0u8; 4096];
        loop {
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed",
                ));
            }
            self.buf.extend_from_slice(&chunk[..n]);
            let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&self.buf[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if self.buf.len() >= end + 4 + length {
                return Ok(head.get(9..10) == Some("2"));
            }
        }
    }
}
