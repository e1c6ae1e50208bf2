//! One request as an exchange takes it ([`Ask`]): the target's, or a
//! redirect's ([`Hop`]), with where it goes and how its errors are worded.

use bytes::Bytes;
use http::{Method, Uri};

use crate::{
    core::{key::Key, target::PreparedTarget},
    transport::{dial::Dial, proxy::ProxyUrl},
};

/// A redirect's request.
pub(crate) struct Hop {
    /// The connections of the hops before it, added up.
    pub(crate) before: barrage_model::Link,
    pub(crate) method: Method,
    pub(crate) uri: Uri,
    pub(crate) body: Bytes,
    pub(crate) key: Result<Key, crate::Failure>,
    /// Redirects followed to reach it (1 for the first).
    pub(crate) followed: i64,
    /// Its headers: the first request's, less what Go's client drops on
    /// the way to it, with its `Referer` (`send/carry.rs`).
    pub(crate) headers: Vec<(String, String)>,
    /// What the hops so far dropped of the first request's headers.
    pub(crate) carry: Carry,
    /// Its headers for hyper, built on first use.
    pub(crate) map: std::sync::OnceLock<http::HeaderMap>,
    /// Its request as barrage's own HTTP/1.1 engine writes it, built
    /// once (a request sent again after a kept connection turned out
    /// closed sends it again).
    pub(crate) wire: std::sync::OnceLock<crate::core::wire::Wire>,
}

/// One request as an exchange sends it: the target's, or a redirect's
/// (`hop`).
pub(crate) struct Ask<'a> {
    pub(crate) target: &'a PreparedTarget,
    pub(crate) hop: Option<&'a Hop>,
    /// Where it goes.
    pub(crate) key: &'a Key,
    /// For the plain-HTTP proxy it goes through, looked up only where a
    /// request is built (the own engine encodes a target's once).
    pub(crate) dial: &'a Dial,
    pub(crate) seq: u64,
    /// Whether a kept connection found closed may be tried again.
    pub(crate) retry: bool,
}

impl<'a> Ask<'a> {
    /// Its method, URI and body.
    pub(crate) fn parts(&self) -> (&'a Method, &'a Uri, &'a Bytes) {
        match self.hop {
            Some(h) => (&h.method, &h.uri, &h.body),
            None => (&self.target.method, &self.target.uri, &self.target.body),
        }
    }

    /// An error of this request's, worded like Go's: `Get "url": …`.
    pub(crate) fn fail(&self, e: &dyn std::fmt::Display) -> String {
        let (method, uri, _) = self.parts();
        crate::core::error::go_failed(method.as_str(), uri, e)
    }

    /// The plain-HTTP proxy it goes through, if any.
    pub(crate) fn proxy(&self) -> Option<&'a ProxyUrl> {
        (!self.key.tls).then(|| self.dial.proxy(self.key)).flatten()
    }
}

/// What the hops of a redirect have dropped so far of the first
/// request's headers. Go's client (net/http `Client.do`) decides each at
/// every hop, and once dropped a header stays dropped for the hops after.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Carry {
    /// Its credentials and cookies: a hop left the first URL's domain.
    pub(crate) sensitive: bool,
    /// Its body's headers: a 301, 302 or 303 dropped the body.
    pub(crate) body: bool,
    /// Its own `Host`: a `Location` gave an absolute URL.
    pub(crate) host: bool,
}
