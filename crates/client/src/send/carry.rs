//! What a redirect's request carries of the first request's headers, as
//! Go's client decides it hop by hop (net/http `Client.do`); the client's
//! redirects (`send/mod.rs`) and a flow step's (`flow/step.rs`) both ask.

use http::Uri;

pub(crate) use crate::core::ask::Carry;

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

#[cfg(test)]
mod tests {
    use super::*;

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
        // A hop from `a`, the first URL.
        let hop = |from, to, code, location| Redirect {
            first: &a,
            from,
            to,
            code,
            location,
        };
        let mut carry = Carry::default();
        // Away (absolute, another domain) by a 302: no credentials, no
        // body headers, no Host of its own; no Referer from https to http.
        let away = hop(&a, &b, 302, b"http://b.test:81/y");
        let got = away.headers(&first, &mut carry);
        assert_eq!(names(&got), ["X-Keep"]);
        // Back home by a 307 with a relative Location: what was dropped
        // stays dropped; a Referer without the user's password.
        let from = uri("http://u:pw@b.test:81/y");
        let got = hop(&from, &c, 307, b"/z").headers(&first, &mut carry);
        assert_eq!(
            got,
            lines(&[("X-Keep", "k"), ("Referer", "http://b.test:81/y")])
        );
        // Within the domain by a 307: everything, Referer included; a
        // request's own Referer is kept as it is.
        let mut carry = Carry::default();
        let sub = uri("https://api.a.test:8443/w");
        let within = hop(&a, &sub, 307, b"/w");
        let got = within.headers(&first, &mut carry);
        assert_eq!(names(&got[..5]), names(&first));
        assert_eq!(
            got[5],
            ("Referer".to_string(), "https://a.test/x".to_string())
        );
        let mut own = first.clone();
        own.push(("referer".into(), "r".into()));
        assert_eq!(within.headers(&own, &mut Carry::default()), own);
    }
}
