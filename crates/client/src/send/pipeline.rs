//! `-pipeline N`: up to N requests written on one HTTP/1.1 connection in
//! one write before their answers, which arrive in order (RFC 9112
//! §9.3.2) and are matched to them in order. Nothing is sent again: when
//! the connection closes with requests unanswered, each of them is a
//! record with an error.

use std::{pin::pin, sync::Arc, time::Instant};

use super::{
    words::{go_op, timed_out},
    Client, LoopState,
};
use crate::{
    proto::h1::own::{broken_off, response_of, target_wire},
    proto::h1::{Framer, Limits, Pipe, Stamps, Wire},
    proto::Conn,
    PreparedTarget, Response,
};

impl Client {
    /// `-pipeline`: requests a closed-model loop writes at once.
    pub fn pipeline(&self) -> usize {
        self.pipeline
    }

    /// Sends `batch` (requests with their sequence numbers) pipelined on
    /// one connection and reads their answers in order: `each` is called
    /// once per request, in order, with its index in `batch`, its outcome
    /// and when that was complete (or failed). (A callback rather than a
    /// list of outcomes: each outcome moved through a list and out again
    /// was a third of the pipelined model's `memcpy`.) A batch whose
    /// requests go to more than one host, or a connection that is not
    /// barrage's HTTP/1.1 (HTTP/2, `-h1-engine hyper`), is sent one request
    /// after another instead. Redirects are recorded, not followed.
    pub async fn send_pipelined<F>(
        &self,
        batch: &[(Arc<PreparedTarget>, u64)],
        serial: &mut LoopState,
        mut each: F,
    ) where
        F: FnMut(usize, Result<Response, crate::Failure>, Instant) + Send,
    {
        let Some((first, _)) = batch.first() else {
            return;
        };
        let key = match &first.key {
            _ if first.ws || first.grpc => return self.one_by_one(batch, serial, each).await,
            Ok(k) if batch.iter().all(|(t, _)| t.key.as_ref().ok() == Some(k)) => k,
            _ => return self.one_by_one(batch, serial, each).await,
        };
        let conn = match self.take_kept(&mut serial.kept, key) {
            Some(c) => c,
            None => match self.pool.get(key).await {
                Ok(c) => c,
                Err(e) => {
                    for (i, (t, _)) in batch.iter().enumerate() {
                        let e = format!("{} \"{}\": {e}", go_op(&t.method_text), t.uri);
                        each(i, Err(crate::Failure(e)), Instant::now());
                    }
                    return;
                }
            },
        };
        let mut conn = match conn.into_pipelined() {
            Ok(c) => c,
            // hyper's HTTP/1.1, HTTP/2, HTTP/3: one request at a time.
            Err(other) => {
                self.keep(Some(&mut serial.kept), key, other);
                return self.one_by_one(batch, serial, each).await;
            }
        };
        let proxy = (!key.tls).then(|| self.pool.proxy(key)).flatten();
        let requests: Vec<(&Wire, u64)> = batch
            .iter()
            .map(|(t, seq)| {
                let wire = t.wire.get_or_init(|| target_wire(&self.shape, t, proxy));
                (wire, *seq)
            })
            .collect();
        let mut got = Answered::default();
        let judged = |i, r, at| each(i, self.judged(r), at);
        let timed_out_at = {
            let work = pin!(answers(
                &mut conn,
                batch,
                &requests,
                self.shape.limits,
                &mut got,
                judged
            ));
            match self.timeout {
                None => {
                    work.await;
                    None
                }
                Some(t) => {
                    serial.timer.as_mut().reset(tokio::time::Instant::now() + t);
                    tokio::select! {
                        biased;
                        () = work => None,
                        () = serial.timer.as_mut() => Some(t),
                    }
                }
            }
        };
        unanswered(batch, &got, timed_out_at, &mut each);
        if timed_out_at.is_none() && conn.is_open() && !conn.has_leftover() {
            self.keep(Some(&mut serial.kept), key, Conn::from(conn));
        }
    }

    /// A batch sent one request after another.
    async fn one_by_one<F>(
        &self,
        batch: &[(Arc<PreparedTarget>, u64)],
        serial: &mut LoopState,
        mut each: F,
    ) where
        F: FnMut(usize, Result<Response, crate::Failure>, Instant) + Send,
    {
        for (i, (t, seq)) in batch.iter().enumerate() {
            let result = self.send_serial(t, *seq, serial).await;
            let done = ended_at(&result);
            each(i, result, done);
        }
    }
}

/// How far a pipelined batch's answers got: how many came (or failed),
/// and why the rest will not.
#[derive(Default)]
pub(super) struct Answered {
    count: usize,
    failed: Option<String>,
}

/// Writes `batch` (its `requests`' wires in one write) on `conn` and reads
/// the answers in order, calling `each` for each as it comes; stops at the
/// first that breaks the connection, and `got` says how far it went (the
/// caller's timeout may drop this future).
pub(super) async fn answers<C: Pipe, F>(
    conn: &mut C,
    batch: &[(Arc<PreparedTarget>, u64)],
    requests: &[(&Wire, u64)],
    limits: Limits,
    got: &mut Answered,
    mut each: F,
) where
    F: FnMut(usize, Result<Response, crate::Failure>, Instant),
{
    for (i, ((t, _), (wire, _))) in batch.iter().zip(requests).enumerate() {
        let mut framer = Framer::new(limits, wire.head_request);
        let mut stamps = Stamps::default();
        let r = if i == 0 {
            conn.exchange(requests, &mut framer, &mut stamps).await
        } else {
            conn.read_next(&mut framer, &mut stamps).await
        };
        let fail =
            |e: &dyn std::fmt::Display| format!("{} \"{}\": {e}", go_op(&t.method_text), t.uri);
        let result = match r {
            Ok(()) => Ok(response_of(framer, stamps)),
            Err(e) if framer.head_done() => Ok(broken_off(framer, stamps, fail(&e))),
            Err(e) if requests.len() > 1 => Err(crate::Failure::from(fail(&format!(
                "pipelined request unanswered: {e}"
            )))),
            Err(e) => Err(crate::Failure::from(fail(&e))),
        };
        // The first of the batch carries a new connection's costs.
        let link = crate::Via::next_on(conn.opened());
        let result = result.map(|mut r| {
            r.link = Some(link);
            r
        });
        let broken = result.as_ref().map_or(true, |r| r.error.is_some());
        let done = stamps.end().unwrap_or_else(Instant::now);
        each(i, result, done);
        got.count += 1;
        if broken {
            got.failed = Some("the connection failed before its answer".into());
            return;
        }
        if !conn.is_open() && i + 1 < batch.len() {
            got.failed = Some("the server closed the connection".into());
            return;
        }
    }
}

/// The requests of `batch` left unanswered (past `got`): each a record
/// saying why (`timed_out_at`: the `-timeout` that ran out).
pub(super) fn unanswered<F>(
    batch: &[(Arc<PreparedTarget>, u64)],
    got: &Answered,
    timed_out_at: Option<std::time::Duration>,
    mut each: F,
) where
    F: FnMut(usize, Result<Response, crate::Failure>, Instant),
{
    for (i, (t, _)) in batch.iter().enumerate().skip(got.count) {
        let result = match (timed_out_at, &got.failed) {
            (Some(d), _) => Err(timed_out(t, d)),
            (None, why) => Err(crate::Failure::from(format!(
                "{} \"{}\": pipelined request unanswered: {}",
                go_op(&t.method_text),
                t.uri,
                why.as_deref().unwrap_or("the connection closed")
            ))),
        };
        each(i, result, Instant::now());
    }
}

/// When `result` was complete: its last byte's time where the engine noted
/// it, else now.
pub(super) fn ended_at(result: &Result<Response, crate::Failure>) -> Instant {
    match result {
        Ok(r) => r.end_at.unwrap_or_else(Instant::now),
        Err(_) => Instant::now(),
    }
}
