//! Redirects: where a `Location` leads, as Go resolves it.

use http::Uri;

use crate::{conn::Hop, Response};

/// `r`, the answer after the redirect `hop` (if any): its link the sum
/// of the hops'.
pub(super) fn after(hop: Option<&Hop>, mut r: Response) -> Response {
    if let (Some(h), Some(via)) = (hop, &r.link) {
        r.link = Some(crate::Via::from(h.before.then(via.link())));
    }
    r
}

/// Resolves a `Location` against the URL it came from, as Go does: RFC
/// 3986 reference resolution (the `url` crate), bytes outside ASCII
/// percent-encoded (a Latin-1 or UTF-8 `Location` is followed), the
/// fragment dropped.
pub(super) fn resolve(base: &Uri, location: &[u8]) -> Result<Uri, crate::Failure> {
    let mut next = join(&base.to_string(), location)?;
    next.set_fragment(None);
    next.as_str()
        .parse()
        .map_err(|e| location_error(location, &e))
}

/// `location` resolved against `base` (RFC 3986 §5.2).
fn join(base: &str, location: &[u8]) -> Result<url::Url, crate::Failure> {
    let loc = percent_encoding::percent_encode(location, percent_encoding::CONTROLS).to_string();
    let base = url::Url::parse(base).map_err(|e| location_error(location, &e))?;
    base.join(&loc).map_err(|e| location_error(location, &e))
}

/// What the hops of a redirect have dropped so far of the first
/// request's headers. Go's client (net/http `Client.do`) decides each at
/// every hop, and once dropped a header stays dropped for the hops after.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Carry {
    /// Its credentials and cookies: a hop left the first URL's domain.
    sensitive: bool,
    /// Its body's headers: a 301, 302 or 303 dropped the body.
    body: bool,
    /// Its own `Host`: a `Location` gave an absolute URL.
    host: bool,
}

/// Headers a hop outside the first URL's domain (or its subdomains)
/// does not get (Go's list).
const SENSITIVE: [&str; 6] = [
    "authorization",
    "www-authenticate",
    "cookie",
    "cookie2",
    "proxy-authorization",
    "proxy-authenticate",
];

/// Headers about the body, dropped with it (Go's list, after the Fetch
/// standard's).
const BODY: [&str; 4] = [
    "content-encoding",
    "content-language",
    "content-location",
    "content-type",
];

/// One redirect: the first request went to `first`, the last to `from`,
/// which answered `code` with `location`, resolved to `to`.
pub(crate) struct Redirect<'a> {
    pub first: &'a Uri,
    pub from: &'a Uri,
    pub to: &'a Uri,
    pub code: u16,
    pub location: &'a [u8],
}

impl Redirect<'_> {
    /// The headers the request to `to` sends, from the first request's
    /// `headers`, as Go's client copies them: all but the credentials
    /// and cookies once a hop leaves the first URL's domain, the body's
    /// once a 301, 302 or 303 dropped it, and a `Host` of the target's
    /// own once a `Location` was absolute; then a `Referer`, the URL it
    /// came from, unless the request set its own or it goes from https to
    /// http. `carry` is what the hops before dropped, and gains this one's.
    pub(crate) fn headers(
        &self,
        headers: &[(String, String)],
        carry: &mut Carry,
    ) -> Vec<(String, String)> {
        let host = |u: &Uri| u.host().unwrap_or("").to_ascii_lowercase();
        let place = |u: &Uri| (host(u), u.port_u16());
        if place(self.first) != place(self.to)
            && !domain_or_subdomain(&host(self.to), &host(self.first))
        {
            carry.sensitive = true;
        }
        carry.body |= matches!(self.code, 301..=303);
        carry.host |= self.location.contains(&b':')
            && url::Url::parse(&String::from_utf8_lossy(self.location)).is_ok();
        let among = |list: &[&str], k: &str| list.iter().any(|n| n.eq_ignore_ascii_case(k));
        let mut kept: Vec<(String, String)> = headers
            .iter()
            .filter(|(k, _)| {
                !(carry.sensitive && among(&SENSITIVE, k)
                    || carry.body && among(&BODY, k)
                    || carry.host && k.eq_ignore_ascii_case("host"))
            })
            .cloned()
            .collect();
        let downgrade =
            self.from.scheme_str() == Some("https") && self.to.scheme_str() == Some("http");
        if !downgrade && !kept.iter().any(|(k, _)| k.eq_ignore_ascii_case("referer")) {
            kept.push(("Referer".to_string(), without_user(self.from)));
        }
        kept
    }
}

/// Whether `sub` is `parent` or one of its subdomains (Go's
/// `isDomainOrSubdomain`: an address with `:` or `%`, IPv6's, is no
/// domain's sub).
fn domain_or_subdomain(sub: &str, parent: &str) -> bool {
    if sub == parent {
        return true;
    }
    if sub.contains([':', '%']) {
        return false;
    }
    sub.strip_suffix(parent)
        .is_some_and(|head| head.ends_with('.'))
}

/// `uri` as a `Referer` gives it: without a user or password.
fn without_user(uri: &Uri) -> String {
    let s = uri.to_string();
    match uri.authority().map(|a| a.as_str()) {
        Some(a) if a.contains('@') => {
            let host = a.rsplit_once('@').map_or(a, |(_, h)| h);
            s.replacen(a, host, 1)
        }
        _ => s,
    }
}

/// Go's words for a `Location` that is not a URL.
fn location_error(location: &[u8], e: &dyn std::fmt::Display) -> crate::Failure {
    crate::Failure(format!(
        "failed to parse Location header {:?}: {e}",
        String::from_utf8_lossy(location)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_rfc_3986_examples() {
        // RFC 3986 §5.4.1 (normal) and §5.4.2 (abnormal), base
        // http://a/b/c/d;p?q. "//g" gains the root path the url crate
        // writes for an empty one.
        let base = "http://a/b/c/d;p?q";
        let cases = [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g/"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"),
            ("g?y#s", "http://a/b/c/g?y#s"),
            (";x", "http://a/b/c/;x"),
            ("g;x", "http://a/b/c/g;x"),
            ("g;x?y#s", "http://a/b/c/g;x?y#s"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("../../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            (".g", "http://a/b/c/.g"),
            ("g..", "http://a/b/c/g.."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
            ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
            ("g;x=1/../y", "http://a/b/c/y"),
            ("g?y/./x", "http://a/b/c/g?y/./x"),
            ("g?y/../x", "http://a/b/c/g?y/../x"),
            ("g#s/./x", "http://a/b/c/g#s/./x"),
            ("g#s/../x", "http://a/b/c/g#s/../x"),
        ];
        for (loc, want) in cases {
            assert_eq!(
                join(base, loc.as_bytes()).unwrap().as_str(),
                want,
                "{loc:?}"
            );
        }
    }

    #[test]
    fn domains_and_subdomains_as_go_tells_them() {
        assert!(domain_or_subdomain("example.com", "example.com"));
        assert!(domain_or_subdomain("api.example.com", "example.com"));
        assert!(!domain_or_subdomain("badexample.com", "example.com"));
        assert!(!domain_or_subdomain("example.com", "api.example.com"));
        // An IPv6 zone can be spelled to end in any name (CVE-2023-45289).
        assert!(!domain_or_subdomain("::1%.example.com", "example.com"));
    }

    #[test]
    fn a_redirects_headers_are_carried_as_gos_client_carries_them() {
        let uri = |s: &str| s.parse::<Uri>().unwrap();
        let lines = |l: &[(&str, &str)]| -> Vec<(String, String)> {
            l.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let first = lines(&[
            ("Host", "h.test"),
            ("Authorization", "Bearer t"),
            ("Proxy-Authorization", "Basic p"),
            ("Content-Type", "text/plain"),
            ("X-Keep", "k"),
        ]);
        let names = |h: &[(String, String)]| h.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        let (a, b, c) = (
            uri("https://a.test/x"),
            uri("http://b.test:81/y"),
            uri("http://a.test/z"),
        );
        let mut carry = Carry::default();
        // Away (absolute, another domain) by a 302: no credentials, no
        // body headers, no Host of its own; no Referer from https to http.
        let hop = Redirect {
            first: &a,
            from: &a,
            to: &b,
            code: 302,
            location: b"http://b.test:81/y",
        };
        let got = hop.headers(&first, &mut carry);
        assert_eq!(names(&got), ["X-Keep"]);
        // Back home by a 307 with a relative Location: what was dropped
        // stays dropped; a Referer without the user's password.
        let from = uri("http://u:pw@b.test:81/y");
        let hop = Redirect {
            first: &a,
            from: &from,
            to: &c,
            code: 307,
            location: b"/z",
        };
        let got = hop.headers(&first, &mut carry);
        assert_eq!(
            got,
            lines(&[("X-Keep", "k"), ("Referer", "http://b.test:81/y")])
        );
        // Within the domain by a 307: everything, Referer included; a
        // request's own Referer is kept as it is.
        let mut carry = Carry::default();
        let sub = uri("https://api.a.test:8443/w");
        let hop = Redirect {
            first: &a,
            from: &a,
            to: &sub,
            code: 307,
            location: b"/w",
        };
        let got = hop.headers(&first, &mut carry);
        assert_eq!(names(&got[..5]), names(&first));
        assert_eq!(
            got[5],
            ("Referer".to_string(), "https://a.test/x".to_string())
        );
        let mut own = first.clone();
        own.push(("referer".into(), "r".into()));
        assert_eq!(hop.headers(&own, &mut Carry::default()), own);
    }

    #[test]
    fn resolves_locations_as_go_does() {
        let uri = |s: &str| s.parse::<Uri>().unwrap();
        let cases: [(&str, &[u8], &str); 6] = [
            ("http://h:1/a/b", b"?q=1", "http://h:1/a/b?q=1"),
            ("http://h:1/a/c/d", b"../x/./y", "http://h:1/a/x/y"),
            ("http://h:1/a/b", b"http://o:2/x#frag", "http://o:2/x"),
            (
                "http://h/",
                "/a b/\u{fc}?q=\u{2603}".as_bytes(),
                "http://h/a%20b/%C3%BC?q=%E2%98%83",
            ),
            ("http://h/", b"/caf\xe9", "http://h/caf%E9"),
            ("https://h/x", b"//other/p", "https://other/p"),
        ];
        for (base, loc, want) in cases {
            assert_eq!(resolve(&uri(base), loc).unwrap().to_string(), want);
        }
        let e = resolve(&uri("http://h/"), b"http://[::1").unwrap_err();
        assert!(e.starts_with("failed to parse Location header"), "{e}");
    }
}
