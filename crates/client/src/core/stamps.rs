//! An open stream's event stamps, coded compact while it is open.

/// An open stream's event stamps, kept compact, in whole microseconds
/// (as the result stream keeps them: an event's arrival is known to no
/// better than a read's wake-up). Each gap between stamps (the first from
/// the tape's base) is coded against the stream's cadence, its gaps
/// averaged (an eighth of each new one), as time-series stores code
/// their timestamps: a stream's events come at a cadence, and what is
/// left is its jitter. The symbol is 0 for a zero gap (events that came
/// in one read), else the zigzagged difference plus one, written as an
/// adaptive Rice code (JPEG-LS's, for jitter's two-sided geometric
/// shape): `k` low bits as they are, the rest in unary, with `k` from
/// the symbols' recent widths. A symbol of 2^20 times 2^k or more is
/// escaped (20 ones, its width in 6 bits, its bits). Where zero gaps
/// are frequent (events that came several to a read, as on a loaded
/// machine), so that a bit saying "zero" costs less than their Rice
/// code of `k + 1` bits, each symbol is that bit first, and a gap's
/// symbol less one follows. Hand-written: no
/// crate codes a stream of integers this way in place, and the
/// measurement below asks for it.
///
/// Measured on 200 SSE streams of 1,000 events at 10 ms, on a loaded
/// machine (the stamps `barrage dump` gave, coded offline): 1.41 bytes
/// an event, against 1.90 for the LEB128 varint of each difference from
/// the last gap (the coding before) and 8 as `Vec<u64>` of ns. On jitter
/// of about 30 µs: 0.96 bytes against 1.31, so 1,000 events fit in
/// mimalloc's 1,024-byte block instead of its 1,536-byte one. On the
/// streams cell's own stamps with the machine saturated (1,000 streams;
/// a tenth of the events two or more to a read, gaps off the cadence by
/// 3.5 ms at the median), the bit for zero takes 1.99 bytes an event
/// down to 1.73, and leaves the quiet case's 1.16 as it was.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stamps {
    pub(crate) bytes: Vec<u8>,
    /// How many (at most -max-events, 10,000,000).
    len: u32,
    last_us: u64,
    /// The gaps that were not zero (the first, from the base, aside),
    /// averaged, times 8, in µs.
    cadence8: u64,
    /// The symbols' widths in bits, averaged (a quarter of each new
    /// one), times 16: the Rice parameter, rounded.
    width16: u16,
    /// Bits written in the last byte (0: it is full, or there is none).
    used: u8,
    /// How often gaps are zero, averaged (a sixteenth of each new one),
    /// out of [`ZEROS_ALL`]: whether a bit says "zero" first.
    zeros: u8,
}

/// Zigzag: small differences either side of zero as small numbers.
fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// [`Stamps`]'s `zeros` when every gap is zero.
const ZEROS_ALL: u16 = 240;

/// The code's parameters from its averages: the Rice parameter `k`,
/// and whether a bit for zero comes first (it costs less, at this rate
/// of zeros, than the `k + 1` bits of a zero's Rice code). The writer and
/// the reader keep the same averages.
fn params(width16: u16, zeros: u8) -> (u32, bool) {
    let k = rice_k(width16);
    (k, u32::from(zeros) * (k + 1) > u32::from(ZEROS_ALL))
}

/// The averages after a symbol of `v`: a zero gap leaves the width as
/// it is, and counts in the zeros' rate.
fn adapt(width16: &mut u16, zeros: &mut u8, v: u64) {
    if v > 0 {
        *width16 = next_width(*width16, v);
    }
    let z = u16::from(*zeros);
    let add = if v == 0 { ZEROS_ALL / 16 } else { 0 };
    // Rounded up, so that it decays to 0 (at most 240 - 15 + 15).
    *zeros = (z - z.div_ceil(16) + add) as u8;
}

/// Unary ones before a symbol is escaped.
const ESCAPE: u32 = 20;

/// The Rice parameter for an averaged width (at most 58, so that the
/// unary part of a 64-bit symbol is escaped, never shifted out).
fn rice_k(width16: u16) -> u32 {
    ((u32::from(width16) + 8) / 16).min(58)
}

/// The width average after a symbol of `v`.
fn next_width(width16: u16, v: u64) -> u16 {
    let bits = (64 - v.leading_zeros()) as u16;
    width16 - (width16 >> 2) + ((bits * 16) >> 2)
}

/// Bits the code of `v` takes with parameter `k`.
fn code_bits(v: u64, k: u32) -> u32 {
    let q = v >> k;
    if q < u64::from(ESCAPE) {
        q as u32 + 1 + k
    } else {
        ESCAPE + 6 + (63 - v.leading_zeros())
    }
}

impl Stamps {
    /// Adds `n` stamps at `ns` from the base.
    pub(crate) fn push(&mut self, ns: u64, n: usize) {
        if n == 0 {
            return;
        }
        let us = ns / 1000;
        let gap = us.saturating_sub(self.last_us);
        self.last_us = self.last_us.max(us);
        let mut v = 0;
        if gap > 0 {
            let expect = self.cadence8 >> 3;
            v = zigzag(gap.wrapping_sub(expect) as i64).wrapping_add(1);
            if self.len > 0 {
                self.cadence8 = match self.cadence8 {
                    0 => gap << 3,
                    c => c.wrapping_add(gap).wrapping_sub(c >> 3),
                };
            }
        }
        self.symbol(v);
        // The rest came at the same instant: zero gaps.
        for _ in 1..n {
            self.symbol(0);
        }
        self.len = self
            .len
            .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
    }

    /// Writes one symbol's code.
    fn symbol(&mut self, v: u64) {
        let (k, flag) = params(self.width16, self.zeros);
        adapt(&mut self.width16, &mut self.zeros, v);
        // Flagged, a zero is its bit alone, a gap its bit and v - 1.
        let v = if flag { v.wrapping_sub(1) } else { v };
        let bits = match (flag, v) {
            (true, u64::MAX) => 1,
            (true, v) => 1 + code_bits(v, k),
            (false, v) => code_bits(v, k),
        };
        let free = if self.used == 0 {
            0
        } else {
            8 - u32::from(self.used)
        };
        let more = bits.saturating_sub(free).div_ceil(8) as usize;
        if self.bytes.capacity() - self.bytes.len() < more {
            // Grown a size class of the allocator's at a time (mimalloc's
            // bins are an eighth to a quarter apart), not doubled: a
            // doubled buffer may sit half empty, and a capacity between
            // two classes takes the larger block all the same.
            let least = (self.bytes.len() + more)
                .max(self.bytes.capacity() + 1)
                .max(256);
            self.bytes
                .reserve_exact(size_class(least) - self.bytes.len());
        }
        if flag {
            self.put(u64::from(v != u64::MAX), 1);
            if v == u64::MAX {
                return;
            }
        }
        let q = v >> k;
        if q < u64::from(ESCAPE) {
            let q = q as u32;
            // q ones, then a zero.
            self.put(((1u64 << q) - 1) << 1, q + 1);
            self.put(v & ((1u64 << k) - 1), k);
        } else {
            let width = 64 - v.leading_zeros();
            self.put((1u64 << ESCAPE) - 1, ESCAPE);
            self.put(u64::from(width - 1), 6);
            // The top bit is known from the width.
            self.put(v & (u64::MAX >> (65 - width)), width - 1);
        }
    }

    /// Writes the low `count` bits of `value`, highest first.
    fn put(&mut self, value: u64, count: u32) {
        for i in (0..count).rev() {
            if self.used == 0 {
                self.bytes.push(0);
            }
            let bit = ((value >> i) & 1) as u8;
            let last = self.bytes.len() - 1;
            self.bytes[last] |= bit << (7 - self.used);
            self.used = (self.used + 1) % 8;
        }
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Each stamp, in ns from the base (whole microseconds), in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let mut read = Bits {
            bytes: &self.bytes,
            at: 0,
        };
        let (mut at, mut cadence8, mut width16, mut zeros, mut left) =
            (0u64, 0u64, 0u16, 0u8, self.len);
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            let (k, flag) = params(width16, zeros);
            let v = if flag && read.bit()? == 0 {
                0
            } else {
                let mut q = 0;
                while q < ESCAPE && read.bit()? == 1 {
                    q += 1;
                }
                let v = if q < ESCAPE {
                    (u64::from(q) << k) | read.take(k)?
                } else {
                    let width = read.take(6)? as u32 + 1;
                    (1u64 << (width - 1)) | read.take(width - 1)?
                };
                v + u64::from(flag)
            };
            adapt(&mut width16, &mut zeros, v);
            if v > 0 {
                let gap = (cadence8 >> 3).wrapping_add(unzigzag(v - 1) as u64);
                at = at.wrapping_add(gap);
                if left < self.len {
                    cadence8 = match cadence8 {
                        0 => gap << 3,
                        c => c.wrapping_add(gap).wrapping_sub(c >> 3),
                    };
                }
            }
            left -= 1;
            Some(at * 1000)
        })
    }
}

/// Reads a stamps' bits, highest first.
struct Bits<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Bits<'_> {
    fn bit(&mut self) -> Option<u64> {
        let byte = *self.bytes.get(self.at / 8)?;
        let bit = (byte >> (7 - self.at % 8)) & 1;
        self.at += 1;
        Some(u64::from(bit))
    }

    fn take(&mut self, count: u32) -> Option<u64> {
        let mut v = 0;
        for _ in 0..count {
            v = (v << 1) | self.bit()?;
        }
        Some(v)
    }
}

/// The size of the allocator's block that holds `size` bytes: mimalloc's
/// bins are 8 bytes apart up to 64, then four to a doubling (what a
/// block costs in barrage; `tests/held_heap.rs` counts with it too).
#[doc(hidden)]
pub fn size_class(size: usize) -> usize {
    if size <= 64 {
        return size.div_ceil(8) * 8;
    }
    let top = usize::BITS - 1 - (size - 1).leading_zeros();
    let step = 1usize << (top - 2);
    size.div_ceil(step) * step
}
