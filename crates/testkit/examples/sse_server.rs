//! A lean server of scripted server-sent events, for `scripts/bench`'s
//! streams cell: 1,000 streams of 100 events a second each is 100,000
//! events a second, and the test server (hyper, a pacer thread handing
//! each event to its body's task) spent 11.6 µs of CPU on each, so with
//! barrage beside it the machine's two cores were full and the events
//! came late and bunched (gap p50 11.6–12.8 ms against 10 scripted).
//! The cell measures the client; this server leaves it the room.
//!
//! One thread, no runtime, no HTTP library: an epoll set holding the
//! listener, every connection and a timerfd. A request's events are due
//! at deadlines counted from its arrival (so gaps do not drift); each
//! wake-up writes every event due by then, each as one chunk in one
//! write, and the timer is set again no sooner than 50 µs on (Linux's
//! default timer slack, what a server sleeping in `poll` gets), so
//! events due close together go out in one wake-up.
//!
//! Routes (milliseconds), as the test server's:
//! - `/sse/N/GAP/FIRST`: N events `data: {"n":I}`, the first FIRST after
//!   the request, then one every GAP, chunked, then the last chunk.
//! - anything else: `404`, no body.
//!
//! ```text
//! sse_server
//! ```
//!
//! Prints its base URL (`http://127.0.0.1:PORT`) and serves until its
//! stdin closes.
use std::{
    cmp::Reverse,
    collections::BinaryHeap,
    io::{self, Read, Write},
    net::{TcpListener, TcpStream},
    os::fd::AsRawFd,
    process::ExitCode,
    time::{Duration, Instant},
};

/// The earliest a wake-up follows the last one.
const SLACK: Duration = Duration::from_micros(50);

const LISTENER: u64 = u64::MAX;
const TIMER: u64 = u64::MAX - 1;
const STDIN: u64 = u64::MAX - 2;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sse_server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A request's events still to send.
struct Script {
    start: Instant,
    first: Duration,
    gap: Duration,
    n: u64,
    next: u64,
}

impl Script {
    fn due(&self) -> Instant {
        self.start + self.first + self.gap * self.next as u32
    }
}

struct Conn {
    stream: TcpStream,
    /// Request bytes not yet answered.
    input: Vec<u8>,
    /// Answer bytes the socket did not take yet.
    output: Vec<u8>,
    script: Option<Script>,
}

impl Conn {
    /// Queues `bytes` and writes what the socket takes; false once the
    /// client is gone.
    fn send(&mut self, bytes: &[u8]) -> bool {
        self.output.extend_from_slice(bytes);
        self.flush()
    }

    fn flush(&mut self) -> bool {
        while !self.output.is_empty() {
            match self.stream.write(&self.output) {
                Ok(0) => return false,
                Ok(k) => {
                    self.output.drain(..k);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// Reads what came; false once the client is gone.
    fn read(&mut self) -> bool {
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return false,
                Ok(k) => self.input.extend_from_slice(&buf[..k]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// Starts answering the next whole request, if one came and none is
    /// being answered; false once the client is gone.
    fn answer(&mut self) -> bool {
        if self.script.is_some() {
            return true;
        }
        let Some(end) = self.input.windows(4).position(|w| w == b"\r\n\r\n") else {
            return true;
        };
        let head = String::from_utf8_lossy(&self.input[..end]).into_owned();
        self.input.drain(..end + 4);
        let path = head.split(' ').nth(1).unwrap_or("");
        let nums: Vec<u64> = path
            .strip_prefix("/sse/")
            .map(|rest| rest.split('/').map_while(|s| s.parse().ok()).collect())
            .unwrap_or_default();
        let [n, gap, first] = nums[..] else {
            return self.send(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        };
        let ok = self.send(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        if n == 0 {
            return ok && self.send(b"0\r\n\r\n") && self.answer();
        }
        self.script = Some(Script {
            start: Instant::now(),
            first: Duration::from_millis(first),
            gap: Duration::from_millis(gap),
            n,
            next: 0,
        });
        ok
    }

    /// Sends the script's next event (with the last chunk after the
    /// last); false once the client is gone.
    fn event(&mut self) -> bool {
        let Some(s) = &mut self.script else {
            return true;
        };
        let data = format!("data: {{\"n\":{}}}\n\n", s.next);
        let mut chunk = format!("{:x}\r\n{data}\r\n", data.len());
        s.next += 1;
        let over = s.next == s.n;
        if over {
            chunk.push_str("0\r\n\r\n");
            self.script = None;
        }
        self.send(chunk.as_bytes()) && (!over || self.answer())
    }
}

fn watch(ep: i32, fd: i32, events: u32, token: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event { events, u64: token };
    // SAFETY: `ev` lives across the call.
    if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the timerfd to fire at `at` (on the monotonic clock, as
/// `Instant`), measured from `now`.
fn arm(timer: i32, now: Instant, at: Instant) -> io::Result<()> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let ns = ts.tv_sec as u128 * 1_000_000_000
        + ts.tv_nsec as u128
        + at.saturating_duration_since(now).as_nanos().max(1);
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (ns / 1_000_000_000) as _,
            tv_nsec: (ns % 1_000_000_000) as _,
        },
    };
    // SAFETY: `spec` lives across the call; no old value is asked for.
    let r = unsafe {
        libc::timerfd_settime(timer, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn run() -> io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    // SAFETY: no memory arguments.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    // SAFETY: no memory arguments.
    let timer = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    };
    if ep < 0 || timer < 0 {
        return Err(io::Error::last_os_error());
    }
    watch(ep, listener.as_raw_fd(), libc::EPOLLIN as u32, LISTENER)?;
    watch(ep, timer, libc::EPOLLIN as u32, TIMER)?;
    // Ends when stdin closes (a file or /dev/null cannot be watched: it
    // then serves until killed).
    let _ = watch(ep, 0, libc::EPOLLIN as u32, STDIN);
    println!("http://{}", listener.local_addr()?);
    io::stdout().flush()?;

    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    // (due, slot, the slot's event count then): an entry whose count is
    // stale belongs to a script that moved on or a slot reused.
    let mut due: BinaryHeap<Reverse<(Instant, usize, u64)>> = BinaryHeap::new();
    let mut armed: Option<Instant> = None;
    let mut ready = vec![libc::epoll_event { events: 0, u64: 0 }; 512];
    loop {
        // SAFETY: `ready` has room for its length of events.
        let got = unsafe { libc::epoll_wait(ep, ready.as_mut_ptr(), ready.len() as i32, -1) };
        if got < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let mut touched: Vec<usize> = Vec::new();
        for e in &ready[..got as usize] {
            match e.u64 {
                LISTENER => loop {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            stream.set_nonblocking(true)?;
                            stream.set_nodelay(true)?;
                            let slot = free.pop().unwrap_or_else(|| {
                                conns.push(None);
                                conns.len() - 1
                            });
                            watch(
                                ep,
                                stream.as_raw_fd(),
                                (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32,
                                slot as u64,
                            )?;
                            conns[slot] = Some(Conn {
                                stream,
                                input: Vec::new(),
                                output: Vec::new(),
                                script: None,
                            });
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        // Out of descriptors and the like: the client sees it.
                        Err(_) => break,
                    }
                },
                TIMER => {
                    let mut n = [0u8; 8];
                    // SAFETY: reads 8 bytes into `n`.
                    unsafe { libc::read(timer, n.as_mut_ptr().cast(), 8) };
                    armed = None;
                }
                STDIN => {
                    let mut b = [0u8; 256];
                    if matches!(io::stdin().read(&mut b), Ok(0) | Err(_)) {
                        return Ok(());
                    }
                }
                slot => touched.push(slot as usize),
            }
        }
        let mut drop_conn = |conns: &mut Vec<Option<Conn>>, slot: usize| {
            // Closing the socket takes it out of the epoll set.
            conns[slot] = None;
            free.push(slot);
        };
        for slot in touched {
            let Some(c) = conns[slot].as_mut() else {
                continue;
            };
            let idle = c.script.is_none();
            if !(c.read() && c.flush() && c.answer()) {
                drop_conn(&mut conns, slot);
            } else if let (true, Some(s)) = (idle, &c.script) {
                due.push(Reverse((s.due(), slot, s.next)));
            }
        }
        // Every event due by now, in order of its deadline.
        let now = Instant::now();
        while let Some(&Reverse((at, slot, next))) = due.peek() {
            if at > now {
                break;
            }
            due.pop();
            let Some(c) = conns[slot].as_mut() else {
                continue;
            };
            if c.script.as_ref().is_none_or(|s| s.next != next) {
                continue;
            }
            if !c.event() {
                drop_conn(&mut conns, slot);
            } else if let Some(s) = &c.script {
                due.push(Reverse((s.due(), slot, s.next)));
            }
        }
        if let Some(&Reverse((at, _, _))) = due.peek() {
            if armed.is_none_or(|a| a > at) {
                let at = at.max(now + SLACK);
                arm(timer, now, at)?;
                armed = Some(at);
            }
        }
    }
}
