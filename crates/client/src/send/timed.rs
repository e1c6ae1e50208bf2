//! An exchange under a loop's kept `-timeout` timer (the closed model).

use std::pin::Pin;

use tokio::time::Sleep;

use super::{words::timed_out, Client};
use crate::{PreparedTarget, Response};

/// A boxed exchange under a loop's kept `-timeout` timer: its answer, or
/// `None` when the timer fires first. (Hand-written rather than
/// `tokio::select!`, whose output slot a closed-model loop would hold
/// for the whole attack.)
struct Timed<'a, F> {
    exchange: Pin<Box<F>>,
    timer: Pin<&'a mut Sleep>,
}

impl<F: std::future::Future> std::future::Future for Timed<'_, F> {
    type Output = Option<F::Output>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if let std::task::Poll::Ready(r) = self.exchange.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(r));
        }
        self.timer.as_mut().poll(cx).map(|()| None)
    }
}

impl Client {
    /// `exchange` under `-timeout` on a loop's kept timer.
    // An async block, not an async fn: see `send_serial`.
    #[allow(clippy::manual_async_fn)]
    pub(super) fn on_timer<'b, F>(
        &'b self,
        target: &'b PreparedTarget,
        timer: Pin<&'b mut Sleep>,
        exchange: Pin<Box<F>>,
    ) -> impl std::future::Future<Output = Result<Response, crate::Failure>> + Send + 'b
    where
        F: std::future::Future<Output = Result<Response, crate::Failure>> + Send + 'b,
    {
        async move {
            let Some(t) = self.timeout_for(target) else {
                return exchange.await;
            };
            let mut timer = timer;
            timer.as_mut().reset(tokio::time::Instant::now() + t);
            match (Timed { exchange, timer }).await {
                Some(r) => r,
                None => Err(timed_out(target, t)),
            }
        }
    }
}
