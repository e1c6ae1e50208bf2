use std::{collections::HashMap, io, io::Write};

use barrage_model::Hit;

use crate::wire::{
    Item, WireHit, FORMAT_VERSION, FRAME_HEADER_LEN, FRAME_TARGET, MAGIC, MAX_TABLE,
};

/// Writes [`Hit`]s as a binary result stream.
///
/// Records collect in a frame buffer; a frame goes to the writer when it
/// reaches 64 KiB or when [`Encoder::flush`] is called (the attack calls it at
/// least every 100 ms so that readers downstream stay live). Memory is one
/// frame plus the string table, which is reset at 65,536 entries.
pub struct Encoder<W: Write> {
    out: W,
    /// Frame under construction: 8 reserved header bytes, then the payload.
    frame: Vec<u8>,
    table: HashMap<Box<str>, u32>,
    prev_seq: u64,
    prev_scheduled: i64,
    headers: Vec<(u32, u32)>,
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
            prev_seq: 0,
            prev_scheduled: 0,
            headers: Vec::new(),
        };
        enc.reset_table();
        enc.start_frame();
        Ok(enc)
    }

    fn reset_table(&mut self) {
        self.table.clear();
        self.table.insert("".into(), 0);
    }

    fn start_frame(&mut self) {
        self.frame.clear();
        self.frame.resize(FRAME_HEADER_LEN, 0);
        self.prev_seq = 0;
        self.prev_scheduled = 0;
    }

    fn push_item(&mut self, item: &Item<'_>) {
        // Serializing into a Vec cannot fail for these types.
        let _ = postcard::to_io(item, &mut self.frame);
    }

    /// The table index of `s`, adding it (and writing it) when new.
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.table.get(s) {
            return i;
        }
        if self.table.len() >= MAX_TABLE {
            self.push_item(&Item::Reset);
            self.reset_table();
        }
        let idx = self.table.len() as u32;
        self.table.insert(s.into(), idx);
        self.push_item(&Item::Str(s));
        idx
    }

    /// Appends one record; writes the frame out when it is full.
    pub fn write(&mut self, hit: &Hit) -> io::Result<()> {
        let error = self.intern(&hit.error);
        let method = self.intern(&hit.method);
        let url = self.intern(&hit.url);
        let attack = self.intern(&hit.attack);
        let mut names = std::mem::take(&mut self.headers);
        names.clear();
        for (name, _) in &hit.headers {
            let idx = self.intern(name);
            names.push((idx, 0));
        }
        let headers = names
            .iter()
            .zip(&hit.headers)
            .map(|((idx, _), (_, value))| (*idx, value.as_str()))
            .collect();
        let wire = WireHit {
            seq_delta: hit.seq.wrapping_sub(self.prev_seq) as i64,
            scheduled_delta: hit.scheduled.wrapping_sub(self.prev_scheduled),
            lag: hit.timestamp.wrapping_sub(hit.scheduled),
            latency: hit.latency,
            code: hit.code,
            bytes_out: hit.bytes_out,
            bytes_in: hit.bytes_in,
            error,
            method,
            url,
            attack,
            body: &hit.body,
            headers,
        };
        self.push_item(&Item::Hit(wire));
        self.headers = names;
        self.prev_seq = hit.seq;
        self.prev_scheduled = hit.scheduled;
        if self.frame.len() >= FRAME_TARGET {
            self.end_frame()?;
        }
        Ok(())
    }

    /// Whether records are waiting in an unwritten frame.
    pub fn has_pending(&self) -> bool {
        self.frame.len() > FRAME_HEADER_LEN
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

    /// The writer (for tests and for reporting where output goes).
    pub fn get_ref(&self) -> &W {
        &self.out
    }
}
