//! What every protocol shares and none owns: the prepared target, one
//! request as an exchange takes it ([`ask`]), the answer and its record
//! ([`response`]), how answers are read ([`shape`]), the host a
//! connection goes to ([`key`]) and the client's error ([`error`]).
//! Nothing here imports `proto/`, `send/` or `events/` (held by
//! `tests/layout.rs`).

pub(crate) mod ask;
pub(crate) mod error;
pub(crate) mod key;
pub(crate) mod observe;
pub(crate) mod response;
pub(crate) mod shape;
pub(crate) mod stamps;
pub(crate) mod target;
pub(crate) mod wire;
