//! POSTing batches: a thread of its own behind a bounded queue (memory
//! bounded by its depth). A batch is retried with backoff on a failed
//! connection, a timeout, a 5xx or a 429; when one fails for good, the
//! rest are counted, not sent (the endpoint is down), so from then on the
//! queue empties as fast as it fills: the reader reads the stream to its
//! end (a `tee` upstream never blocks), and the first failure is said at
//! the end. While the endpoint takes batches, a full queue makes the
//! reader wait: nothing is dropped from a file read faster than the
//! endpoint writes.
//!
//! The HTTP/1.1 request is written by hand on a `TcpStream` (one request
//! per connection, `Connection: close`) and its answer's head read with
//! httparse: a batch a second needs no pool, and the stage stays
//! synchronous like the other readers. Plain `http://` only.

use std::{
    io::{Read, Write},
    net::{TcpStream, ToSocketAddrs},
    sync::mpsc::{sync_channel, SyncSender},
    thread::JoinHandle,
    time::Duration,
};

/// Where batches go and how.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The write URL (`http://host:port/path?query`).
    pub url: url::Url,
    /// Headers besides Host, Content-Length and Connection.
    pub headers: Vec<(String, String)>,
    /// Connect and read timeout, each.
    pub timeout: Duration,
    /// Attempts after the first.
    pub retries: u32,
}

/// A URL the pusher cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PushError(pub String);

impl Endpoint {
    /// Checks `text` as a write URL.
    pub fn parse(text: &str) -> Result<url::Url, PushError> {
        let url = url::Url::parse(text).map_err(|e| PushError(format!("bad URL {text:?}: {e}")))?;
        if url.scheme() != "http" {
            return Err(PushError(format!(
                "{text}: only http:// endpoints (push to a local relay for https)"
            )));
        }
        if url.host_str().is_none() {
            return Err(PushError(format!("{text}: no host")));
        }
        Ok(url)
    }
}

/// What the pushing came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Batches the endpoint took.
    pub sent: u64,
    /// Batches not delivered: failed, or not tried after a failure.
    pub undelivered: u64,
    /// The first failure, said as a line.
    pub error: Option<String>,
}

/// Batches on their way.
pub struct Pusher {
    tx: Option<SyncSender<Vec<u8>>>,
    thread: Option<JoinHandle<Summary>>,
}

/// One POST; `Err` says why, and whether to retry.
fn post(e: &Endpoint, body: &[u8]) -> Result<(), (String, bool)> {
    let host = e.url.host_str().unwrap_or("");
    let port = e.url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<_> = (host, port)
        .to_socket_addrs()
        .map_err(|err| (format!("{host}:{port}: {err}"), true))?
        .collect();
    let mut last = String::new();
    let mut stream = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, e.timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(err) => last = format!("connect {a}: {err}"),
        }
    }
    let mut s = stream.ok_or((last, true))?;
    let io = |err: std::io::Error| (format!("{}: {err}", e.url), true);
    s.set_read_timeout(Some(e.timeout)).map_err(io)?;
    s.set_write_timeout(Some(e.timeout)).map_err(io)?;
    let path = match e.url.query() {
        Some(q) => format!("{}?{q}", e.url.path()),
        None => e.url.path().to_string(),
    };
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: {}\r\nConnection: close\r\nUser-Agent: barrage\r\n",
        body.len()
    );
    for (k, v) in &e.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).map_err(io)?;
    s.write_all(body).map_err(io)?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).map_err(io)?;
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut headers);
    let at = match resp.parse(&answer) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => return Err((format!("{}: no HTTP answer", e.url), true)),
    };
    let code = resp.code.unwrap_or(0);
    if (200..300).contains(&code) {
        return Ok(());
    }
    let said: String = String::from_utf8_lossy(&answer[at..])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(200)
        .collect();
    Err((
        format!("{} answered {code}: {said}", e.url),
        code >= 500 || code == 429,
    ))
}

/// Posts with retries: 100 ms, then twice as long each time.
fn deliver(e: &Endpoint, body: &[u8]) -> Result<(), String> {
    let mut wait = Duration::from_millis(100);
    let mut attempt = 0;
    loop {
        match post(e, body) {
            Ok(()) => return Ok(()),
            Err((_, true)) if attempt < e.retries => {
                attempt += 1;
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            Err((why, _)) => {
                return Err(if attempt > 0 {
                    format!("{why} (after {} attempts)", attempt + 1)
                } else {
                    why
                })
            }
        }
    }
}

impl Pusher {
    /// Starts the sending thread, with room for `depth` batches queued.
    pub fn start(endpoint: Endpoint, depth: usize) -> Pusher {
        let (tx, rx) = sync_channel::<Vec<u8>>(depth.max(1));
        let thread = std::thread::Builder::new()
            .name("export".into())
            .spawn(move || {
                let mut sum = Summary::default();
                for body in rx {
                    if sum.error.is_some() {
                        sum.undelivered += 1;
                        continue;
                    }
                    match deliver(&endpoint, &body) {
                        Ok(()) => sum.sent += 1,
                        Err(why) => {
                            sum.undelivered += 1;
                            sum.error = Some(why);
                        }
                    }
                }
                sum
            })
            .ok();
        Pusher {
            tx: Some(tx),
            thread,
        }
    }

    /// Queues a body (waiting while the queue is full).
    pub fn push(&mut self, body: Vec<u8>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(body);
        }
    }

    /// Waits for the queue to empty; what came of it.
    pub fn finish(mut self) -> Summary {
        drop(self.tx.take());
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_else(|| Summary {
                error: Some("the sending thread did not start".into()),
                ..Summary::default()
            })
    }
}
