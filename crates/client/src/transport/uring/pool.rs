//! A thread's provided buffers: one ring of receive buffers that every
//! connection's armed (multishot) receive takes from as its bytes arrive,
//! and gives back once they are read. A connection waiting for its answer
//! holds no buffer, so 18,000 waiting connections share this one pool.

use std::{
    alloc::{self, Layout},
    sync::atomic::{AtomicU16, Ordering},
};

use io_uring::{types::BufRingEntry, IoUring};

/// Buffers in the ring (a power of two).
const BUFS: u16 = 512;
/// Each buffer's size: an answer's head and a small body in one.
const SIZE: usize = 8 * 1024;
/// The buffer group the thread's receives name.
pub(super) const GROUP: u16 = 0;

/// The ring of buffer entries the kernel takes from, and the buffers.
pub(super) struct Pool {
    /// `BUFS` entries, page-aligned, registered with the ring; the tail
    /// lives in the first entry's spare field.
    entries: *mut BufRingEntry,
    /// `BUFS * SIZE` bytes the kernel writes into (zeroed pages, resident
    /// only once used).
    bufs: *mut u8,
    /// The next entry given to the kernel.
    tail: u16,
}

fn entries_layout() -> Layout {
    Layout::from_size_align(BUFS as usize * size_of::<BufRingEntry>(), 4096)
        .expect("a page-aligned layout")
}

fn bufs_layout() -> Layout {
    Layout::from_size_align(BUFS as usize * SIZE, 4096).expect("a page-aligned layout")
}

impl Pool {
    /// A pool registered with `ring` as group [`GROUP`], every buffer
    /// given; `None` where the kernel has no buffer rings (before 5.19).
    pub(super) fn new(ring: &IoUring) -> Option<Pool> {
        // SAFETY: non-zero sizes; null checked.
        let entries = unsafe { alloc::alloc_zeroed(entries_layout()) }.cast::<BufRingEntry>();
        if entries.is_null() {
            return None;
        }
        // SAFETY: as above.
        let bufs = unsafe { alloc::alloc_zeroed(bufs_layout()) };
        if bufs.is_null() {
            // SAFETY: allocated just above with this layout.
            unsafe { alloc::dealloc(entries.cast(), entries_layout()) };
            return None;
        }
        let mut pool = Pool {
            entries,
            bufs,
            tail: 0,
        };
        // SAFETY: the entries stay allocated until the pool drops, which
        // the driver leaves undone (leaks) while a receive may be armed.
        let registered = unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(entries as u64, BUFS, GROUP, 0)
        };
        if registered.is_err() {
            return None;
        }
        for bid in 0..BUFS {
            pool.give(bid);
        }
        Some(pool)
    }

    /// Gives buffer `bid` back to the kernel.
    pub(super) fn give(&mut self, bid: u16) {
        if bid >= BUFS {
            return;
        }
        // SAFETY: the index is masked into the ring; only the kernel
        // reads the entry once the tail passes it.
        let entry = unsafe { &mut *self.entries.add(usize::from(self.tail & (BUFS - 1))) };
        entry.set_addr(self.bufs as u64 + u64::from(bid) * SIZE as u64);
        entry.set_len(SIZE as u32);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail is the first entry's spare field, aligned, and
        // shared with the kernel (which only reads it).
        let tail = unsafe { AtomicU16::from_ptr(BufRingEntry::tail(self.entries).cast_mut()) };
        tail.store(self.tail, Ordering::Release);
    }

    /// Bytes `at..at + len` of buffer `bid`, as a completion filled it.
    pub(super) fn bytes(&self, bid: u16, at: usize, len: usize) -> &[u8] {
        if bid >= BUFS || at + len > SIZE {
            return &[];
        }
        // SAFETY: inside buffer `bid`, which the kernel filled and does
        // not touch again until it is given back.
        unsafe { std::slice::from_raw_parts(self.bufs.add(usize::from(bid) * SIZE + at), len) }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with these layouts; the driver drops
        // a pool only when no receive is armed.
        unsafe {
            alloc::dealloc(self.entries.cast(), entries_layout());
            alloc::dealloc(self.bufs, bufs_layout());
        }
    }
}
