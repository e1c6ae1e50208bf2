//! An exchange under a loop's kept `-timeout` timer.

use std::pin::Pin;

use tokio::time::Sleep;

/// A boxed exchange under a loop's kept `-timeout` timer: its answer, or
/// `None` when the timer fires first. (Hand-written rather than
/// `tokio::select!`, whose output slot a closed-model loop would hold
/// for the whole attack.)
pub(super) struct Timed<'a, F> {
    pub(super) exchange: Pin<Box<F>>,
    pub(super) timer: Pin<&'a mut Sleep>,
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
