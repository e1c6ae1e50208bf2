//! What a request waiting for its answer holds in its futures.

use std::sync::Arc;

/// What a request waiting for its answer holds is mostly its futures:
/// at 18,000 connections held, each byte here is 18 KB of RSS. The
/// exchange's future stays in mimalloc's 512-byte size class (it was
/// 1,160 bytes with hyper's and the redirects' state inline, then
/// 896 with the whole connection enum and the write's borrows in it,
/// then 600 with the framer's wide fields, an error closure and a
/// redirect's wire and count in it; it is 512). `tests/held_heap.rs`
/// counts the whole heap.
#[test]
fn a_waiting_requests_futures_stay_small() {
    let cfg = crate::ClientConfig::default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let shared = crate::Shared::new(&cfg).unwrap();
    let client = rt.block_on(async { crate::Client::sharing(&cfg, &shared) });
    let t = Arc::new(
        crate::PreparedTarget::new(barrage_model::Target {
            method: "GET".into(),
            url: "http://127.0.0.1:1/".into(),
            ..Default::default()
        })
        .unwrap(),
    );
    let unobserved = crate::core::observe::Unobserved;
    let exchange = std::mem::size_of_val(&client.exchange(&t, 0, None, unobserved));
    assert!(exchange <= 512, "exchange future: {exchange} bytes");
    let send = std::mem::size_of_val(&client.send(&t, 0));
    assert!(send <= 192, "send future: {send} bytes");
    // A streamed request's own block (`-stream`, boxed in `send`): its
    // tape is one pointer, kept twice (224 bytes, where it was 264 and
    // mimalloc's 320 class with the tape's base and cap beside it).
    let spec = Arc::new(crate::StreamSpec {
        mode: crate::StreamMode::Sse,
        http: true,
        max_events: 10,
        max_event_bytes: 1024,
        filter: None,
        patterns: Vec::new(),
        llm: None,
        llm_usage: Default::default(),
    });
    let tape = crate::Tape::new(&spec);
    let exchange = Box::pin(client.exchange(&t, 0, None, crate::events::OnTask));
    let taped = client.taped(&t, tape, exchange);
    let taped = std::mem::size_of_val(&taped);
    assert!(taped <= 224, "streamed request's future: {taped} bytes");
    let opened = std::mem::size_of::<crate::transport::opened::Opened>();
    assert!(opened <= 96, "a connection's costs: {opened} bytes");
    let opened = std::sync::Arc::new(crate::transport::opened::Opened::default());
    let mut conn = crate::proto::h1::Conn::new(Box::new(tokio::io::duplex(64).0), None, opened);
    let w = t
        .wire
        .get_or_init(|| crate::proto::h1::own::target_wire(&client.shape, &t, None));
    let mut framer = crate::proto::h1::Framer::new(client.shape.limits, false);
    let mut stamps = crate::proto::h1::Stamps::default();
    let reqs = [(w, 0u64)];
    let inner = std::mem::size_of_val(&conn.exchange(&reqs, &mut framer, &mut stamps));
    assert!(inner <= 96, "connection exchange future: {inner} bytes");
    let mut framer2 = crate::proto::h1::Framer::new(client.shape.limits, false);
    let mut stamps2 = crate::proto::h1::Stamps::default();
    // A streamed exchange's observer adds nothing to either future.
    let on_task = crate::events::OnTask;
    let observed = conn.exchange_observed(&reqs, &mut framer2, &mut stamps2, on_task);
    let observed = std::mem::size_of_val(&observed);
    assert!(
        observed <= 96,
        "observed connection exchange: {observed} bytes"
    );
    let streamed = std::mem::size_of_val(&client.exchange(&t, 0, None, on_task));
    assert!(
        streamed <= 512,
        "streamed exchange future: {streamed} bytes"
    );
    let framer = std::mem::size_of::<crate::proto::h1::Framer>();
    assert!(framer <= 176, "framer: {framer} bytes");
}
