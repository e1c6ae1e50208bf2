//! One writer for any of the three encodings, for `dump` and `encode`.

use std::io::{self, Write};

use crate::{CsvWriter, Encoder, Hit, JsonWriter};

/// An output encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// vegeta's 12 CSV columns.
    Csv,
    /// JSON lines.
    Json,
    /// barrage's binary stream.
    Bin,
}

/// An encoding name that is none of `csv`, `json` and `bin`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown encoding {0:?} (use csv, json or bin)")]
pub struct UnknownEncoding(pub String);

impl std::str::FromStr for Encoding {
    type Err = UnknownEncoding;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "csv" => Ok(Encoding::Csv),
            "json" => Ok(Encoding::Json),
            "bin" => Ok(Encoding::Bin),
            _ => Err(UnknownEncoding(s.to_string())),
        }
    }
}

/// Records written in one of the encodings.
pub enum AnyWriter<W: Write> {
    /// CSV.
    Csv(CsvWriter<W>),
    /// JSON lines.
    Json(JsonWriter<W>),
    /// The binary stream (boxed: its tables make it the largest by far).
    Bin(Box<Encoder<W>>),
}

impl<W: Write> AnyWriter<W> {
    /// A writer of `encoding` on `out` (the binary stream writes its
    /// header at once).
    pub fn new(encoding: Encoding, out: W) -> io::Result<Self> {
        Ok(match encoding {
            Encoding::Csv => AnyWriter::Csv(CsvWriter::new(out)),
            Encoding::Json => AnyWriter::Json(JsonWriter::new(out)),
            Encoding::Bin => AnyWriter::Bin(Box::new(Encoder::new(out)?)),
        })
    }

    /// Writes one record.
    pub fn write(&mut self, hit: &Hit) -> io::Result<()> {
        match self {
            AnyWriter::Csv(w) => w.write(hit),
            AnyWriter::Json(w) => w.write(hit),
            AnyWriter::Bin(w) => w.write(hit),
        }
    }

    /// Flushes what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        match self {
            AnyWriter::Csv(w) => w.flush(),
            AnyWriter::Json(w) => w.flush(),
            AnyWriter::Bin(w) => w.flush(),
        }
    }
}
