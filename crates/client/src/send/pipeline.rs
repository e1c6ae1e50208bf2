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
    proto::h1::{Framer, Stamps, Wire},
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
        let wires: Vec<&Wire> = batch
            .iter()
            .map(|(t, _)| t.wire.get_or_init(|| target_wire(&self.shape, t, proxy)))
            .collect();
        let requests: Vec<(&Wire, u64)> = wires
            .iter()
            .zip(batch)
            .map(|(w, (_, seq))| (*w, *seq))
            .collect();
        let mut failed: Option<String> = None;
        // Requests answered (or failed) so far.
        let mut answered = 0usize;
        let timed_out_at = {
            let work = pin!(async {
                for (i, (t, _)) in batch.iter().enumerate() {
                    let mut framer = Framer::new(self.shape.limits, wires[i].head_request);
                    let mut stamps = Stamps::default();
                    let r = if i == 0 {
                        conn.exchange(&requests, &mut framer, &mut stamps).await
                    } else {
                        conn.read_next(&mut framer, &mut stamps).await
                    };
                    let fail = |e: &dyn std::fmt::Display| {
                        format!("{} \"{}\": {e}", go_op(&t.method_text), t.uri)
                    };
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
                    each(i, self.judged(result), done);
                    answered += 1;
                    if broken {
                        failed = Some("the connection failed before its answer".into());
                        return;
                    }
                    if !conn.is_open() && i + 1 < batch.len() {
                        failed = Some("the server closed the connection".into());
                        return;
                    }
                }
            });
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
        // The requests left unanswered: each a record saying why.
        for (i, (t, _)) in batch.iter().enumerate().skip(answered) {
            let result = match (timed_out_at, &failed) {
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
            let done = match &result {
                Ok(r) => r.end_at.unwrap_or_else(Instant::now),
                Err(_) => Instant::now(),
            };
            each(i, result, done);
        }
    }
}
