//! A DNS server on a loopback UDP port, for `-resolvers`.

use std::{
    io::{Read, Write},
    net::{Ipv4Addr, SocketAddr, TcpListener, UdpSocket},
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
    tcp_queries: Arc<AtomicU64>,
    _serving: Stoppable,
    _tcp: Option<Stoppable>,
}

impl DnsServer {
    /// Serves `name` (e.g. `barrage.test`).
    pub fn start(name: &str) -> Self {
        Self::serve(name, false, vec![Ipv4Addr::LOCALHOST])
    }

    /// Serves `name` with every one of `ips` in each answer, in that order
    /// (a name load-balanced over several addresses).
    pub fn with_addresses(name: &str, ips: &[Ipv4Addr]) -> Self {
        Self::serve(name, false, ips.to_vec())
    }

    /// Serves `name`, but over UDP only with truncated answers (the TC
    /// bit set, no records), as a server does when an answer is too large
    /// for a datagram; the whole answer comes over TCP on the same port.
    pub fn truncating(name: &str) -> Self {
        Self::serve(name, true, vec![Ipv4Addr::LOCALHOST])
    }

    fn serve(name: &str, truncate: bool, ips: Vec<Ipv4Addr>) -> Self {
        let ips = Arc::new(ips);
        // A UDP port whose number is also free over TCP (for truncated
        // answers): a port the kernel gave for UDP may be some other
        // test's TCP port at that moment, so try again.
        let (socket, listener) = (0..100)
            .find_map(|_| {
                let socket = UdpSocket::bind("127.0.0.1:0").ok()?;
                if !truncate {
                    return Some((socket, None));
                }
                let tcp = TcpListener::bind(socket.local_addr().ok()?).ok()?;
                Some((socket, Some(tcp)))
            })
            .expect("bind a loopback port over UDP (and TCP)");
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .expect("read timeout");
        let addr = socket.local_addr().expect("local addr");
        let queries = Arc::new(AtomicU64::new(0));
        let tcp_queries = Arc::new(AtomicU64::new(0));
        let q = queries.clone();
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let udp_name = name.clone();
        let udp_ips = ips.clone();
        let serving = Stoppable::spawn(move |s| {
            let mut buf = [0u8; 512];
            while !s.load(Ordering::SeqCst) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                q.fetch_add(1, Ordering::SeqCst);
                if let Some(mut reply) = answer(&buf[..n], &udp_name, &udp_ips) {
                    if truncate {
                        // TC set, the answer record (16 bytes, last) left out.
                        reply[2] |= 0x02;
                        if reply[7] == 1 {
                            reply.truncate(reply.len() - 16);
                            reply[7] = 0;
                        }
                    }
                    let _ = socket.send_to(&reply, from);
                }
            }
        });
        let tcp = listener.map(|listener| {
            listener.set_nonblocking(true).expect("nonblocking");
            let q = tcp_queries.clone();
            Stoppable::spawn(move |s| {
                while !s.load(Ordering::SeqCst) {
                    let Ok((mut conn, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    let _ = conn.set_nonblocking(false);
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                    let (q, name, ips) = (q.clone(), name.clone(), ips.clone());
                    // A thread per connection: a client may open a second
                    // (A and AAAA at once) while it keeps the first.
                    std::thread::spawn(move || {
                        // Length-prefixed queries until the client closes.
                        loop {
                            let mut len = [0u8; 2];
                            if conn.read_exact(&mut len).is_err() {
                                break;
                            }
                            let mut query = vec![0u8; usize::from(u16::from_be_bytes(len))];
                            if conn.read_exact(&mut query).is_err() {
                                break;
                            }
                            q.fetch_add(1, Ordering::SeqCst);
                            if let Some(reply) = answer(&query, &name, &ips) {
                                let mut framed = (reply.len() as u16).to_be_bytes().to_vec();
                                framed.extend_from_slice(&reply);
                                let _ = conn.write_all(&framed);
                            }
                        }
                    });
                }
            })
        });
        DnsServer {
            addr,
            queries,
            tcp_queries,
            _serving: serving,
            _tcp: tcp,
        }
    }

    /// Queries received over TCP so far.
    pub fn tcp_queries(&self) -> u64 {
        self.tcp_queries.load(Ordering::SeqCst)
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

/// The reply to one query: the question copied, then the answers (an A
/// record for each of `ips`).
fn answer(q: &[u8], name: &str, ips: &[Ipv4Addr]) -> Option<Vec<u8>> {
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
    let records = if known && qtype == 1 {
        ips.len() as u8
    } else {
        0
    };
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
    for ip in &ips[..usize::from(records)] {
        r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]);
        r.extend_from_slice(&ip.octets());
    }
    Some(r)
}
