//! The seam between the protocols and `-stream`: what an exchange tells
//! as it reads an answer ([`Observe`]), and what observing it yields (a
//! request's events and their stamps, [`Taped`], kept in its
//! [`crate::Response`] whatever protocol carried it).
//!
//! Every room's exchange takes an observer by value: [`Unobserved`] (no
//! size, no calls made: a request that is not streamed pays nothing, its
//! futures as small as they were) or the request's tape (`events/`,
//! which cuts answers into events). A new kind of event reader (the LLM
//! mode's, say) is another `Observe`; no room changes.

use crate::core::stamps::Stamps;

/// What one request's stream came to.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Taped {
    /// Stamps, from `base`.
    pub stamps: Stamps,
    /// Events counted, stamped or not.
    pub count: u64,
    /// Lines that were not SSE (skipped, counted).
    pub malformed: u64,
    /// Why the stream is refused (an event past `-max-event-bytes`).
    pub error: Option<Box<str>>,
    /// Body bytes read, whatever became of the request (a record ended
    /// by `-timeout` said 0 after gigabytes had come).
    pub bytes: u64,
    /// The `event~` patterns some event matched, as typed.
    pub matched: Vec<String>,
    /// `-llm`: the stream's token counts, by source.
    pub tokens: Option<Box<barrage_model::Tokens>>,
}

/// What an exchange tells while it reads an answer. Called on the task
/// that polls the exchange, in the order the bytes came.
pub(crate) trait Observe: Clone + Send + Sync {
    /// The answer's head came, with its `Content-Type` if any.
    fn head(&self, content_type: Option<&[u8]>);
    /// Body bytes came in one read; `boundary`: they end a chunk, a DATA
    /// frame, or a read of an unchunked body.
    fn data(&self, bytes: &[u8], boundary: bool);
    /// A chunk ended (HTTP/1.1 chunked).
    fn boundary(&self);
    /// A whole message came (gRPC, WebSocket); whether it counts as an
    /// event (it passes `-event-filter`).
    fn message(&self, data: &[u8]) -> bool;
    /// The body ended.
    fn finish(&self);
}

/// No observer: a request whose answer is not read as events.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Unobserved;

impl Observe for Unobserved {
    fn head(&self, _: Option<&[u8]>) {}
    fn data(&self, _: &[u8], _: bool) {}
    fn boundary(&self) {}
    fn message(&self, _: &[u8]) -> bool {
        true
    }
    fn finish(&self) {}
}
