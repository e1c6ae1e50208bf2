use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    thread,
    time::Duration,
};

use crate::stoppable::Stoppable;

/// How a [`RawServer`] misbehaves, per connection, after reading a request.
#[derive(Debug, Clone, Copy)]
pub enum Script {
    /// Resets the connection (RST, via SO_LINGER 0) without answering.
    Reset,
    /// Declares `declared` body bytes, sends `sent`, then closes (FIN).
    Truncated {
        /// The Content-Length sent.
        declared: u64,
        /// The body bytes actually sent.
        sent: usize,
    },
    /// Never answers; holds the connection open until the server stops.
    Stall,
    /// A chunked body that never ends (64 KiB a millisecond).
    Endless,
    /// Accepts and never reads: what the client writes fills the
    /// socket's buffers (a TLS handshake or an upgrade never answered).
    Deaf,
    /// Writes these bytes as soon as it accepts, without reading, then
    /// closes: garbage where a TLS or HTTP/2 handshake was expected.
    Blurt(&'static [u8]),
    /// A body of this many bytes (keep-alive; serves further requests).
    Huge(u64),
    /// Answers `200 hello` with `Connection: close`, then closes.
    CloseEach,
    /// Answers `200 hello` keeping the connection, but closes it once idle
    /// for this long.
    IdleClose(Duration),
    /// Sends the head of `200 hello` at once and its body this much later
    /// (keep-alive).
    SlowBody(Duration),
    /// Answers each request with these bytes, as they are (any framing,
    /// right or wrong); `trickle` writes them one byte per write, a
    /// millisecond apart; `close` closes after the first answer.
    Reply {
        /// The answer.
        bytes: &'static [u8],
        /// One byte per write.
        trickle: bool,
        /// Close after answering.
        close: bool,
    },
    /// Answers `413` with `Connection: close` as soon as the head is in,
    /// before reading the request's body; then reads and drops what
    /// comes for a second and closes.
    EarlyAnswer,
    /// Answers each request (pipelined ones in order) with its
    /// `X-Barrage-Seq` in a header and as the body; with `close_after`,
    /// closes the connection after that many answers, reading and leaving
    /// unanswered whatever else was sent.
    EchoSeq {
        /// Answers per connection before it closes.
        close_after: Option<u64>,
        /// How long each answer takes (a busy server).
        delay: Duration,
    },
}

/// A loopback TCP server on port 0 that speaks just enough HTTP/1.1 to
/// misbehave in a scripted way; counts connections and requests.
pub struct RawServer {
    addr: SocketAddr,
    connections: Arc<AtomicU64>,
    requests: Arc<AtomicU64>,
    _accepting: Stoppable,
}

impl RawServer {
    /// Starts a server following `script` on every connection.
    pub fn start(script: Script) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback port 0");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let connections = Arc::new(AtomicU64::new(0));
        let requests = Arc::new(AtomicU64::new(0));
        let (c, r) = (connections.clone(), requests.clone());
        let accepting = Stoppable::spawn(move |s| {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        c.fetch_add(1, Ordering::SeqCst);
                        let (r, s) = (r.clone(), s.clone());
                        thread::spawn(move || serve(stream, script, &r, &s));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        RawServer {
            addr,
            connections,
            requests,
            _accepting: accepting,
        }
    }

    /// An absolute `http://` URL for `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }

    /// Request heads read.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Reads one request head (up to the blank line); `None` at EOF or
/// timeout.
fn read_head(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::with_capacity(512);
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            _ => return None,
        }
        if buf.len() > 64 << 10 {
            return None;
        }
    }
    Some(buf)
}

/// A header's value in a request head.
fn header<'a>(head: &'a [u8], name: &str) -> Option<&'a str> {
    std::str::from_utf8(head).ok()?.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn serve(mut stream: TcpStream, script: Script, requests: &AtomicU64, stop: &AtomicBool) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    match script {
        Script::Deaf => {
            while !stop.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        Script::Blurt(bytes) => {
            let _ = stream.write_all(bytes);
            let _ = stream.shutdown(std::net::Shutdown::Write);
            // Read what the client sent, so that closing sends FIN, not RST.
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let mut sink = [0u8; 4096];
            while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
            return;
        }
        _ => {}
    }
    let mut answered = 0u64;
    loop {
        if let Script::IdleClose(d) = script {
            let _ = stream.set_read_timeout(Some(d));
        }
        let Some(head) = read_head(&mut stream) else {
            return;
        };
        requests.fetch_add(1, Ordering::SeqCst);
        match script {
            Script::Reset => {
                let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
                return;
            }
            Script::Truncated { declared, sent } => {
                let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {declared}\r\n\r\n");
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&vec![b'x'; sent]);
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return;
            }
            Script::Stall => {
                while !stop.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(20));
                }
                return;
            }
            Script::Endless => {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
                let mut chunk = b"1000\r\n".to_vec();
                chunk.extend_from_slice(&[b'x'; 4096]);
                chunk.extend_from_slice(b"\r\n");
                // At most 64 KiB a millisecond: flat out, each connection
                // busy-looped a core (and the client's reader another),
                // and the fault matrix's cells beside it overran their
                // bounds on two cores.
                let mut sent = 0u32;
                while !stop.load(Ordering::SeqCst) {
                    if stream.write_all(&chunk).is_err() {
                        return;
                    }
                    sent = sent.wrapping_add(1);
                    if sent.is_multiple_of(16) {
                        thread::sleep(Duration::from_millis(1));
                    }
                }
                return;
            }
            Script::Huge(n) => {
                let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n");
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let block = vec![b'x'; 64 << 10];
                let mut left = n;
                while left > 0 {
                    let k = left.min(block.len() as u64) as usize;
                    if stream.write_all(&block[..k]).is_err() {
                        return;
                    }
                    left -= k as u64;
                }
            }
            Script::CloseEach => {
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
                );
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return;
            }
            Script::SlowBody(d) => {
                if stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n")
                    .is_err()
                {
                    return;
                }
                thread::sleep(d);
                if stream.write_all(b"hello\n").is_err() {
                    return;
                }
            }
            Script::Reply {
                bytes,
                trickle,
                close,
            } => {
                if trickle {
                    for b in bytes {
                        if stream.write_all(std::slice::from_ref(b)).is_err() {
                            return;
                        }
                        thread::sleep(Duration::from_millis(1));
                    }
                } else if stream.write_all(bytes).is_err() {
                    return;
                }
                if close {
                    let _ = stream.shutdown(std::net::Shutdown::Write);
                    return;
                }
            }
            Script::EarlyAnswer => {
                let _ = stream.write_all(
                    b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbig\n",
                );
                let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
                let mut sink = vec![0u8; 64 << 10];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
                return;
            }
            Script::EchoSeq { close_after, delay } => {
                if close_after.is_some_and(|n| answered >= n) {
                    // Read what else comes, answer none of it, close.
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                    while read_head(&mut stream).is_some() {
                        requests.fetch_add(1, Ordering::SeqCst);
                    }
                    return;
                }
                let seq = header(&head, "x-barrage-seq").unwrap_or("none").to_string();
                if !delay.is_zero() {
                    thread::sleep(delay);
                }
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nX-Seq-Echo: {seq}\r\nContent-Length: {}\r\n\r\n{seq}",
                    seq.len()
                );
                if stream.write_all(answer.as_bytes()).is_err() {
                    return;
                }
                answered += 1;
                if close_after == Some(answered) {
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                    while read_head(&mut stream).is_some() {
                        requests.fetch_add(1, Ordering::SeqCst);
                    }
                    return;
                }
            }
            Script::Deaf | Script::Blurt(_) => return,
            Script::IdleClose(_) => {
                if stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}

/// A server that handles one connection at a time, as Python's
/// `http.server.HTTPServer` and many embedded devices do: it accepts a
/// connection, answers one request with HTTP/1.0 (closing the
/// connection), and only then accepts the next.
pub struct SequentialServer {
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    _accepting: Stoppable,
}

impl SequentialServer {
    /// Starts it on a loopback port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback port 0");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(AtomicU64::new(0));
        let r = requests.clone();
        let accepting = Stoppable::spawn(move |s| {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        // Waits on this connection alone, as such servers
                        // do (bounded, so a test cannot hang).
                        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                        if read_head(&mut stream).is_some() {
                            r.fetch_add(1, Ordering::SeqCst);
                            let _ = stream
                                .write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n");
                        }
                        let _ = stream.shutdown(std::net::Shutdown::Both);
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        SequentialServer {
            addr,
            requests,
            _accepting: accepting,
        }
    }

    /// An absolute `http://` URL for `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Requests answered.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}
