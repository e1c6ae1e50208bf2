//! [`Plan`]: what an attack's flags ask of the host, and [`Needs`]: the
//! connections, descriptors and new connections a second that come of it.

use std::{fmt, net::IpAddr, time::Duration};

use crate::BASE_DESCRIPTORS;

/// Where an attack sends: a host and port, and whether it is this machine
/// (its listen queue is then this kernel's `somaxconn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// Host name or address, as the targets name it.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Whether it is on this host (a loopback address or `localhost`).
    pub local: bool,
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.host.parse::<IpAddr>() {
            Ok(IpAddr::V6(_)) => write!(f, "[{}]:{}", self.host, self.port),
            _ => write!(f, "{}:{}", self.host, self.port),
        }
    }
}

/// What an attack's flags ask of the host.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Requests per second in the open model (`None`: the closed model,
    /// `-rate 0` with `-max-workers`).
    pub rate: Option<f64>,
    /// `-timeout` (zero: none).
    pub timeout: Duration,
    /// `-expect-latency`: the answer time the limits are sized for
    /// (`None`: [`EXPECTED_LATENCY`]).
    pub expect_latency: Option<Duration>,
    /// `-max-workers` (`None`: unbounded).
    pub max_workers: Option<u64>,
    /// `-max-connections` (`None`: unbounded).
    pub max_connections: Option<u64>,
    /// `-hold N`: WebSocket connections held open.
    pub hold: Option<u64>,
    /// `-keepalive`.
    pub keepalive: bool,
    /// Whether every request goes on one shared connection per host and
    /// thread (`-h2c`, `-http3`; HTTP/2 by ALPN is known only later).
    pub multiplexed: bool,
    /// barrage's worker threads (`-cpus`).
    pub threads: u64,
    /// `-laddr` (empty: the kernel's choice, one address).
    pub laddrs: Vec<IpAddr>,
    /// Where the targets go (empty: not known; counted as one).
    pub destinations: Vec<Destination>,
    /// Over a Unix socket (`-unix-socket`): no ports, no conntrack.
    pub unix_socket: bool,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            rate: Some(50.0),
            timeout: Duration::from_secs(30),
            expect_latency: None,
            max_workers: None,
            max_connections: None,
            hold: None,
            keepalive: true,
            multiplexed: false,
            threads: 1,
            laddrs: Vec::new(),
            destinations: Vec::new(),
            unix_socket: false,
        }
    }
}

/// What a plan needs, estimated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Needs {
    /// Connections open at once, at most, over all destinations.
    pub connections: u64,
    /// Of them, toward the busiest destination.
    pub per_destination: u64,
    /// Descriptors: the connections and [`BASE_DESCRIPTORS`].
    pub descriptors: u64,
    /// New connections a second in steady state (without keep-alive).
    pub new_per_second: f64,
    /// Connections opened at once at the start (closed model, `-hold`)
    /// or in a 10 ms burst (open model).
    pub burst: u64,
    /// The connections the plan is sure to need: all of them in the
    /// closed model and with `-hold`; in the open model those of answers
    /// that take the expected latency twice over ([`Plan::likely_secs`]).
    /// Past a limit, a failure; only `connections` past it, a warning.
    pub likely: u64,
}

/// The answer time the open model's limits are sized for when
/// `-expect-latency` is not given, seconds (issue 60: sized for a second,
/// every plan of 20,000/s failed the open-files check, then ran with p99
/// 0.46 ms).
pub const EXPECTED_LATENCY: f64 = 0.1;

/// The margin over the expected answer time: requests in flight are
/// counted for this many times it.
pub const LIKELY_MARGIN: f64 = 2.0;

impl Plan {
    /// Destinations counted (at least one).
    pub(crate) fn destination_count(&self) -> u64 {
        self.destinations.len().max(1) as u64
    }

    /// The answer time, seconds, that a failure is judged on: the
    /// expected latency times [`LIKELY_MARGIN`], within `-timeout`.
    pub fn likely_secs(&self) -> f64 {
        let expected = self
            .expect_latency
            .map_or(EXPECTED_LATENCY, |d| d.as_secs_f64());
        let likely = expected * LIKELY_MARGIN;
        if self.timeout.is_zero() {
            likely
        } else {
            likely.min(self.timeout.as_secs_f64())
        }
    }

    /// What the plan needs: in the open model, every request in flight
    /// for the whole `-timeout` (the most the rate and the timeout allow:
    /// what a server that slows down to the timeout makes barrage hold);
    /// in the closed model, `-max-workers`; with `-hold`, its count; each
    /// capped by `-max-workers` and `-max-connections`. A multiplexed
    /// protocol holds one connection per host and thread.
    pub fn needs(&self) -> Needs {
        let timeout = if self.timeout.is_zero() {
            // No timeout: a request may wait for ever; count a minute.
            60.0
        } else {
            self.timeout.as_secs_f64()
        };
        let in_flight = |secs: f64| {
            let mut c = match (self.hold, self.rate) {
                (Some(n), _) => n,
                (None, Some(rate)) => (rate * secs).ceil() as u64,
                (None, None) => self.max_workers.unwrap_or(1),
            };
            if let Some(w) = self.max_workers {
                c = c.min(w);
            }
            if self.multiplexed && self.hold.is_none() {
                c = c.min(self.threads.max(1) * self.destination_count());
            }
            if let Some(m) = self.max_connections.filter(|&m| m > 0) {
                c = c.min(m);
            }
            c
        };
        let connections = in_flight(timeout);
        let likely = in_flight(self.likely_secs());
        let per_destination = connections.div_ceil(self.destination_count());
        let new_per_second = match (self.keepalive, self.rate) {
            (false, Some(rate)) => rate,
            _ => 0.0,
        };
        let burst = match (self.hold, self.rate) {
            (None, Some(rate)) => ((rate / 100.0).ceil() as u64).min(per_destination),
            _ => per_destination,
        };
        Needs {
            connections,
            per_destination,
            descriptors: connections.saturating_add(BASE_DESCRIPTORS),
            new_per_second,
            burst,
            likely,
        }
    }
}
