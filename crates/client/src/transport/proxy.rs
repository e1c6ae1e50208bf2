//! HTTP proxies as Go's `http.ProxyFromEnvironment` picks them, which is
//! what vegeta uses: `HTTP_PROXY` for http:// URLs, `HTTPS_PROXY` for
//! https:// ones (upper case first, then lower), none for `localhost`,
//! loopback addresses and what `NO_PROXY` names. A plain-HTTP request goes
//! to the proxy with its absolute URL; an HTTPS one through a `CONNECT`
//! tunnel carrying `-proxy-header`s. Proxies are spoken to in plain HTTP
//! (`http://` proxy URLs, the usual kind); others are refused up front.

use std::net::IpAddr;

use http::HeaderValue;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::core::key::Key;

/// The proxies of an attack.
#[derive(Debug, Clone, Default)]
pub struct Proxies {
    http: Option<ProxyUrl>,
    https: Option<ProxyUrl>,
    no_proxy: Vec<Exempt>,
    /// Every host exempt (`NO_PROXY=*`).
    none: bool,
    /// `-proxy-header`: sent with each `CONNECT`.
    connect_headers: Vec<(String, String)>,
}

/// A proxy's address and credentials.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProxyUrl {
    pub host: String,
    pub port: u16,
    /// `Proxy-Authorization` from the URL's user and password.
    pub auth: Option<HeaderValue>,
}

/// A `NO_PROXY` entry.
#[derive(Debug, Clone, PartialEq)]
enum Exempt {
    /// An address or a network.
    Net(IpAddr, u8, Option<u16>),
    /// A domain and its subdomains (`example.com`), or only its
    /// subdomains (`.example.com`).
    Domain {
        suffix: String,
        itself: bool,
        port: Option<u16>,
    },
}

impl Proxies {
    /// The proxies `var` (an environment lookup) names, with `-proxy-header`
    /// values; `None` when no proxy is set. The error names the variable.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
        connect_headers: Vec<(String, String)>,
    ) -> Result<Option<Proxies>, crate::Failure> {
        let any = |names: [&'static str; 2]| {
            names
                .into_iter()
                .find_map(|n| var(n).filter(|v| !v.is_empty()).map(|v| (n, v)))
        };
        let parse = |found: Option<(&str, String)>| {
            found
                .map(|(name, v)| ProxyUrl::parse(&v).map_err(|e| format!("{name}={v:?}: {e}")))
                .transpose()
        };
        let http = parse(any(["HTTP_PROXY", "http_proxy"]))?;
        let https = parse(any(["HTTPS_PROXY", "https_proxy"]))?;
        if http.is_none() && https.is_none() {
            return Ok(None);
        }
        let no = any(["NO_PROXY", "no_proxy"])
            .map(|(_, v)| v)
            .unwrap_or_default();
        let mut p = Proxies {
            http,
            https,
            connect_headers,
            ..Proxies::default()
        };
        for entry in no.split(',').map(|e| e.trim().to_ascii_lowercase()) {
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                p.none = true;
                continue;
            }
            p.no_proxy.push(Exempt::parse(&entry));
        }
        Ok(Some(p))
    }

    /// The proxy for connections to `key`, if any.
    pub(crate) fn for_key(&self, key: &Key) -> Option<&ProxyUrl> {
        let proxy = if key.tls { &self.https } else { &self.http }.as_ref()?;
        let host = key.host.trim_start_matches('[').trim_end_matches(']');
        let ip = host.parse::<IpAddr>().ok();
        if self.none
            || host.eq_ignore_ascii_case("localhost")
            || ip.is_some_and(|ip| ip.is_loopback())
        {
            return None;
        }
        let host = host.to_ascii_lowercase();
        if self.no_proxy.iter().any(|e| e.covers(&host, ip, key.port)) {
            return None;
        }
        Some(proxy)
    }

    /// Opens a tunnel to `key` through the proxy connection `stream`.
    pub(crate) async fn connect<S>(
        &self,
        stream: &mut S,
        key: &Key,
        proxy: &ProxyUrl,
    ) -> Result<(), crate::Failure>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let target = format!("{}:{}", key.host, key.port);
        let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
        if let Some(a) = &proxy.auth {
            head.push_str("Proxy-Authorization: ");
            head.push_str(a.to_str().unwrap_or_default());
            head.push_str("\r\n");
        }
        for (k, v) in &self.connect_headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let io = |e: std::io::Error| format!("proxyconnect tcp: {e}");
        stream.write_all(head.as_bytes()).await.map_err(io)?;
        // The answer's head, byte by byte: nothing after it may be read
        // here, it is the tunnel's (the server's TLS handshake).
        let mut answer = Vec::with_capacity(256);
        while !answer.ends_with(b"\r\n\r\n") {
            if answer.len() >= MAX_CONNECT_ANSWER {
                return Err(crate::Failure::from(
                    "proxyconnect tcp: the proxy's answer to CONNECT is too long",
                ));
            }
            let b = stream.read_u8().await.map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    "proxyconnect tcp: the proxy closed the connection".to_string()
                } else {
                    io(e)
                }
            })?;
            answer.push(b);
        }
        let text = String::from_utf8_lossy(&answer);
        let status = text.lines().next().unwrap_or_default();
        let code = status.split(' ').nth(1).unwrap_or_default();
        if !code.starts_with('2') || code.len() != 3 {
            let reason = status.split_once(' ').map_or(status, |(_, r)| r);
            return Err(crate::Failure::from(format!(
                "proxyconnect tcp: CONNECT {target}: {reason}"
            )));
        }
        Ok(())
    }
}

/// Longest proxy answer to a `CONNECT` read.
const MAX_CONNECT_ANSWER: usize = 16 << 10;

impl ProxyUrl {
    /// `http://[user:password@]host[:port]`, the scheme optional as in Go;
    /// other schemes are refused.
    fn parse(text: &str) -> Result<ProxyUrl, crate::Failure> {
        let rest = match text.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) => {
                return Err(crate::Failure::from(format!(
                    "proxy scheme {scheme:?} is not supported (http only)"
                )))
            }
            None => text,
        };
        let authority = rest.split('/').next().unwrap_or_default();
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (
                h,
                p.parse::<u16>()
                    .map_err(|_| format!("bad proxy port {p:?}"))?,
            ),
            _ => (hostport, 80),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(crate::Failure::from("no proxy host"));
        }
        let auth = userinfo.map(|u| {
            let (user, pass) = u.split_once(':').unwrap_or((u, ""));
            let creds = format!("{}:{}", percent_decode(user), percent_decode(pass));
            HeaderValue::from_str(&format!("Basic {}", base64(creds.as_bytes())))
        });
        Ok(ProxyUrl {
            host: host.to_string(),
            port,
            auth: auth
                .transpose()
                .map_err(|_| "bad proxy credentials".to_string())?,
        })
    }
}

impl Exempt {
    fn parse(entry: &str) -> Exempt {
        let bare = |s: &str| s.trim_start_matches('[').trim_end_matches(']').to_string();
        let full = |ip: IpAddr| if ip.is_ipv4() { 32 } else { 128 };
        if let Some((ip, bits)) = entry.split_once('/') {
            if let (Ok(ip), Ok(bits)) = (ip.parse::<IpAddr>(), bits.parse::<u8>()) {
                return Exempt::Net(ip, bits, None);
            }
        }
        // A bare address first: an IPv6 address has colons of its own.
        if let Ok(ip) = bare(entry).parse::<IpAddr>() {
            return Exempt::Net(ip, full(ip), None);
        }
        let (body, port) = match entry.rsplit_once(':') {
            Some((b, p)) if p.parse::<u16>().is_ok() => (b, p.parse().ok()),
            _ => (entry, None),
        };
        if let Ok(ip) = bare(body).parse::<IpAddr>() {
            return Exempt::Net(ip, full(ip), port);
        }
        let body = body.strip_prefix('*').unwrap_or(body);
        match body.strip_prefix('.') {
            Some(sub) => Exempt::Domain {
                suffix: format!(".{sub}"),
                itself: false,
                port,
            },
            None => Exempt::Domain {
                suffix: format!(".{body}"),
                itself: true,
                port,
            },
        }
    }

    fn covers(&self, host: &str, ip: Option<IpAddr>, port: u16) -> bool {
        match self {
            Exempt::Net(net, bits, p) => {
                p.is_none_or(|p| p == port) && ip.is_some_and(|ip| in_network(ip, *net, *bits))
            }
            Exempt::Domain {
                suffix,
                itself,
                port: p,
            } => {
                p.is_none_or(|p| p == port)
                    && (host.ends_with(suffix.as_str()) || (*itself && host == &suffix[1..]))
            }
        }
    }
}

/// Whether `ip` is in the network `net`/`bits` (of the same family).
fn in_network(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let (a, n, width) = match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => (u32::from(a).into(), u32::from(n).into(), 32),
        (IpAddr::V6(a), IpAddr::V6(n)) => (u128::from(a), u128::from(n), 128),
        _ => return false,
    };
    let bits = u32::from(bits).min(width);
    // The top `bits` of both, compared (a /0 network holds everything).
    bits == 0 || a >> (width - bits) == n >> (width - bits)
}

/// `%XX` escapes of a URL's user or password, decoded.
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// Standard base64 with padding (for `Basic` credentials).
fn base64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tls: bool, host: &str, port: u16) -> Key {
        Key {
            tls,
            host: host.into(),
            port,
            h2c: false,
            ws: false,
        }
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn proxies_are_chosen_as_go_chooses_them() {
        let p = Proxies::from_env(
            env(&[
                ("http_proxy", "proxy.lan:3128"),
                ("HTTPS_PROXY", "http://user:p%40ss@10.0.0.9:8080/"),
                ("https_proxy", "http://ignored:1"),
                (
                    "NO_PROXY",
                    "internal.example, .corp.example, 10.1.0.0/16, 192.168.1.7, build.example:8443",
                ),
            ]),
            vec![],
        )
        .unwrap()
        .unwrap();
        let http = p.for_key(&key(false, "api.example", 80)).unwrap();
        assert_eq!(
            (http.host.as_str(), http.port, http.auth.is_none()),
            ("proxy.lan", 3128, true)
        );
        let https = p.for_key(&key(true, "api.example", 443)).unwrap();
        assert_eq!((https.host.as_str(), https.port), ("10.0.0.9", 8080));
        // user:p@ss
        assert_eq!(https.auth.as_ref().unwrap(), "Basic dXNlcjpwQHNz");
        for (tls, host, port) in [
            (false, "localhost", 80),
            (false, "127.0.0.1", 80),
            (true, "[::1]", 443),
            (false, "internal.example", 80),
            (false, "a.internal.example", 80),
            (false, "x.corp.example", 80),
            (false, "10.1.200.3", 80),
            (false, "192.168.1.7", 80),
            (true, "build.example", 8443),
        ] {
            assert_eq!(p.for_key(&key(tls, host, port)), None, "{host}:{port}");
        }
        for (tls, host, port) in [
            (false, "corp.example", 80),
            (false, "10.2.0.1", 80),
            (true, "build.example", 443),
            (false, "notinternal.example", 80),
        ] {
            assert!(p.for_key(&key(tls, host, port)).is_some(), "{host}:{port}");
        }
    }

    #[test]
    fn no_proxy_star_and_unset_and_bad() {
        let star = Proxies::from_env(env(&[("HTTP_PROXY", "p:1"), ("no_proxy", "*")]), vec![])
            .unwrap()
            .unwrap();
        assert_eq!(star.for_key(&key(false, "a.example", 80)), None);
        assert!(Proxies::from_env(env(&[]), vec![]).unwrap().is_none());
        assert!(Proxies::from_env(env(&[("HTTP_PROXY", "")]), vec![])
            .unwrap()
            .is_none());
        assert_eq!(
            Proxies::from_env(env(&[("HTTPS_PROXY", "socks5://p:1080")]), vec![])
                .unwrap_err()
                .0,
            "HTTPS_PROXY=\"socks5://p:1080\": proxy scheme \"socks5\" is not supported (http only)"
        );
        assert_eq!(
            Proxies::from_env(env(&[("HTTP_PROXY", "http://p:port")]), vec![])
                .unwrap_err()
                .0,
            "HTTP_PROXY=\"http://p:port\": bad proxy port \"port\""
        );
    }

    #[test]
    fn networks_of_both_families() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        for (addr, net, bits, want) in [
            ("10.1.200.3", "10.1.0.0", 16, true),
            ("10.2.0.1", "10.1.0.0", 16, false),
            ("192.168.1.7", "192.168.1.7", 32, true),
            ("192.168.1.8", "192.168.1.7", 32, false),
            ("8.8.8.8", "0.0.0.0", 0, true),
            ("fd12::1", "fd00::", 8, true),
            ("fe80::1", "fd00::", 8, false),
            ("::1", "::", 0, true),
            ("10.0.0.1", "::", 0, false),
        ] {
            assert_eq!(
                in_network(ip(addr), ip(net), bits),
                want,
                "{addr} in {net}/{bits}"
            );
        }
    }

    #[test]
    fn base64_pads_like_the_standard() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }
}
