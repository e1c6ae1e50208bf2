//! One run cut into blocks of time for the bootstrap: each block keeps
//! its records' count, successes, latency total and maximum, and a
//! latency histogram in 1% steps. The blocks start at [`FIRST_WIDTH`]
//! of send time; when there are more than twice [`BLOCKS`], neighbours
//! merge and the width doubles, so a run ends with [`BLOCKS`] to twice
//! as many blocks (fewer only when it is short), and memory stays
//! bounded by the blocks, never by the records.

/// The blocks a run is cut into, at least (when long enough).
pub const BLOCKS: usize = 40;

/// The first width of a block (ns of send time): 10 ms.
pub const FIRST_WIDTH: i64 = 10_000_000;

/// Latency histogram steps: each bucket 1% wider than the last.
const STEP: f64 = 1.01;

/// Buckets: 1 ns to beyond 100 s in 1% steps.
pub const BUCKETS: usize = 2600;

/// The bucket of a latency in ns.
pub fn bucket(ns: u64) -> usize {
    if ns <= 1 {
        return 0;
    }
    ((ns as f64).ln() / STEP.ln()) as usize
}

/// The value `share` (0..=1) of the way through a bucket, in log terms
/// (ns); the first bucket holds 0 and 1 ns, and stands for 0 (a lag of 0
/// drew as 1 ns, and an axis of 0.000001 ms labels).
pub fn within_bucket(bucket: usize, share: f64) -> f64 {
    if bucket == 0 {
        return 0.0;
    }
    STEP.powf(bucket as f64 + share.clamp(0.0, 1.0))
}

/// One block's figures.
#[derive(Debug, Clone, Default)]
pub struct Block {
    /// Records sent in it.
    pub count: u64,
    /// Of them, successes.
    pub ok: u64,
    /// Of them, those that met the objectives (`Options::slo`).
    pub attained: u64,
    /// Sum of latencies (ns).
    pub latency_sum: f64,
    /// Greatest latency (ns).
    pub max: u64,
    /// Send time covered (ns): the block's width, or less at the run's
    /// edges.
    pub span: i64,
    /// (bucket, count) of its latencies, by bucket.
    pub hist: Vec<(u16, u32)>,
}

/// A block being filled: its histogram dense.
#[derive(Clone)]
struct Open {
    block: Block,
    dense: Vec<u32>,
    first: i64,
    last: i64,
}

impl Open {
    fn new() -> Open {
        Open {
            block: Block::default(),
            dense: Vec::new(),
            first: i64::MAX,
            last: i64::MIN,
        }
    }

    fn add(&mut self, t: i64, latency: u64, ok: bool, attained: bool) {
        if self.dense.is_empty() {
            self.dense = vec![0; BUCKETS];
        }
        let b = &mut self.block;
        b.count += 1;
        b.ok += u64::from(ok);
        b.attained += u64::from(attained);
        b.latency_sum += latency as f64;
        b.max = b.max.max(latency);
        self.dense[bucket(latency).min(BUCKETS - 1)] += 1;
        self.first = self.first.min(t);
        self.last = self.last.max(t);
    }

    fn absorb(&mut self, other: Open) {
        if other.block.count == 0 {
            return;
        }
        if self.dense.is_empty() {
            *self = other;
            return;
        }
        let (a, b) = (&mut self.block, &other.block);
        a.count += b.count;
        a.ok += b.ok;
        a.attained += b.attained;
        a.latency_sum += b.latency_sum;
        a.max = a.max.max(b.max);
        for (x, y) in self.dense.iter_mut().zip(&other.dense) {
            *x += y;
        }
        self.first = self.first.min(other.first);
        self.last = self.last.max(other.last);
    }
}

/// A run being cut into blocks, record by record.
#[derive(Clone)]
pub struct Run {
    origin: Option<i64>,
    width: i64,
    /// Blocks kept before neighbours merge.
    most: usize,
    open: Vec<Open>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("width", &self.width)
            .field("blocks", &self.open.len())
            .finish()
    }
}

impl Default for Run {
    fn default() -> Self {
        Run::new()
    }
}

impl Run {
    /// No records yet: blocks from [`FIRST_WIDTH`], [`BLOCKS`] to twice
    /// as many.
    pub fn new() -> Run {
        Run::with(FIRST_WIDTH, 2 * BLOCKS)
    }

    /// No records yet: blocks `width` ns wide at first, at most `most`
    /// of them (then neighbours merge).
    pub fn with(width: i64, most: usize) -> Run {
        Run {
            origin: None,
            width: width.max(1),
            most: most.max(2),
            open: Vec::new(),
        }
    }

    /// Adds a record: its send time (unix ns), latency (ns) and whether
    /// it succeeded.
    pub fn add(&mut self, t: i64, latency: u64, ok: bool) {
        self.add_attained(t, latency, ok, false);
    }

    /// [`Run::add`] for a record that met the objectives or not.
    pub fn add_attained(&mut self, t: i64, latency: u64, ok: bool, attained: bool) {
        let origin = *self.origin.get_or_insert(t);
        // A record sent before the first one seen goes in the first block.
        let since = t.saturating_sub(origin).max(0);
        let mut i = (since / self.width) as usize;
        while i >= self.most {
            self.halve();
            i = (since / self.width) as usize;
        }
        while i >= self.open.len() {
            self.open.push(Open::new());
        }
        self.open[i].add(t, latency, ok, attained);
    }

    /// Merges neighbours: half as many blocks, twice as wide.
    pub fn halve(&mut self) {
        let old = std::mem::take(&mut self.open);
        let mut it = old.into_iter();
        while let Some(mut a) = it.next() {
            if let Some(b) = it.next() {
                a.absorb(b);
            }
            self.open.push(a);
        }
        self.width *= 2;
    }

    /// The blocks with records, in time order.
    pub fn blocks(&self) -> Vec<Block> {
        let n = self.open.len();
        let origin = self.origin.unwrap_or(0);
        // The mean gap between sends in the whole blocks, to give the last
        // (partial) block the time its records took: from its start to
        // its last send, plus one gap.
        let whole: u64 = self.open[..n.saturating_sub(1)]
            .iter()
            .map(|o| o.block.count)
            .sum();
        let gap = if whole > 0 {
            (n - 1) as f64 * self.width as f64 / whole as f64
        } else {
            match self.open.last() {
                Some(o) if o.block.count > 1 => {
                    (o.last - o.first) as f64 / (o.block.count - 1) as f64
                }
                _ => self.width as f64,
            }
        };
        self.open
            .iter()
            .enumerate()
            .filter(|(_, o)| o.block.count > 0)
            .map(|(i, o)| {
                let mut b = o.block.clone();
                // Blocks start at the first send and cover their width but
                // for the last, which ends a gap after its last send.
                b.span = if i + 1 == n {
                    let start = origin + i as i64 * self.width;
                    ((o.last - start).max(0) as f64 + gap).clamp(1.0, self.width as f64) as i64
                } else {
                    self.width
                };
                b.hist = o
                    .dense
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(k, c)| (k as u16, *c))
                    .collect();
                b
            })
            .collect()
    }

    /// Blocks now, empty ones included.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.open.len()
    }

    /// The width of a block now (ns).
    pub fn width(&self) -> i64 {
        self.width
    }

    /// Every block from the first, empty ones included (their `count` 0),
    /// so that block `i` starts `i` widths after the first record.
    pub fn all_blocks(&self) -> Vec<Block> {
        let mut with_records = self.blocks().into_iter();
        self.open
            .iter()
            .map(|o| {
                if o.block.count > 0 {
                    with_records.next().unwrap_or_default()
                } else {
                    Block::default()
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(run: &mut Run, t_ms: i64, latency_us: u64, ok: bool) {
        run.add(
            1_700_000_000_000_000_000 + t_ms * 1_000_000,
            latency_us * 1000,
            ok,
        );
    }

    #[test]
    fn zero_stands_for_zero() {
        assert_eq!(within_bucket(bucket(0), 0.5), 0.0);
        assert_eq!(within_bucket(bucket(1), 0.9), 0.0);
        assert!(within_bucket(bucket(2), 0.5) > 1.0);
    }

    #[test]
    fn buckets_are_one_percent_wide() {
        for ns in [1_000u64, 1_234_567, 99_000_000_000] {
            let v = within_bucket(bucket(ns), 0.5);
            assert!((v / ns as f64 - 1.0).abs() < 0.01, "{ns} -> {v}");
        }
        assert!(bucket(100_000_000_000) < BUCKETS);
    }

    #[test]
    fn a_long_run_keeps_between_40_and_80_blocks_and_every_record() {
        let mut run = Run::new();
        for ms in 0..60_000 {
            add(&mut run, ms, 500 + (ms as u64 % 7), ms % 10 != 0);
        }
        let blocks = run.blocks();
        assert!(
            (BLOCKS..=2 * BLOCKS).contains(&blocks.len()),
            "{}",
            blocks.len()
        );
        assert_eq!(blocks.iter().map(|b| b.count).sum::<u64>(), 60_000);
        assert_eq!(blocks.iter().map(|b| b.ok).sum::<u64>(), 54_000);
        let counted: u64 = blocks
            .iter()
            .flat_map(|b| b.hist.iter().map(|h| u64::from(h.1)))
            .sum();
        assert_eq!(counted, 60_000);
        let span: i64 = blocks.iter().map(|b| b.span).sum();
        assert!((span - 60_000_000_000).abs() < 2 * run.width(), "{span}");
    }

    #[test]
    fn blocks_span_the_time_their_records_took() {
        // 1,000 sends over 997 ms (three at the start at one instant, which
        // do not make the first block short), about 1 ms apart: 998 ms,
        // the last send's gap included, however the blocks fall.
        let mut run = Run::new();
        for _ in 0..3 {
            add(&mut run, 0, 500, true);
        }
        for ms in 1..998 {
            add(&mut run, ms, 500, true);
        }
        let span: i64 = run.blocks().iter().map(|b| b.span).sum();
        assert!((span - 998_000_000).abs() < 1_000_000, "{span}");
    }

    #[test]
    fn a_short_run_has_fine_blocks() {
        let mut run = Run::new();
        for ms in 0..200 {
            add(&mut run, ms, 500, true);
        }
        assert_eq!(run.blocks().len(), 20);
        assert_eq!(run.width(), FIRST_WIDTH);
    }
}
