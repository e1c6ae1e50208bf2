//! `-pipeline N` in the open model: a request due while every connection
//! to its host is busy queues onto one that has fewer than N answers
//! outstanding, before a new connection opens. Such connections are each
//! driven by a task of their own ([`drive`]) that writes what is queued
//! on it as it comes and reads the answers in order, handing each to the
//! request that waits for it. Nothing is sent again: when the connection
//! closes with requests unanswered, each of them is an error record.

use std::{
    collections::{HashMap, VecDeque},
    future::poll_fn,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    task::Poll,
};

use tokio::sync::{mpsc, oneshot};

use super::{words::go_op, Client};
use crate::{
    core::key::Key,
    core::observe::Unobserved,
    proto::h1::own::{broken_off, response_of, target_wire},
    proto::h1::{
        self,
        shared::{Queued, SharedConn},
        Framer, Limits, Stamps,
    },
    PreparedTarget, Response,
};

/// The shared, pipelined connections of a worker thread's client, per
/// host.
#[derive(Default)]
pub(crate) struct Queues(Mutex<HashMap<Key, Vec<SharedConn>, foldhash::fast::RandomState>>);

impl Queues {
    /// Of the shared connections to `key`, the one owing the fewest
    /// answers if it owes fewer than `depth`; closed ones are dropped.
    fn with_room(&self, key: &Key, depth: usize) -> Option<SharedConn> {
        let mut hosts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let shared = hosts.get_mut(key)?;
        shared.retain(SharedConn::is_open);
        shared
            .iter()
            .filter(|c| c.owed() < depth)
            .min_by_key(|c| c.owed())
            .cloned()
    }

    /// Keeps a new shared connection to `key`.
    fn add(&self, key: &Key, conn: SharedConn) {
        let mut hosts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        hosts.entry(key.clone()).or_default().push(conn);
    }
}

impl Client {
    /// Sends `target` as request `seq` on a shared, pipelined connection
    /// (see the module docs). Redirects are recorded, not followed.
    pub(super) async fn send_queued(
        &self,
        target: &Arc<PreparedTarget>,
        seq: u64,
    ) -> Result<Response, crate::Failure> {
        let fail = |e: &dyn std::fmt::Display| {
            format!("{} \"{}\": {e}", go_op(&target.method_text), target.uri)
        };
        let key = target.key.as_ref().map_err(|e| fail(&e))?;
        let proxy = (!key.tls).then(|| self.pool.proxy(key)).flatten();
        target
            .wire
            .get_or_init(|| target_wire(&self.shape, target, proxy));
        loop {
            if let Some(shared) = self.queues.with_room(key, self.pipeline) {
                let (reply, answer) = oneshot::channel();
                shared.owed.fetch_add(1, Ordering::AcqRel);
                let job = Queued {
                    target: target.clone(),
                    seq,
                    reply,
                };
                if shared.tx.send(job).is_ok() {
                    return answer.await.unwrap_or_else(|_| {
                        Err(crate::Failure::from(fail(
                            &"pipelined request unanswered: the connection closed",
                        )))
                    });
                }
                // Its task ended meanwhile: another.
                continue;
            }
            let conn = Box::pin(self.pool.get(key)).await.map_err(|e| fail(&e))?;
            match conn.into_pipelined() {
                Ok(conn) => {
                    let (tx, rx) = mpsc::unbounded_channel();
                    let owed = Arc::new(AtomicUsize::new(0));
                    tokio::spawn(drive(conn, rx, owed.clone(), self.shape.limits));
                    self.queues.add(key, SharedConn { tx, owed });
                }
                // Not barrage's HTTP/1.1 (HTTP/2 by ALPN): sent as usual.
                Err(other) => {
                    self.pool.put(key, other);
                    return Box::pin(self.exchange(target, seq, None, Unobserved)).await;
                }
            }
        }
    }
}

/// A request written on the connection, waiting for its answer.
struct Waiting {
    job: Queued,
    framer: Framer,
    stamps: Stamps,
}

/// Drives a shared connection: writes each queued request as it comes
/// (several in one write when they come together) and reads the answers
/// in order. Ends when the connection closes or fails (every request
/// still owed an answer then gets an error), or when the pool lets go of
/// it.
async fn drive(
    mut conn: h1::Conn,
    mut rx: mpsc::UnboundedReceiver<Queued>,
    owed: Arc<AtomicUsize>,
    limits: Limits,
) {
    let mut waiting: VecDeque<Waiting> = VecDeque::new();
    let mut out: Vec<u8> = Vec::new();
    let mut written = 0usize;
    // Reads while nothing is owed only notice a close (or the server's
    // mistake); this framer is never completed.
    let mut idle = Framer::new(limits, false);
    let mut idle_head = Stamps::default();
    let mut taking = true;
    let why: String = poll_fn(|cx| loop {
        while taking && conn.is_open() {
            match rx.poll_recv(cx) {
                Poll::Ready(Some(job)) => {
                    let Some(wire) = job.target.wire.get() else {
                        let _ = job
                            .reply
                            .send(Err(crate::Failure::from("request not encoded")));
                        owed.fetch_sub(1, Ordering::AcqRel);
                        continue;
                    };
                    wire.write_to(job.seq, &mut out);
                    if wire.body_apart() {
                        out.extend_from_slice(wire.body());
                    }
                    let framer = Framer::new(limits, wire.head_request);
                    waiting.push_back(Waiting {
                        job,
                        framer,
                        stamps: Stamps::default(),
                    });
                }
                Poll::Ready(None) => taking = false,
                Poll::Pending => break,
            }
        }
        if written < out.len() {
            match conn.poll_write_bytes(cx, &out[written..]) {
                Poll::Ready(Ok(n)) => {
                    written += n;
                    if written == out.len() {
                        out.clear();
                        written = 0;
                    }
                    continue;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(e.to_string()),
                Poll::Pending => {}
            }
        }
        match waiting.front_mut() {
            Some(front) => match conn.poll_answer(cx, &mut front.framer, &mut front.stamps) {
                Poll::Ready(result) => {
                    let Some(done) = waiting.pop_front() else {
                        continue;
                    };
                    owed.fetch_sub(1, Ordering::AcqRel);
                    let t = &done.job.target;
                    let fail = |e: &dyn std::fmt::Display| {
                        format!("{} \"{}\": {e}", go_op(&t.method_text), t.uri)
                    };
                    let answer = match result {
                        Ok(()) => Ok(response_of(done.framer, done.stamps)),
                        Err(e) if done.framer.head_done() => {
                            Ok(broken_off(done.framer, done.stamps, fail(&e)))
                        }
                        Err(e) => Err(crate::Failure::from(fail(&format!(
                            "pipelined request unanswered: {e}"
                        )))),
                    };
                    // The first answered carries a new connection's costs.
                    let link = crate::Via::next_on(conn.opened());
                    let answer = answer.map(|mut r| {
                        r.link = Some(link);
                        r
                    });
                    let failed = !matches!(&answer, Ok(r) if r.error.is_none());
                    let _ = done.job.reply.send(answer);
                    if failed {
                        return Poll::Ready("the connection failed before its answer".into());
                    }
                    if !conn.is_open() {
                        return Poll::Ready("the server closed the connection".into());
                    }
                }
                Poll::Pending => return Poll::Pending,
            },
            None if !taking => return Poll::Ready(String::new()),
            None => {
                // Nothing owed: a read tells only that the server closed.
                return match conn.poll_answer(cx, &mut idle, &mut idle_head) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(_) => Poll::Ready("the server closed the connection".into()),
                };
            }
        }
    })
    .await;
    // Closed: no more requests are taken, and those still owed an answer
    // are told why.
    rx.close();
    while let Ok(job) = rx.try_recv() {
        waiting.push_back(Waiting {
            job,
            framer: Framer::new(limits, false),
            stamps: Stamps::default(),
        });
    }
    for w in waiting {
        owed.fetch_sub(1, Ordering::AcqRel);
        let t = &w.job.target;
        let _ = w.job.reply.send(Err(crate::Failure::from(format!(
            "{} \"{}\": pipelined request unanswered: {}",
            go_op(&t.method_text),
            t.uri,
            if why.is_empty() {
                "the connection closed"
            } else {
                &why
            }
        ))));
    }
}
