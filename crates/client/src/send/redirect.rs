//! Redirects: where a `Location` leads, as Go resolves it.

use bytes::Bytes;
use http::{Method, StatusCode, Uri};

use crate::{core::ask::Hop, Response};

/// `r`, the answer after the redirect `hop` (if any): its link the sum
/// of the hops'.
pub(super) fn after(hop: Option<&Hop>, mut r: Response) -> Response {
    if let (Some(h), Some(via)) = (hop, &r.link) {
        r.link = Some(crate::Via::from(h.before.then(via.link())));
    }
    r
}

/// [`next_hop`], unless `limit` (`-redirects`) were followed already to
/// reach `hop`: then Go's "stopped after N redirects". Both clients'
/// rule.
pub(crate) fn follow(
    limit: i64,
    target: &crate::PreparedTarget,
    hop: Option<&Hop>,
    request: (&Method, &Uri, &Bytes),
    code: u16,
    location: &[u8],
    link: Option<&crate::Via>,
) -> Result<Box<Hop>, crate::Failure> {
    if hop.map_or(0, |h| h.followed) >= limit {
        return Err(crate::Failure(format!("stopped after {limit} redirects")));
    }
    next_hop(target, hop, request, code, location, link)
}

/// The request a redirect leads to: the answer `code` with `location` to
/// the request (`method`, `uri`, `body`) of `target` after `hop` (none:
/// the target's own), whose answer came on `link`. Go's rules: 301, 302
/// and 303 turn all but HEAD into a GET without a body; the first
/// request's headers are carried as `carry.rs` says. The error is the
/// `Location`'s that is no URL.
fn next_hop(
    target: &crate::PreparedTarget,
    hop: Option<&Hop>,
    (method, uri, body): (&Method, &Uri, &Bytes),
    code: u16,
    location: &[u8],
    link: Option<&crate::Via>,
) -> Result<Box<Hop>, crate::Failure> {
    let next = resolve(uri, location)?;
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::FOUND);
    let (method, body) = if matches!(
        status,
        StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND | StatusCode::SEE_OTHER
    ) && *method != Method::HEAD
    {
        (Method::GET, Bytes::new())
    } else {
        (method.clone(), body.clone())
    };
    let this = link.map(crate::Via::link).unwrap_or_default();
    let before = hop.map_or(this, |h| h.before.then(this));
    let mut carry = hop.map(|h| h.carry).unwrap_or_default();
    let headers = super::carry::Redirect {
        first: &target.uri,
        from: uri,
        to: &next,
        code,
        location,
    }
    .headers(&target.header_lines, &mut carry);
    Ok(Box::new(Hop {
        headers,
        carry,
        map: std::sync::OnceLock::new(),
        before,
        key: crate::core::key::Key::of(&next),
        method,
        uri: next,
        body,
        followed: hop.map_or(0, |h| h.followed) + 1,
        wire: std::sync::OnceLock::new(),
    }))
}

/// Resolves a `Location` against the URL it came from, as Go does: RFC
/// 3986 reference resolution (the `url` crate), bytes outside ASCII
/// percent-encoded (a Latin-1 or UTF-8 `Location` is followed), the
/// fragment dropped.
pub(crate) fn resolve(base: &Uri, location: &[u8]) -> Result<Uri, crate::Failure> {
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
