//! The exchange on monoio (io_uring driver; the thread parks in
//! `io_uring_enter`, timers in monoio's wheel). See the crate's docs.
use std::{
    cell::RefCell,
    process::ExitCode,
    rc::Rc,
    time::{Duration, Instant},
};

use barrage_ring_proto::{answer, Args, Tally, BUF, TIMEOUT};
use monoio::{
    io::{AsyncReadRent, AsyncWriteRentExt},
    net::TcpStream,
};

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

#[derive(Default)]
struct State {
    idle: Vec<Conn>,
    tally: Tally,
    finished: u64,
}

fn main() -> ExitCode {
    let Some(args) = Args::parse() else {
        eprintln!("{}", barrage_ring_proto::usage("ring_monoio"));
        return ExitCode::from(2);
    };
    let rt = monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
        .with_entries(1024)
        .enable_timer()
        .build();
    let mut rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ring_monoio: no io_uring here: {e}");
            return ExitCode::FAILURE;
        }
    };
    let tally = rt.block_on(async move {
        if args.rate == 0.0 {
            closed(args).await
        } else {
            open(args).await
        }
    });
    tally.print();
    ExitCode::SUCCESS
}

/// One exchange on `conn`: the request written, the answer read whole.
async fn exchange(conn: &mut Conn, request: &'static [u8]) -> std::io::Result<bool> {
    let (res, _) = conn.stream.write_all(request).await;
    res?;
    conn.buf.clear();
    loop {
        if conn.buf.len() == conn.buf.capacity() {
            conn.buf.reserve(conn.buf.capacity());
        }
        let buf = std::mem::take(&mut conn.buf);
        let (res, buf) = conn.stream.read(buf).await;
        conn.buf = buf;
        if res? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        match answer(&conn.buf) {
            Ok(Some(good)) => return Ok(good),
            Ok(None) => {}
            Err(e) => return Err(std::io::Error::other(e)),
        }
    }
}

async fn connect(addr: &str) -> std::io::Result<Conn> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(Conn {
        stream,
        buf: Vec::with_capacity(BUF),
    })
}

/// One scheduled request: a kept connection (or a new one), the exchange
/// under its timeout, the outcome tallied.
async fn one(args: Rc<Args>, state: Rc<RefCell<State>>, due: Instant) {
    let went = Instant::now();
    let kept = state.borrow_mut().idle.pop();
    let conn = match kept {
        Some(c) => Ok(c),
        None => connect(&args.addr).await,
    };
    let outcome = match conn {
        Ok(mut c) => match monoio::time::timeout(TIMEOUT, exchange(&mut c, args.request)).await {
            Ok(Ok(good)) => Some((good, c)),
            _ => None,
        },
        Err(_) => None,
    };
    let mut s = state.borrow_mut();
    let latency = went.elapsed();
    match outcome {
        Some((good, c)) => {
            s.idle.push(c);
            s.tally.done(good, latency, went - due);
        }
        None => s.tally.done(false, latency, went - due),
    }
    s.finished += 1;
}

async fn open(args: Args) -> Tally {
    let args = Rc::new(args);
    let state = Rc::new(RefCell::new(State::default()));
    let total = args.total();
    let tick = barrage_ring_proto::tick();
    let start = Instant::now();
    let (mut sent, mut wake) = (0u64, start);
    // PROTO_TIMERFD=1: the tick in the ring, as a read of a timerfd that
    // expires every tick (monoio's own timer rounds to milliseconds).
    // It expires once a tick, or once a request where requests are further
    // apart than a tick (a constant rate: no wake-up finds nothing due).
    let every = tick.max(Duration::from_secs_f64(1.0 / args.rate));
    let ring_tick = std::env::var("PROTO_TIMERFD")
        .is_ok_and(|v| v == "1")
        .then(|| ticker(every));
    let mut expiries = vec![0u8; 8];
    while sent < total {
        let now = Instant::now();
        while sent < total && args.due(start, sent) <= now {
            monoio::spawn(one(args.clone(), state.clone(), args.due(start, sent)));
            sent += 1;
        }
        if sent == total {
            break;
        }
        wake = args.due(start, sent).max(wake + tick);
        match &ring_tick {
            Some(fd) => {
                // Ticks until the next request is due: one read a tick.
                while Instant::now() < args.due(start, sent) {
                    let (res, b) = fd.read_at(expiries, 0).await;
                    expiries = b;
                    if res.is_err() {
                        break;
                    }
                }
            }
            None => monoio::time::sleep_until(wake.into()).await,
        }
    }
    // The last answers: looked for each tick.
    while state.borrow().finished < total {
        monoio::time::sleep(tick).await;
    }
    let mut tally = std::mem::take(&mut state.borrow_mut().tally);
    tally.sent = total;
    tally
}

/// A timerfd expiring every `tick` from now on, as a file of the ring.
fn ticker(tick: Duration) -> monoio::fs::File {
    use std::os::fd::FromRawFd;
    // SAFETY: plain calls on a descriptor this function owns; a failure
    // is a negative descriptor, which panics below (a prototype).
    let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
    assert!(fd >= 0, "timerfd_create");
    let every = libc::timespec {
        tv_sec: 0,
        tv_nsec: tick.as_nanos() as i64,
    };
    let spec = libc::itimerspec {
        it_interval: every,
        it_value: every,
    };
    // SAFETY: `spec` outlives the call; no old value is asked for.
    let r = unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) };
    assert_eq!(r, 0, "timerfd_settime");
    // SAFETY: `fd` is a fresh descriptor owned by nothing else.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    monoio::fs::File::from_std(file).expect("a timerfd in the ring")
}

async fn closed(args: Args) -> Tally {
    let args = Rc::new(args);
    let state = Rc::new(RefCell::new(State::default()));
    let end = Instant::now() + args.duration;
    let loops: Vec<_> = (0..args.conns)
        .map(|_| {
            let (args, state) = (args.clone(), state.clone());
            monoio::spawn(async move {
                let Ok(mut c) = connect(&args.addr).await else {
                    return;
                };
                while Instant::now() < end {
                    let went = Instant::now();
                    let r = monoio::time::timeout(TIMEOUT, exchange(&mut c, args.request)).await;
                    let ok = matches!(r, Ok(Ok(true)));
                    let mut s = state.borrow_mut();
                    s.tally.sent += 1;
                    s.tally.done(ok, went.elapsed(), Duration::ZERO);
                    if !matches!(r, Ok(Ok(_))) {
                        return;
                    }
                }
            })
        })
        .collect();
    for l in loops {
        l.await;
    }
    let tally = std::mem::take(&mut state.borrow_mut().tally);
    tally
}
