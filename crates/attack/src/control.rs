//! [`Control`]: the handle live control (`attack -control`, `collect`'s
//! orders) steers a running attack with.

use std::sync::{Arc, OnceLock};

use barrage_model::{Marker, Order};

use crate::{
    steering::{ControlError, Steering},
    tickets::Tickets,
};

/// A running attack's controls: orders change its schedule from a time
/// on, and each leaves a [`Marker`] in the result stream. Cloned freely;
/// an order before the schedule starts is refused.
#[derive(Clone, Default)]
pub struct Control(Arc<Inner>);

#[derive(Default)]
struct Inner {
    /// The attack's tickets and its start, unix ns, once it runs.
    running: OnceLock<(Arc<Tickets>, i64)>,
    /// Timed orders given before the schedule started (a collector's,
    /// sent to an attacker still waiting for `-start-at`).
    pending: std::sync::Mutex<Vec<Order>>,
}

impl Control {
    /// Hands over the running attack's tickets (they take changes).
    pub(crate) fn run(&self, tickets: Arc<Tickets>, start_unix: i64) {
        let _ = self.0.running.set((tickets, start_unix));
        let pending =
            std::mem::take(&mut *self.0.pending.lock().unwrap_or_else(|p| p.into_inner()));
        for order in pending {
            // Refused now as it would have been then: nothing to say it to.
            let _ = self.order(&order);
        }
    }

    /// Carries out `order` and says what it did; an order the attack
    /// cannot take changes nothing. A timed order given before the
    /// schedule starts is kept and carried out at its start (its marker
    /// then says what it did; the one returned has no first request).
    pub fn order(&self, order: &Order) -> Result<Marker, ControlError> {
        let running = {
            let mut pending = self.0.pending.lock().unwrap_or_else(|p| p.into_inner());
            match (self.0.running.get(), order.at) {
                (Some(r), _) => r,
                (None, Some(at)) => {
                    pending.push(order.clone());
                    return Ok(Marker {
                        at: now_unix(),
                        from: at,
                        first: 0,
                        what: order.command.said(),
                        who: order.who.clone(),
                    });
                }
                (None, None) => return Err(ControlError::NotRunning),
            }
        };
        let (tickets, start) = running;
        let at = order.at.map(|u| u.saturating_sub(*start).max(0) as u64);
        tickets.change_marked(&order.command, at, |first, from| Marker {
            at: now_unix(),
            from: start.saturating_add(from as i64),
            first,
            what: order.command.said(),
            who: order.who.clone(),
        })
    }

    /// The line in force and whether paused (`None` before the start).
    pub fn steering(&self) -> Option<Steering> {
        self.0.running.get().and_then(|(t, _)| t.steering())
    }

    /// Markers made since the last call (for the writer).
    pub(crate) fn take_markers(&self) -> Vec<Marker> {
        self.0
            .running
            .get()
            .map_or_else(Vec::new, |(t, _)| t.take_markers())
    }
}

/// The wall clock, unix ns.
fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
