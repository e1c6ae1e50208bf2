//! A forward HTTP proxy on loopback for tests: it records each request
//! head it is sent, answers plain requests itself and tunnels `CONNECT`s
//! to one upstream address, whatever host they name (so tests can use
//! names nobody resolves).

use std::{
    io::{Read, Write},
    net::{Shutdown, SocketAddr, TcpListener, TcpStream},
    sync::{atomic::Ordering, Arc, Mutex},
    thread,
    time::Duration,
};

use crate::stoppable::Stoppable;

/// What a [`ProxyServer`] does with what it is sent.
#[derive(Debug, Clone, Copy)]
pub enum ProxyMode {
    /// Tunnels `CONNECT`s to this address; answers other requests with
    /// `200 proxied\n` itself.
    Tunnel(SocketAddr),
    /// Answers everything `407 Proxy Authentication Required`.
    Refuse,
}

/// A request head the proxy was sent.
#[derive(Debug, Clone)]
pub struct ProxyRequest {
    /// The request line, e.g. `CONNECT host:443 HTTP/1.1`.
    pub line: String,
    /// Its headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
}

impl ProxyRequest {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The proxy; stops when dropped.
pub struct ProxyServer {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<ProxyRequest>>>,
    _accepting: Stoppable,
}

impl ProxyServer {
    /// Starts a proxy in `mode` on a loopback port.
    pub fn start(mode: ProxyMode) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback port 0");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let accepting = Stoppable::spawn(move |stop| {
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let log = log.clone();
                        thread::spawn(move || serve(stream, mode, &log));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        ProxyServer {
            addr,
            seen,
            _accepting: accepting,
        }
    }

    /// `http://127.0.0.1:PORT`, for `HTTP_PROXY` and `HTTPS_PROXY`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request head received so far.
    pub fn seen(&self) -> Vec<ProxyRequest> {
        self.seen.lock().unwrap().clone()
    }
}

/// Reads one request head (up to the blank line); `None` at the end.
fn read_head(stream: &mut TcpStream) -> Option<ProxyRequest> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 64 << 10 || stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.split("\r\n");
    let line = lines.next()?.to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(ProxyRequest { line, headers })
}

fn serve(mut stream: TcpStream, mode: ProxyMode, seen: &Mutex<Vec<ProxyRequest>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    while let Some(req) = read_head(&mut stream) {
        let connect = req.line.starts_with("CONNECT ");
        seen.lock().unwrap().push(req);
        match (mode, connect) {
            (ProxyMode::Refuse, _) => {
                let _ = stream.write_all(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n",
                );
                if connect {
                    return;
                }
            }
            (ProxyMode::Tunnel(upstream), true) => {
                let Ok(up) = TcpStream::connect(upstream) else {
                    let _ = stream.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n");
                    return;
                };
                let _ = stream.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
                tunnel(stream, up);
                return;
            }
            (ProxyMode::Tunnel(_), false) => {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nproxied\n");
            }
        }
    }
}

/// Copies bytes both ways until either side closes.
fn tunnel(client: TcpStream, upstream: TcpStream) {
    let _ = client.set_read_timeout(None);
    let (Ok(c2), Ok(u2)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let pump = |mut from: TcpStream, mut to: TcpStream| {
        let mut buf = [0u8; 16 << 10];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    };
    let up = thread::spawn(move || pump(client, upstream));
    pump(u2, c2);
    let _ = up.join();
}
