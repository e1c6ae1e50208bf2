//! Two futures raced on a ring thread.

use std::future::Future;

/// Whichever of `a` and `b` ends first (both are polled in turn; neither
/// is `Send`, so no select of tokio's).
pub(crate) async fn first_of<A: Future, B: Future>(a: A, b: B) {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    std::future::poll_fn(|cx| {
        if a.as_mut().poll(cx).is_ready() || b.as_mut().poll(cx).is_ready() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}
