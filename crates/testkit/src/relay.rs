//! A TCP relay in front of a collector, to cut the connection under a
//! sender: at any moment ([`Relay::cut`]) or after a set number of bytes
//! ([`Relay::cutting_after`], wherever in a frame that falls).

use std::{
    io::{Read, Write},
    net::{Shutdown, TcpListener, TcpStream},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

/// Relays each connection on a loopback port to `to`, both ways.
pub struct Relay {
    /// Where senders connect.
    pub addr: String,
    down: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    cuts: Arc<AtomicU64>,
}

impl Relay {
    /// A relay that passes everything until [`Relay::cut`].
    pub fn new(to: String) -> Relay {
        Relay::start(to, None)
    }

    /// A relay whose first connection is cut (both ways) once `n` bytes
    /// from the sender have passed; later connections pass everything.
    pub fn cutting_after(to: String, n: u64) -> Relay {
        Relay::start(to, Some(n))
    }

    fn start(to: String, cut_after: Option<u64>) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("relay: bind loopback");
        let addr = listener.local_addr().expect("relay: address").to_string();
        let down = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let cuts = Arc::new(AtomicU64::new(0));
        let (d, o, c) = (down.clone(), open.clone(), cuts.clone());
        std::thread::spawn(move || {
            for (i, client) in listener.incoming().flatten().enumerate() {
                if d.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&to) else {
                    continue;
                };
                let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
                    continue;
                };
                o.lock().unwrap_or_else(|p| p.into_inner()).extend([c2, s2]);
                let limit = if i == 0 { cut_after } else { None };
                let (Ok(c3), Ok(s3)) = (client.try_clone(), server.try_clone()) else {
                    continue;
                };
                let (up_from, up_into) = (client, server);
                let cuts = c.clone();
                std::thread::spawn(move || pipe(up_from, up_into, limit, Some(&cuts)));
                std::thread::spawn(move || pipe(s3, c3, None, None));
            }
        });
        Relay {
            addr,
            down,
            open,
            cuts,
        }
    }

    /// Cuts every open connection and refuses new ones for `pause`.
    pub fn cut(&self, pause: Duration) {
        self.down.store(true, Ordering::SeqCst);
        for s in self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            let _ = s.shutdown(Shutdown::Both);
        }
        std::thread::sleep(pause);
        self.down.store(false, Ordering::SeqCst);
    }

    /// How many connections were cut after their byte count.
    pub fn cuts(&self) -> u64 {
        self.cuts.load(Ordering::SeqCst)
    }
}

/// Copies `from` into `into` (at most `limit` bytes, then shuts both).
fn pipe(mut from: TcpStream, mut into: TcpStream, limit: Option<u64>, cuts: Option<&AtomicU64>) {
    let mut buf = [0u8; 1000];
    let mut left = limit.unwrap_or(u64::MAX);
    while let Ok(n) = from.read(&mut buf) {
        let n = n.min(left.min(buf.len() as u64) as usize);
        if n == 0 || into.write_all(&buf[..n]).is_err() {
            break;
        }
        left -= n as u64;
        if left == 0 {
            if let Some(c) = cuts {
                c.fetch_add(1, Ordering::SeqCst);
            }
            let _ = from.shutdown(Shutdown::Both);
            break;
        }
    }
    let _ = into.shutdown(Shutdown::Both);
}
