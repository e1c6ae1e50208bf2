//! A server with a known limit, for `barrage sweep`'s tests: `barrage
//! serve -capacity N` (the crate's own target) on a loopback port.

use std::{net::SocketAddr, sync::mpsc, thread, time::Duration};

use barrage_serve::target::{self, Options};

/// Answers `GET /` with 200 at most `per_second` times a second and 503
/// beyond; runs until the test process ends.
pub struct CapacityServer {
    addr: SocketAddr,
}

impl CapacityServer {
    /// Starts one on a free loopback port.
    pub fn start(per_second: f64) -> CapacityServer {
        Self::with(Some(per_second))
    }

    /// `barrage serve` as it is by default: no limit.
    pub fn unlimited() -> CapacityServer {
        Self::with(None)
    }

    fn with(capacity: Option<f64>) -> CapacityServer {
        let (tx, rx) = mpsc::channel();
        let options = Options {
            body: "hello\n".into(),
            capacity,
            ..Options::default()
        };
        thread::spawn(move || {
            let bind = SocketAddr::from(([127, 0, 0, 1], 0));
            let _ = target::run(bind, options, |addr| {
                let _ = tx.send(addr);
            });
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("capacity server started");
        CapacityServer { addr }
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}
