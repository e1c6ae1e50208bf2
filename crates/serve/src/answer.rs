//! What `barrage serve`'s routes answer with: a whole body or a paced
//! one, and the numbers and durations their queries give.

use std::{convert::Infallible, time::Duration};

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Frame;

/// A body to answer with: whole, or streamed.
pub(crate) type Answer = BoxBody<Bytes, Infallible>;

/// A whole body.
pub(crate) fn whole(b: Bytes) -> Answer {
    Full::new(b).boxed()
}

/// A query's `key=value` as a duration (`50ms`, `1s`), else `default`.
pub(crate) fn query_duration(query: &str, key: &str, default: Duration) -> Duration {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| barrage_model::duration::parse(v).ok())
        .filter(|ns| *ns >= 0)
        .map_or(default, |ns| Duration::from_nanos(ns as u64))
}

/// A query's `key=N`, else `default`.
pub(crate) fn query_count(query: &str, key: &str, default: u64) -> u64 {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(default)
}

/// The most events or tokens a stream sends.
pub(crate) const MAX_EVENTS: u64 = 100_000;

/// A body of events, each due at a time of its own after the first.
pub(crate) struct Paced {
    events: std::collections::VecDeque<Bytes>,
    gap: Duration,
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl Paced {
    pub(crate) fn body(events: Vec<Bytes>, first: Duration, gap: Duration) -> Answer {
        Paced {
            events: events.into(),
            gap,
            sleep: Box::pin(tokio::time::sleep(first)),
        }
        .boxed()
    }
}

impl hyper::body::Body for Paced {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        use std::task::Poll;
        if self.events.is_empty() {
            return Poll::Ready(None);
        }
        if std::future::Future::poll(self.sleep.as_mut(), cx).is_pending() {
            return Poll::Pending;
        }
        let next = self.sleep.deadline() + self.gap;
        self.sleep.as_mut().reset(next);
        let e = self.events.pop_front().unwrap_or_default();
        Poll::Ready(Some(Ok(Frame::data(e))))
    }
}
