//! End-to-end: `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY` and `-proxy-header`,
//! through a loopback proxy. Targets are names nobody resolves
//! (`*.test`): going through the proxy, barrage never looks them up; the
//! one exempt by `NO_PROXY` is answered by a loopback DNS server.

use crate::common;

use std::process::{Output, Stdio};

use barrage_testkit::{DnsServer, ProxyMode, ProxyServer, Server, TestCert};
use common::{assert_no_panic, bin, decode};

/// `barrage attack ARGS` with `env` set (`bin` removes the proxy
/// variables of this process's own environment).
fn attack_with(env: &[(&str, &str)], args: &[&str], targets: &str) -> Output {
    let mut cmd = bin();
    cmd.arg("attack").args(args).envs(env.iter().copied());
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    // An attack refused before it reads its targets closes its stdin
    // first: a broken pipe here is not the test's failure.
    let _ = child.stdin.take().unwrap().write_all(targets.as_bytes());
    let out = child.wait_with_output().unwrap();
    assert_no_panic(&out);
    out
}

#[test]
fn requests_go_through_the_proxies_go_would_choose() {
    let cert = TestCert::generate();
    let origin = Server::https(&cert);
    let direct = Server::http();
    let proxy = ProxyServer::start(ProxyMode::Tunnel(origin.addr()));
    let dns = DnsServer::start("skip.test");
    let proxy_url = proxy.url().replace("http://", "http://user:p%40ss@");
    let skip = format!("http://skip.test:{}/", direct.addr().port());
    let targets = format!(
        "GET http://plain.test/x?y=1\n\nGET https://tls.test:8443/\n\nGET {}\n\nGET {skip}\n",
        direct.url("/")
    );
    let out = attack_with(
        &[
            ("http_proxy", &proxy_url),
            ("HTTPS_PROXY", &proxy_url),
            ("NO_PROXY", "skip.test"),
        ],
        &[
            "-rate",
            "100",
            "-requests",
            "8",
            "-insecure",
            "-resolvers",
            &dns.addr().to_string(),
            "-proxy-header",
            "X-Via: barrage-test",
        ],
        &targets,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = decode(&out.stdout);
    assert_eq!(hits.len(), 8);
    for h in &hits {
        assert_eq!((h.code, h.error.as_str()), (200, ""), "{}", h.url);
        let body = if h.url.starts_with("http://plain.test") {
            8
        } else {
            6
        };
        assert_eq!(h.bytes_in, body, "{}", h.url);
    }

    let seen = proxy.seen();
    // user:p@ss
    let auth = Some("Basic dXNlcjpwQHNz");
    let plain: Vec<_> = seen.iter().filter(|r| r.line.starts_with("GET ")).collect();
    assert_eq!(plain.len(), 2, "{seen:?}");
    for r in &plain {
        assert_eq!(r.line, "GET http://plain.test/x?y=1 HTTP/1.1");
        assert_eq!(r.header("host"), Some("plain.test"));
        assert_eq!(r.header("proxy-authorization"), auth);
    }
    let connects: Vec<_> = seen
        .iter()
        .filter(|r| r.line.starts_with("CONNECT "))
        .collect();
    assert!(!connects.is_empty(), "{seen:?}");
    for r in &connects {
        assert_eq!(r.line, "CONNECT tls.test:8443 HTTP/1.1");
        assert_eq!(r.header("host"), Some("tls.test:8443"));
        assert_eq!(r.header("x-via"), Some("barrage-test"));
        assert_eq!(r.header("proxy-authorization"), auth);
    }
    assert_eq!(seen.len(), plain.len() + connects.len());
    // Through the tunnel the origin sees its own requests.
    assert_eq!(origin.count(), 2);
    assert!(origin
        .received()
        .iter()
        .all(|r| r.header("proxy-authorization").is_none()));
    // Loopback and NO_PROXY go direct.
    assert_eq!(direct.count(), 4);
    let want = format!("skip.test:{}", direct.addr().port());
    assert!(direct
        .received()
        .iter()
        .any(|r| r.header("host") == Some(want.as_str())));
}

#[test]
fn a_refusing_proxy_and_a_bad_proxy_url() {
    let proxy = ProxyServer::start(ProxyMode::Refuse);
    let out = attack_with(
        &[("HTTP_PROXY", &proxy.url()), ("HTTPS_PROXY", &proxy.url())],
        &["-rate", "100", "-requests", "2"],
        "GET https://tls.test/\n\nGET http://plain.test/\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = decode(&out.stdout);
    assert_eq!(hits.len(), 2);
    let tls = hits.iter().find(|h| h.url.starts_with("https")).unwrap();
    assert_eq!(tls.code, 0);
    assert_eq!(
        tls.error,
        "Get \"https://tls.test/\": proxyconnect tcp: CONNECT tls.test:443: 407 Proxy Authentication Required"
    );
    let plain = hits.iter().find(|h| h.url.starts_with("http:")).unwrap();
    assert_eq!(
        (plain.code, plain.error.as_str()),
        (407, "407 Proxy Authentication Required")
    );

    let out = attack_with(
        &[("HTTPS_PROXY", "socks5://127.0.0.1:1080")],
        &["-rate", "100", "-requests", "1"],
        "GET https://tls.test/\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "barrage attack: HTTPS_PROXY=\"socks5://127.0.0.1:1080\": proxy scheme \"socks5\" is not supported (http only)"
    );
    assert!(common::no_records(&out.stdout));
    // The first request and the connections opened ahead (-workers).
    let seen = proxy.seen();
    assert!(
        seen.iter()
            .any(|r| r.line == "GET http://plain.test/ HTTP/1.1"),
        "{seen:?}"
    );
    assert!(seen
        .iter()
        .filter(|r| r.line.starts_with("CONNECT"))
        .all(|r| r.line == "CONNECT tls.test:443 HTTP/1.1"));
}
