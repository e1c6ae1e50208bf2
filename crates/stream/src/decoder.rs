use std::io::{self, Read};

use barrage_model::Hit;

use crate::{
    cursor::Cursor,
    error::StreamError,
    item::{decode_item, Lately},
    wire::{Prev, FORMAT_VERSION, FRAME_HEADER_LEN, HEADER_LEN, MAGIC, MAX_FRAME},
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
    prev: Prev,
    /// Whether header lines are read into records ([`Decoder::skip_headers`]).
    headers: bool,
    /// The run's facts read so far ([`Decoder::meta`]).
    meta: Vec<(String, String)>,
    /// The addresses last parsed (once, not once per record) and the
    /// frame's recent local addresses.
    lately: Lately,
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

/// Checks a stream header's version; `at` is where the header starts.
fn check_version(header: &[u8], at: u64) -> Result<(), StreamError> {
    let version = u16::from_le_bytes([header[4], header[5]]);
    if version > FORMAT_VERSION {
        return Err(StreamError::NewerVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if version == 0 {
        return Err(StreamError::Corrupt {
            offset: at + 4,
            what: "format version 0".into(),
        });
    }
    Ok(())
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
        check_version(&header, 0)?;
        Ok(Decoder {
            input,
            offset: HEADER_LEN as u64,
            frame: Vec::new(),
            frame_start: HEADER_LEN as u64,
            pos: 0,
            table: vec![String::new()],
            prev: Prev::default(),
            headers: true,
            meta: Vec::new(),
            lately: Lately::default(),
        })
    }

    /// Leaves header lines out of the records read from now on (they are
    /// still checked): for readers that need none, such as `report`.
    pub fn skip_headers(&mut self) {
        self.headers = false;
    }

    /// The facts about the run read so far (`arrivals` = `poisson:SEED`),
    /// in the order written: the writer puts them before the first
    /// record.
    pub fn meta(&self) -> &[(String, String)] {
        &self.meta
    }

    /// The attack's self-audit samples read so far (at most
    /// [`crate::item::MAX_AUDITS`]), in the order written.
    pub fn audits(&self) -> &[barrage_model::Audit] {
        &self.lately.audits
    }

    /// Live control's markers read so far (at most
    /// [`crate::item::MAX_MARKERS`]), in the order written.
    pub fn markers(&self) -> &[barrage_model::Marker] {
        &self.lately.markers
    }

    /// The scraped server samples read so far (at most
    /// [`crate::item::MAX_SAMPLES`]), in the order written.
    pub fn samples(&self) -> &[barrage_model::ServerSample] {
        &self.lately.samples
    }

    /// Bytes of the input consumed so far (up to the end of the last frame read).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Loads the next frame; `Ok(false)` at a clean end of the input.
    /// Another stream's header where a frame would start (`cat a.bin
    /// b.bin`: the magic is no frame length, being over [`MAX_FRAME`])
    /// starts that stream: its records follow, with a string table of
    /// their own.
    fn next_frame(&mut self) -> Result<bool, StreamError> {
        let mut fh = [0u8; FRAME_HEADER_LEN];
        let mut n = read_full(&mut self.input, &mut fh)?;
        while n >= MAGIC.len() && fh[..MAGIC.len()] == MAGIC {
            if n < HEADER_LEN {
                return Err(StreamError::Truncated {
                    offset: self.offset,
                    what: "incomplete stream header",
                });
            }
            check_version(&fh[..HEADER_LEN], self.offset)?;
            self.table = vec![String::new()];
            self.offset += HEADER_LEN as u64;
            fh.copy_within(HEADER_LEN..n, 0);
            n -= HEADER_LEN;
            n += read_full(&mut self.input, &mut fh[n..])?;
        }
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
        self.prev = Prev::default();
        self.lately.new_frame();
        Ok(true)
    }

    /// Every complete record of `input`, and the error that ended the
    /// reading early, if any (records before it are kept).
    pub fn read_all(input: R) -> (Vec<Hit>, Option<StreamError>) {
        let mut dec = match Decoder::new(input) {
            Ok(d) => d,
            Err(e) => return (Vec::new(), Some(e)),
        };
        let mut out = Vec::new();
        loop {
            let mut h = Hit::default();
            match dec.read(&mut h) {
                Ok(true) => out.push(h),
                Ok(false) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    /// Reads the next record into `hit`. `Ok(false)` means a clean end.
    pub fn read(&mut self, hit: &mut Hit) -> Result<bool, StreamError> {
        loop {
            if self.pos >= self.frame.len() && !self.next_frame()? {
                return Ok(false);
            }
            let at = self.frame_start + self.pos as u64;
            let mut c = Cursor {
                buf: &self.frame,
                pos: self.pos,
            };
            let res = decode_item(
                &mut c,
                &mut self.table,
                hit,
                &mut self.prev,
                self.headers,
                &mut self.meta,
                &mut self.lately,
            );
            match res {
                Ok(is_hit) => {
                    self.pos = c.pos;
                    if is_hit {
                        return Ok(true);
                    }
                }
                // An attack that could not start (an item no record has,
                // so looked for only here, off the records' path).
                Err(_) if self.frame.get(self.pos) == Some(&(crate::wire::ITEM_ABORT as u8)) => {
                    let mut c = Cursor {
                        buf: &self.frame,
                        pos: self.pos + 1,
                    };
                    let reason = c.str().map_or("(reason unreadable)".into(), |s| {
                        barrage_model::words::cut(s, 1000, false)
                    });
                    self.pos = self.frame.len();
                    return Err(StreamError::Aborted { reason });
                }
                Err(what) => {
                    return Err(StreamError::Corrupt {
                        offset: at,
                        what: what.to_string(),
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aborted_stream_says_why_and_holds_no_record() {
        let bytes = crate::aborted_stream("bad flag -c");
        let mut d = Decoder::new(&bytes[..]).unwrap();
        let mut hit = Hit::default();
        match d.read(&mut hit) {
            Err(StreamError::Aborted { reason }) => assert_eq!(reason, "bad flag -c"),
            other => panic!("{other:?}"),
        }
    }
    use crate::wire::{put_varint, put_zigzag, F_HEADERS, ITEM_HIT, ITEM_HIT_FIRST_BYTE, ITEM_STR};

    /// A version 2 stream of one frame holding `payload`.
    fn stream(payload: &[u8]) -> Vec<u8> {
        let mut s = MAGIC.to_vec();
        s.extend_from_slice(&2u16.to_le_bytes());
        s.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        s.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        s.extend_from_slice(payload);
        s
    }

    /// One record of kind 3: latency 1000 ns, `after_head` ns of it after
    /// the response's head.
    fn record(after_head: u64) -> Vec<u8> {
        let mut p = Vec::new();
        put_varint(&mut p, ITEM_HIT_FIRST_BYTE);
        p.push(0);
        for _ in 0..3 {
            put_zigzag(&mut p, 0);
        }
        for v in [1000, 200, 6, after_head] {
            put_varint(&mut p, v);
        }
        p
    }

    #[test]
    fn streams_one_after_another_are_read_as_one() {
        // cat a.bin b.bin, with an empty stream (a header alone) between.
        let a = stream(&record(400));
        let empty = stream(b"")[..HEADER_LEN].to_vec();
        let both = [a.clone(), empty.clone(), empty, a].concat();
        let (hits, err) = Decoder::read_all(&both[..]);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(hits.len(), 2);
        // A second header cut short is a truncation at its byte.
        let cut = [stream(&record(400)), MAGIC[..2].to_vec(), MAGIC.to_vec()].concat();
        let (hits, err) = Decoder::read_all(&cut[..]);
        assert_eq!(hits.len(), 1);
        assert!(err.is_some());
        let short = [stream(&record(400)), MAGIC.to_vec()].concat();
        let (hits, err) = Decoder::read_all(&short[..]);
        assert_eq!(hits.len(), 1);
        assert!(
            matches!(
                err,
                Some(StreamError::Truncated {
                    what: "incomplete stream header",
                    ..
                })
            ),
            "{err:?}"
        );
    }

    #[test]
    fn the_first_byte_is_read_and_checked_against_the_latency() {
        let (hits, err) = Decoder::read_all(&stream(&record(400))[..]);
        assert!(err.is_none(), "{err:?}");
        assert_eq!((hits[0].latency, hits[0].first_byte), (1000, 600));
        let (hits, err) = Decoder::read_all(&stream(&record(1001))[..]);
        assert!(hits.is_empty());
        let err = err.expect("an error").to_string();
        assert!(
            err.contains("first byte after the end of the response"),
            "{err}"
        );
    }

    /// One record of `n` header lines, each naming table string 1 (`name`)
    /// with an empty value.
    fn headers_record(name: &str, n: u64) -> Vec<u8> {
        let mut p = Vec::new();
        put_varint(&mut p, ITEM_STR);
        put_varint(&mut p, name.len() as u64);
        p.extend_from_slice(name.as_bytes());
        put_varint(&mut p, ITEM_HIT);
        p.push(F_HEADERS);
        for _ in 0..3 {
            put_zigzag(&mut p, 0);
        }
        for v in [1000, 200, 0] {
            put_varint(&mut p, v);
        }
        put_varint(&mut p, n);
        for _ in 0..n {
            put_varint(&mut p, 1);
            put_varint(&mut p, 0);
        }
        p
    }

    #[test]
    fn what_one_record_may_allocate_is_bounded() {
        // Up to the limit: read, or skipped for readers that need none.
        let ok = stream(&headers_record("a", Hit::MAX_HEADERS as u64));
        let (hits, err) = Decoder::read_all(&ok[..]);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(hits[0].headers.len(), Hit::MAX_HEADERS);
        let mut d = Decoder::new(&ok[..]).unwrap();
        d.skip_headers();
        let mut hit = Hit::default();
        assert!(d.read(&mut hit).unwrap());
        assert!(hit.headers.is_empty());
        // One more line, or a long name repeated past the byte limit, is
        // refused before it is allocated.
        let many = stream(&headers_record("a", Hit::MAX_HEADERS as u64 + 1));
        let err = Decoder::read_all(&many[..])
            .1
            .expect("an error")
            .to_string();
        assert!(err.contains("header lines in one record"), "{err}");
        let name = "n".repeat(1 << 20);
        let long = stream(&headers_record(&name, 65));
        let err = Decoder::read_all(&long[..])
            .1
            .expect("an error")
            .to_string();
        assert!(err.contains("bytes a record may hold"), "{err}");
    }
}
