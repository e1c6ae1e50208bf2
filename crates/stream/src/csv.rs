use std::io::{self, Read, Write};

use barrage_model::Hit;
use base64::{engine::general_purpose::STANDARD as B64, Engine};

use crate::error::StreamError;

/// Writes hits as vegeta's CSV: 12 columns, no header row, quoted as Go's
/// `encoding/csv` quotes.
///
/// Columns: unix ns timestamp, code, latency ns, bytes out, bytes in, error,
/// base64 body, attack, seq, method, URL, base64 of the headers in wire form.
pub struct CsvWriter<W: Write> {
    out: W,
    line: Vec<u8>,
}

impl<W: Write> CsvWriter<W> {
    /// A writer on `out` (buffer it: each record is one `write_all`).
    pub fn new(out: W) -> Self {
        CsvWriter {
            out,
            line: Vec::with_capacity(256),
        }
    }

    /// Writes one record.
    pub fn write(&mut self, hit: &Hit) -> io::Result<()> {
        let l = &mut self.line;
        l.clear();
        let mut int = itoa_buf();
        push_int(l, &mut int, hit.timestamp as i128);
        l.push(b',');
        push_int(l, &mut int, hit.code as i128);
        l.push(b',');
        push_int(l, &mut int, hit.latency as i128);
        l.push(b',');
        push_int(l, &mut int, hit.bytes_out as i128);
        l.push(b',');
        push_int(l, &mut int, hit.bytes_in as i128);
        l.push(b',');
        push_field(l, &hit.error);
        l.push(b',');
        push_b64(l, &hit.body);
        l.push(b',');
        push_field(l, &hit.attack);
        l.push(b',');
        push_int(l, &mut int, hit.seq as i128);
        l.push(b',');
        push_field(l, &hit.method);
        l.push(b',');
        push_field(l, &hit.url);
        l.push(b',');
        if !hit.headers.is_empty() {
            let mut wire = Vec::new();
            for (k, v) in &hit.headers {
                wire.extend_from_slice(k.as_bytes());
                wire.extend_from_slice(b": ");
                wire.extend_from_slice(v.as_bytes());
                wire.extend_from_slice(b"\r\n");
            }
            wire.extend_from_slice(b"\r\n");
            push_b64(l, &wire);
        }
        l.push(b'\n');
        self.out.write_all(l)
    }

    /// Flushes the writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes and returns the writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Appends the base64 of `data` to `out`.
fn push_b64(out: &mut Vec<u8>, data: &[u8]) {
    let at = out.len();
    out.resize(at + base64::encoded_len(data.len(), true).unwrap_or(0), 0);
    let n = B64.encode_slice(data, &mut out[at..]).unwrap_or(0);
    out.truncate(at + n);
}

fn itoa_buf() -> [u8; 40] {
    [0; 40]
}

fn push_int(out: &mut Vec<u8>, buf: &mut [u8; 40], v: i128) {
    let neg = v < 0;
    let mut u = v.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        buf[i] = b'-';
    }
    out.extend_from_slice(&buf[i..]);
}

/// Go's `encoding/csv` rule: quote fields holding a comma, quote, CR or LF,
/// fields starting with a space, and the field `\.`.
fn push_field(out: &mut Vec<u8>, field: &str) {
    let needs = !field.is_empty()
        && (field == r"\."
            || field.contains([',', '"', '\r', '\n'])
            || field.chars().next().is_some_and(char::is_whitespace));
    if !needs {
        out.extend_from_slice(field.as_bytes());
        return;
    }
    out.push(b'"');
    for b in field.bytes() {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// Reads vegeta CSV results (9- or 12-column, as vegeta has written them).
/// `scheduled` is not in the CSV and is set to the timestamp.
pub struct CsvReader<R: Read> {
    inner: ::csv::Reader<R>,
    record: ::csv::ByteRecord,
}

impl<R: Read> CsvReader<R> {
    /// A reader on `input`.
    pub fn new(input: R) -> Self {
        let inner = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(input);
        CsvReader {
            inner,
            record: ::csv::ByteRecord::new(),
        }
    }

    /// Reads the next record into `hit`; `Ok(false)` at the end.
    pub fn read(&mut self, hit: &mut Hit) -> Result<bool, StreamError> {
        let line = self.inner.position().line();
        let more = self.inner.read_byte_record(&mut self.record).map_err(|e| {
            let line = e.position().map_or(line, |p| p.line());
            match e.into_kind() {
                ::csv::ErrorKind::Io(io) => StreamError::Io(io),
                other => StreamError::BadLine {
                    line,
                    what: format!("bad CSV: {other:?}"),
                },
            }
        })?;
        if !more {
            return Ok(false);
        }
        let line = self.record.position().map_or(line, |p| p.line());
        let bad = |what: String| StreamError::BadLine { line, what };
        let r = &self.record;
        if r.len() != 9 && r.len() != 12 {
            return Err(bad(format!("expected 12 CSV columns, found {}", r.len())));
        }
        let text = |i: usize, name: &str| {
            std::str::from_utf8(&r[i])
                .map_err(|_| bad(format!("column {} ({name}) is not UTF-8", i + 1)))
        };
        fn num<T: std::str::FromStr>(
            s: &str,
            col: usize,
            name: &str,
            line: u64,
        ) -> Result<T, StreamError> {
            s.parse().map_err(|_| StreamError::BadLine {
                line,
                what: format!("column {col} ({name}): {s:?} is not a number"),
            })
        }
        hit.timestamp = num(text(0, "timestamp")?, 1, "timestamp", line)?;
        hit.scheduled = hit.timestamp;
        hit.code = num(text(1, "code")?, 2, "code", line)?;
        hit.latency = num(text(2, "latency")?, 3, "latency", line)?;
        hit.first_byte = 0;
        hit.proto = barrage_model::Proto::Unknown;
        hit.name.clear();
        hit.link = None;
        hit.events.clear();
        hit.event_count = 0;
        hit.event_malformed = 0;
        hit.session = None;
        hit.bytes_out = num(text(3, "bytes_out")?, 4, "bytes out", line)?;
        hit.bytes_in = num(text(4, "bytes_in")?, 5, "bytes in", line)?;
        set(&mut hit.error, text(5, "error")?);
        hit.body.clear();
        B64.decode_vec(&r[6], &mut hit.body)
            .map_err(|e| bad(format!("column 7 (body): bad base64: {e}")))?;
        set(&mut hit.attack, text(7, "attack")?);
        hit.seq = num(text(8, "seq")?, 9, "seq", line)?;
        hit.headers.clear();
        if r.len() == 12 {
            set(&mut hit.method, text(9, "method")?);
            set(&mut hit.url, text(10, "url")?);
            let wire = B64
                .decode(&r[11])
                .map_err(|e| bad(format!("column 12 (headers): bad base64: {e}")))?;
            parse_wire_headers(&wire, &mut hit.headers);
        } else {
            hit.method.clear();
            hit.url.clear();
        }
        Ok(true)
    }
}

/// `Name: value\r\n...` into pairs (tolerant: skips lines without a colon).
fn parse_wire_headers(wire: &[u8], out: &mut Vec<(String, String)>) {
    let text = String::from_utf8_lossy(wire);
    for line in text.split("\r\n") {
        if let Some((k, v)) = line.split_once(':') {
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
}

fn set(dst: &mut String, src: &str) {
    dst.clear();
    dst.push_str(src);
}
