//! [`HitSink`]: where an attack's records go.

use std::io;

use crate::Hit;

/// Where finished hits go: the attack's writer thread hands each to one
/// (the stream's encoder, most often). It runs on its own thread, so it
/// may block on slow output without stalling requests.
pub trait HitSink: Send {
    /// Takes one hit.
    fn write(&mut self, hit: &Hit) -> io::Result<()>;
    /// Pushes buffered hits to the reader downstream; called at least every
    /// 100 ms while hits arrive, and at the end.
    fn flush(&mut self) -> io::Result<()>;
    /// Takes a fact about the run (key, value), said once the attack
    /// knows it: the requests `dropped` at the end of `-duration`.
    fn meta(&mut self, _key: &str, _value: &str) -> io::Result<()> {
        Ok(())
    }
    /// Takes a sample of the attack's self-audit ([`crate::Audit`]).
    fn audit(&mut self, _sample: &crate::Audit) -> io::Result<()> {
        Ok(())
    }
    /// Takes a sample of a scraped server's metric ([`crate::ServerSample`],
    /// `-scrape`).
    fn sample(&mut self, _sample: &crate::ServerSample) -> io::Result<()> {
        Ok(())
    }
    /// Takes a change made to the running attack ([`crate::Marker`],
    /// `-control`).
    fn marker(&mut self, _marker: &crate::Marker) -> io::Result<()> {
        Ok(())
    }
}

/// A sink that keeps nothing (a sweep without `-output`).
pub struct Discard;

impl HitSink for Discard {
    fn write(&mut self, _: &Hit) -> io::Result<()> {
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
