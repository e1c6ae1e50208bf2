use std::{
    borrow::Cow,
    collections::BTreeMap,
    io::{self, BufRead, Write},
};

use barrage_model::{gojson::push_str as push_json_str, time, Hit};
use base64::{engine::general_purpose::STANDARD as B64, Engine};
use serde::Deserialize;

use crate::error::StreamError;

/// Writes hits as JSON lines with vegeta's field names and order (`attack`,
/// `seq`, `code`, `timestamp` RFC 3339, `latency` ns, `bytes_out`,
/// `bytes_in`, `error`, `body` base64 or null, `method`, `url`, `headers`
/// object of arrays or null), plus barrage's `scheduled` (RFC 3339) and,
/// when measured, `first_byte` (ns from the send to the response's head).
pub struct JsonWriter<W: Write> {
    out: W,
    line: Vec<u8>,
}

impl<W: Write> JsonWriter<W> {
    /// A writer on `out` (buffer it: each record is one `write_all`).
    pub fn new(out: W) -> Self {
        JsonWriter {
            out,
            line: Vec::with_capacity(512),
        }
    }

    /// Writes one record as one line.
    pub fn write(&mut self, hit: &Hit) -> io::Result<()> {
        use std::io::Write as _;
        let l = &mut self.line;
        l.clear();
        l.extend_from_slice(b"{\"attack\":");
        push_json_str(l, &hit.attack);
        let _ = write!(
            l,
            ",\"seq\":{},\"code\":{},\"timestamp\":\"",
            hit.seq, hit.code
        );
        l.extend_from_slice(time::format_rfc3339(hit.timestamp).as_bytes());
        let _ = write!(
            l,
            "\",\"latency\":{},\"bytes_out\":{},\"bytes_in\":{},\"error\":",
            hit.latency, hit.bytes_out, hit.bytes_in
        );
        push_json_str(l, &hit.error);
        l.extend_from_slice(b",\"body\":");
        if hit.body.is_empty() {
            l.extend_from_slice(b"null");
        } else {
            l.push(b'"');
            l.extend_from_slice(B64.encode(&hit.body).as_bytes());
            l.push(b'"');
        }
        l.extend_from_slice(b",\"method\":");
        push_json_str(l, &hit.method);
        l.extend_from_slice(b",\"url\":");
        push_json_str(l, &hit.url);
        l.extend_from_slice(b",\"headers\":");
        if hit.headers.is_empty() {
            l.extend_from_slice(b"null");
        } else {
            // Group repeated names into one array, in first-seen order.
            l.push(b'{');
            let mut first = true;
            for (i, (name, _)) in hit.headers.iter().enumerate() {
                if hit.headers[..i].iter().any(|(n, _)| n == name) {
                    continue;
                }
                if !first {
                    l.push(b',');
                }
                first = false;
                push_json_str(l, name);
                l.extend_from_slice(b":[");
                let values = hit.headers[i..].iter().filter(|(n, _)| n == name);
                for (j, (_, v)) in values.enumerate() {
                    if j > 0 {
                        l.push(b',');
                    }
                    push_json_str(l, v);
                }
                l.push(b']');
            }
            l.push(b'}');
        }
        l.extend_from_slice(b",\"scheduled\":\"");
        l.extend_from_slice(time::format_rfc3339(hit.scheduled).as_bytes());
        l.push(b'"');
        if hit.first_byte > 0 {
            l.extend_from_slice(format!(",\"first_byte\":{}", hit.first_byte).as_bytes());
        }
        if hit.proto != barrage_model::Proto::Unknown {
            l.extend_from_slice(b",\"proto\":\"");
            l.extend_from_slice(hit.proto.as_str().as_bytes());
            l.push(b'"');
        }
        if !hit.name.is_empty() {
            l.extend_from_slice(b",\"name\":");
            push_json_str(l, &hit.name);
        }
        if let Some(link) = &hit.link {
            use std::io::Write as _;
            let _ = write!(
                l,
                ",\"dns\":{},\"connect\":{},\"tls\":{},\"reused\":{}",
                link.dns, link.connect, link.tls, link.reused
            );
            if let Some(a) = link.remote {
                let _ = write!(l, ",\"remote\":\"{a}\"");
            }
            if let Some(a) = link.local {
                let _ = write!(l, ",\"local\":\"{a}\"");
            }
        }
        if hit.event_count > 0 || !hit.events.is_empty() || hit.event_malformed > 0 {
            use std::io::Write as _;
            l.extend_from_slice(b",\"events\":[");
            for (i, at) in hit.events.iter().enumerate() {
                if i > 0 {
                    l.push(b',');
                }
                let _ = write!(l, "{at}");
            }
            l.push(b']');
            if hit.event_count > hit.events.len() as u64 {
                let _ = write!(l, ",\"event_count\":{}", hit.event_count);
            }
            if hit.event_malformed > 0 {
                let _ = write!(l, ",\"event_malformed\":{}", hit.event_malformed);
            }
        }
        if let Some(m) = &hit.session {
            use std::io::Write as _;
            let _ = write!(l, ",\"session\":{},\"step\":", m.id);
            push_json_str(l, &hit.name);
            let _ = write!(l, ",\"step_index\":{}", m.step);
            if m.end != barrage_model::SessionEnd::Going {
                let _ = write!(
                    l,
                    ",\"session_end\":\"{}\",\"session_took\":{}",
                    m.end.word(),
                    m.took
                );
            }
        }
        if let Some(t) = &hit.tokens {
            use std::io::Write as _;
            l.extend_from_slice(b",\"tokens\":{");
            for (name, v) in [
                ("input", t.input),
                ("running", t.running),
                ("output", t.output),
                ("reasoning", t.reasoning),
                ("first_chunk", t.first_chunk),
                ("asked_input", t.asked_input),
                ("asked_output", t.asked_output),
            ] {
                if let Some(v) = v {
                    let _ = write!(l, "\"{name}\":{v},");
                }
            }
            let _ = write!(
                l,
                "\"chunks\":{},\"reasoning_chunks\":{}}}",
                t.chunks, t.reasoning_chunks
            );
        }
        l.extend_from_slice(b"}\n");
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

#[derive(Deserialize)]
struct JsonHit<'a> {
    #[serde(default, borrow)]
    attack: Cow<'a, str>,
    #[serde(default)]
    seq: u64,
    #[serde(default)]
    code: u16,
    #[serde(borrow)]
    timestamp: Cow<'a, str>,
    #[serde(default)]
    latency: u64,
    #[serde(default)]
    bytes_out: u64,
    #[serde(default)]
    bytes_in: u64,
    #[serde(default, borrow)]
    error: Cow<'a, str>,
    #[serde(default, borrow)]
    body: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    method: Cow<'a, str>,
    #[serde(default, borrow)]
    url: Cow<'a, str>,
    #[serde(default)]
    headers: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default, borrow)]
    scheduled: Option<Cow<'a, str>>,
    #[serde(default)]
    first_byte: Option<u64>,
    #[serde(default, borrow)]
    proto: Cow<'a, str>,
    #[serde(default, borrow)]
    name: Cow<'a, str>,
    /// The connection (`reused` says there is one).
    #[serde(default)]
    reused: Option<bool>,
    #[serde(default)]
    dns: u64,
    #[serde(default)]
    connect: u64,
    #[serde(default)]
    tls: u64,
    #[serde(default)]
    remote: Option<std::net::SocketAddr>,
    #[serde(default)]
    local: Option<std::net::SocketAddr>,
    /// A streamed answer's event offsets, ns from the send.
    #[serde(default)]
    events: Option<Vec<u64>>,
    /// Its events counted, when more than were stamped.
    #[serde(default)]
    event_count: Option<u64>,
    event_malformed: Option<u64>,
    /// A flow's request: its session, step (name and index), and how the
    /// session ended with it.
    #[serde(default)]
    session: Option<u64>,
    #[serde(default)]
    step_index: u32,
    #[serde(default, borrow)]
    session_end: Cow<'a, str>,
    #[serde(default)]
    session_took: u64,
    /// An LLM stream's token counts.
    #[serde(default)]
    tokens: Option<JsonTokens>,
}

/// `"tokens"`: [`barrage_model::Tokens`], a field left out where its
/// source gave none.
#[derive(Deserialize)]
struct JsonTokens {
    #[serde(default)]
    input: Option<u64>,
    #[serde(default)]
    running: Option<u64>,
    #[serde(default)]
    output: Option<u64>,
    #[serde(default)]
    reasoning: Option<u64>,
    #[serde(default)]
    first_chunk: Option<u64>,
    #[serde(default)]
    asked_input: Option<u64>,
    #[serde(default)]
    asked_output: Option<u64>,
    #[serde(default)]
    chunks: u64,
    #[serde(default)]
    reasoning_chunks: u64,
}

/// Reads JSON-lines results (vegeta's fields; `scheduled` optional, else the
/// timestamp; `first_byte` optional). Blank lines are skipped.
pub struct JsonReader<R: BufRead> {
    input: R,
    line: Vec<u8>,
    line_no: u64,
    lacks: barrage_model::Lacks,
}

impl<R: BufRead> JsonReader<R> {
    /// A reader on `input`.
    pub fn new(input: R) -> Self {
        JsonReader {
            input,
            line: Vec::new(),
            line_no: 0,
            lacks: barrage_model::Lacks::default(),
        }
    }

    /// What the last record read lacked: no `scheduled` key, or no
    /// `first_byte` key on a record with a response (barrage leaves the
    /// key out only when no head came).
    pub fn lacks(&self) -> barrage_model::Lacks {
        self.lacks
    }

    /// Reads the next record into `hit`; `Ok(false)` at the end.
    pub fn read(&mut self, hit: &mut Hit) -> Result<bool, StreamError> {
        loop {
            self.line.clear();
            if self.input.read_until(b'\n', &mut self.line)? == 0 {
                return Ok(false);
            }
            self.line_no += 1;
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line = self.line_no;
            let bad = |what: String| StreamError::BadLine { line, what };
            let j: JsonHit<'_> = serde_json::from_slice(&self.line)
                .map_err(|e| bad(format!("bad JSON result at column {}: {e}", e.column())))?;
            hit.timestamp = time::parse_rfc3339(&j.timestamp).map_err(|e| bad(e.to_string()))?;
            hit.scheduled = match &j.scheduled {
                Some(s) => time::parse_rfc3339(s).map_err(|e| bad(e.to_string()))?,
                None => hit.timestamp,
            };
            set(&mut hit.attack, &j.attack);
            set(&mut hit.name, &j.name);
            hit.seq = j.seq;
            hit.code = j.code;
            hit.latency = j.latency;
            hit.first_byte = j.first_byte.unwrap_or(0);
            hit.proto = barrage_model::Proto::from_name(&j.proto)
                .ok_or_else(|| bad(format!("unknown \"proto\" {:?}", j.proto)))?;
            self.lacks = barrage_model::Lacks {
                scheduled: j.scheduled.is_none(),
                first_byte: j.first_byte.is_none() && j.code != 0,
            };
            hit.link = j.reused.map(|reused| barrage_model::Link {
                reused,
                dns: j.dns,
                connect: j.connect,
                tls: j.tls,
                remote: j.remote,
                local: j.local,
            });
            hit.bytes_out = j.bytes_out;
            hit.bytes_in = j.bytes_in;
            set(&mut hit.error, &j.error);
            hit.body.clear();
            if let Some(b) = &j.body {
                B64.decode_vec(b.as_bytes(), &mut hit.body)
                    .map_err(|e| bad(format!("body: bad base64: {e}")))?;
            }
            set(&mut hit.method, &j.method);
            set(&mut hit.url, &j.url);
            hit.events.clear();
            if let Some(events) = &j.events {
                if events.len() > crate::wire::MAX_EVENTS {
                    return Err(bad(format!("{} events in one record", events.len())));
                }
                hit.events.extend_from_slice(events);
            }
            hit.event_count = j.event_count.unwrap_or(0).max(hit.events.len() as u64);
            hit.event_malformed = j.event_malformed.unwrap_or(0);
            hit.session = match j.session {
                None => None,
                Some(id) => Some(barrage_model::SessionMark {
                    id,
                    step: j.step_index,
                    end: barrage_model::SessionEnd::of_word(&j.session_end).ok_or_else(|| {
                        bad(format!("unknown \"session_end\" {:?}", j.session_end))
                    })?,
                    took: j.session_took,
                }),
            };
            hit.tokens = j.tokens.map(|t| barrage_model::Tokens {
                input: t.input,
                running: t.running,
                output: t.output,
                chunks: t.chunks,
                reasoning_chunks: t.reasoning_chunks,
                reasoning: t.reasoning,
                first_chunk: t.first_chunk,
                asked_input: t.asked_input,
                asked_output: t.asked_output,
            });
            hit.headers.clear();
            for (k, vs) in j.headers.into_iter().flatten() {
                for v in vs {
                    hit.headers.push((k.clone(), v));
                }
            }
            return Ok(true);
        }
    }
}

fn set(dst: &mut String, src: &str) {
    dst.clear();
    dst.push_str(src);
}
