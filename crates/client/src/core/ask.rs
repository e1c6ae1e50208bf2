//! One request as an exchange takes it ([`Ask`]): the target's, or a
//! redirect's ([`Hop`]), with where it goes and how its errors are worded.

use bytes::Bytes;
use http::{Method, Uri};

use crate::{
    core::{key::Key, target::PreparedTarget},
    proto::h1,
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
    /// the way to it, with its `Referer` ([`crate::send::carry`]).
    pub(crate) headers: Vec<(String, String)>,
    /// What the hops so far dropped of the first request's headers.
    pub(crate) carry: crate::send::carry::Carry,
    /// Its headers for hyper, built on first use.
    pub(crate) map: std::sync::OnceLock<http::HeaderMap>,
    /// Its request as barrage's own HTTP/1.1 engine writes it, built
    /// once (a request sent again after a kept connection turned out
    /// closed sends it again).
    pub(crate) wire: std::sync::OnceLock<h1::Wire>,
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

    /// Its headers, for hyper: the target's, or its redirect's.
    pub(crate) fn headers(&self) -> &'a http::HeaderMap {
        match self.hop {
            Some(h) => h
                .map
                .get_or_init(|| crate::core::target::header_map(&h.headers, self.target.grpc)),
            None => self.target.headers(),
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
