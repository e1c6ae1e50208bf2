//! `-io ring`: what it carries, checked before anything is sent, and
//! whether this host can run it.

use barrage_client::IoMode;

use crate::{commands::AttackArgs, ready::ReadyError};

impl AttackArgs {
    /// `-io ring` for this attack: refused (naming the flag as typed) where
    /// it does not carry what the flags ask; epoll, with a note, where the
    /// host has no io_uring.
    /// `closed`: the closed model (`-rate 0`), whose loops `-max-workers`
    /// counts.
    pub(crate) fn ring(&self, closed: bool, notes: &mut Vec<String>) -> Result<IoMode, ReadyError> {
        let not = [
            (self.lazy, "-lazy"),
            (
                self.max_workers.is_some() && !closed,
                "-max-workers with a rate",
            ),
            (self.mix.is_some(), "-mix"),
            (self.control.is_some(), "-control"),
            (self.pipeline > 1 && !closed, "-pipeline with a rate"),
            (self.hold.is_some(), "-hold"),
            (self.format == barrage_targets::Format::Flow, "-format flow"),
            (
                self.output.starts_with("tcp://"),
                "-output tcp:// (collect's orders)",
            ),
        ];
        if let Some((_, flag)) = not.iter().find(|(on, _)| *on) {
            return Err(ReadyError::Ring(flag.to_string()));
        }
        match barrage_attack::Attack::ring_available() {
            Ok(()) => Ok(IoMode::Ring),
            Err(why) => {
                notes.push(format!(
                    "barrage: -io ring: io_uring is not available here ({why}); using epoll"
                ));
                Ok(IoMode::Epoll)
            }
        }
    }
}
