//! `collect -control`: live control orders for every attacker of a
//! distributed run. Each order gets one schedule time (by default
//! [`LEAD`] after it is given) and goes to every attacker's connection,
//! now and on any later one, so the shards change at the same request
//! of the one schedule.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use barrage_model::{Command, Marker, Order};

/// How far ahead of now an order is timed when it names no time: long
/// enough for it to reach every attacker (a connection hears the
/// collector at least every 20 ms) before it holds.
pub const LEAD: Duration = Duration::from_millis(500);

/// The orders given so far, shared with every connection.
#[derive(Clone, Default)]
pub struct Orders(Arc<Mutex<Vec<(i64, String)>>>);

impl Orders {
    /// Takes `order` for every attacker, timed at its `at` or [`LEAD`]
    /// from now; what it will do, as a marker (`first` is each
    /// attacker's to find).
    pub fn order(&self, order: &Order) -> Marker {
        let now = barrage_model::time::now_ns();
        let at = order
            .at
            .unwrap_or(now.saturating_add(LEAD.as_nanos() as i64));
        let what = order.command.said();
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((at, what.clone()));
        Marker {
            at: now,
            from: at,
            first: 0,
            what,
            who: order.who.clone(),
        }
    }

    /// The orders given so far.
    pub fn all(&self) -> Vec<(i64, String)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The orders from the `told`-th on.
    pub(crate) fn since(&self, told: usize) -> Vec<(i64, String)> {
        let all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.get(told..).map_or_else(Vec::new, <[_]>::to_vec)
    }
}

/// An order as an attacker reads it from its connection: `who` says it
/// came through the collector.
pub fn read(at: i64, what: &str) -> Result<Order, barrage_model::CommandError> {
    Ok(Order {
        command: what.parse::<Command>()?,
        at: Some(at),
        who: "collect".into(),
    })
}
