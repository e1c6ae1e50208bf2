//! The binary layout shared by the encoder and the decoder.
//!
//! A frame's payload is a sequence of items, each starting with a varint
//! kind. Integers use postcard's encodings (LEB128 varints, zigzag for
//! signed values), written and read by hand for speed:
//!
//! ```text
//! 0 Str    len:varint utf8-bytes          appends to the string table
//! 1 Hit    flags:u8
//!          seq_delta:zigzag scheduled_delta:zigzag lag:zigzag
//!          latency:varint code:varint bytes_in:varint
//!          [bytes_out:varint]      if flags & BYTES_OUT
//!          [after_head:varint]     if the kind is 3 (latency - first_byte)
//!          [error:varint]          if flags & ERROR   (string index)
//!          [method:varint]         if flags & METHOD
//!          [url:varint]            if flags & URL
//!          [attack:varint]         if flags & ATTACK
//!          [proto:varint]          if flags & PROTO (version 3: 0 unknown,
//!                                  1 HTTP/1.1, 2 HTTP/2, 3 HTTP/3)
//!          [name:varint]           kind 5 only, if ext & NAME (string index)
//!          [len:varint bytes]      if flags & BODY
//!          [n:varint (name:varint len:varint utf8)*n]  if flags & HEADERS
//! 2 Reset                                 empties the table (index 0 = "")
//! 3 Hit    as 1, with the time to first byte (version 2)
//! 4 Abort  len:varint utf8-bytes          the writer failed before its first
//!                                         record; the reason (the stream's
//!                                         only item; readers say it and stop)
//! 5 Hit    flags:u8 ext:u8, then as 1     (version 4) with the time to first
//!                                         byte if ext & FIRST_BYTE, and the
//!                                         target's name if ext & NAME
//! 6 Meta   key:bytes value:bytes          (version 4) a fact about the whole
//!                                         run (`arrivals` = `poisson:SEED`)
//! 8 Events count:varint malformed:varint n:varint (delta:varint)*n
//!                                 (version 6) the next record's streamed
//!                                 events: `count` in all, `malformed`
//!                                 SSE lines skipped, the first `n`
//!                                 stamped, each as its offset in µs from
//!                                 the previous one's (the first from the
//!                                 send); read back as ns
//! 9 Session id:varint step:varint end:varint [took:varint if end > 0]
//!                                 (version 7) the next record is step
//!                                 `step` of a flow's session `id`; `end`:
//!                                 0 going on, 1 completed, 2 failed;
//!                                 `took`: ns from the session's first
//!                                 send
//! 10 Audit source:bytes at:zigzag span threads cpu_max cpu_user cpu_sys
//!          wait_max sent written:varint
//!                                 (version 8) a sample of the attack's
//!                                 self-audit (`barrage_model::Audit`),
//!                                 about once a second; `source` empty
//!                                 but in a stream `collect` merged
//! 11 Tokens bits:varint chunks:varint reasoning_chunks:varint
//!          [input:varint]     if bits & 1
//!          [running:varint]   if bits & 2
//!          [output:varint]    if bits & 4
//!          [reasoning:varint] if bits & 8
//!          [first_chunk:varint] if bits & 16
//!          [asked_input:varint] if bits & 32 (version 10)
//!          [asked_output:varint] if bits & 64 (version 10)
//!                                 (version 9) the next record's LLM token
//!                                 counts (`barrage_model::Tokens`), each
//!                                 from its source, and (version 10) what
//!                                 the request asked for
//! 12 Sample source:bytes at:zigzag name:bytes value:varint flags:varint
//!                                 (version 10) a scraped server's metric
//!                                 (`barrage_model::ServerSample`): value
//!                                 the f64's bits, flags & 1 a counter's
//!                                 rate a second
//! 13 Marker at:zigzag from:zigzag first:varint what:bytes who:bytes
//!                                 (version 11) a change made to the
//!                                 running attack (`barrage_model::Marker`,
//!                                 `attack -control`)
//! 7 Hit    flags:u8, then as 1 (version 5) a record with its
//!          connection; in the code's place zigzag(code - the previous
//!          record's code) << 5 | ext (5 bits: FIRST_BYTE, NAME, NEW,
//!          REMOTE, LOCAL), the time to first byte and the name as kind 5,
//!          and after the name:
//!          [dns connect tls:varint]  if ext & NEW (ns; else reused, all 0)
//!          [remote:varint]           if ext & REMOTE ("ip:port" string
//!                                    index; else the previous record's)
//!          [local:varint]            if ext & LOCAL (likewise)
//! ```
//!
//! Kind 7 is written for every record that has a connection (a
//! [`barrage_model::Link`]); records without one keep kinds 1, 3 and 5.
//! A repeated code with its extension bits is one byte, where a plain 200
//! is two: a record on a reused connection grows only by its local
//! address's index, and only when it differs from the previous record's. Index 0 (`""`) is "no address"
//! (a Unix socket); at a frame's start the previous addresses are none
//! and the previous code 0.
//!
//! Kind 5 is written only for a record whose target name differs from the
//! previous record's, so a stream of unnamed targets is the same bytes as
//! in version 3; kinds 1 and 3 keep the previous name (`""` at a frame's
//! start). Bits of `ext` yet unknown are refused.
//!
//! Deltas, and the indices that a record leaves out (meaning "same as the
//! previous record"), restart at every frame, so a one-target record is
//! about 15 bytes.

/// First four bytes of every binary result stream. The first byte is not
/// printable, so a stream is never mistaken for CSV or JSON.
pub const MAGIC: [u8; 4] = [0xB7, b'B', b'R', b'G'];

/// The format version this build writes and the newest it reads.
/// Version 2 added records with the time to first byte (kind 3), version 3
/// the protocol (flag PROTO), version 4 the target's name (kind 5) and the
/// run's facts (kind 6), version 5 the connection (kind 7), version 6 a
/// streamed answer's events (kind 8), version 7 a flow's session and step
/// (kind 9), version 8 the attack's self-audit (kind 10), version 9 and 10
/// LLM token counts (kind 11) and scraped samples (kind 12), version 11
/// live control's markers (kind 13); older streams are read as they are (their records have none
/// of these).
pub const FORMAT_VERSION: u16 = 11;

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

/// Item kinds.
pub(crate) const ITEM_STR: u64 = 0;
pub(crate) const ITEM_HIT: u64 = 1;
pub(crate) const ITEM_RESET: u64 = 2;
pub(crate) const ITEM_HIT_FIRST_BYTE: u64 = 3;
pub(crate) const ITEM_ABORT: u64 = 4;
pub(crate) const ITEM_HIT_EXT: u64 = 5;
pub(crate) const ITEM_META: u64 = 6;
pub(crate) const ITEM_HIT_LINK: u64 = 7;
pub(crate) const ITEM_EVENTS: u64 = 8;
pub(crate) const ITEM_SESSION: u64 = 9;
pub(crate) const ITEM_AUDIT: u64 = 10;
pub(crate) const ITEM_TOKENS: u64 = 11;
pub(crate) const ITEM_SAMPLE: u64 = 12;
pub(crate) const ITEM_MARKER: u64 = 13;

/// The most event offsets one record holds: `-max-events` is at most
/// this, and readers refuse more, so that a crafted stream cannot make a
/// reader allocate without bound.
pub const MAX_EVENTS: usize = 10_000_000;

/// Kind 5's `ext` bits.
pub(crate) const X_FIRST_BYTE: u8 = 0x01;
pub(crate) const X_NAME: u8 = 0x02;
pub(crate) const X_KNOWN: u8 = X_FIRST_BYTE | X_NAME;
/// Kind 7's further `ext` bits: a new connection's costs follow; the
/// remote and local addresses differ from the previous record's.
pub(crate) const X_NEW: u64 = 0x04;
pub(crate) const X_REMOTE: u64 = 0x08;
pub(crate) const X_LOCAL: u64 = 0x10;
/// Kind 7's extension bits, the low bits of its code's varint.
pub(crate) const X_LINK_BITS: u32 = 5;

/// Kind 7's local addresses used lately in the frame, most recent first:
/// a record names its local address by its place among them (one byte)
/// rather than by its table index (two, past 127 strings). At 20,000/s
/// over some 500 connections nearly every record's local address differs
/// from the previous record's, and three in four were among the 128 used
/// last. Emptied at a frame's start and at a table reset, on both sides.
#[derive(Default)]
pub(crate) struct Recent(Vec<u32>);

/// Codes below this are places in [`Recent`] (after its front, which is
/// the previous record's); from it on, `RECENT + index`.
pub(crate) const RECENT: u64 = 127;

impl Recent {
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// The code that names table index `index`.
    pub(crate) fn code_of(&self, index: u32) -> u64 {
        match self.0.iter().skip(1).position(|&i| i == index) {
            Some(at) => at as u64,
            None => RECENT + u64::from(index),
        }
    }

    /// The table index `code` names (`None`: a place not in the list).
    pub(crate) fn index_of(&self, code: u64) -> Option<u32> {
        if code < RECENT {
            self.0.get(code as usize + 1).copied()
        } else {
            u32::try_from(code - RECENT).ok()
        }
    }

    /// Puts `index` first (the record just read or written used it).
    pub(crate) fn touch(&mut self, index: u32) {
        if self.0.first() == Some(&index) {
            return;
        }
        match self.0.iter().position(|&i| i == index) {
            Some(at) => self.0[..=at].rotate_right(1),
            None => {
                self.0.insert(0, index);
                self.0.truncate(RECENT as usize + 1);
            }
        }
    }
}

/// Hit flags.
pub(crate) const F_BODY: u8 = 0x01;
pub(crate) const F_HEADERS: u8 = 0x02;
pub(crate) const F_BYTES_OUT: u8 = 0x04;
pub(crate) const F_ERROR: u8 = 0x08;
pub(crate) const F_METHOD: u8 = 0x10;
pub(crate) const F_URL: u8 = 0x20;
pub(crate) const F_ATTACK: u8 = 0x40;
/// The protocol differs from the previous record's (left out: the same;
/// unknown at a frame's start).
pub(crate) const F_PROTO: u8 = 0x80;

/// Appends `v` as a LEB128 varint.
#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzag-encoded as a varint.
#[inline]
pub(crate) fn put_zigzag(out: &mut Vec<u8>, v: i64) {
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends length-prefixed bytes.
#[inline]
pub(crate) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// What the previous record of the frame had: the base of its deltas and
/// the indices that the next record may leave out.
#[derive(Default, Clone, Copy)]
pub(crate) struct Prev {
    pub seq: u64,
    pub scheduled: i64,
    pub error: u32,
    pub method: u32,
    pub url: u32,
    pub attack: u32,
    pub name: u32,
    pub proto: u8,
    /// Kind 7's base: the previous record's code and address indices.
    pub code: u16,
    pub remote: u32,
    pub local: u32,
}

impl Prev {
    /// The state after a record with these times, string indices and
    /// protocol.
    pub(crate) fn after(seq: u64, scheduled: i64, strings: [u32; 5], proto: u8) -> Prev {
        let [error, method, url, attack, name] = strings;
        Prev {
            seq,
            scheduled,
            error,
            method,
            url,
            attack,
            name,
            proto,
            code: 0,
            remote: 0,
            local: 0,
        }
    }

    /// With the code and the address indices of the record just read or
    /// written (kind 7's base for the next).
    pub(crate) fn with_link(mut self, code: u16, remote: u32, local: u32) -> Prev {
        self.code = code;
        self.remote = remote;
        self.local = local;
        self
    }
}

/// The most bytes `hit` can take in a frame (every varint at its longest),
/// to keep a frame under [`MAX_FRAME`].
pub(crate) fn most_bytes(hit: &barrage_model::Hit) -> usize {
    const VARINT: usize = 10;
    let string = |s: &str| 1 + VARINT + s.len();
    let fixed = 3 + 13 * VARINT + 1;
    // Kind 7's ext, costs and address indices, and two new addresses.
    let link = match hit.link {
        Some(_) => 6 * VARINT + 2 * string("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"),
        None => 0,
    };
    let strings = [&hit.error, &hit.method, &hit.url, &hit.attack, &hit.name]
        .iter()
        .map(|s| string(s))
        .sum::<usize>();
    let headers: usize = hit
        .headers
        .iter()
        .map(|(n, v)| string(n) + 2 * VARINT + v.len())
        .sum();
    let events = if hit.event_count > 0 || !hit.events.is_empty() || hit.event_malformed > 0 {
        (4 + hit.events.len()) * VARINT
    } else {
        0
    };
    let session = if hit.session.is_some() { 5 * VARINT } else { 0 };
    let tokens = if hit.tokens.is_some() { 11 * VARINT } else { 0 };
    fixed + link + strings + VARINT + hit.body.len() + VARINT + headers + events + session + tokens
}
