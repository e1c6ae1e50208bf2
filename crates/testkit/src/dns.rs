//! A DNS server on a loopback UDP port, for `-resolvers`.

use std::{
    net::{SocketAddr, UdpSocket},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

use crate::stoppable::Stoppable;

/// Answers A queries for one name with 127.0.0.1 (and AAAA queries with
/// no record), and any other name with NXDOMAIN. Stopped when dropped.
pub struct DnsServer {
    addr: SocketAddr,
    queries: Arc<AtomicU64>,
    _serving: Stoppable,
}

impl DnsServer {
    /// Serves `name` (e.g. `barrage.test`).
    pub fn start(name: &str) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind loopback UDP port");
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .expect("read timeout");
        let addr = socket.local_addr().expect("local addr");
        let queries = Arc::new(AtomicU64::new(0));
        let q = queries.clone();
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let serving = Stoppable::spawn(move |s| {
            let mut buf = [0u8; 512];
            while !s.load(Ordering::SeqCst) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                q.fetch_add(1, Ordering::SeqCst);
                if let Some(reply) = answer(&buf[..n], &name) {
                    let _ = socket.send_to(&reply, from);
                }
            }
        });
        DnsServer {
            addr,
            queries,
            _serving: serving,
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queries received so far.
    pub fn queries(&self) -> u64 {
        self.queries.load(Ordering::SeqCst)
    }
}

/// The reply to one query: the question copied, then the answer.
fn answer(q: &[u8], name: &str) -> Option<Vec<u8>> {
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*q.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(q.get(at..at + len)?).to_ascii_lowercase());
        at += len;
    }
    let qtype = u16::from_be_bytes([*q.get(at)?, *q.get(at + 1)?]);
    let question = q.get(12..at + 4)?;
    let known = labels.join(".") == name;
    let records = u8::from(known && qtype == 1);
    let mut r = Vec::with_capacity(64);
    r.extend_from_slice(&q[..2]);
    r.extend_from_slice(&[
        0x81,
        if known { 0x80 } else { 0x83 },
        0,
        1,
        0,
        records,
        0,
        0,
        0,
        0,
    ]);
    r.extend_from_slice(question);
    if records == 1 {
        r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]);
    }
    Some(r)
}
