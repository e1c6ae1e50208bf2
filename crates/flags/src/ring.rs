//! `-io ring`: what it carries, checked before anything is sent, and
//! whether this host can run it; and `-io auto`'s choice of it.

use barrage_attack::Targets;
use barrage_client::{ClientConfig, IoMode, RingClient};

use crate::{commands::AttackArgs, ready::ReadyError};

impl AttackArgs {
    /// Whether this attack is the closed model (`-rate 0`, no `-stages`
    /// or `-mix`): its loops are `-max-workers`.
    pub(crate) fn closed(&self) -> bool {
        matches!(self.rate, barrage_model::Rate::Max) && self.stages.is_none() && self.mix.is_none()
    }

    /// The first flag of this attack that `-io ring` does not carry, as
    /// typed.
    fn not_on_ring(&self) -> Option<&'static str> {
        [
            (self.pipeline > 1 && !self.closed(), "-pipeline with a rate"),
            (self.hold.is_some(), "-hold"),
            (self.format == barrage_targets::Format::Flow, "-format flow"),
        ]
        .into_iter()
        .find_map(|(on, flag)| on.then_some(flag))
    }

    /// `-io ring` for this attack: refused (naming the flag as typed) where
    /// it does not carry what the flags ask; epoll, with a note, where the
    /// host has no io_uring.
    pub(crate) fn ring(&self, notes: &mut Vec<String>) -> Result<IoMode, ReadyError> {
        if let Some(flag) = self.not_on_ring() {
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

    /// `-io auto` (not overridden by `BARRAGE_IO`) made `ring` where that
    /// engine carries the whole attack: every target read up front (a
    /// `-mix`'s too) an HTTP/1.1 request (http://, or https:// with `-http2=false`), no flag
    /// it refuses, io_uring to be had. Quietly
    /// left as settled (io_uring or epoll) otherwise. Against nginx on one
    /// thread (docs/benchmarks.md, "Since (stop 76)") it cost 0.95-0.98x
    /// epoll's CPU a request paced, 0.83-1.04x io_uring's closed and
    /// 0.92-0.94x pipelined; over TLS 0.83-0.99x epoll at 20,000/s and
    /// 0.94-0.97x io_uring closed; a `-mix` 0.96x epoll at 20,000/s, 1.0-1.04x at
    /// 2,000/s. Not for `-lazy`, which cost 1.13x epoll at 2,000/s (the
    /// pacer thread wakes a ring thread for each batch).
    pub fn auto_ring(&self, client: &mut ClientConfig, targets: &Targets) {
        let all = |ts: &[std::sync::Arc<barrage_client::PreparedTarget>]| {
            !ts.is_empty() && ts.iter().all(|t| RingClient::carries(client, t))
        };
        let carried = match targets {
            Targets::Fixed(ts) => all(ts),
            Targets::Groups(groups) => groups.iter().all(|g| all(&g.targets)),
            _ => false,
        };
        if self.io.asked() == IoMode::Auto
            && carried
            && self.not_on_ring().is_none()
            && RingClient::unsupported(client).is_none()
            && barrage_attack::Attack::ring_available().is_ok()
        {
            client.io = IoMode::Ring;
        }
    }
}
