use std::{net::IpAddr, path::PathBuf, time::Duration};

pub use crate::core::shape::WsFrame;

/// `-connections`: idle connections kept per host (vegeta's default).
pub const DEFAULT_CONNECTIONS: usize = 10_000;
/// `-timeout`: limit on a whole request, body included (vegeta's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// `-redirects`: redirects followed; -1 records the 3xx without following.
pub const DEFAULT_REDIRECTS: i64 = 10;
/// `-pipeline`: requests written on a connection before their answers.
pub const DEFAULT_PIPELINE: usize = 1;
/// The most response body kept in a record (`-max-body -1` or more): the
/// binary stream's frames hold at most 256 MiB, and a record must fit in
/// one with its head (`-max-header-bytes`, at most [`MAX_HEAD_BYTES`]).
/// `bytes_in` still counts the whole body, so a record says it was cut.
pub const MAX_KEPT_BODY: i64 = 128 << 20;
/// `-max-header-bytes`: the longest response head (and chunked trailers)
/// read. Larger is an error record naming the flag. Go's transport allows
/// 10 MiB; a head over 64 KiB is almost always a broken server, and the
/// bytes are held while it arrives.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;
/// The largest `-max-header-bytes`.
pub const MAX_HEAD_BYTES: usize = barrage_model::Hit::MAX_HEADER_BYTES;

/// `-h1-engine`: which HTTP/1.1 client sends the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum H1Engine {
    /// barrage's own (the default): requests encoded once, no buffer per
    /// waiting connection, pipelining.
    #[default]
    Own,
    /// hyper's HTTP/1.1 client, kept to compare.
    Hyper,
}

impl std::str::FromStr for H1Engine {
    type Err = crate::Failure;

    fn from_str(v: &str) -> Result<Self, crate::Failure> {
        match v {
            "barrage" | "own" => Ok(H1Engine::Own),
            "hyper" => Ok(H1Engine::Hyper),
            _ => Err(crate::Failure::from(format!(
                "bad -h1-engine {v:?} (use barrage or hyper)"
            ))),
        }
    }
}

/// `-dns-select`: which of a host name's addresses a new connection tries
/// first (the rest follow in turn when a connect fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DnsSelect {
    /// The resolver's first, every time (Go's and vegeta's way: every new
    /// connection piles onto one address).
    First,
    /// Each address in turn, per host: new connections spread evenly.
    #[default]
    RoundRobin,
    /// One at random for each new connection.
    Random,
}

impl std::str::FromStr for DnsSelect {
    type Err = crate::Failure;

    fn from_str(v: &str) -> Result<Self, crate::Failure> {
        match v {
            "first" => Ok(DnsSelect::First),
            "rr" | "round-robin" => Ok(DnsSelect::RoundRobin),
            "random" => Ok(DnsSelect::Random),
            _ => Err(crate::Failure::from(format!(
                "bad -dns-select {v:?} (use first, rr or random)"
            ))),
        }
    }
}

/// One `-connect-to` mapping, `src_host:port:dst_host:port` (IPv6
/// addresses in brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTo {
    /// The URL's host and port.
    pub from: (String, u16),
    /// Where its connections go instead.
    pub to: (String, u16),
}

impl std::str::FromStr for ConnectTo {
    type Err = crate::Failure;

    fn from_str(v: &str) -> Result<Self, crate::Failure> {
        let bad = || format!("bad -connect-to {v:?} (use src_host:port:dst_host:port)");
        let (from, rest) = host_port(v).ok_or_else(bad)?;
        let (to, rest) = rest.strip_prefix(':').and_then(host_port).ok_or_else(bad)?;
        if !rest.is_empty() {
            return Err(crate::Failure::from(bad()));
        }
        Ok(ConnectTo { from, to })
    }
}

/// `host:port` (or `[v6]:port`) at the start of `s`, and what follows it.
fn host_port(s: &str) -> Option<((String, u16), &str)> {
    let (host, rest) = match s.strip_prefix('[') {
        Some(r) => {
            let (host, r) = r.split_once(']')?;
            (host, r.strip_prefix(':')?)
        }
        None => s.split_once(':')?,
    };
    let end = rest.find(':').unwrap_or(rest.len());
    let port: u16 = rest[..end].parse().ok().filter(|p| *p != 0)?;
    (!host.is_empty()).then(|| ((host.to_string(), port), &rest[end..]))
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
    /// `-http3`: HTTP/3 over QUIC with prior knowledge for https://.
    pub http3: bool,
    /// `-h3-streams`: most requests at once on one HTTP/3 connection (0:
    /// the server's limit).
    pub h3_streams: usize,
    /// `-insecure`: do not verify server certificates.
    pub insecure: bool,
    /// `-cert`: client certificate chain, PEM.
    pub cert: Option<PathBuf>,
    /// `-key`: client private key, PEM (defaults to the `-cert` file).
    pub key: Option<PathBuf>,
    /// `-root-certs`: PEM files that replace the system roots.
    pub root_certs: Vec<PathBuf>,
    /// `-chunked`: send request bodies with `Transfer-Encoding: chunked`
    /// (HTTP/1.1) instead of a Content-Length.
    pub chunked: bool,
    /// `-session-tickets`: resume TLS sessions (off: every new connection
    /// makes a full handshake, as vegeta's default).
    pub session_tickets: bool,
    /// `-redirects`: follow at most this many; -1 keeps the 3xx as the result.
    pub redirects: i64,
    /// `-max-body`: bytes of each response body kept; -1 keeps all (up to
    /// [`MAX_KEPT_BODY`], as does any larger value).
    pub max_body: i64,
    /// `-keep-headers`: store response headers in each Hit.
    pub keep_headers: bool,
    /// `-laddr`: local addresses to connect from, used in turn for new
    /// connections (each holds its own ~28k ephemeral ports toward one
    /// destination).
    pub laddr: Vec<IpAddr>,
    /// `-unix-socket`: every connection goes to this Unix socket, whatever
    /// the URL's host (which still names the Host header and TLS name).
    pub unix_socket: Option<PathBuf>,
    /// `-connect-to`: connections for a URL's host:port go to another
    /// host:port instead (several for one are used in turn).
    pub connect_to: Vec<ConnectTo>,
    /// `-dns-ttl`: how long a host name's addresses are kept: `None` looks
    /// the name up for every new connection, zero keeps them for the whole
    /// attack (vegeta's default).
    pub dns_ttl: Option<Duration>,
    /// `-resolvers`: DNS servers that replace the system's for host names.
    pub resolvers: Vec<std::net::SocketAddr>,
    /// `-dns-select`: which of a name's addresses new connections go to.
    pub dns_select: DnsSelect,
    /// Proxies from `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`, with the
    /// `-proxy-header`s for `CONNECT` (`None`: no proxy).
    pub proxies: Option<crate::Proxies>,
    /// Attack name for the `X-Barrage-Attack` header (empty: not sent).
    pub name: String,
    /// `-h1-engine`.
    pub h1_engine: H1Engine,
    /// `-io`: how a connection's bytes move (see [`crate::IoMode::resolve`]).
    pub io: crate::IoMode,
    /// `-max-header-bytes`: the longest response head read.
    pub max_header_bytes: usize,
    /// `-pipeline`: requests in flight per HTTP/1.1 connection (barrage's
    /// engine, closed model).
    pub pipeline: usize,
    /// `-check`: what a response must meet to be a success.
    pub checks: Option<std::sync::Arc<crate::Checks>>,
    /// `-grpc-max-message`: the largest gRPC answer message read.
    pub grpc_max_message: usize,
    /// `-ws-frame`: WebSocket messages as text or binary frames.
    pub ws_frame: WsFrame,
    /// `-ws-max-message`: the largest WebSocket message read.
    pub ws_max_message: usize,
    /// `-stream`: answers read event by event (`None`: as one).
    pub stream: Option<crate::StreamSpec>,
    /// The server-streaming gRPC methods among the targets (filled in as
    /// targets are prepared; see [`crate::proto::grpc::prepare_body`]).
    pub grpc_streams: std::sync::Arc<crate::GrpcStreams>,
    /// `-ws-events`: server messages a WebSocket request waits for, each
    /// an event (0: one reply, not an event).
    pub ws_events: u32,
    /// What a flow's steps (`-format flow`) read of answers, beyond what
    /// `-check` does.
    pub step_reads: StepNeeds,
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
            http3: false,
            h3_streams: 0,
            insecure: false,
            cert: None,
            key: None,
            root_certs: Vec::new(),
            session_tickets: false,
            chunked: false,
            redirects: DEFAULT_REDIRECTS,
            max_body: 0,
            keep_headers: false,
            laddr: Vec::new(),
            unix_socket: None,
            connect_to: Vec::new(),
            dns_ttl: Some(Duration::ZERO),
            resolvers: Vec::new(),
            dns_select: DnsSelect::default(),
            proxies: None,
            name: String::new(),
            h1_engine: H1Engine::Own,
            io: crate::IoMode::default(),
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            checks: None,
            grpc_max_message: crate::DEFAULT_MAX_MESSAGE,
            ws_frame: WsFrame::Text,
            ws_max_message: 64 << 20,
            stream: None,
            ws_events: 0,
            grpc_streams: Default::default(),
            pipeline: DEFAULT_PIPELINE,
            step_reads: StepNeeds::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_to_values() {
        let ok = |v: &str, from: (&str, u16), to: (&str, u16)| {
            let c: ConnectTo = v.parse().unwrap_or_else(|e| panic!("{v}: {e}"));
            assert_eq!(c.from, (from.0.to_string(), from.1), "{v}");
            assert_eq!(c.to, (to.0.to_string(), to.1), "{v}");
        };
        ok(
            "a.com:80:127.0.0.1:8080",
            ("a.com", 80),
            ("127.0.0.1", 8080),
        );
        ok("[::1]:443:[fe80::1]:8443", ("::1", 443), ("fe80::1", 8443));
        ok("a:1:[::1]:2", ("a", 1), ("::1", 2));
        for bad in [
            "",
            "a:80",
            "a:80:b",
            "a:80:b:",
            "a:80:b:0",
            ":80:b:81",
            "a:x:b:81",
            "a:80:b:81:c",
            "[::1:80:b:81",
            "::1:80:b:81",
        ] {
            let e = bad.parse::<ConnectTo>().unwrap_err();
            assert!(e.contains("-connect-to") && e.contains(bad), "{bad}: {e}");
        }
    }
}

/// What a flow's steps read of every answer, so that the client keeps it
/// until the step is judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepNeeds {
    /// Bodies (a `:check` or `:extract` on the body).
    pub body: bool,
    /// Every header (a `:check` or `:extract` on a header).
    pub headers: bool,
    /// The `Set-Cookie` headers (the sessions' cookie jars).
    pub cookies: bool,
}
