//! The attack's writer thread started ([`crate::Attack::spawn_writer`]):
//! the queue into it, `-scrape`'s thread beside it, and what it puts in
//! the stream besides the records.

use std::thread;

use crate::{
    writer::{write_hits, Batch, Beside, WriterThread},
    HitSink, Stopper,
};

/// Batches of hits queued between the workers and the writer thread (a
/// worker thread's outbox at a time, 1 to 64 hits). When the output is
/// slower than this, workers wait (the lag shows in later hits).
const QUEUE: usize = 1024;

impl crate::Attack {
    /// The writer thread over `sink`, and the queue into it.
    pub(crate) fn spawn_writer(
        &self,
        sink: Box<dyn HitSink>,
        stopper: &Stopper,
    ) -> Result<(std::sync::mpsc::SyncSender<Batch>, WriterThread), crate::AttackError> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(QUEUE);
        let (ended, writer_ended) = std::sync::mpsc::channel::<()>();
        // -scrape: its thread sends samples to the writer, and ends when
        // the writer does (its `done` dropped).
        let scraped = match &self.config.scrape {
            Some(spec) => {
                let (out, samples) = std::sync::mpsc::channel();
                let (done, until) = std::sync::mpsc::channel::<()>();
                crate::scrape::spawn(spec.clone(), out, until)?;
                Some((samples, done))
            }
            None => None,
        };
        let writer = {
            let stopper = stopper.clone();
            let name = self.config.name.clone();
            let facts = self.facts.clone();
            let watch = self.watch.clone();
            let control = self.control.clone();
            thread::Builder::new()
                .name("barrage-writer".into())
                .spawn(move || {
                    let (samples, done) = scraped.unzip();
                    let beside = Beside {
                        sent: Box::new(move || watch.sent()),
                        samples,
                        markers: Box::new(move || {
                            control.as_ref().map_or_else(Vec::new, |c| c.take_markers())
                        }),
                    };
                    let r = write_hits(rx, name, sink, stopper, facts, beside);
                    drop(done);
                    let _ = ended.send(());
                    r
                })?
        };
        Ok((tx, (writer, writer_ended, stopper.clone())))
    }
}
