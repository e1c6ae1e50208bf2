//! The collector's side of the connections: hellos checked against the
//! token, one stream per origin kept across reconnects, whole frames fed
//! to the origin's decoder, and the collector's word (`stop`, `done`)
//! said on the connection.

use std::{
    collections::HashMap,
    io::{self, Read, Write},
    net::{SocketAddr, TcpStream},
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        mpsc::{Receiver, SyncSender},
        Arc, Mutex,
    },
    time::Duration,
};

use barrage_stream::{Decoder, Hit};
use rustls::ServerConfig;

use crate::{
    link::{accept, is_timeout, Link},
    wire::{same_token, whole, Hello, Reply, HELLO_WAIT, MAX_CONNECTIONS},
};

/// How long a connection thread waits on a read before looking for the
/// collector's word.
const POLL: Duration = Duration::from_millis(20);

/// The largest piece of a stream handed to its decoder, bytes.
const PIECE: usize = 1 << 20;

/// Pieces queued for an origin's decoder at most.
const PIECES: usize = 16;

/// What the connections tell the merge.
pub enum Event {
    /// An origin said hello (first time or again).
    Connected {
        /// Its index, in order of first hello.
        index: usize,
        /// Its hello.
        hello: Hello,
        /// From where.
        peer: SocketAddr,
        /// The bytes already held: 0 the first time.
        from: u64,
        /// The collector's clock when the hello was read (unix ns): the
        /// sender's `clock` is compared with it, not with when the merge
        /// got to the event.
        heard: i64,
    },
    /// A record.
    Hit(usize, Box<Hit>),
    /// A fact about the run.
    Meta(String, String),
    /// A sample of an origin's self-audit.
    Audit(usize, Box<barrage_model::Audit>),
    /// A sample of a server an origin scraped (`-scrape`).
    Sample(Box<barrage_model::ServerSample>),
    /// A live control change an origin made (`-control`).
    Marker(usize, Box<barrage_model::Marker>),
    /// An origin's connection ended with its stream, `done` said.
    Finished(usize),
    /// An origin's connection dropped before its end.
    Left(usize, String),
    /// An origin's stream is complete (all its records were sent before).
    Ended(usize),
    /// A decoder failed: the origin's stream ends there.
    Broken(usize, String),
    /// A connection refused.
    Refused(SocketAddr, String),
}

/// What every connection thread shares.
pub struct Shared {
    /// The token.
    pub token: String,
    /// TLS, when `-tls-cert` was given.
    pub tls: Option<Arc<ServerConfig>>,
    /// The merge's inbox.
    pub events: SyncSender<Event>,
    /// Why the attackers are to stop, once they are.
    pub stop: Mutex<Option<String>>,
    /// Live control's orders (`collect -control`).
    pub orders: crate::Orders,
    origins: Mutex<HashMap<String, Arc<Origin>>>,
}

/// One attacker's stream.
struct Origin {
    index: usize,
    /// Whole bytes held, and the decoder's feed, under one lock.
    held: Mutex<(u64, SyncSender<Vec<u8>>)>,
    /// Which connection may feed it: the newest.
    turn: AtomicU64,
    /// Live control's orders its connections have passed on.
    told: std::sync::atomic::AtomicUsize,
}

impl Shared {
    /// Ready for connections.
    pub fn new(token: String, tls: Option<Arc<ServerConfig>>, events: SyncSender<Event>) -> Self {
        Shared {
            token,
            tls,
            events,
            stop: Mutex::new(None),
            orders: Default::default(),
            origins: Mutex::new(HashMap::new()),
        }
    }

    /// The origin of `hello`, made (with its decoder thread) on first
    /// sight, with this connection's turn and the bytes already held.
    /// The merge hears of it (`Event::Connected`) under the origins' lock,
    /// so that origins join the merge in the order of their indexes (two
    /// attackers joining at once were heard the other way round, and the
    /// merge took the first for one coming back).
    fn join(
        &self,
        hello: Hello,
        peer: SocketAddr,
        heard: i64,
    ) -> io::Result<(Arc<Origin>, u64, u64)> {
        let mut all = self.origins.lock().expect("origins");
        let origin = match all.get(&hello.origin) {
            Some(o) => o.clone(),
            None => {
                let index = all.len();
                let (feed, chunks) = std::sync::mpsc::sync_channel(PIECES);
                let events = self.events.clone();
                std::thread::Builder::new()
                    .name(format!("barrage-collect-{index}"))
                    .spawn(move || decode(index, chunks, events))?;
                let o = Arc::new(Origin {
                    index,
                    held: Mutex::new((0, feed)),
                    turn: AtomicU64::new(0),
                    told: Default::default(),
                });
                all.insert(hello.origin.clone(), o.clone());
                o
            }
        };
        let (turn, from) = {
            let held = origin.held.lock().expect("held");
            (origin.turn.fetch_add(1, Ordering::SeqCst) + 1, held.0)
        };
        let _ = self.events.send(Event::Connected {
            index: origin.index,
            hello,
            peer,
            from,
            heard,
        });
        drop(all);
        Ok((origin, turn, from))
    }

    fn stop_reason(&self) -> Option<String> {
        self.stop.lock().expect("stop").clone()
    }
}

/// Accepts connections for ever, each served on a thread of its own, at
/// most [`MAX_CONNECTIONS`] at once (more are closed as they come).
pub fn accept_all(listener: &std::net::TcpListener, shared: &Arc<Shared>) {
    let live = Arc::new(AtomicUsize::new(0));
    let mut said_full = false;
    loop {
        let sock = match listener.accept() {
            Ok((sock, _)) => sock,
            // Out of descriptors (EMFILE) or the like: the
            // error comes back at once, so wait before the
            // next try (it spun a core at 80%).
            Err(e) => {
                if !said_full {
                    eprintln!("barrage collect: warning: accepting a connection failed ({e}); trying again every 100 ms");
                    said_full = true;
                }
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        said_full = false;
        let Ok(peer) = sock.peer_addr() else { continue };
        if live.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            let _ = shared.events.try_send(Event::Refused(
                peer,
                format!("{MAX_CONNECTIONS} connections already"),
            ));
            drop(sock);
            continue;
        }
        live.fetch_add(1, Ordering::SeqCst);
        let (shared, mine) = (shared.clone(), live.clone());
        let spawned = std::thread::Builder::new()
            .name("barrage-collect-conn".into())
            .spawn(move || {
                serve(sock, peer, &shared);
                mine.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            live.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Serves one accepted socket to its end.
pub fn serve(sock: TcpStream, peer: SocketAddr, shared: &Shared) {
    let refused = |why: &str| {
        let _ = shared.events.send(Event::Refused(peer, why.to_string()));
    };
    let _ = sock.set_read_timeout(Some(HELLO_WAIT));
    let mut link = match accept(sock, shared.tls.as_ref()) {
        Ok(l) => l,
        Err(e) => return refused(&e.to_string()),
    };
    // The whole hello within HELLO_WAIT, however slowly it trickles in
    // (slow hellos held about 2,000 threads).
    let hello = match Hello::read(&mut Within {
        link: &mut link,
        until: std::time::Instant::now() + HELLO_WAIT,
    }) {
        Ok(h) => h,
        Err(why) => {
            let why = why.to_string();
            let _ = link.write_all(&Reply::Refused(why.clone()).encode());
            link.close();
            return refused(&why);
        }
    };
    let heard = crate::wire::now_ns();
    if !same_token(&hello.token, &shared.token) {
        let _ = link.write_all(&Reply::Refused("wrong token".into()).encode());
        link.close();
        return refused("wrong token");
    }
    let (origin, turn, from) = match shared.join(hello, peer, heard) {
        Ok(o) => o,
        Err(e) => return refused(&e.to_string()),
    };
    let index = origin.index;
    let why = match feed(&mut link, &origin, turn, from, shared) {
        Ok(()) => {
            link.close();
            let _ = shared.events.send(Event::Finished(index));
            return;
        }
        Err(e) => e.to_string(),
    };
    link.close();
    if origin.turn.load(Ordering::SeqCst) == turn {
        let _ = shared.events.send(Event::Left(index, why));
    }
}

/// A link read until a deadline, each read waiting what is left of it.
struct Within<'a> {
    link: &'a mut Link,
    until: std::time::Instant,
}

impl Read for Within<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self
            .until
            .saturating_duration_since(std::time::Instant::now());
        let late = || {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no whole hello within {}s", HELLO_WAIT.as_secs()),
            )
        };
        if left.is_zero() {
            return Err(late());
        }
        self.link.set_read_timeout(Some(left))?;
        // A read that waited out the deadline is the same lateness (it
        // said os error 11).
        self.link
            .read(buf)
            .map_err(|e| if is_timeout(&e) { late() } else { e })
    }
}

/// Why a sender's connection was left.
#[derive(Debug, thiserror::Error)]
enum Lost {
    #[error("{0}")]
    Io(io::Error),
    #[error("a newer connection took over")]
    TakenOver,
    #[error("the connection closed before the stream's end")]
    Closed,
    #[error("{0}")]
    Stream(#[from] crate::wire::WireError),
    #[error("the stream's decoder has stopped")]
    DecoderStopped,
}

/// Reads whole frames into the origin's feed until the end marker.
fn feed(
    link: &mut Link,
    origin: &Origin,
    turn: u64,
    from: u64,
    shared: &Shared,
) -> Result<(), Lost> {
    let fail = Lost::Io;
    link.write_all(&Reply::Ok(from).encode()).map_err(fail)?;
    let mut told: Option<String> = None;
    link.set_read_timeout(Some(POLL)).map_err(fail)?;
    let mut pending: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut at = from;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if origin.turn.load(Ordering::SeqCst) != turn {
            return Err(Lost::TakenOver);
        }
        if let Some(why) = shared.stop_reason().filter(|w| told.as_ref() != Some(w)) {
            link.write_all(&Reply::Stop(why.clone()).encode())
                .map_err(fail)?;
            told = Some(why);
        }
        for (at, what) in shared.orders.since(origin.told.load(Ordering::SeqCst)) {
            link.write_all(&Reply::Control(at, what).encode())
                .map_err(fail)?;
            origin.told.fetch_add(1, Ordering::SeqCst);
        }
        link.flush().map_err(fail)?;
        let n = match link.read(&mut buf) {
            Ok(0) => return Err(Lost::Closed),
            Ok(n) => n,
            Err(e) if is_timeout(&e) => continue,
            Err(e) => return Err(Lost::Io(e)),
        };
        pending.extend_from_slice(&buf[..n]);
        let (units, end) = whole(&pending, at == 0)?;
        if units > 0 {
            let mut held = origin.held.lock().expect("held");
            if origin.turn.load(Ordering::SeqCst) != turn {
                return Err(Lost::TakenOver);
            }
            // In pieces of at most a MiB: the decoder reads a byte
            // stream, and a bounded queue of small pieces bounds what an
            // origin holds (16 MiB of pieces, where whole chunks let one
            // sender make the collector hold 192 MB).
            for piece in pending[..units].chunks(PIECE) {
                held.1
                    .send(piece.to_vec())
                    .map_err(|_| Lost::DecoderStopped)?;
            }
            held.0 += units as u64;
            at = held.0;
            pending.drain(..units);
        }
        if end {
            let held = origin.held.lock().expect("held");
            // `done` goes out before the decoder's input ends (an empty
            // chunk): the last stream's end lets the collector exit, and
            // an exit before the word left the attacker reading the
            // connection's end without it, then retrying for a minute.
            let told = link
                .write_all(&Reply::Done(held.0).encode())
                .and_then(|()| link.flush());
            let _ = held.1.send(Vec::new());
            return told.map_err(fail);
        }
    }
}

/// The decoder's input: whole frames as they come, ended by an empty one.
struct Feed {
    chunks: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
    ended: bool,
}

impl Read for Feed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.chunk.len() {
            if self.ended {
                return Ok(0);
            }
            match self.chunks.recv() {
                Ok(c) if c.is_empty() => self.ended = true,
                Ok(c) => (self.chunk, self.at) = (c, 0),
                Err(_) => self.ended = true,
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// One origin's decoder thread: records out. A record is identified
/// across a resend by its place in the sender's stream (the byte offset
/// that `ok BYTES` resumes from, and each byte is fed once), not by its
/// `seq`: flows, `-mix` groups and sweep steps give several records one
/// `seq` (issue 60: a flow run through `collect` kept 100 of 400).
fn decode(index: usize, chunks: Receiver<Vec<u8>>, events: SyncSender<Event>) {
    let feed = Feed {
        chunks,
        chunk: Vec::new(),
        at: 0,
        ended: false,
    };
    let mut dec = match Decoder::new(feed) {
        Ok(d) => d,
        Err(e) => {
            let _ = events.send(Event::Broken(index, e.to_string()));
            return;
        }
    };
    let mut metas = 0;
    let mut audits = 0;
    let mut samples = 0;
    let mut markers = 0;
    let mut hit = Hit::default();
    loop {
        match dec.read(&mut hit) {
            Ok(true) => {
                for (k, v) in &dec.meta()[metas..] {
                    let _ = events.send(Event::Meta(k.clone(), v.clone()));
                }
                metas = dec.meta().len();
                for a in &dec.audits()[audits..] {
                    let _ = events.send(Event::Audit(index, Box::new(a.clone())));
                }
                audits = dec.audits().len();
                for x in &dec.samples()[samples..] {
                    let _ = events.send(Event::Sample(Box::new(x.clone())));
                }
                samples = dec.samples().len();
                for m in &dec.markers()[markers..] {
                    let _ = events.send(Event::Marker(index, Box::new(m.clone())));
                }
                markers = dec.markers().len();
                if events
                    .send(Event::Hit(index, Box::new(hit.clone())))
                    .is_err()
                {
                    return;
                }
            }
            Ok(false) => {
                // Facts said after the last record (the attack's
                // `dropped` count) come through too.
                for (k, v) in &dec.meta()[metas..] {
                    let _ = events.send(Event::Meta(k.clone(), v.clone()));
                }
                for a in &dec.audits()[audits..] {
                    let _ = events.send(Event::Audit(index, Box::new(a.clone())));
                }
                for x in &dec.samples()[samples..] {
                    let _ = events.send(Event::Sample(Box::new(x.clone())));
                }
                for m in &dec.markers()[markers..] {
                    let _ = events.send(Event::Marker(index, Box::new(m.clone())));
                }
                let _ = events.send(Event::Ended(index));
                return;
            }
            Err(e) => {
                let _ = events.send(Event::Broken(index, e.to_string()));
                return;
            }
        }
    }
}
