//! barrage's own HTTP/1.1 engine: requests encoded once per target
//! ([`wire`]), responses framed by a pure reader on `httparse`
//! ([`framer`]), connections that hold no buffer while they wait
//! ([`conn`]). hyper's HTTP/1.1 path stays selectable (`-h1-engine
//! hyper`); HTTP/2 is hyper's.

pub mod conn;
pub mod framer;
pub(crate) mod shared;
pub mod wire;

pub use conn::{Conn, ExchangeError, Stamps};
pub use framer::{Fed, FrameError, Framer, Head, Limits, MAX_INTERIM};
pub use wire::{Parts, Wire, SEQ_HEADER};

/// `-max-header-bytes`: the longest response head (and chunked trailers)
/// read. Larger is an error record naming the flag. Go's transport allows
/// 10 MiB; a head over 64 KiB is almost always a broken server, and the
/// bytes are held while it arrives.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;
