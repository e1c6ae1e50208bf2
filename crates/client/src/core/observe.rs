//! What observing an answer yields: a request's events and their stamps
//! ([`Taped`]), kept in its [`crate::Response`] whatever protocol carried
//! it. The observer that cuts answers into events is `events/`.

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
}
