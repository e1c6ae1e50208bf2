//! [`Recorder`]: an attack's stream as its records' sink, tallied for the
//! progress line as it is written.

use std::{
    io::{self, Write},
    sync::Arc,
};

use barrage_model::{sink::HitSink, Hit};
use barrage_stream::Encoder;

use crate::progress::{Board, Tally};

/// What is shown each record as it is written.
pub type Watcher = Box<dyn Fn(&Hit) + Send>;

/// The stream's encoder as the attack's sink, a watcher of each record
/// (`-prometheus-addr`'s exporter), and the progress display's tally
/// (published to [`Recorder::board`] at each flush).
pub struct Recorder {
    encoder: Encoder<Box<dyn Write + Send>>,
    watcher: Option<Watcher>,
    tally: Tally,
    board: Arc<Board>,
    until: Option<Box<Until>>,
}

/// `-until`: the records so far, judged once a second of sends.
struct Until {
    until: barrage_metrics::Until,
    metrics: barrage_metrics::Metrics,
    judged: i64,
    stop: Box<dyn FnMut(&str) + Send>,
    /// `attack -warmup` (ns; 0: none): the records scheduled this long
    /// after the first are not judged, as reports leave them out.
    warmup: u64,
    first: Option<i64>,
}

/// How often `-until` judges the run, in send time.
const UNTIL_EVERY: i64 = 1_000_000_000;

impl Recorder {
    /// Writes the stream's header to `out` and flushes it, so that a
    /// reader downstream knows the stream has begun.
    pub fn start(out: Box<dyn Write + Send>, watcher: Option<Watcher>) -> io::Result<Recorder> {
        let mut encoder = Encoder::new(out)?;
        encoder.flush()?;
        Ok(Recorder {
            encoder,
            watcher,
            tally: Tally::default(),
            board: Arc::default(),
            until: None,
        })
    }

    /// `-until`: once the run's interval of `until`'s figure is within
    /// its width, the stream says so (its fact `ended`) and `stop` is
    /// called with the words, once.
    pub fn until(&mut self, until: barrage_metrics::Until, stop: Box<dyn FnMut(&str) + Send>) {
        let options = barrage_metrics::Options {
            intervals: true,
            ..Default::default()
        };
        self.until = Some(Box::new(Until {
            until,
            metrics: barrage_metrics::Metrics::with_options(options),
            judged: i64::MIN,
            stop,
            warmup: 0,
            first: None,
        }));
    }

    /// Feeds `-until` a record; its words once it is met.
    fn judge(&mut self, hit: &Hit) -> Option<String> {
        let u = self.until.as_mut()?;
        let first = u.first.map_or(hit.scheduled, |f| f.min(hit.scheduled));
        u.first = Some(first);
        if hit.scheduled < first.saturating_add(u.warmup.min(i64::MAX as u64) as i64) {
            return None;
        }
        u.metrics.add(hit);
        if u.judged == i64::MIN {
            u.judged = hit.timestamp;
        }
        if hit.timestamp < u.judged.saturating_add(UNTIL_EVERY) {
            return None;
        }
        u.judged = hit.timestamp;
        let said = u.until.settled(&u.metrics)?;
        (u.stop)(&said);
        self.until = None;
        Some(said)
    }

    /// Where the progress display reads the tallies.
    pub fn board(&self) -> Arc<Board> {
        self.board.clone()
    }
}

impl HitSink for Recorder {
    fn write(&mut self, hit: &Hit) -> io::Result<()> {
        if let Some(w) = &self.watcher {
            w(hit);
        }
        self.tally.add(hit);
        self.board.written();
        self.encoder.write(hit)?;
        match self.judge(hit) {
            Some(said) => self.encoder.meta("ended", &said),
            None => Ok(()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.board.publish(&mut self.tally);
        self.encoder.flush()
    }

    fn meta(&mut self, key: &str, value: &str) -> io::Result<()> {
        if let (Some(u), crate::records::WARMUP_FACT) = (self.until.as_mut(), key) {
            u.warmup = barrage_model::duration::parse(value)
                .ok()
                .and_then(|ns| u64::try_from(ns).ok())
                .unwrap_or(0);
        }
        self.encoder.meta(key, value)
    }

    fn audit(&mut self, sample: &barrage_model::Audit) -> io::Result<()> {
        self.board.audited(sample);
        self.encoder.audit(sample)
    }

    fn sample(&mut self, sample: &barrage_model::ServerSample) -> io::Result<()> {
        self.encoder.sample(sample)
    }

    fn marker(&mut self, marker: &barrage_model::Marker) -> io::Result<()> {
        self.encoder.marker(marker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::tests::Shared;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn each_record_is_written_watched_and_tallied() {
        let out = Shared::default();
        let seen = Arc::new(AtomicU64::new(0));
        let counted = seen.clone();
        let mut r = Recorder::start(
            Box::new(out.clone()),
            Some(Box::new(move |_| {
                counted.fetch_add(1, Ordering::Relaxed);
            })),
        )
        .unwrap();
        let header = out.0.lock().unwrap().len();
        assert!(header > 0, "the header is written at the start");
        let hit = Hit {
            code: 200,
            ..Hit::default()
        };
        r.write(&hit).unwrap();
        r.meta("k", "v").unwrap();
        r.flush().unwrap();
        assert_eq!(seen.load(Ordering::Relaxed), 1);
        let bytes = out.0.lock().unwrap().clone();
        let (hits, error) = barrage_stream::Decoder::read_all(&bytes[..]);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(hits.iter().map(|h| h.code).collect::<Vec<_>>(), [200]);
    }
}
