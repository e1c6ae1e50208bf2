use std::{collections::HashMap, io, io::Write};

use barrage_model::Hit;

use crate::wire::{
    most_bytes, put_bytes, put_varint, put_zigzag, Prev, FORMAT_VERSION, FRAME_HEADER_LEN,
    FRAME_TARGET, F_ATTACK, F_BODY, F_BYTES_OUT, F_ERROR, F_HEADERS, F_METHOD, F_PROTO, F_URL,
    ITEM_AUDIT, ITEM_EVENTS, ITEM_HIT, ITEM_HIT_EXT, ITEM_HIT_FIRST_BYTE, ITEM_HIT_LINK,
    ITEM_MARKER, ITEM_META, ITEM_RESET, ITEM_SAMPLE, ITEM_SESSION, ITEM_STR, ITEM_TOKENS, MAGIC,
    MAX_FRAME, MAX_TABLE, X_FIRST_BYTE, X_LINK_BITS, X_LOCAL, X_NAME, X_NEW, X_REMOTE,
};

/// The most text bytes the string table holds before it is reset (and
/// so the most a reader's table holds): 65,536 distinct 60 KB reason
/// phrases held 3.9 GB (issue 29). A string longer than this is still
/// written (after a reset), alone in its table.
pub const MAX_TABLE_BYTES: usize = 8 << 20;

/// Writes [`Hit`]s as a binary result stream (layout in [`crate::wire`]).
///
/// Records collect in a frame buffer; a frame goes to the writer when it
/// reaches 64 KiB or when [`Encoder::flush`] is called (the attack calls it at
/// least every 100 ms so that readers downstream stay live). Memory is one
/// frame plus the string table, which is reset at 65,536 entries or
/// [`MAX_TABLE_BYTES`] of text, whichever comes first.
pub struct Encoder<W: Write> {
    out: W,
    /// Frame under construction: 8 reserved header bytes, then the payload.
    frame: Vec<u8>,
    table: HashMap<Box<str>, u32>,
    /// The table by index, so that a field equal to the previous record's
    /// skips the hash lookup.
    strings: Vec<Box<str>>,
    prev: Prev,
    names: Vec<u32>,
    /// Table resets so far.
    resets: u64,
    /// The text bytes in the table.
    table_bytes: usize,
    /// The largest frame payload written: the decoder's [`MAX_FRAME`]
    /// (smaller in tests).
    max_frame: usize,
    /// Addresses in the table (a record's remote and local end), so that
    /// an address is formatted once per table, not once per record.
    addrs: HashMap<std::net::SocketAddr, u32>,
    /// The last remote and local address interned, and their indices (a
    /// record's ends are almost always the previous record's or close: no
    /// hash per record).
    recent: [Option<(std::net::SocketAddr, u32)>; 2],
    /// Local addresses used lately in this frame (kind 7's codes).
    recent_locals: crate::wire::Recent,
}

/// A whole stream that says its writer failed before its first record,
/// and why: what `attack` leaves on a pipe when it cannot start, so that
/// `report` downstream says so instead of printing a report of nothing
/// (issue 37).
pub fn aborted_stream(reason: &str) -> Vec<u8> {
    let mut payload = Vec::with_capacity(reason.len() + 8);
    put_varint(&mut payload, crate::wire::ITEM_ABORT);
    put_bytes(&mut payload, reason.as_bytes());
    let mut out = Vec::with_capacity(6 + FRAME_HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

impl<W: Write> Encoder<W> {
    /// Writes the stream header and returns an encoder ready for records.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut header = [0u8; 6];
        header[..4].copy_from_slice(&MAGIC);
        header[4..].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.write_all(&header)?;
        let mut enc = Encoder {
            out,
            frame: Vec::with_capacity(FRAME_TARGET + 4096),
            table: HashMap::new(),
            strings: Vec::new(),
            prev: Prev::default(),
            names: Vec::new(),
            resets: 0,
            table_bytes: 0,
            max_frame: MAX_FRAME as usize,
            addrs: HashMap::new(),
            recent: [None; 2],
            recent_locals: crate::wire::Recent::default(),
        };
        enc.reset_table();
        enc.start_frame();
        Ok(enc)
    }

    fn reset_table(&mut self) {
        self.table.clear();
        self.table.insert("".into(), 0);
        self.strings.clear();
        self.strings.push("".into());
        self.table_bytes = 0;
        self.addrs.clear();
        self.recent = [None; 2];
    }

    /// The table index of `addr` (0 for none), the one in `slot` (0:
    /// remote, 1: local) checked first.
    #[inline]
    fn intern_addr(&mut self, addr: Option<std::net::SocketAddr>, slot: usize) -> u32 {
        let Some(addr) = addr else {
            return 0;
        };
        if let Some((a, i)) = self.recent[slot] {
            if a == addr {
                return i;
            }
        }
        let i = match self.addrs.get(&addr) {
            Some(&i) => i,
            None => {
                // Interning may reset the table (and `addrs` with it).
                let i = self.intern(&addr.to_string());
                self.addrs.insert(addr, i);
                i
            }
        };
        self.recent[slot] = Some((addr, i));
        i
    }

    /// The index of `s`, checking the previous record's `last` first.
    #[inline]
    fn intern_like(&mut self, s: &str, last: u32) -> u32 {
        if self
            .strings
            .get(last as usize)
            .is_some_and(|l| same_text(l.as_bytes(), s.as_bytes()))
        {
            return last;
        }
        self.intern(s)
    }

    fn start_frame(&mut self) {
        self.frame.clear();
        self.frame.resize(FRAME_HEADER_LEN, 0);
        self.prev = Prev::default();
        self.recent_locals.clear();
    }

    /// The table index of `s`, adding it (and writing it) when new.
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.table.get(s) {
            return i;
        }
        if self.table.len() >= MAX_TABLE || self.table_bytes + s.len() > MAX_TABLE_BYTES {
            put_varint(&mut self.frame, ITEM_RESET);
            self.reset_table();
            self.resets += 1;
            // Indices the frame's records left out referred to the old table.
            self.recent_locals.clear();
            self.prev = Prev {
                seq: self.prev.seq,
                scheduled: self.prev.scheduled,
                ..Prev::default()
            };
        }
        let idx = self.table.len() as u32;
        self.table_bytes += s.len();
        self.table.insert(s.into(), idx);
        self.strings.push(s.into());
        put_varint(&mut self.frame, ITEM_STR);
        put_bytes(&mut self.frame, s.as_bytes());
        idx
    }

    /// Writes a fact about the whole run (`key`, `value`: for example
    /// `arrivals`, `poisson:42`), read back by [`crate::Decoder::meta`].
    /// Call it before the first record, so that a reader has it first.
    pub fn meta(&mut self, key: &str, value: &str) -> io::Result<()> {
        if self.frame.len() - FRAME_HEADER_LEN + key.len() + value.len() + 20 > self.max_frame {
            self.end_frame()?;
        }
        put_varint(&mut self.frame, ITEM_META);
        put_bytes(&mut self.frame, key.as_bytes());
        put_bytes(&mut self.frame, value.as_bytes());
        Ok(())
    }

    /// Writes a sample of the attack's self-audit, read back by
    /// [`crate::Decoder::audits`].
    pub fn audit(&mut self, a: &barrage_model::Audit) -> io::Result<()> {
        if self.frame.len() - FRAME_HEADER_LEN + a.source.len() + 100 > self.max_frame {
            self.end_frame()?;
        }
        let (f, n) = (&mut self.frame, a.threads as u64);
        put_varint(f, ITEM_AUDIT);
        put_bytes(f, a.source.as_bytes());
        put_zigzag(f, a.at);
        let v = [
            a.span, n, a.cpu_max, a.cpu_user, a.cpu_sys, a.wait_max, a.sent, a.written, a.gaps,
            a.stacked,
        ];
        // The count first: a reader takes the fields it knows and skips
        // those a later barrage adds.
        put_varint(f, v.len() as u64);
        v.into_iter().for_each(|v| put_varint(f, v));
        Ok(())
    }

    /// Writes a sample of a scraped server's metric, read back by
    /// [`crate::Decoder::samples`].
    pub fn sample(&mut self, x: &barrage_model::ServerSample) -> io::Result<()> {
        if self.frame.len() - FRAME_HEADER_LEN + x.source.len() + x.name.len() + 40 > self.max_frame
        {
            self.end_frame()?;
        }
        let f = &mut self.frame;
        put_varint(f, ITEM_SAMPLE);
        put_bytes(f, x.source.as_bytes());
        put_zigzag(f, x.at);
        put_bytes(f, x.name.as_bytes());
        put_varint(f, x.value.to_bits());
        put_varint(f, u64::from(x.rate));
        Ok(())
    }

    /// Writes a change made to the running attack, read back by
    /// [`crate::Decoder::markers`].
    pub fn marker(&mut self, m: &barrage_model::Marker) -> io::Result<()> {
        if self.frame.len() - FRAME_HEADER_LEN + m.what.len() + m.who.len() + 40 > self.max_frame {
            self.end_frame()?;
        }
        let f = &mut self.frame;
        put_varint(f, ITEM_MARKER);
        put_zigzag(f, m.at);
        put_zigzag(f, m.from);
        put_varint(f, m.first);
        put_bytes(f, m.what.as_bytes());
        put_bytes(f, m.who.as_bytes());
        Ok(())
    }

    /// Appends one record; writes the frame out when it is full.
    ///
    /// The writer never writes what the reader refuses: a record that
    /// would take the frame past [`MAX_FRAME`] goes into a frame of its
    /// own, and one larger than a whole frame is an `InvalidInput` error
    /// (nothing of it written). The attack keeps response bodies and heads
    /// well under that (`barrage_client::MAX_KEPT_BODY`).
    pub fn write(&mut self, hit: &Hit) -> io::Result<()> {
        let header_bytes: usize = hit.headers.iter().map(|(n, v)| n.len() + v.len()).sum();
        if hit.headers.len() > Hit::MAX_HEADERS || header_bytes > Hit::MAX_HEADER_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a record with {} header lines of {header_bytes} bytes is over the {} lines or {} bytes a record may hold",
                    hit.headers.len(),
                    Hit::MAX_HEADERS,
                    Hit::MAX_HEADER_BYTES
                ),
            ));
        }
        if hit.events.len() > crate::wire::MAX_EVENTS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a record with {} event stamps is over the {} a record may hold",
                    hit.events.len(),
                    crate::wire::MAX_EVENTS
                ),
            ));
        }
        let most = most_bytes(hit);
        if most > self.max_frame {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a record of up to {most} bytes does not fit in the stream's largest frame ({} bytes)",
                    self.max_frame
                ),
            ));
        }
        if self.frame.len() - FRAME_HEADER_LEN + most > self.max_frame {
            self.end_frame()?;
        }
        let mut names = std::mem::take(&mut self.names);
        let (error, method, url, attack, name, remote, local) = loop {
            // A table reset while interning this record's strings would
            // leave the ones interned before it pointing into the old
            // table: intern them all again (the fresh table has room).
            let resets = self.resets;
            let error = self.intern_like(&hit.error, self.prev.error);
            let method = self.intern_like(&hit.method, self.prev.method);
            let url = self.intern_like(&hit.url, self.prev.url);
            let attack = self.intern_like(&hit.attack, self.prev.attack);
            let name = self.intern_like(&hit.name, self.prev.name);
            names.clear();
            for (name, _) in &hit.headers {
                names.push(self.intern(name));
            }
            let (remote, local) = match &hit.link {
                Some(l) => (self.intern_addr(l.remote, 0), self.intern_addr(l.local, 1)),
                None => (self.prev.remote, self.prev.local),
            };
            if self.resets == resets {
                break (error, method, url, attack, name, remote, local);
            }
        };
        if hit.event_count > 0 || !hit.events.is_empty() || hit.event_malformed > 0 {
            put_varint(&mut self.frame, ITEM_EVENTS);
            put_varint(
                &mut self.frame,
                hit.event_count.max(hit.events.len() as u64),
            );
            put_varint(&mut self.frame, hit.event_malformed);
            put_varint(&mut self.frame, hit.events.len() as u64);
            // In whole microseconds (2 bytes a gap under 16 ms, 3 under
            // 2 s): an event's arrival is known to no better than a
            // read's wake-up.
            let mut last = 0u64;
            for &at in &hit.events {
                // Offsets are in arrival order; one out of order (a
                // hand-made record) is written as 0 past the previous.
                let us = at / 1000;
                put_varint(&mut self.frame, us.saturating_sub(last));
                last = last.max(us);
            }
        }
        if let Some(t) = &hit.tokens {
            put_varint(&mut self.frame, ITEM_TOKENS);
            let values = [
                t.input,
                t.running,
                t.output,
                t.reasoning,
                t.first_chunk,
                t.asked_input,
                t.asked_output,
            ];
            let bits = values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.is_some())
                .fold(0u64, |b, (i, _)| b | 1 << i);
            put_varint(&mut self.frame, bits);
            put_varint(&mut self.frame, t.chunks);
            put_varint(&mut self.frame, t.reasoning_chunks);
            for v in values.into_iter().flatten() {
                put_varint(&mut self.frame, v);
            }
        }
        if let Some(m) = &hit.session {
            put_varint(&mut self.frame, ITEM_SESSION);
            put_varint(&mut self.frame, m.id);
            put_varint(&mut self.frame, u64::from(m.step));
            put_varint(&mut self.frame, m.end.code());
            if m.end != barrage_model::SessionEnd::Going {
                put_varint(&mut self.frame, m.took);
            }
        }
        // Interning may have reset the table; read `prev` only now.
        let prev = self.prev;
        let mut flags = 0u8;
        if !hit.body.is_empty() {
            flags |= F_BODY;
        }
        if !hit.headers.is_empty() {
            flags |= F_HEADERS;
        }
        if hit.bytes_out != 0 {
            flags |= F_BYTES_OUT;
        }
        if error != prev.error {
            flags |= F_ERROR;
        }
        if method != prev.method {
            flags |= F_METHOD;
        }
        if url != prev.url {
            flags |= F_URL;
        }
        if attack != prev.attack {
            flags |= F_ATTACK;
        }
        let proto = hit.proto.code();
        if proto != prev.proto {
            flags |= F_PROTO;
        }
        // The time to first byte, as what the body took after it (a byte or
        // two for small bodies); left out when none was measured.
        let first_byte = (hit.first_byte > 0 && hit.first_byte <= hit.latency)
            .then(|| hit.latency - hit.first_byte);
        let f = &mut self.frame;
        let named = name != prev.name;
        let mut ext = 0u64;
        if let Some(link) = &hit.link {
            if first_byte.is_some() {
                ext |= X_FIRST_BYTE as u64;
            }
            if named {
                ext |= X_NAME as u64;
            }
            if !link.reused {
                ext |= X_NEW;
            }
            if remote != prev.remote {
                ext |= X_REMOTE;
            }
            if local != prev.local {
                ext |= X_LOCAL;
            }
            put_varint(f, ITEM_HIT_LINK);
            f.push(flags);
        } else if named {
            put_varint(f, ITEM_HIT_EXT);
            f.push(flags);
            f.push(
                X_NAME
                    | if first_byte.is_some() {
                        X_FIRST_BYTE
                    } else {
                        0
                    },
            );
        } else {
            put_varint(
                f,
                if first_byte.is_some() {
                    ITEM_HIT_FIRST_BYTE
                } else {
                    ITEM_HIT
                },
            );
            f.push(flags);
        }
        put_zigzag(f, hit.seq.wrapping_sub(prev.seq) as i64);
        put_zigzag(f, hit.scheduled.wrapping_sub(prev.scheduled));
        put_zigzag(f, hit.timestamp.wrapping_sub(hit.scheduled));
        put_varint(f, hit.latency);
        if hit.link.is_some() {
            // The code's change and the extension bits in one varint: a
            // repeated code with its bits is one byte.
            let change = hit.code as i64 - prev.code as i64;
            let zigzag = ((change << 1) ^ (change >> 63)) as u64;
            put_varint(f, (zigzag << X_LINK_BITS) | ext);
        } else {
            put_varint(f, hit.code as u64);
        }
        put_varint(f, hit.bytes_in);
        if flags & F_BYTES_OUT != 0 {
            put_varint(f, hit.bytes_out);
        }
        if let Some(after_head) = first_byte {
            put_varint(f, after_head);
        }
        for (flag, idx) in [
            (F_ERROR, error),
            (F_METHOD, method),
            (F_URL, url),
            (F_ATTACK, attack),
        ] {
            if flags & flag != 0 {
                put_varint(f, idx as u64);
            }
        }
        if flags & F_PROTO != 0 {
            put_varint(f, proto as u64);
        }
        if named {
            put_varint(f, name as u64);
        }
        if let Some(link) = &hit.link {
            if ext & X_NEW != 0 {
                put_varint(f, link.dns);
                put_varint(f, link.connect);
                put_varint(f, link.tls);
            }
            if ext & X_REMOTE != 0 {
                put_varint(f, remote as u64);
            }
            if ext & X_LOCAL != 0 {
                put_varint(f, self.recent_locals.code_of(local));
            }
            self.recent_locals.touch(local);
        }
        if flags & F_BODY != 0 {
            put_bytes(f, &hit.body);
        }
        if flags & F_HEADERS != 0 {
            put_varint(f, hit.headers.len() as u64);
            for (idx, (_, value)) in names.iter().zip(&hit.headers) {
                put_varint(f, *idx as u64);
                put_bytes(f, value.as_bytes());
            }
        }
        self.names = names;
        self.prev = Prev::after(
            hit.seq,
            hit.scheduled,
            [error, method, url, attack, name],
            proto,
        )
        .with_link(hit.code, remote, local);
        if self.frame.len() >= FRAME_TARGET {
            self.end_frame()?;
        }
        Ok(())
    }

    /// Whether records are waiting in an unwritten frame.
    pub fn has_pending(&self) -> bool {
        self.frame.len() > FRAME_HEADER_LEN
    }

    #[cfg(test)]
    pub(crate) fn with_max_frame(mut self, max: usize) -> Self {
        self.max_frame = max;
        self
    }

    fn end_frame(&mut self) -> io::Result<()> {
        if !self.has_pending() {
            return Ok(());
        }
        let payload_len = (self.frame.len() - FRAME_HEADER_LEN) as u32;
        let crc = crc32fast::hash(&self.frame[FRAME_HEADER_LEN..]);
        self.frame[..4].copy_from_slice(&payload_len.to_le_bytes());
        self.frame[4..8].copy_from_slice(&crc.to_le_bytes());
        let res = self.out.write_all(&self.frame);
        self.start_frame();
        res
    }

    /// Writes the pending frame and flushes the writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.end_frame()?;
        self.out.flush()
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush()?;
        Ok(self.out)
    }
}

/// The most bytes `hit` can take in a frame: every varint at its longest,
/// every string interned anew, and a table reset.
/// Whether `a` and `b` hold the same bytes, compared 8 at a time without
/// a call to libc's `memcmp`. Each record compares its four strings with
/// the last record's, and the attack's writer thread sleeps between
/// batches: glibc's AVX-512 `memcmp` (`__memcmp_evex_movbe`) right after a
/// wake-up took 61% of that thread's time in a profile of 332,000
/// records/s (the writer 10.9% of the attack's CPU; 4.0% with glibc's
/// AVX-512 and AVX2 routines turned off by `GLIBC_TUNABLES`).
#[inline]
fn same_text(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    for (p, q) in (&mut x).zip(&mut y) {
        let word = |c: &[u8]| u64::from_ne_bytes(c.try_into().unwrap_or_default());
        if word(p) != word(q) {
            return false;
        }
    }
    let mut same = true;
    for (p, q) in x.remainder().iter().zip(y.remainder()) {
        same &= p == q;
    }
    same
}

#[cfg(test)]
mod tests;
