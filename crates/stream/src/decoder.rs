use std::io::{self, Read};

use barrage_model::Hit;

use crate::{
    error::StreamError,
    wire::{Item, FORMAT_VERSION, FRAME_HEADER_LEN, HEADER_LEN, MAGIC, MAX_FRAME},
};

/// Reads a binary result stream, one [`Hit`] at a time.
///
/// [`Decoder::read`] fills a caller-owned `Hit`, reusing its buffers, and
/// returns `Ok(false)` only at a clean end (a frame boundary). Every error
/// carries the byte offset where the stream went wrong; records returned
/// before it are complete and correct.
pub struct Decoder<R: Read> {
    input: R,
    /// Bytes consumed from the input so far.
    offset: u64,
    frame: Vec<u8>,
    /// Offset of the current frame's payload in the input.
    frame_start: u64,
    pos: usize,
    table: Vec<String>,
    prev_seq: u64,
    prev_scheduled: i64,
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl<R: Read> Decoder<R> {
    /// Reads and checks the stream header.
    pub fn new(mut input: R) -> Result<Self, StreamError> {
        let mut header = [0u8; HEADER_LEN];
        let n = read_full(&mut input, &mut header)?;
        if n < MAGIC.len() || header[..4] != MAGIC {
            return Err(StreamError::not_a_stream(&header[..n]));
        }
        if n < HEADER_LEN {
            return Err(StreamError::Truncated {
                offset: 0,
                what: "incomplete stream header",
            });
        }
        let version = u16::from_le_bytes([header[4], header[5]]);
        if version > FORMAT_VERSION {
            return Err(StreamError::NewerVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if version == 0 {
            return Err(StreamError::Corrupt {
                offset: 4,
                what: "format version 0".into(),
            });
        }
        Ok(Decoder {
            input,
            offset: HEADER_LEN as u64,
            frame: Vec::new(),
            frame_start: HEADER_LEN as u64,
            pos: 0,
            table: vec![String::new()],
            prev_seq: 0,
            prev_scheduled: 0,
        })
    }

    /// Bytes of the input consumed so far (up to the end of the last frame read).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Loads the next frame; `Ok(false)` at a clean end of the input.
    fn next_frame(&mut self) -> Result<bool, StreamError> {
        let mut fh = [0u8; FRAME_HEADER_LEN];
        let n = read_full(&mut self.input, &mut fh)?;
        if n == 0 {
            return Ok(false);
        }
        let at = self.offset;
        if n < FRAME_HEADER_LEN {
            return Err(StreamError::Truncated {
                offset: at,
                what: "incomplete frame header",
            });
        }
        let len = u32::from_le_bytes([fh[0], fh[1], fh[2], fh[3]]);
        let crc = u32::from_le_bytes([fh[4], fh[5], fh[6], fh[7]]);
        if len > MAX_FRAME {
            return Err(StreamError::Corrupt {
                offset: at,
                what: format!("frame length {len} exceeds the maximum {MAX_FRAME}"),
            });
        }
        self.frame.clear();
        // `take` + `read_to_end` grows with the data actually present, so a
        // corrupt length cannot make us allocate what the input does not hold.
        let got = (&mut self.input)
            .take(len as u64)
            .read_to_end(&mut self.frame)?;
        if got < len as usize {
            return Err(StreamError::Truncated {
                offset: at,
                what: "incomplete frame (the writer was interrupted or the file was cut)",
            });
        }
        if crc32fast::hash(&self.frame) != crc {
            return Err(StreamError::Corrupt {
                offset: at,
                what: "frame checksum mismatch".into(),
            });
        }
        self.frame_start = at + FRAME_HEADER_LEN as u64;
        self.offset = self.frame_start + len as u64;
        self.pos = 0;
        self.prev_seq = 0;
        self.prev_scheduled = 0;
        Ok(true)
    }

    /// Reads the next record into `hit`. `Ok(false)` means a clean end.
    pub fn read(&mut self, hit: &mut Hit) -> Result<bool, StreamError> {
        loop {
            if self.pos >= self.frame.len() && !self.next_frame()? {
                return Ok(false);
            }
            let at = self.frame_start + self.pos as u64;
            let corrupt = |what: String| StreamError::Corrupt { offset: at, what };
            let (item, rest) = postcard::take_from_bytes::<Item<'_>>(&self.frame[self.pos..])
                .map_err(|e| corrupt(format!("undecodable record: {e}")))?;
            let consumed = self.frame.len() - self.pos - rest.len();
            match item {
                Item::Str(s) => {
                    if self.table.len() > crate::wire::MAX_TABLE {
                        return Err(corrupt("string table overflow".into()));
                    }
                    self.table.push(s.to_owned());
                }
                Item::Reset => self.table.truncate(1),
                Item::Hit(w) => {
                    let table = &self.table;
                    let get = |i: u32| {
                        table
                            .get(i as usize)
                            .ok_or_else(|| corrupt(format!("string index {i} not in the table")))
                    };
                    set(&mut hit.error, get(w.error)?);
                    set(&mut hit.method, get(w.method)?);
                    set(&mut hit.url, get(w.url)?);
                    set(&mut hit.attack, get(w.attack)?);
                    hit.headers.clear();
                    for (name, value) in &w.headers {
                        hit.headers.push((get(*name)?.clone(), (*value).to_owned()));
                    }
                    hit.body.clear();
                    hit.body.extend_from_slice(w.body);
                    hit.seq = self.prev_seq.wrapping_add(w.seq_delta as u64);
                    hit.scheduled = self.prev_scheduled.wrapping_add(w.scheduled_delta);
                    hit.timestamp = hit.scheduled.wrapping_add(w.lag);
                    hit.latency = w.latency;
                    hit.code = w.code;
                    hit.bytes_out = w.bytes_out;
                    hit.bytes_in = w.bytes_in;
                    self.prev_seq = hit.seq;
                    self.prev_scheduled = hit.scheduled;
                    self.pos += consumed;
                    return Ok(true);
                }
            }
            self.pos += consumed;
        }
    }
}

fn set(dst: &mut String, src: &str) {
    dst.clear();
    dst.push_str(src);
}
