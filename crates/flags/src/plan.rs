//! The plan an attack's flags describe, as `barrage doctor` checks it.

use barrage_doctor::{Destination, Plan};

use crate::AttackArgs;

impl AttackArgs {
    /// The plan these flags describe, toward `destinations` (where the
    /// targets go; `-connect-to`'s instead when given); `mix_peak`: a
    /// `-mix`'s peak rate.
    pub fn plan(&self, mix_peak: Option<f64>, destinations: Vec<Destination>) -> Plan {
        let rate = match (&self.stages, mix_peak) {
            (_, Some(peak)) => Some(peak),
            (Some(s), None) => Some(s.peak_per_second()),
            (None, None) => match self.rate {
                barrage_attack::Rate::Max => None,
                r => Some(r.per_second()),
            },
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        let destinations = if self.connect_to.is_empty() {
            destinations
        } else {
            self.connect_to
                .iter()
                .map(|m| Destination::new(&m.to.0, Some(m.to.1), false))
                .collect()
        };
        Plan {
            rate,
            timeout: self.timeout.0,
            expect_latency: self.expect_latency,
            max_workers: self.max_workers,
            max_connections: (self.max_connections > 0).then_some(self.max_connections as u64),
            hold: self.hold,
            keepalive: self.keepalive,
            multiplexed: self.h2c || self.http3,
            threads: if self.cpus == 0 {
                cores
            } else {
                self.cpus as u64
            },
            laddrs: self.laddr.iter().flatten().copied().collect(),
            destinations,
            unix_socket: self.unix_socket.is_some(),
        }
    }
}
