//! barrage-stream: how results travel between barrage processes.
//!
//! The binary stream (what `attack` writes) is a 6-byte header (magic
//! `\xB7BRG` + format version, u16 LE) followed by frames. A frame is a u32 LE
//! payload length, a u32 LE CRC-32 of the payload, then the payload: items,
//! each either a string added to the stream's string table or a hit whose
//! method, URL, attack name, error and header names refer to that table by
//! index (left out when unchanged from the previous record). Integers use
//! postcard's varint and zigzag encodings; times are delta-coded within a
//! frame, so a one-target record is about fifteen bytes ([`wire`] has the
//! layout). Frames are the unit of durability: a stream cut short
//! still yields every record of every complete frame, and the decoder reports
//! the byte offset where it stopped.
//!
//! - [`Encoder`] turns [`Hit`]s into frames on any `Write`.
//! - [`Decoder`] reads them back into a reused [`Hit`] (no allocation per
//!   record once warm).
//! - [`CsvWriter`]/[`CsvReader`], [`JsonWriter`]/[`JsonReader`]: vegeta's 12
//!   CSV columns and JSON-lines fields (plus `scheduled`).
//! - [`HitReader`]: opens any of the three, detected from the first bytes.
//!
//! ```
//! use barrage_model::Hit;
//! use barrage_stream::{Decoder, Encoder};
//! let mut enc = Encoder::new(Vec::new()).unwrap();
//! enc.write(&Hit { seq: 7, code: 200, url: "http://a/".into(), ..Hit::default() }).unwrap();
//! let bytes = enc.finish().unwrap();
//! let mut dec = Decoder::new(&bytes[..]).unwrap();
//! let mut hit = Hit::default();
//! assert!(dec.read(&mut hit).unwrap());
//! assert_eq!((hit.seq, hit.code, hit.url.as_str()), (7, 200, "http://a/"));
//! assert!(!dec.read(&mut hit).unwrap());
//! ```
#![deny(missing_docs)]

mod csv;
mod cursor;
mod decoder;
mod encoder;
mod error;
mod item;
mod json;
mod merge;
pub mod output;
mod reader;
pub mod wire;
mod writer;

pub use barrage_model::Hit;
pub use csv::{CsvReader, CsvWriter};
pub use decoder::Decoder;
pub use encoder::{aborted_stream, Encoder};
pub use error::StreamError;
pub use item::{MAX_AUDITS, MAX_MARKERS, MAX_META, MAX_SAMPLES};
pub use json::{JsonReader, JsonWriter};
pub use merge::{Merge, OpenError, Origin};
pub use reader::HitReader;
pub use wire::{FORMAT_VERSION, MAGIC, MAX_EVENTS, MAX_FRAME};
pub use writer::{AnyWriter, Encoding, UnknownEncoding};
