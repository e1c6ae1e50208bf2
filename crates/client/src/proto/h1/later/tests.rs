use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    os::fd::AsRawFd,
    sync::Arc,
};

use super::*;
use crate::{
    proto::h1::{ring::RingConn, testing},
    transport::{opened::Opened, ring_tls::RingStream},
};

fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (server, _) = l.accept().unwrap();
    (client, server)
}

/// A pair whose client stamps arrivals, once the kernel does: its first
/// stamps come after deferred work (a fresh host gave none at once).
fn stamping() -> (TcpStream, TcpStream) {
    let (client, mut server) = pair();
    assert!(stamp_arrivals(client.as_raw_fd()));
    let mut buf = Vec::with_capacity(8);
    for _ in 0..500 {
        server.write_all(b"x").unwrap();
        std::thread::sleep(Duration::from_millis(10));
        buf.clear();
        if let Ok(Got::Bytes(_, at)) = recv_now(client.as_raw_fd(), &mut buf) {
            if at > 0 {
                return (client, server);
            }
        }
    }
    panic!("the kernel stamped no arrival in 5 s");
}

#[test]
fn an_answer_read_late_keeps_the_time_it_came() {
    let (client, mut server) = stamping();
    let mut buf = Vec::with_capacity(64);
    assert!(matches!(
        recv_now(client.as_raw_fd(), &mut buf),
        Ok(Got::Nothing)
    ));
    let before = Stamps::now();
    server.write_all(b"HTTP/1.1 200 OK\r\n\r\n").unwrap();
    // Read 50 ms after it came: its stamp is when it came, at least
    // those 50 ms before the read, and not before it was written.
    std::thread::sleep(Duration::from_millis(50));
    let got = recv_now(client.as_raw_fd(), &mut buf).unwrap();
    let read = Stamps::now();
    let Got::Bytes(n, at) = got else {
        panic!("nothing read")
    };
    assert_eq!(&buf[..n], b"HTTP/1.1 200 OK\r\n\r\n");
    assert!(at >= before, "stamped before it was written");
    assert!(read - at >= 50_000_000, "stamped as read, not as it came");
    drop(server);
    assert!(matches!(
        recv_now(client.as_raw_fd(), &mut buf),
        Ok(Got::End)
    ));
}

#[test]
fn waits_are_set_as_durations() {
    assert_eq!(duration("2ms"), Some(Duration::from_millis(2)));
    assert_eq!(duration("500us"), Some(Duration::from_micros(500)));
    assert_eq!(duration("1s"), Some(Duration::from_secs(1)));
    assert_eq!(duration("ms"), None);
    assert_eq!(duration("3h"), None);
}

#[test]
fn a_read_waits_only_while_the_loop_sleeps_near() {
    assert_eq!(soon(), None);
    let wake = sleeping_until(Instant::now() + Duration::from_micros(300));
    let at = soon().expect("a wake 300 µs off is near");
    drop(wake);
    // Ready at once: the loop woke since.
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut f = std::pin::pin!(next_wake(at));
    assert!(f.as_mut().poll(&mut cx).is_ready());
    assert_eq!(soon(), None, "no wake ahead");
    let _far = sleeping_until(Instant::now() + Duration::from_secs(5));
    assert_eq!(soon(), None, "a wake 5 s off is not near");
}

/// A request on a ring connection allowed to wait: its answer, in long
/// before, is not taken until the loop's wake, and then ends when it came.
#[test]
fn a_request_takes_its_answer_at_the_wake() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Its stamps on before the exchange's socket is opened.
    let _stamping = stamping();
    let (answered, sent) = std::sync::mpsc::channel();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 1024];
        let _ = s.read(&mut buf).unwrap();
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .unwrap();
        answered.send(()).unwrap();
        s
    });
    let mut rt = monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
        .enable_timer()
        .build()
        .unwrap();
    rt.block_on(async {
        let (stream, _) = crate::proto::h1::ring::connect(addr).await.unwrap();
        let opened = Arc::new(Opened::new(0, 0, None, None));
        let mut conn = RingConn::new(RingStream::Plain(stream), opened);
        let wire = testing::wire("GET", "/", &bytes::Bytes::new());
        let (mut framer, mut stamps) = (testing::framer(), Stamps::default());
        let wake = sleeping_until(Instant::now() + Duration::from_millis(1));
        conn.may_wait(true);
        let requests = [(&wire, 1)];
        let mut exchange = Box::pin(conn.exchange(&requests, &mut framer, &mut stamps));
        // Until the server has answered (and 50 ms more), the exchange
        // waits for the wake.
        let mut waited = 0;
        while sent.try_recv().is_err() && waited < 1000 {
            assert!(
                poll_once(&mut exchange).await.is_pending(),
                "answered before the wake"
            );
            monoio::time::sleep(Duration::from_millis(10)).await;
            waited += 1;
        }
        monoio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            poll_once(&mut exchange).await.is_pending(),
            "answered before the wake"
        );
        let woke = Stamps::now();
        drop(wake);
        let done = loop {
            if let Poll::Ready(r) = poll_once(&mut exchange).await {
                break r;
            }
            monoio::time::sleep(Duration::from_millis(1)).await;
        };
        assert!(done.is_ok());
        drop(exchange);
        assert_eq!(framer.head.code, 200);
        assert!(
            stamps.end > 0 && woke - stamps.end >= 50_000_000,
            "ended as read"
        );
    });
    drop(server.join());
}

/// `f` polled once.
async fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(std::pin::Pin::new(&mut *f).poll(cx))).await
}
