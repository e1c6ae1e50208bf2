//! `attack -control ADDR`: the control API's server over the attack's
//! controls, its progress board and its count of requests sent.

use std::{net::SocketAddr, sync::Arc, time::Instant};

use barrage_attack::{Control, Watch};
use barrage_collect::live::{Heard, OnHeard};
use barrage_model::{Marker, Order};
use barrage_report::progress::Board;
use barrage_serve::{ControlServer, Steer};

use crate::{AttackArgs, ReadyError};

/// What the API reads and steers.
struct Steered {
    control: Control,
    board: Arc<Board>,
    watch: Watch,
    /// The flags' rate or stages, as typed.
    flags: String,
    started: Instant,
}

impl Steer for Steered {
    fn order(&self, order: &Order) -> Result<Marker, Box<dyn std::error::Error + Send + Sync>> {
        Ok(self.control.order(order)?)
    }

    fn state(&self) -> serde_json::Value {
        let steering = self.control.steering();
        let (written, ok, errors, recent) = self.board.read();
        let sent = self.watch.sent();
        let verdict = self.board.so_far().map(|s| {
            let (valid, why) = s.said();
            serde_json::json!({ "valid": valid, "why": why })
        });
        serde_json::json!({
            "running": steering.is_some(),
            "line": steering.as_ref().and_then(|s| s.line.clone()).unwrap_or_else(|| self.flags.clone()),
            "paused": steering.as_ref().is_some_and(|s| s.paused),
            "changes": steering.as_ref().map_or(0, |s| s.changes),
            "elapsed_ns": self.started.elapsed().as_nanos() as u64,
            "sent": sent,
            "written": written,
            "in_flight": sent.saturating_sub(written),
            "ok": ok,
            "errors": errors,
            "latency_p99_ns": recent.map(|r| r.1),
            "lag_p99_ns": recent.map(|r| r.2),
            "verdict": verdict,
        })
    }
}

/// What an attacker does with what its collector says: stop as on
/// Ctrl-C, or take a live control order.
pub fn on_heard(stopper: barrage_attack::Stopper, control: Control) -> OnHeard {
    Box::new(move |heard| match heard {
        Heard::Stop => {
            stopper.stop();
            Ok(())
        }
        Heard::Order(o) => control.order(&o).map(drop).map_err(Into::into),
    })
}

/// `collect -control`: orders for every attacker.
struct Collected(barrage_collect::Orders);

impl Steer for Collected {
    fn order(&self, order: &Order) -> Result<Marker, Box<dyn std::error::Error + Send + Sync>> {
        Ok(self.0.order(order))
    }

    fn state(&self) -> serde_json::Value {
        let orders: Vec<serde_json::Value> = (self.0.all().into_iter())
            .map(|(at, what)| serde_json::json!({ "from": at, "what": what }))
            .collect();
        serde_json::json!({ "running": true, "orders": orders })
    }
}

impl crate::CollectArgs {
    /// Starts `-control`'s server (when given) over the collector's
    /// `orders`; `token` is the collector's.
    pub fn start_control(
        &self,
        orders: barrage_collect::Orders,
        token: &str,
    ) -> Result<Option<SocketAddr>, ReadyError> {
        let Some(addr) = self.control else {
            return Ok(None);
        };
        let token = (!addr.ip().is_loopback()).then(|| token.to_string());
        let fail = |source| ReadyError::Control { addr, source };
        let server = ControlServer::bind(addr).map_err(fail)?;
        let at = server.addr();
        server
            .serve(token, Arc::new(Collected(orders)))
            .map_err(fail)?;
        Ok(Some(at))
    }
}

impl AttackArgs {
    /// Binds `-prometheus-addr`'s exporter, when given.
    pub fn start_exporter(&self) -> Result<Option<barrage_serve::Exporter>, ReadyError> {
        let start = |addr| {
            barrage_serve::Exporter::start(addr)
                .map_err(|source| ReadyError::Exporter { addr, source })
        };
        self.prometheus_addr.map(start).transpose()
    }

    /// Binds `-control`'s address, when given: before the stream begins,
    /// so that a taken port leaves a stream that says so.
    pub fn bind_control(&self) -> Result<Option<ControlServer>, ReadyError> {
        let bind =
            |addr| ControlServer::bind(addr).map_err(|source| ReadyError::Control { addr, source });
        self.control.map(bind).transpose()
    }

    /// Serves `-control`'s API on `server` (when bound) over `attack`'s
    /// controls and `board`; the token is `BARRAGE_TOKEN`, needed off
    /// loopback. Where it listens.
    pub fn start_control(
        &self,
        server: Option<ControlServer>,
        attack: &mut barrage_attack::Attack,
        board: Arc<Board>,
    ) -> Result<Option<SocketAddr>, ReadyError> {
        let token = std::env::var(barrage_collect::live::TOKEN_VAR).ok();
        let Some(server) = server else {
            return Ok(None);
        };
        let addr = server.addr();
        let (control, watch) = (attack.control(), attack.watch());
        // Off loopback, conflicts() made sure there is one.
        let token = token.filter(|t| !t.is_empty());
        let flags = match &self.stages {
            Some(s) => format!("stages {s}"),
            None => format!("rate {}", self.rate),
        };
        let steered = Steered {
            control,
            board,
            watch,
            flags,
            started: Instant::now(),
        };
        server
            .serve(token, Arc::new(steered))
            .map(|()| Some(addr))
            .map_err(|source| ReadyError::Control { addr, source })
    }
}
