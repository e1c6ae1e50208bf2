//! Answers read as events: which requests get a tape (`-stream`,
//! `-ws-events`, server-streaming gRPC methods), and an exchange on one.

use super::{words, Client};
use crate::{PreparedTarget, Response};

impl Client {
    /// Whether `target`'s answers are read as events: HTTP with
    /// `-stream`, WebSocket with `-ws-events`, a server-streaming gRPC
    /// method whenever there is a spec (the attack's always has one).
    pub(crate) fn streamed(&self, target: &PreparedTarget) -> bool {
        let Some(spec) = &self.stream else {
            return false;
        };
        if target.ws {
            self.ws.events() > 0
        } else if target.grpc {
            self.shape.grpc_streams.contains(target.uri.path())
        } else {
            spec.http
        }
    }

    /// `exchange` under `-timeout`, on a tape of its own when answers are
    /// read as events ([`Client::streamed`]).
    pub(crate) async fn taped(
        &self,
        target: &PreparedTarget,
        exchange: impl std::future::Future<Output = Result<Response, crate::Failure>> + Send,
    ) -> Result<Response, crate::Failure> {
        let Some(spec) = self.stream.as_ref().filter(|_| self.streamed(target)) else {
            return self.limited(target, exchange).await;
        };
        let tape = crate::Tape::new(spec);
        // A stream refused (an event past -max-event-bytes) stops reading
        // at once: its record already failed, and reading on to -timeout
        // held its connection and buffers for nothing.
        let read = crate::events::UntilRefused::new(self.limited(target, exchange));
        let r = crate::events::TAPE.scope(tape.clone(), read).await;
        words::streamed(r, &tape)
    }
}
