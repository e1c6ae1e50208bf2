//! The HTTP/1.1 engine's exchanges on both back ends (epoll and
//! io_uring) against the test server on loopback, and the ring's own
//! edges: cancelled receives, resets, a new runtime on the thread, a
//! stream polled on another thread.

use std::{
    future::poll_fn,
    io::Read,
    net::{Shutdown, TcpListener},
    pin::Pin,
    sync::Arc,
    time::Duration,
};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::*;
use crate::{
    proto::h1::{
        testing::{framer, wire},
        Conn, Stamps,
    },
    transport::{dial::BoxStream, opened::Opened},
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// io_uring must be there on the machines the tests run on: a denied
/// ring would make every `-io uring` test silently an epoll one.
fn need_uring() {
    if let Err(e) = probe() {
        panic!("io_uring is not available here ({e}): the -io uring tests cannot run");
    }
}

/// A connected stream to `addr` on the back end named.
async fn open(addr: std::net::SocketAddr, uring: bool) -> BoxStream {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    if !uring {
        return Box::new(tcp);
    }
    assert!(usable_here());
    Box::new(UringStream::new(tcp.into_std().unwrap().into()))
}

#[test]
fn exchanges_go_alike_on_both_back_ends() {
    need_uring();
    let server = barrage_testkit::Server::http();
    exchanges(&server, false);
    exchanges(&server, true);
    // Receives one-shot, each into a buffer of its own (a kernel with no
    // provided buffers), on a thread whose ring is set up so.
    let addr = server.addr();
    std::thread::spawn(move || {
        driver::without_armed_receives();
        exchanges_at(addr, true);
    })
    .join()
    .unwrap();
}

fn exchanges(server: &barrage_testkit::Server, uring: bool) {
    exchanges_at(server.addr(), uring);
}

/// A small answer, a large one, a 4 MiB POST, three pipelined and a
/// server close, on one connection.
fn exchanges_at(addr: std::net::SocketAddr, uring: bool) {
    {
        runtime().block_on(async {
            let io = open(addr, uring).await;
            let mut conn = Conn::new(io, None, Arc::new(Opened::new(0, 0, None, None)));
            let none = Bytes::new();
            // A small answer, then one of many receives (the buffer grows).
            for (path, len) in [("/", 6), ("/bytes/300000", 300_000), ("/", 6)] {
                let w = wire("GET", path, &none);
                let (mut f, mut st) = (framer(), Stamps::default());
                conn.exchange(&[(&w, 1)], &mut f, &mut st).await.unwrap();
                assert_eq!(
                    (f.head.code, f.body.len()),
                    (200, len),
                    "{path} uring={uring}"
                );
                assert!(st.head().is_some() && st.end().is_some());
            }
            // A body of 4 MiB: sends the kernel takes in parts.
            let big = Bytes::from(vec![b'a'; 4 << 20]);
            let w = wire("POST", "/echo", &big);
            let (mut f, mut st) = (framer(), Stamps::default());
            conn.exchange(&[(&w, 2)], &mut f, &mut st).await.unwrap();
            assert_eq!((f.head.code, f.body.len()), (200, 4 << 20), "uring={uring}");
            // Three pipelined: one write, three answers.
            let w = wire("GET", "/", &none);
            let batch = [(&w, 3), (&w, 4), (&w, 5)];
            let (mut f, mut st) = (framer(), Stamps::default());
            conn.exchange(&batch, &mut f, &mut st).await.unwrap();
            for _ in 0..2 {
                let (mut f, mut st) = (framer(), Stamps::default());
                conn.read_next(&mut f, &mut st).await.unwrap();
                assert_eq!(f.head.code, 200);
            }
            // The server closes after this one.
            let w = wire("GET", "/close", &none);
            let (mut f, mut st) = (framer(), Stamps::default());
            conn.exchange(&[(&w, 6)], &mut f, &mut st).await.unwrap();
            assert!(!conn.is_open());
        });
    }
}

/// Reads into `buf`, given up after `ms`.
async fn read_for(io: &mut BoxStream, buf: &mut [u8], ms: u64) -> Option<std::io::Result<usize>> {
    let read = poll_fn(|cx| {
        let mut rb = ReadBuf::new(buf);
        Pin::new(&mut *io)
            .poll_read(cx, &mut rb)
            .map_ok(|()| rb.filled().len())
    });
    tokio::time::timeout(Duration::from_millis(ms), read)
        .await
        .ok()
}

async fn write(io: &mut BoxStream, data: &[u8]) -> std::io::Result<usize> {
    poll_fn(|cx| Pin::new(&mut *io).poll_write(cx, data)).await
}

#[test]
fn a_dropped_stream_cancels_its_receive_and_still_sends_its_last_bytes() {
    need_uring();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let rt = runtime();
    let (mut peer, io) = rt.block_on(async {
        let mut io = open(addr, true).await;
        let (peer, _) = listener.accept().unwrap();
        // A receive in flight, given up (as -timeout does), then a send
        // written behind and the stream dropped at once: the bytes still
        // go out, and the socket closes.
        assert!(read_for(&mut io, &mut [0; 64], 30).await.is_none());
        assert_eq!(write(&mut io, b"last words").await.unwrap(), 10);
        (peer, io)
    });
    rt.block_on(async {
        drop(io);
        tokio::time::sleep(Duration::from_millis(30)).await;
    });
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    peer.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"last words");
}

#[test]
fn a_reset_is_the_next_reads_error() {
    need_uring();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    runtime().block_on(async {
        let mut io = open(addr, true).await;
        let (peer, _) = listener.accept().unwrap();
        // SO_LINGER 0: the close sends a reset.
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: a plain setsockopt on a socket this test owns.
        unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(&peer),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as u32,
            );
        }
        drop(peer);
        let got = read_for(&mut io, &mut [0; 64], 2000).await.unwrap();
        let e = got.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
        // Writes after it fail too (on the send itself or the next call).
        let mut failed = false;
        for _ in 0..20 {
            if write(&mut io, b"x").await.is_err() {
                failed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(failed);
    });
}

#[test]
fn a_new_runtime_on_the_thread_gets_a_new_reaper() {
    need_uring();
    let server = barrage_testkit::Server::http();
    for _ in 0..3 {
        runtime().block_on(async {
            let mut io = open(server.addr(), true).await;
            write(&mut io, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            let mut got = Vec::new();
            while !got.ends_with(b"hello\n") {
                let mut buf = [0; 512];
                let n = read_for(&mut io, &mut buf, 2000).await.unwrap().unwrap();
                assert!(n > 0);
                got.extend_from_slice(&buf[..n]);
            }
        });
    }
}

#[test]
fn a_stream_polled_on_another_thread_fails_cleanly() {
    need_uring();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let io = runtime().block_on(open(addr, true));
    let (peer, _) = listener.accept().unwrap();
    let e = std::thread::spawn(move || {
        let mut io = io;
        runtime().block_on(async { read_for(&mut io, &mut [0; 8], 500).await })
    })
    .join()
    .unwrap();
    let e = e.unwrap().unwrap_err();
    assert!(e.to_string().contains("another thread"), "{e}");
    peer.shutdown(Shutdown::Both).unwrap();
}

/// `n` io_uring connections to `listener`, each with a receive armed
/// and waiting, and their peers.
async fn waiting(listener: &TcpListener, n: usize) -> (Vec<BoxStream>, Vec<std::net::TcpStream>) {
    let addr = listener.local_addr().unwrap();
    let mut ios = Vec::new();
    let mut peers = Vec::new();
    for _ in 0..n {
        let mut io = open(addr, true).await;
        peers.push(listener.accept().unwrap().0);
        assert!(read_for(&mut io, &mut [0; 64], 1).await.is_none());
        ios.push(io);
    }
    (ios, peers)
}

#[test]
fn waiting_connections_hold_no_receive_buffer() {
    need_uring();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    runtime().block_on(async {
        let (ios, _peers) = waiting(&listener, 200).await;
        // 200 receives armed, none with a buffer of its own.
        assert_eq!(driver::held(), (200, 0));
        drop(ios);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(driver::held(), (0, 0));
    });
}

#[test]
fn more_answers_than_provided_buffers_are_all_read() {
    need_uring();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    runtime().block_on(async {
        // 700 connections armed, then each peer answers before anyone
        // reads: the thread's 512 buffers run out, and the receives past
        // them end and are read one-shot.
        let (mut ios, mut peers) = waiting(&listener, 700).await;
        for (k, peer) in peers.iter_mut().enumerate() {
            std::io::Write::write_all(peer, format!("answer number {k}").as_bytes()).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        for (k, io) in ios.iter_mut().enumerate() {
            let want = format!("answer number {k}");
            let mut got = Vec::new();
            while got.len() < want.len() {
                // Read in small pieces: a buffer is read across calls.
                let mut buf = [0; 5];
                let n = read_for(io, &mut buf, 2000).await.unwrap().unwrap();
                assert!(n > 0);
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got, want.as_bytes());
        }
        assert!(
            driver::STARVED.get() >= 700 - 512,
            "{}",
            driver::STARVED.get()
        );
        // A peer's close is the end of its stream.
        drop(peers);
        for io in &mut ios {
            let n = read_for(io, &mut [0; 8], 2000).await.unwrap().unwrap();
            assert_eq!(n, 0);
        }
    });
}

#[test]
fn a_ring_slot_stays_small() {
    // Two a waiting request (its send and its armed receive), in tables
    // that grow 512 at a time: 104 bytes with a `VecDeque` of
    // completions and a `usize` send offset, 88 now.
    let slot = std::mem::size_of::<driver::Slot>();
    assert!(slot <= 88, "a ring slot: {slot} bytes");
}
