use std::io;

use barrage_model::Hit;

/// Where finished hits go: the CLI plugs the stream encoder in. It runs on
/// its own thread, so it may block on slow output without stalling requests.
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
}
