//! One item of a frame's payload, decoded: a string for the table, a
//! fact about the run, a reset, or a record (layout in [`crate::wire`]).

use barrage_model::{Hit, Proto, SessionEnd, SessionMark};

use crate::{
    cursor::{Cursor, Malformed},
    wire::{
        Prev, Recent, F_ATTACK, F_BODY, F_BYTES_OUT, F_ERROR, F_HEADERS, F_METHOD, F_PROTO, F_URL,
        ITEM_AUDIT, ITEM_EVENTS, ITEM_HIT, ITEM_HIT_EXT, ITEM_HIT_FIRST_BYTE, ITEM_HIT_LINK,
        ITEM_MARKER, ITEM_META, ITEM_RESET, ITEM_SAMPLE, ITEM_SESSION, ITEM_STR, ITEM_TOKENS,
        MAX_TABLE, X_FIRST_BYTE, X_KNOWN, X_LINK_BITS, X_LOCAL, X_NAME, X_NEW, X_REMOTE,
    },
};

/// The most facts a reader keeps ([`Decoder::meta`]): later ones are
/// skipped, so a crafted stream cannot grow them without bound.
pub const MAX_META: usize = 64;

/// The most self-audit samples a reader keeps per input ([`Decoder::audits`]):
/// 27 hours of one a second; later ones are skipped.
pub const MAX_AUDITS: usize = 100_000;

/// The most scraped samples a reader keeps per input
/// ([`Decoder::samples`]): 100 series a second for 17 minutes, or 10 for
/// nearly 3 hours; later ones are skipped.
pub const MAX_SAMPLES: usize = 100_000;

/// The most live control markers a reader keeps per input
/// ([`Decoder::markers`]); later ones are skipped.
pub const MAX_MARKERS: usize = 10_000;

/// What kind 7 reads against, besides the previous record: the addresses
/// last parsed and the frame's recent local addresses.
#[derive(Default)]
pub(crate) struct Lately {
    pub(crate) addrs: Addrs,
    pub(crate) recent: Recent,
    /// Whether an events item came for the next record.
    pub(crate) events: bool,
    /// Whether a session item came for the next record.
    pub(crate) session: bool,
    /// Whether a tokens item came for the next record.
    pub(crate) tokens: bool,
    /// The self-audit's samples read so far (at most [`MAX_AUDITS`]).
    pub(crate) audits: Vec<barrage_model::Audit>,
    /// The scraped samples read so far (at most [`MAX_SAMPLES`]).
    pub(crate) samples: Vec<barrage_model::ServerSample>,
    /// Live control's markers read so far (at most [`MAX_MARKERS`]).
    pub(crate) markers: Vec<barrage_model::Marker>,
}

impl Lately {
    /// At a frame's start: the recent list empties (the parsed addresses
    /// stay: the table does).
    pub(crate) fn new_frame(&mut self) {
        self.recent.clear();
    }
}

/// The address strings last parsed (remote, local), with their table
/// indices; `u32::MAX`: none.
#[derive(Clone, Copy)]
pub(crate) struct Addrs([(u32, Option<std::net::SocketAddr>); 2]);

impl Default for Addrs {
    fn default() -> Self {
        Addrs([(u32::MAX, None); 2])
    }
}

/// Decodes one item; `Ok(true)` when it was a record (now in `hit`, with
/// its header lines when `keep_headers`).
pub(crate) fn decode_item(
    c: &mut Cursor<'_>,
    table: &mut Vec<String>,
    hit: &mut Hit,
    prev: &mut Prev,
    keep_headers: bool,
    meta: &mut Vec<(String, String)>,
    lately: &mut Lately,
) -> Result<bool, Malformed> {
    let Lately {
        addrs,
        recent,
        events,
        session,
        tokens,
        audits,
        samples,
        markers,
    } = lately;
    match c.u64()? {
        ITEM_MARKER => {
            let at = c.i64()?;
            let from = c.i64()?;
            let first = c.u64()?;
            let what = c.str()?.to_owned();
            let who = c.str()?.to_owned();
            if markers.len() < MAX_MARKERS {
                markers.push(barrage_model::Marker {
                    at,
                    from,
                    first,
                    what,
                    who,
                });
            }
            Ok(false)
        }
        ITEM_SAMPLE => {
            let source = c.str()?.to_owned();
            let at = c.i64()?;
            let name = c.str()?.to_owned();
            let value = f64::from_bits(c.u64()?);
            let rate = c.u64()? & 1 == 1;
            if samples.len() < MAX_SAMPLES {
                samples.push(barrage_model::ServerSample {
                    source,
                    at,
                    name,
                    value,
                    rate,
                });
            }
            Ok(false)
        }
        ITEM_AUDIT => {
            let source = c.str()?.to_owned();
            let at = c.i64()?;
            let mut v = [0u64; 10];
            let fields = c.u64()?;
            for i in 0..fields {
                let x = c.u64()?;
                if let Some(slot) = v.get_mut(i as usize) {
                    *slot = x;
                }
            }
            if audits.len() < MAX_AUDITS {
                audits.push(barrage_model::Audit {
                    source,
                    at,
                    span: v[0],
                    threads: u32::try_from(v[1]).unwrap_or(u32::MAX),
                    cpu_max: v[2],
                    cpu_user: v[3],
                    cpu_sys: v[4],
                    wait_max: v[5],
                    sent: v[6],
                    written: v[7],
                    gaps: v[8],
                    stacked: v[9],
                });
            }
            Ok(false)
        }
        ITEM_SESSION => {
            let id = c.u64()?;
            let step = u32::try_from(c.u64()?).map_err(|_| "a session step past 2^32")?;
            let end = c.u64()?;
            let end =
                SessionEnd::of_code(end).ok_or_else(|| format!("unknown session end {end}"))?;
            let took = if end == SessionEnd::Going {
                0
            } else {
                c.u64()?
            };
            hit.session = Some(SessionMark {
                id,
                step,
                end,
                took,
            });
            *session = true;
            Ok(false)
        }
        ITEM_TOKENS => {
            let bits = c.u64()?;
            if bits >> 7 != 0 {
                return Err(format!("unknown token count bits {bits:#x}").into());
            }
            let mut t = barrage_model::Tokens {
                chunks: c.u64()?,
                reasoning_chunks: c.u64()?,
                ..Default::default()
            };
            for (i, slot) in [
                &mut t.input,
                &mut t.running,
                &mut t.output,
                &mut t.reasoning,
                &mut t.first_chunk,
                &mut t.asked_input,
                &mut t.asked_output,
            ]
            .into_iter()
            .enumerate()
            {
                if bits & (1 << i) != 0 {
                    *slot = Some(c.u64()?);
                }
            }
            hit.tokens = Some(t);
            *tokens = true;
            Ok(false)
        }
        ITEM_EVENTS => {
            let count = c.u64()?;
            let malformed = c.u64()?;
            let n = c.u64()?;
            if n > count || n > crate::wire::MAX_EVENTS as u64 {
                return Err(format!("{n} event stamps of {count} events").into());
            }
            hit.events.clear();
            let mut at = 0u64;
            for _ in 0..n {
                at = at.saturating_add(c.u64()?);
                hit.events.push(at.saturating_mul(1000));
            }
            hit.event_count = count;
            hit.event_malformed = malformed;
            *events = true;
            Ok(false)
        }
        ITEM_STR => {
            let s = c.str()?;
            if table.len() > MAX_TABLE {
                return Err("string table overflow".into());
            }
            table.push(s.to_owned());
            Ok(false)
        }
        ITEM_META => {
            let key = c.str()?;
            let value = c.str()?;
            if meta.len() < MAX_META {
                meta.push((key.to_owned(), value.to_owned()));
            }
            Ok(false)
        }
        kind @ (ITEM_HIT | ITEM_HIT_FIRST_BYTE | ITEM_HIT_EXT | ITEM_HIT_LINK) => {
            if !std::mem::take(events) {
                hit.events.clear();
                hit.event_count = 0;
                hit.event_malformed = 0;
            }
            if !std::mem::take(session) {
                hit.session = None;
            }
            if !std::mem::take(tokens) {
                hit.tokens = None;
            }
            let flags = c.byte()?;
            let linked = kind == ITEM_HIT_LINK;
            let ext: u64 = match kind {
                ITEM_HIT_EXT => {
                    let ext = c.byte()?;
                    if ext & !X_KNOWN != 0 {
                        return Err(format!("unknown record extension bits {ext:#04x}").into());
                    }
                    ext as u64
                }
                ITEM_HIT_FIRST_BYTE => X_FIRST_BYTE as u64,
                // Kind 7's bits come with its code, below.
                _ => 0,
            };
            let seq_delta = c.i64()?;
            let scheduled_delta = c.i64()?;
            let lag = c.i64()?;
            hit.latency = c.u64()?;
            let mut ext = ext;
            hit.code = if linked {
                let code_ext = c.u64()?;
                ext = code_ext & ((1 << X_LINK_BITS) - 1);
                let zigzag = code_ext >> X_LINK_BITS;
                let change = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
                let code = (prev.code as i64).wrapping_add(change);
                u16::try_from(code)
                    .map_err(|_| Malformed::from(format!("status code {code} out of range")))?
            } else {
                c.u16()?
            };
            hit.bytes_in = c.u64()?;
            hit.bytes_out = if flags & F_BYTES_OUT != 0 {
                c.u64()?
            } else {
                0
            };
            hit.first_byte = if ext & X_FIRST_BYTE as u64 != 0 {
                let after_head = c.u64()?;
                if after_head > hit.latency {
                    return Err("first byte after the end of the response".into());
                }
                hit.latency - after_head
            } else {
                0
            };
            let mut index = |flag: u8, last: u32| -> Result<u32, Malformed> {
                if flags & flag != 0 {
                    c.u32()
                } else {
                    Ok(last)
                }
            };
            let error = index(F_ERROR, prev.error)?;
            let method = index(F_METHOD, prev.method)?;
            let url = index(F_URL, prev.url)?;
            let attack = index(F_ATTACK, prev.attack)?;
            let proto = if flags & F_PROTO != 0 {
                let code = c.u64()?;
                Proto::from_code(code)
                    .ok_or_else(|| Malformed::from(format!("unknown protocol {code}")))?
                    .code()
            } else {
                prev.proto
            };
            hit.proto = Proto::from_code(proto as u64).unwrap_or_default();
            let name = if ext & X_NAME as u64 != 0 {
                c.u32()?
            } else {
                prev.name
            };
            let (mut remote, mut local) = (prev.remote, prev.local);
            hit.link = None;
            if linked {
                let mut link = barrage_model::Link {
                    reused: ext & X_NEW == 0,
                    ..Default::default()
                };
                if !link.reused {
                    link.dns = c.u64()?;
                    link.connect = c.u64()?;
                    link.tls = c.u64()?;
                }
                if ext & X_REMOTE != 0 {
                    remote = c.u32()?;
                }
                if ext & X_LOCAL != 0 {
                    let code = c.u64()?;
                    local = recent.index_of(code).ok_or_else(|| {
                        Malformed::from(format!("local address {code} not among the recent"))
                    })?;
                }
                recent.touch(local);
                link.remote = address(table, &mut addrs.0[0], remote)?;
                link.local = address(table, &mut addrs.0[1], local)?;
                hit.link = Some(link);
            }
            let get = |i: u32| {
                table
                    .get(i as usize)
                    .ok_or_else(|| Malformed::from(format!("string index {i} not in the table")))
            };
            set(&mut hit.error, get(error)?);
            set(&mut hit.method, get(method)?);
            set(&mut hit.url, get(url)?);
            set(&mut hit.attack, get(attack)?);
            set(&mut hit.name, get(name)?);
            hit.body.clear();
            if flags & F_BODY != 0 {
                hit.body.extend_from_slice(c.bytes()?);
            }
            hit.headers.clear();
            if flags & F_HEADERS != 0 {
                let n = c.u64()?;
                if n > Hit::MAX_HEADERS as u64 {
                    return Err(format!(
                        "{n} header lines in one record, over the {} a record may hold",
                        Hit::MAX_HEADERS
                    )
                    .into());
                }
                let mut bytes = 0usize;
                for _ in 0..n {
                    let name = get(c.u32()?)?;
                    let value = c.str()?;
                    // Names are indices on disk: count what they cost here.
                    bytes += name.len() + value.len();
                    if bytes > Hit::MAX_HEADER_BYTES {
                        return Err(format!(
                            "header lines of one record over the {} bytes a record may hold",
                            Hit::MAX_HEADER_BYTES
                        )
                        .into());
                    }
                    if keep_headers {
                        hit.headers.push((name.clone(), value.to_owned()));
                    }
                }
            }
            hit.seq = prev.seq.wrapping_add(seq_delta as u64);
            hit.scheduled = prev.scheduled.wrapping_add(scheduled_delta);
            hit.timestamp = hit.scheduled.wrapping_add(lag);
            *prev = Prev::after(
                hit.seq,
                hit.scheduled,
                [error, method, url, attack, name],
                proto,
            )
            .with_link(hit.code, remote, local);
            Ok(true)
        }
        ITEM_RESET => {
            table.truncate(1);
            *addrs = Addrs::default();
            recent.clear();
            *prev = Prev {
                seq: prev.seq,
                scheduled: prev.scheduled,
                ..Prev::default()
            };
            Ok(false)
        }
        other => Err(format!("unknown item kind {other}").into()),
    }
}

/// The address at table index `i` (0: none), parsed once while `last`
/// holds it.
fn address(
    table: &[String],
    last: &mut (u32, Option<std::net::SocketAddr>),
    i: u32,
) -> Result<Option<std::net::SocketAddr>, Malformed> {
    if i == 0 {
        return Ok(None);
    }
    if last.0 == i {
        return Ok(last.1);
    }
    let text = table
        .get(i as usize)
        .ok_or_else(|| Malformed::from(format!("string index {i} not in the table")))?;
    let addr = text
        .parse()
        .map_err(|_| Malformed::from(format!("bad address {text:?}")))?;
    *last = (i, Some(addr));
    Ok(Some(addr))
}

fn set(dst: &mut String, src: &str) {
    dst.clear();
    dst.push_str(src);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{put_bytes, put_varint, put_zigzag};

    /// A self-audit item as `fields` varints after its count.
    fn audit_item(fields: &[u64]) -> Vec<u8> {
        let mut b = Vec::new();
        put_varint(&mut b, ITEM_AUDIT);
        put_bytes(&mut b, b"vm");
        put_zigzag(&mut b, 42);
        put_varint(&mut b, fields.len() as u64);
        fields.iter().for_each(|v| put_varint(&mut b, *v));
        b
    }

    fn read(bytes: &[u8]) -> Vec<barrage_model::Audit> {
        let mut lately = Lately::default();
        let mut c = Cursor { buf: bytes, pos: 0 };
        let (mut table, mut hit, mut prev, mut meta) =
            (Vec::new(), Hit::default(), Prev::default(), Vec::new());
        while c.pos < bytes.len() {
            let record = decode_item(
                &mut c,
                &mut table,
                &mut hit,
                &mut prev,
                false,
                &mut meta,
                &mut lately,
            )
            .unwrap();
            assert!(!record);
        }
        lately.audits
    }

    #[test]
    fn an_audit_item_with_fields_a_later_barrage_adds_reads_what_it_knows() {
        let mut fields: Vec<u64> = (1..=10).collect();
        fields.extend([777, 888]);
        let mut bytes = audit_item(&fields);
        // Fewer fields (a reader past this one meeting an older writer's
        // shape): the rest are 0.
        bytes.extend(audit_item(&[5, 2]));
        let a = read(&bytes);
        assert_eq!(a.len(), 2);
        assert_eq!((a[0].source.as_str(), a[0].at), ("vm", 42));
        assert_eq!((a[0].span, a[0].written), (1, 8));
        assert_eq!((a[0].gaps, a[0].stacked), (9, 10));
        assert_eq!((a[1].span, a[1].threads, a[1].sent), (5, 2, 0));
    }
}
