//! The exchange on compio (io_uring driver; the thread parks in
//! `io_uring_enter`, timers in compio's runtime). See the crate's docs.
use std::{
    cell::RefCell,
    process::ExitCode,
    rc::Rc,
    time::{Duration, Instant},
};

use barrage_ring_proto::{answer, Args, Tally, BUF, TIMEOUT};
use compio::{
    io::{AsyncRead, AsyncWriteExt},
    net::TcpStream,
    BufResult,
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
        eprintln!("{}", barrage_ring_proto::usage("ring_compio"));
        return ExitCode::from(2);
    };
    let mut proactor = compio::driver::ProactorBuilder::new();
    proactor.capacity(1024);
    let rt = compio::runtime::Runtime::builder()
        .with_proactor(proactor)
        .build();
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ring_compio: no io_uring here: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The run is a task of its own: the future given to block_on is woken
    // through the runtime's eventfd (a write and a read a wake-up), a
    // spawned task by a push to the thread's queue.
    let tally = rt.block_on(async move {
        let run = compio::runtime::spawn(async move {
            if args.rate == 0.0 {
                closed(args).await
            } else {
                open(args).await
            }
        });
        run.await.unwrap_or_default()
    });
    tally.print();
    ExitCode::SUCCESS
}

/// One exchange on `conn`: the request written, the answer read whole.
async fn exchange(conn: &mut Conn, request: &'static [u8]) -> std::io::Result<bool> {
    let BufResult(res, _) = conn.stream.write_all(request).await;
    res?;
    conn.buf.clear();
    loop {
        if conn.buf.len() == conn.buf.capacity() {
            conn.buf.reserve(conn.buf.capacity());
        }
        let buf = std::mem::take(&mut conn.buf);
        let BufResult(res, buf) = conn.stream.read(buf).await;
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
        Ok(mut c) => match compio::time::timeout(TIMEOUT, exchange(&mut c, args.request)).await {
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
    while sent < total {
        let now = Instant::now();
        while sent < total && args.due(start, sent) <= now {
            compio::runtime::spawn(one(args.clone(), state.clone(), args.due(start, sent)))
                .detach();
            sent += 1;
        }
        if sent == total {
            break;
        }
        wake = args.due(start, sent).max(wake + tick);
        compio::time::sleep_until(wake).await;
    }
    // The last answers: looked for each tick.
    while state.borrow().finished < total {
        compio::time::sleep(tick).await;
    }
    let mut tally = std::mem::take(&mut state.borrow_mut().tally);
    tally.sent = total;
    tally
}

async fn closed(args: Args) -> Tally {
    let args = Rc::new(args);
    let state = Rc::new(RefCell::new(State::default()));
    let end = Instant::now() + args.duration;
    let loops: Vec<_> = (0..args.conns)
        .map(|_| {
            let (args, state) = (args.clone(), state.clone());
            compio::runtime::spawn(async move {
                let Ok(mut c) = connect(&args.addr).await else {
                    return;
                };
                while Instant::now() < end {
                    let went = Instant::now();
                    let r = compio::time::timeout(TIMEOUT, exchange(&mut c, args.request)).await;
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
        let _ = l.await;
    }
    let tally = std::mem::take(&mut state.borrow_mut().tally);
    tally
}
