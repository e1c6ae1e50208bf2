//! The floor a paced HTTP/1.1 client can reach on this machine through
//! io_uring: the twin of `floor.rs` (the blocking floor), run beside it
//! and barrage by `scripts/bench`, so that CPU per request reads against
//! what the kernel alone costs on this path, measured in the same minute.
//!
//! No async runtime, no HTTP library, no record per request: one thread,
//! one ring, keep-alive connections. It keeps time as `floor.rs` does
//! (sleeping until each request is due, at most one wake-up per 300 µs
//! tick), and at each wake-up puts a send and a receive for every request
//! due into the ring, submitted by the `io_uring_enter` that waits for the
//! first completion; it then waits for completions as they come (a
//! receive that has not got the whole answer is put back), so that each
//! answer is stamped when it comes and every answer is in before it
//! sleeps again. Answers are read up to their `Content-Length`.
//!
//! With a rate of 0 it is the closed model's floor instead: CONNS
//! connections (50 unless given), each sending its next request as soon
//! as its answer is whole, every completion of a turn reaped by one
//! `io_uring_enter` that also submits the next sends and receives.
//!
//! ```text
//! uring_floor HOST:PORT PATH RATE SECONDS [CONNS]
//! ```
//!
//! Prints one JSON line: `{"sent":N,"ok":N,"p50_ms":F,"p99_ms":F}`; exit 1
//! naming why when io_uring cannot be set up here.
use std::{
    io,
    net::TcpStream,
    os::fd::AsRawFd,
    process::ExitCode,
    thread,
    time::{Duration, Instant},
};

use io_uring::{opcode, squeue, types, IoUring};

/// barrage's tick (`scheduler::TICK`), as `floor.rs` keeps it.
const TICK: Duration = Duration::from_micros(300);

/// A connection's read buffer: one answer fits.
const BUF: usize = 16 << 10;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (conns, args) = match args.as_slice() {
        [rest @ .., conns] if rest.len() == 4 => (conns.parse::<usize>().ok(), rest),
        rest => (Some(50), rest),
    };
    let parsed = match args {
        [addr, path, rate, secs] => rate
            .parse::<f64>()
            .ok()
            .zip(secs.parse::<f64>().ok())
            .zip(conns.filter(|&c| c > 0))
            .filter(|((r, s), _)| *r >= 0.0 && *s > 0.0)
            .map(|((r, s), c)| (addr.clone(), path.clone(), r, s, c)),
        _ => None,
    };
    let Some((addr, path, rate, secs, conns)) = parsed else {
        eprintln!("usage: uring_floor HOST:PORT PATH RATE SECONDS [CONNS]");
        return ExitCode::from(2);
    };
    let duration = Duration::from_secs_f64(secs);
    let ran = if rate == 0.0 {
        run_closed(&addr, &path, conns, duration)
    } else {
        run(&addr, &path, rate, duration)
    };
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("uring_floor: {addr}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A keep-alive connection, its buffer, and the answer it waits for.
struct Conn {
    stream: TcpStream,
    buf: Box<[u8]>,
    len: usize,
    sent_at: Instant,
}

impl Conn {
    fn open(addr: &str) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: vec![0; BUF].into_boxed_slice(),
            len: 0,
            sent_at: Instant::now(),
        })
    }

    /// The answer, if whole: whether it was a 2xx.
    fn answer(&self) -> Option<bool> {
        let got = &self.buf[..self.len];
        let end = got.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        (got.len() >= end + 4 + length).then(|| head.get(9..10) == Some("2"))
    }

    /// A receive into the rest of its buffer, tagged with `index`.
    fn recv(&mut self, index: usize) -> squeue::Entry {
        let rest = &mut self.buf[self.len..];
        opcode::Recv::new(
            types::Fd(self.stream.as_raw_fd()),
            rest.as_mut_ptr(),
            rest.len() as u32,
        )
        .build()
        .user_data((index as u64) << 1 | 1)
    }
}

/// Puts `entry` in the ring, submitting what is queued when it is full.
fn push(ring: &mut IoUring, entry: &squeue::Entry) -> io::Result<()> {
    loop {
        // SAFETY: the buffers an entry names (the request, a connection's
        // buffer) outlive its completion: the request lives for the whole
        // run, and a connection is neither dropped nor moved (its buffer
        // is boxed) while it has an operation in the ring.
        if unsafe { ring.submission().push(entry) }.is_ok() {
            return Ok(());
        }
        ring.submit()?;
    }
}

fn run(addr: &str, path: &str, rate: f64, duration: Duration) -> io::Result<()> {
    // One thread submits and reaps: completions' work runs when it
    // enters the kernel to wait, not by interrupting it (kernel 6.1+).
    let mut ring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(1024)?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes();
    let period = Duration::from_secs_f64(1.0 / rate);
    let total = (duration.as_secs_f64() * rate).round() as u64;
    let mut conns: Vec<Conn> = Vec::new();
    let mut idle: Vec<usize> = Vec::new();
    let mut latencies: Vec<Duration> = Vec::with_capacity(total as usize);
    // Requests waiting for their answers, and operations in the ring.
    let (mut sent, mut ok, mut busy, mut inflight) = (0u64, 0u64, 0usize, 0usize);
    let start = Instant::now();
    let mut wake = start;
    let ticks_only = std::env::var("URING_FLOOR_WAKE").is_ok_and(|v| v == "ticks");
    while sent < total {
        // A send and a receive for everything due by now.
        let now = Instant::now();
        while sent < total && start + period.mul_f64(sent as f64) <= now {
            let i = match idle.pop() {
                Some(i) => i,
                None => {
                    conns.push(Conn::open(addr)?);
                    conns.len() - 1
                }
            };
            ask(&mut ring, &mut conns[i], i, &request)?;
            inflight += 2;
            busy += 1;
            sent += 1;
        }
        // Every answer in before sleeping, as the blocking floor does: the
        // first enter submits the tick's operations, and each waits for
        // one completion at least, so that an answer is stamped when it
        // comes, as a client's must be. It waited for all of them at
        // once; against nginx at 20,000/s that cost the same here (10.6-
        // 11.3 us a request waiting for all, 10.7-12.5 one at a time,
        // three runs each in the same minutes; p50 0.109-0.118 ms and
        // 0.110-0.144): nginx on the same core answers a tick's requests
        // together, and a wait ends with all of them in.
        let next = start + period.mul_f64(sent as f64);
        wake = next.max(wake + TICK);
        if ticks_only {
            // URING_FLOOR_WAKE=ticks: no wake-up for an answer. One
            // io_uring_enter submits the tick's operations and sleeps to
            // the next tick (a timeout, never enough completions to end it
            // early), and the answers that came meanwhile are reaped then:
            // a wake-up a tick, what a client that takes its answers'
            // times from the kernel (SO_TIMESTAMPNS) could do. Latency
            // here is from the send to the reaping, not the answer.
            loop {
                let left = wake.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                let ts = types::Timespec::from(left);
                let args = types::SubmitArgs::new().timespec(&ts);
                match ring.submitter().submit_with_args(inflight + 1, &args) {
                    Ok(_) => {}
                    Err(e) if e.raw_os_error() == Some(62) || e.raw_os_error() == Some(4) => {}
                    Err(e) => return Err(e),
                }
                for (i, good) in reap(&mut ring, &mut conns, &mut inflight)? {
                    ok += u64::from(good);
                    latencies.push(conns[i].sent_at.elapsed());
                    idle.push(i);
                    busy -= 1;
                }
            }
            continue;
        }
        while busy > 0 {
            ring.submit_and_wait(1)?;
            for (i, good) in reap(&mut ring, &mut conns, &mut inflight)? {
                ok += u64::from(good);
                latencies.push(conns[i].sent_at.elapsed());
                idle.push(i);
                busy -= 1;
            }
        }
        if let Some(d) = wake.checked_duration_since(Instant::now()) {
            thread::sleep(d);
        }
    }
    while busy > 0 {
        ring.submit_and_wait(1)?;
        for (_, good) in reap(&mut ring, &mut conns, &mut inflight)? {
            ok += u64::from(good);
            busy -= 1;
        }
    }
    print_result(sent, ok, latencies);
    Ok(())
}

/// The one JSON line: requests, 2xx answers, latency p50 and p99.
fn print_result(sent: u64, ok: u64, mut latencies: Vec<Duration>) {
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
}

/// The closed model: `conns` connections, each sending its next request
/// when its answer is whole, for `duration`.
fn run_closed(addr: &str, path: &str, conns: usize, duration: Duration) -> io::Result<()> {
    let mut ring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(1024)?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes();
    let mut all: Vec<Conn> = (0..conns)
        .map(|_| Conn::open(addr))
        .collect::<io::Result<_>>()?;
    let mut latencies: Vec<Duration> = Vec::new();
    let (mut sent, mut ok, mut inflight) = (0u64, 0u64, 0usize);
    let start = Instant::now();
    for (i, c) in all.iter_mut().enumerate() {
        ask(&mut ring, c, i, &request)?;
        inflight += 2;
        sent += 1;
    }
    while inflight > 0 {
        ring.submit_and_wait(1)?;
        let going = start.elapsed() < duration;
        for (i, good) in reap(&mut ring, &mut all, &mut inflight)? {
            ok += u64::from(good);
            latencies.push(all[i].sent_at.elapsed());
            if going {
                ask(&mut ring, &mut all[i], i, &request)?;
                inflight += 2;
                sent += 1;
            }
        }
    }
    print_result(sent, ok, latencies);
    Ok(())
}

/// Puts connection `i`'s request (a send) and a receive for its answer
/// in the ring.
fn ask(ring: &mut IoUring, c: &mut Conn, i: usize, request: &[u8]) -> io::Result<()> {
    c.len = 0;
    c.sent_at = Instant::now();
    let send = opcode::Send::new(
        types::Fd(c.stream.as_raw_fd()),
        request.as_ptr(),
        request.len() as u32,
    )
    .build()
    .user_data((i as u64) << 1);
    push(ring, &send)?;
    push(ring, &c.recv(i))
}

/// Takes the ring's completions (`inflight` counts the operations still
/// in it): the connections whose answers are now whole, each with
/// whether it was a 2xx. A receive short of a whole answer is put back.
fn reap(
    ring: &mut IoUring,
    conns: &mut [Conn],
    inflight: &mut usize,
) -> io::Result<Vec<(usize, bool)>> {
    let done: Vec<(u64, i32)> = ring
        .completion()
        .map(|c| (c.user_data(), c.result()))
        .collect();
    let mut whole = Vec::new();
    for (tag, result) in done {
        *inflight -= 1;
        let i = (tag >> 1) as usize;
        if result < 0 {
            return Err(io::Error::from_raw_os_error(-result));
        }
        if tag & 1 == 0 {
            continue;
        }
        if result == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        let c = &mut conns[i];
        c.len += result as usize;
        match c.answer() {
            Some(good) => whole.push((i, good)),
            None if c.len == BUF => return Err(io::Error::other("an answer longer than 16 KiB")),
            None => {
                let again = c.recv(i);
                push(ring, &again)?;
                *inflight += 1;
            }
        }
    }
    Ok(whole)
}
