use std::io::{BufRead, BufReader, Read};

use barrage_model::Hit;

use crate::{error::StreamError, CsvReader, Decoder, JsonReader, MAGIC};

/// Reads hits from a binary stream, CSV or JSON lines, whichever the first
/// bytes show: the magic number, `{`, or a digit.
pub enum HitReader<R: Read> {
    /// A binary result stream.
    Binary(Decoder<BufReader<R>>),
    /// vegeta CSV.
    Csv(CsvReader<BufReader<R>>),
    /// JSON lines.
    Json(JsonReader<BufReader<R>>),
    /// An empty input: no records.
    Empty,
}

/// Whether `head` opens a gob stream of vegeta's `Result`: Go's gob
/// starts with the type's definition, naming the struct and its fields.
fn is_gob(head: &[u8]) -> bool {
    let head = &head[..head.len().min(512)];
    let has = |w: &[u8]| head.windows(w.len()).any(|x| x == w);
    has(b"Result") && has(b"Attack") && has(b"Timestamp")
}

impl<R: Read> HitReader<R> {
    /// Detects the format of `input` and opens the matching reader.
    pub fn open(input: R) -> Result<Self, StreamError> {
        let mut input = BufReader::with_capacity(256 << 10, input);
        let first = loop {
            match input.fill_buf() {
                Ok(buf) => {
                    break buf
                        .iter()
                        .copied()
                        .find(|b| !b.is_ascii_whitespace() || *b == MAGIC[0])
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let buffered_all_blank = input.buffer().iter().all(u8::is_ascii_whitespace);
        Ok(match first {
            None if buffered_all_blank => {
                if input.buffer().is_empty() {
                    HitReader::Empty
                } else {
                    // Whitespace first: let the JSON reader skip blank lines.
                    HitReader::Json(JsonReader::new(input))
                }
            }
            Some(b) if b == MAGIC[0] => HitReader::Binary(Decoder::new(input)?),
            Some(b'{') => HitReader::Json(JsonReader::new(input)),
            Some(b) if b.is_ascii_digit() || b == b'-' => HitReader::Csv(CsvReader::new(input)),
            _ if is_gob(input.buffer()) => return Err(StreamError::VegetaGob),
            _ => return Err(StreamError::not_a_stream(input.buffer())),
        })
    }

    /// What the last record read lacks: vegeta's CSV has neither a
    /// scheduled time nor a first byte; JSON lines say per record.
    pub fn lacks(&self) -> barrage_model::Lacks {
        match self {
            HitReader::Csv(_) => barrage_model::Lacks {
                scheduled: true,
                first_byte: true,
            },
            HitReader::Json(j) => j.lacks(),
            HitReader::Binary(_) | HitReader::Empty => barrage_model::Lacks::default(),
        }
    }

    /// The run's facts a binary stream holds (see [`Decoder::meta`]);
    /// none in CSV or JSON lines.
    pub fn meta(&self) -> &[(String, String)] {
        match self {
            HitReader::Binary(d) => d.meta(),
            _ => &[],
        }
    }

    /// Live control's markers a binary stream holds (see
    /// [`Decoder::markers`]); none in CSV or JSON lines.
    pub fn markers(&self) -> &[barrage_model::Marker] {
        match self {
            HitReader::Binary(d) => d.markers(),
            _ => &[],
        }
    }

    /// The scraped server samples a binary stream holds (see
    /// [`Decoder::samples`]); none in CSV or JSON lines.
    pub fn samples(&self) -> &[barrage_model::ServerSample] {
        match self {
            HitReader::Binary(d) => d.samples(),
            _ => &[],
        }
    }

    /// The attack's self-audit a binary stream holds (see
    /// [`Decoder::audits`]); none in CSV or JSON lines.
    pub fn audits(&self) -> &[barrage_model::Audit] {
        match self {
            HitReader::Binary(d) => d.audits(),
            _ => &[],
        }
    }

    /// Reads the next record into `hit`; `Ok(false)` at a clean end.
    pub fn read(&mut self, hit: &mut Hit) -> Result<bool, StreamError> {
        match self {
            HitReader::Binary(d) => d.read(hit),
            HitReader::Csv(c) => c.read(hit),
            HitReader::Json(j) => j.read(hit),
            HitReader::Empty => Ok(false),
        }
    }
}
