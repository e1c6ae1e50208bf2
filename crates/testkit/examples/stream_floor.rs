//! The floor of reading server-sent events on this machine: the
//! benchmark's streams cell runs it beside `barrage attack -stream sse`
//! so that CPU per event reads against what the kernel alone costs here,
//! measured in the same minute.
//!
//! No async runtime, no HTTP library, no stamps, no records: one thread,
//! `N` nonblocking connections each sending one `GET`, one epoll set,
//! and every readable socket read into one buffer whose blank lines
//! (`\n\n`, an SSE event's end) are counted. It ends when every
//! connection has seen its answer's last chunk (`0\r\n\r\n`) or closed.
//!
//! ```text
//! stream_floor HOST:PORT PATH N
//! ```
//!
//! Prints one JSON line: `{"streams":N,"events":N}`.
use std::{
    io::{self, Read, Write},
    net::TcpStream,
    os::fd::AsRawFd,
    process::ExitCode,
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, path, n] = args.as_slice() else {
        eprintln!("usage: stream_floor HOST:PORT PATH N");
        return ExitCode::from(2);
    };
    let Ok(n) = n.parse::<usize>() else {
        eprintln!("stream_floor: N must be a count");
        return ExitCode::from(2);
    };
    match run(addr, path, n) {
        Ok(events) => {
            println!("{{\"streams\":{n},\"events\":{events}}}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("stream_floor: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(addr: &str, path: &str, n: usize) -> io::Result<u64> {
    // SAFETY: epoll_create1 has no memory arguments.
    let ep = unsafe { libc::epoll_create1(0) };
    if ep < 0 {
        return Err(io::Error::last_os_error());
    }
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = TcpStream::connect(addr)?;
        s.write_all(request.as_bytes())?;
        s.set_nonblocking(true)?;
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        // SAFETY: `ev` lives across the call; the fd is open.
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // The last 4 bytes seen (an event's end or the body's may be cut
        // between reads), and whether it is over.
        conns.push((s, [0u8; 4], false));
    }
    let (mut open, mut events) = (n, 0u64);
    let mut buf = vec![0u8; 64 << 10];
    let mut ready = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    while open > 0 {
        // SAFETY: `ready` has room for its length of events.
        let got = unsafe { libc::epoll_wait(ep, ready.as_mut_ptr(), ready.len() as i32, 30_000) };
        if got < 0 {
            return Err(io::Error::last_os_error());
        }
        if got == 0 {
            return Err(io::Error::other("no event for 30 s"));
        }
        for e in &ready[..got as usize] {
            let (s, tail, done) = &mut conns[e.u64 as usize];
            if *done {
                continue;
            }
            loop {
                match s.read(&mut buf) {
                    Ok(0) => {
                        *done = true;
                        open -= 1;
                        break;
                    }
                    Ok(k) => {
                        let mut last = *tail;
                        for &b in &buf[..k] {
                            last = [last[1], last[2], last[3], b];
                            if last[2..] == *b"\n\n" {
                                events += 1;
                            }
                            if last == *b"\r\n\r\n" && k >= 5 && buf[..k].ends_with(b"0\r\n\r\n") {
                                *done = true;
                            }
                        }
                        *tail = last;
                        if *done {
                            open -= 1;
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(events)
}
