//! [`Connections`]: what the records' connections cost, over the
//! requests that opened one.

use barrage_model::Link;

use crate::Distribution;

/// Connection figures of a set of records that carry their connection
/// ([`barrage_model::Link`], stream format 5): how many requests went on
/// one and how many opened it, and the DNS, connect and TLS times over
/// the new ones (TLS over those that made a handshake; DNS over those
/// that looked a name up).
#[derive(Clone, Default)]
pub struct Connections {
    /// Records with a connection.
    linked: u64,
    /// Of them, those that opened it.
    new: u64,
    dns: Distribution,
    connect: Distribution,
    tls: Distribution,
}

impl Connections {
    /// Adds one record's connection.
    #[inline]
    pub fn add(&mut self, link: &Link) {
        self.linked += 1;
        if link.reused {
            return;
        }
        self.new += 1;
        self.connect.record(link.connect);
        if link.tls > 0 {
            self.tls.record(link.tls);
        }
        if link.dns > 0 {
            self.dns.record(link.dns);
        }
    }

    /// Adds everything in `other`.
    pub fn merge(&mut self, other: &Connections) {
        self.linked += other.linked;
        self.new += other.new;
        self.dns.merge(&other.dns);
        self.connect.merge(&other.connect);
        self.tls.merge(&other.tls);
    }

    /// Records that carried their connection.
    pub fn linked(&self) -> u64 {
        self.linked
    }

    /// Requests that opened their connection.
    pub fn new_count(&self) -> u64 {
        self.new
    }

    /// The share of the linked requests that opened their connection
    /// (0 when none).
    pub fn new_share(&self) -> f64 {
        if self.linked == 0 {
            0.0
        } else {
            self.new as f64 / self.linked as f64
        }
    }

    /// Lookups of new connections that looked a name up, ns.
    pub fn dns(&self) -> &Distribution {
        &self.dns
    }

    /// Connects of new connections, ns.
    pub fn connect(&self) -> &Distribution {
        &self.connect
    }

    /// TLS handshakes of new connections that made one, ns.
    pub fn tls(&self) -> &Distribution {
        &self.tls
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_count_over_new_connections_only() {
        let mut c = Connections::default();
        let new = Link {
            dns: 0,
            connect: 1_000,
            tls: 5_000,
            ..Link::default()
        };
        c.add(&new);
        c.add(&Link {
            connect: 3_000,
            ..new
        });
        for _ in 0..6 {
            c.add(&Link {
                reused: true,
                ..Link::default()
            });
        }
        assert_eq!((c.linked(), c.new_count()), (8, 2));
        assert_eq!(c.new_share(), 0.25);
        assert_eq!(c.connect().count(), 2);
        assert_eq!(c.connect().max(), 3_000);
        assert_eq!(c.tls().count(), 2);
        assert_eq!(c.dns().count(), 0, "an address looks nothing up");
        let mut m = Connections::default();
        m.merge(&c);
        m.merge(&c);
        assert_eq!((m.linked(), m.new_count()), (16, 4));
    }
}
