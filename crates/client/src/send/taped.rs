//! Answers read as events: which requests get a tape (`-stream`,
//! `-ws-events`, server-streaming gRPC methods), and an exchange on one.

use super::{words, Client};
use crate::{
    events::{scoped, UntilRefused},
    PreparedTarget, Response, Tape,
};

impl Client {
    /// Whether `target`'s answers are read as events: HTTP with
    /// `-stream`, WebSocket with `-ws-events`, a server-streaming gRPC
    /// method whenever there is a spec (the attack's always has one).
    pub(crate) fn streamed(&self, target: &PreparedTarget) -> bool {
        let Some(spec) = &self.stream else {
            return false;
        };
        if target.ws {
            self.shape.ws_events > 0
        } else if target.grpc {
            self.shape.grpc_streams.contains(target.uri.path())
        } else {
            spec.http
        }
    }

    /// A new tape for `target`'s answer, when it is read as events
    /// ([`Client::streamed`]): its exchange's observer.
    pub(crate) fn tape_for(&self, target: &PreparedTarget) -> Option<Tape> {
        let spec = self.stream.as_ref().filter(|_| self.streamed(target))?;
        Some(Tape::new(spec))
    }

    /// `exchange` (observed by [`crate::events::OnTask`]) under `-timeout` with `tape`
    /// as its task's, the events taken from `tape` into the response.
    pub(crate) async fn taped(
        &self,
        target: &PreparedTarget,
        tape: Tape,
        exchange: impl std::future::Future<Output = Result<Response, crate::Failure>> + Send,
    ) -> Result<Response, crate::Failure> {
        // A stream refused (an event past -max-event-bytes) stops reading
        // at once: its record already failed, and reading on to -timeout
        // held its connection and buffers for nothing.
        let read = UntilRefused::new(self.limited(target, exchange));
        let r = scoped(tape.clone(), read).await;
        words::streamed(r, &tape)
    }
}
