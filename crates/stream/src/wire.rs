//! The binary layout shared by the encoder and the decoder.

use serde::{Deserialize, Serialize};

/// First four bytes of every binary result stream. The first byte is not
/// printable, so a stream is never mistaken for CSV or JSON.
pub const MAGIC: [u8; 4] = [0xB7, b'B', b'R', b'G'];

/// The format version this build writes and the newest it reads.
pub const FORMAT_VERSION: u16 = 1;

/// Header length: magic + u16 version.
pub(crate) const HEADER_LEN: usize = 6;

/// Frame header length: u32 payload length + u32 CRC-32.
pub(crate) const FRAME_HEADER_LEN: usize = 8;

/// Largest frame payload the decoder accepts, bytes; checked before reading.
pub const MAX_FRAME: u32 = 256 << 20;

/// Payload size at which the encoder closes a frame, bytes.
pub(crate) const FRAME_TARGET: usize = 64 << 10;

/// Strings a table holds before the encoder resets it (bounds memory on
/// both sides when errors or URLs are all different).
pub(crate) const MAX_TABLE: usize = 1 << 16;

/// One item of a frame's payload.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) enum Item<'a> {
    /// Appends a string to the table; its index is the table's length before.
    Str(&'a str),
    /// One record.
    #[serde(borrow)]
    Hit(WireHit<'a>),
    /// Empties the table (index 0 stays the empty string).
    Reset,
}

/// A record on the wire. Deltas restart at every frame.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct WireHit<'a> {
    /// `seq` minus the previous record's `seq` in this frame.
    pub seq_delta: i64,
    /// `scheduled` minus the previous record's `scheduled` in this frame.
    pub scheduled_delta: i64,
    /// `timestamp - scheduled`, ns.
    pub lag: i64,
    pub latency: u64,
    pub code: u16,
    pub bytes_out: u64,
    pub bytes_in: u64,
    pub error: u32,
    pub method: u32,
    pub url: u32,
    pub attack: u32,
    pub body: &'a [u8],
    /// (name index, value).
    #[serde(borrow)]
    pub headers: Vec<(u32, &'a str)>,
}
