use std::{net::IpAddr, path::PathBuf, time::Duration};

use barrage_model::Rate;

/// `-workers`: workers ready at the start (vegeta's default).
pub const DEFAULT_WORKERS: u64 = 10;
/// `-connections`: idle connections kept per host (vegeta's default).
pub const DEFAULT_CONNECTIONS: usize = 10_000;
/// `-timeout`: limit on a whole request, body included (vegeta's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// `-redirects`: redirects followed; -1 records the 3xx without following.
pub const DEFAULT_REDIRECTS: i64 = 10;

/// What to send and when.
#[derive(Debug, Clone)]
pub struct AttackConfig {
    /// `-rate`.
    pub rate: Rate,
    /// `-duration`: no request is scheduled at or after this offset; `None`
    /// runs until stopped (or until lazy targets run out).
    pub duration: Option<Duration>,
    /// `-requests`: schedule at most this many.
    pub requests: Option<u64>,
    /// `-workers`: concurrency available from the start.
    pub workers: u64,
    /// `-max-workers`: cap on requests in flight; `None` is unlimited.
    pub max_workers: Option<u64>,
    /// `-name`, stored in every Hit and sent as `X-Barrage-Attack`.
    pub name: String,
    /// `-cpus`: runtime threads (0 = one per core).
    pub cpus: usize,
}

impl Default for AttackConfig {
    fn default() -> Self {
        AttackConfig {
            rate: Rate::Paced {
                hits_num: 50,
                hits_den: 1,
                per_ns: 1_000_000_000,
            },
            duration: None,
            requests: None,
            workers: DEFAULT_WORKERS,
            max_workers: None,
            name: String::new(),
            cpus: 0,
        }
    }
}

/// How to send: the HTTP client's settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `-timeout`: limit on a whole request; `None` waits forever.
    pub timeout: Option<Duration>,
    /// `-keepalive`: reuse connections.
    pub keepalive: bool,
    /// `-connections`: idle connections kept per host.
    pub connections: usize,
    /// `-max-connections`: cap on requests in flight at once (each holds
    /// one HTTP/1 connection); 0 is unlimited.
    pub max_connections: usize,
    /// `-http2`: offer HTTP/2 by ALPN on TLS connections.
    pub http2: bool,
    /// `-h2c`: HTTP/2 with prior knowledge on cleartext connections.
    pub h2c: bool,
    /// `-insecure`: do not verify server certificates.
    pub insecure: bool,
    /// `-cert`: client certificate chain, PEM.
    pub cert: Option<PathBuf>,
    /// `-key`: client private key, PEM (defaults to the `-cert` file).
    pub key: Option<PathBuf>,
    /// `-root-certs`: PEM files that replace the system roots.
    pub root_certs: Vec<PathBuf>,
    /// `-session-tickets`: resume TLS sessions (off: every new connection
    /// makes a full handshake, as vegeta's default).
    pub session_tickets: bool,
    /// `-redirects`: follow at most this many; -1 keeps the 3xx as the result.
    pub redirects: i64,
    /// `-max-body`: bytes of each response body kept; -1 keeps all.
    pub max_body: i64,
    /// `-keep-headers`: store response headers in each Hit.
    pub keep_headers: bool,
    /// `-laddr`: local address to connect from.
    pub laddr: Option<IpAddr>,
    /// Attack name for the `X-Barrage-Attack` header (empty: not sent).
    pub name: String,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            timeout: Some(DEFAULT_TIMEOUT),
            keepalive: true,
            connections: DEFAULT_CONNECTIONS,
            max_connections: 0,
            http2: true,
            h2c: false,
            insecure: false,
            cert: None,
            key: None,
            root_certs: Vec::new(),
            session_tickets: false,
            redirects: DEFAULT_REDIRECTS,
            max_body: 0,
            keep_headers: false,
            laddr: None,
            name: String::new(),
        }
    }
}
