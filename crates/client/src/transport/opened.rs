//! [`Opened`]: what opening a connection cost and where it goes, kept with
//! the connection; the first request answered on it takes the costs.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Instant,
};

use barrage_model::Link;

/// A connection's costs (DNS, connect, TLS; nanoseconds) and ends, from
/// the dialer and the TLS handshake. Its fields are a [`Link`]'s, kept
/// apart so that the flag fits in the link's padding: 104 bytes in an
/// `Arc` of 120 were mimalloc's 128-byte class, 96 in 112 are its 112
/// (one per connection: 18,000 held connections).
#[derive(Debug, Default)]
pub(crate) struct Opened {
    dns: u64,
    connect: u64,
    tls: u64,
    remote: Option<SocketAddr>,
    local: Option<SocketAddr>,
    /// Set once a request has taken the costs.
    taken: AtomicBool,
}

impl Opened {
    /// A connection to `remote` from `local` whose lookup and connect took
    /// `dns` and `connect` nanoseconds.
    pub(crate) fn new(
        dns: u64,
        connect: u64,
        remote: Option<SocketAddr>,
        local: Option<SocketAddr>,
    ) -> Self {
        Opened {
            dns,
            connect,
            tls: 0,
            remote,
            local,
            taken: AtomicBool::new(false),
        }
    }

    /// With the TLS handshake's time.
    pub(crate) fn with_tls(mut self, tls: u64) -> Self {
        self.tls = tls;
        self
    }

    /// The link of the next request on this connection: the costs for the
    /// first, `reused` with zero costs for every later one.
    pub(crate) fn link(&self) -> Link {
        self.link_as(self.take())
    }

    /// Whether the request asking is the first on this connection (it
    /// takes the costs; every later call is false).
    pub(crate) fn take(&self) -> bool {
        // A load first: on a reused connection (almost every request) no
        // cache line is written.
        !self.taken.load(Ordering::Relaxed) && !self.taken.swap(true, Ordering::Relaxed)
    }

    /// The link of a request that [`Opened::take`] said is the first on
    /// this connection (`new`), or not.
    pub(crate) fn link_as(&self, new: bool) -> Link {
        let (dns, connect, tls) = if new {
            (self.dns, self.connect, self.tls)
        } else {
            (0, 0, 0)
        };
        Link {
            reused: !new,
            dns,
            connect,
            tls,
            remote: self.remote,
            local: self.local,
        }
    }
}

/// The connection a response came on, as the client keeps it until the
/// record is written: a handle to the connection's costs and whether this
/// request took them (16 bytes in a response, where the [`Link`] itself
/// is 96, and a response sits in every waiting request's future), or the
/// link itself where it was summed (a redirect's hops).
#[derive(Debug, Clone)]
pub struct Via(Held);

#[derive(Debug, Clone)]
enum Held {
    /// The connection's, and whether this request opened it.
    Conn(Arc<Opened>, bool),
    /// Worked out already.
    Known(Box<Link>),
}

impl Via {
    /// The record's link.
    pub fn link(&self) -> Link {
        match &self.0 {
            Held::Conn(opened, new) => opened.link_as(*new),
            Held::Known(link) => **link,
        }
    }

    /// The next request on `opened`.
    pub(crate) fn next_on(opened: &Arc<Opened>) -> Via {
        Via(Held::Conn(opened.clone(), opened.take()))
    }
}

/// A request's claim on its connection's costs: the connection's handle,
/// kept while the request waits (8 bytes in its future); the costs go to
/// the first request answered on the connection, which is the one that
/// opened it but where several share it (HTTP/2, HTTP/3) and a later one
/// is answered first.
pub(crate) struct Claim {
    opened: Arc<Opened>,
}

impl Claim {
    /// A request's claim on `opened`.
    pub(crate) fn on(opened: &Arc<Opened>) -> Claim {
        Claim {
            opened: opened.clone(),
        }
    }

    /// The answered request's view of the connection: its costs, if no
    /// answer on it took them before.
    pub(crate) fn answered(self) -> Via {
        let new = self.opened.take();
        Via(Held::Conn(self.opened, new))
    }
}

impl From<Link> for Via {
    fn from(link: Link) -> Via {
        Via(Held::Known(Box::new(link)))
    }
}

/// A connection handle of hyper's (which keeps the stream on a task of
/// its own) with its [`Opened`].
#[derive(Clone)]
pub(crate) struct Linked<T> {
    pub(crate) inner: T,
    pub(crate) opened: Arc<Opened>,
}

impl<T> std::ops::Deref for Linked<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> std::ops::DerefMut for Linked<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

/// Nanoseconds since `since`.
pub(crate) fn nanos(since: Instant) -> u64 {
    since.elapsed().as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_request_takes_the_costs_and_the_rest_are_reused() {
        let remote = Some("127.0.0.1:80".parse().unwrap());
        let local = Some("127.0.0.1:40000".parse().unwrap());
        let o = Opened::new(1, 2, remote, local).with_tls(3);
        let first = o.link();
        assert!(!first.reused);
        assert_eq!((first.dns, first.connect, first.tls), (1, 2, 3));
        for _ in 0..2 {
            let next = o.link();
            assert!(next.reused);
            assert_eq!((next.dns, next.connect, next.tls), (0, 0, 0));
            assert_eq!((next.remote, next.local), (remote, local));
        }
    }
}
