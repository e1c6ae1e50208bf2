//! What a request waiting for its answer holds on the heap, counted by
//! an allocator that tallies live blocks by size: the held-connections
//! cell of scripts/bench (18,000 requests waiting at once) is this
//! figure times 18,000, plus the allocator's rounding. The same for an
//! open SSE stream (the streams cell's 1,000), before its stamps grow.
//! And how many blocks a whole request allocates, counted the same way.

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::{
        atomic::{AtomicIsize, AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use barrage_client::size_class;
use barrage_testkit::{RawServer, Script};

/// Live blocks by size (sizes past the table in its last slot).
const SLOTS: usize = 4097;

struct Tally;

static LIVE: [AtomicIsize; SLOTS] = [const { AtomicIsize::new(0) }; SLOTS];

fn slot(size: usize) -> usize {
    size.min(SLOTS - 1)
}

thread_local! {
    /// Whether this thread's blocks are counted: the client's runtime's
    /// are, the test server's threads' (in this process too) are not.
    static COUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Blocks allocated (and grown) on counted threads.
static MADE: AtomicUsize = AtomicUsize::new(0);

fn count(size: usize, by: isize) {
    if COUNTED.with(|c| c.get()) {
        LIVE[slot(size)].fetch_add(by, Ordering::Relaxed);
        if by > 0 {
            MADE.fetch_add(1, Ordering::Relaxed);
        }
    }
}

unsafe impl GlobalAlloc for Tally {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size(), 1);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(layout.size(), -1);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        count(layout.size(), -1);
        count(new, 1);
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static ALLOC: Tally = Tally;

fn live() -> Vec<isize> {
    LIVE.iter().map(|c| c.load(Ordering::Relaxed)).collect()
}

const WAITING: usize = 400;

/// One count at a time: the tally is the process's.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The heap each of `WAITING` requests to `script`'s server holds while
/// it waits (in mimalloc's classes), and its blocks as text.
fn heap_per_request(script: Script, cfg: barrage_client::ClientConfig) -> (usize, String) {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let server = RawServer::start(script);
    COUNTED.with(|c| c.set(true));
    let url = server.url("/");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let shared = barrage_client::Shared::new(&cfg).unwrap();
    let client = Arc::new(rt.block_on(async { barrage_client::Client::sharing(&cfg, &shared) }));
    let target = Arc::new(
        barrage_client::PreparedTarget::new(barrage_model::Target {
            method: "GET".into(),
            url: url.clone(),
            ..Default::default()
        })
        .unwrap(),
    );
    let spawn = |n: usize, from: u64| {
        let _in = rt.enter();
        (0..n as u64)
            .map(|i| {
                let (client, target) = (client.clone(), target.clone());
                // As the open model spawns a request: its future boxed.
                tokio::spawn(Box::pin(async move {
                    let _ = client.send(&target, from + i).await;
                }))
            })
            .collect::<Vec<_>>()
    };
    // A first few, so that what is made once (the pool's maps, the
    // runtime's timer wheel, thread-local buffers) is made before the count.
    let warm = spawn(8, 0);
    let settle = |want: u64| {
        let until = Instant::now() + Duration::from_secs(20);
        while server.requests() < want {
            assert!(
                Instant::now() < until,
                "the server got {} of {want} requests",
                server.requests()
            );
            rt.block_on(async { tokio::time::sleep(Duration::from_millis(5)).await });
        }
        rt.block_on(async { tokio::time::sleep(Duration::from_millis(50)).await });
    };
    settle(8);
    let before = live();
    let tasks = spawn(WAITING, 8);
    settle(8 + WAITING as u64);
    let after = live();
    COUNTED.with(|c| c.set(false));
    for t in warm.into_iter().chain(tasks) {
        t.abort();
    }
    per_one(&before, &after)
}

/// The heap each of `WAITING` more tasks took between two counts (in
/// mimalloc's classes), and the blocks most of them took, as text.
fn per_one(before: &[isize], after: &[isize]) -> (usize, String) {
    let mut bytes = 0usize;
    let mut rows = Vec::new();
    for (size, (a, b)) in after.iter().zip(before).enumerate() {
        let more = a - b;
        if more > 0 {
            bytes += size_class(size) * more as usize;
        }
        if more >= WAITING as isize / 2 {
            rows.push(format!(
                "{size} B (class {}) x {:.2}",
                size_class(size),
                more as f64 / WAITING as f64
            ));
        }
    }
    (bytes / WAITING, rows.join(", "))
}

#[test]
fn a_waiting_request_holds_little_heap() {
    let (per, rows) = heap_per_request(
        Script::Stall,
        barrage_client::ClientConfig {
            timeout: Some(Duration::from_secs(30)),
            ..Default::default()
        },
    );
    eprintln!("heap per waiting request: {per} B, in mimalloc's classes; blocks: {rows}");
    // A memory bound, not a timing one: 18,000 waiting requests at this
    // size are the held-connections cell's heap (1,291 bytes when the
    // exchange's future came down to 512).
    assert!(per <= 1_330, "heap per waiting request: {per} B ({rows})");
}

/// An open SSE stream, one event in and more to come: what the streams
/// cell of scripts/bench holds per stream before its stamps grow.
#[test]
fn an_open_stream_holds_little_heap() {
    let spec = barrage_client::StreamSpec {
        mode: barrage_client::StreamMode::Sse,
        http: true,
        max_events: 100_000,
        max_event_bytes: 1 << 20,
        filter: None,
        patterns: Vec::new(),
        llm: None,
        llm_usage: Default::default(),
    };
    let (per, rows) = heap_per_request(
        Script::Reply {
            bytes: b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: a\n\n",
            trickle: false,
            close: false,
        },
        barrage_client::ClientConfig {
            timeout: Some(Duration::from_secs(30)),
            stream: Some(spec),
            ..Default::default()
        },
    );
    eprintln!("heap per open stream: {per} B, in mimalloc's classes; blocks: {rows}");
    assert!(per <= 2_100, "heap per open stream: {per} B ({rows})");
}

/// A held WebSocket connection (`-hold`), open and idle: what the held
/// cell's WebSocket row holds per connection, but for the attack's own
/// state in its task.
#[test]
fn a_held_websocket_holds_little_heap() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let server = barrage_testkit::WsServer::start();
    COUNTED.with(|c| c.set(true));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cfg = barrage_client::ClientConfig {
        timeout: Some(Duration::from_secs(30)),
        ..Default::default()
    };
    let shared = barrage_client::Shared::new(&cfg).unwrap();
    let client = Arc::new(rt.block_on(async { barrage_client::Client::sharing(&cfg, &shared) }));
    let target = Arc::new(
        barrage_client::PreparedTarget::new(barrage_model::Target {
            method: "GET".into(),
            url: server.url("/"),
            body: bytes::Bytes::from_static(b"hi"),
            ..Default::default()
        })
        .unwrap(),
    );
    let spawn = |n: usize| {
        let _in = rt.enter();
        (0..n)
            .map(|_| {
                let (client, target) = (client.clone(), target.clone());
                tokio::spawn(Box::pin(async move {
                    // Opened boxed, as `-hold` opens it.
                    if let Ok(mut held) = Box::pin(client.ws_hold(&target)).await {
                        let _ = held.idle_until(None).await;
                    }
                }))
            })
            .collect::<Vec<_>>()
    };
    let settle = |want: u64| {
        let until = Instant::now() + Duration::from_secs(20);
        while server.open() < want {
            assert!(Instant::now() < until, "{} of {want} open", server.open());
            rt.block_on(async { tokio::time::sleep(Duration::from_millis(5)).await });
        }
        rt.block_on(async { tokio::time::sleep(Duration::from_millis(50)).await });
    };
    let warm = spawn(8);
    settle(8);
    let before = live();
    let tasks = spawn(WAITING);
    settle(8 + WAITING as u64);
    let after = live();
    COUNTED.with(|c| c.set(false));
    for t in warm.into_iter().chain(tasks) {
        t.abort();
    }
    let (per, rows) = per_one(&before, &after);
    eprintln!("heap per held websocket: {per} B, in mimalloc's classes; blocks: {rows}");
    // The connection (304 bytes of it in its task's future) and its
    // idle read's future, 440 bytes, are most of it: 1,717 bytes.
    assert!(per <= 1_800, "heap per held websocket: {per} B ({rows})");
}

/// Issue 61: the client's seam did not cost allocations. A keep-alive GET
/// answered by testkit's server, awaited one after another on the
/// client's thread: the blocks each request allocates (the exchange's
/// box and the answer's body), counted: 2.00 on the layout before the
/// seam (commit c3105fa) and after it.
#[test]
fn a_request_allocates_as_few_blocks_as_before() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let server = barrage_testkit::Server::http();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cfg = barrage_client::ClientConfig::default();
    let shared = barrage_client::Shared::new(&cfg).unwrap();
    let client = rt.block_on(async { barrage_client::Client::sharing(&cfg, &shared) });
    let target = Arc::new(
        barrage_client::PreparedTarget::new(barrage_model::Target {
            method: "GET".into(),
            url: server.url("/"),
            ..Default::default()
        })
        .unwrap(),
    );
    const N: u64 = 1_000;
    let made = rt.block_on(async {
        for seq in 0..50 {
            client.send(&target, seq).await.unwrap();
        }
        COUNTED.with(|c| c.set(true));
        let before = MADE.load(Ordering::Relaxed);
        for seq in 50..50 + N {
            let r = client.send(&target, seq).await.unwrap();
            assert_eq!(r.code, 200);
        }
        let made = MADE.load(Ordering::Relaxed) - before;
        COUNTED.with(|c| c.set(false));
        made
    });
    let per = made as f64 / N as f64;
    eprintln!("blocks allocated per request: {per:.2}");
    assert!(per <= 2.01, "blocks allocated per request: {per:.2}");
}
