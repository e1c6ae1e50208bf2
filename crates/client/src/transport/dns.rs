//! `-resolvers`: host names looked up with the given DNS servers instead
//! of the system's, with hickory's resolver: random query IDs, answers
//! matched to their question, truncated answers asked again over TCP, an
//! A and an AAAA query each, servers tried in turn. No hosts file, no
//! search domains, no cache of hickory's own (the dialer keeps addresses
//! for `-dns-ttl`).

use std::{
    io,
    net::{IpAddr, SocketAddr},
    sync::OnceLock,
    time::Duration,
};

use hickory_resolver::{
    config::{LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts},
    net::runtime::TokioRuntimeProvider,
    TokioResolver,
};

/// How long one server has to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// The `-resolvers` of an attack: one hickory resolver, built on first
/// use (inside a worker thread's runtime, where its connections live).
pub(crate) struct Resolvers {
    servers: Vec<SocketAddr>,
    resolver: OnceLock<Result<TokioResolver, crate::Failure>>,
}

impl Resolvers {
    /// Asks `servers` (none: this is not used).
    pub(crate) fn new(servers: Vec<SocketAddr>) -> Self {
        Resolvers {
            servers,
            resolver: OnceLock::new(),
        }
    }

    /// Whether any server was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    fn build(&self) -> Result<TokioResolver, crate::Failure> {
        let name_servers = self
            .servers
            .iter()
            .map(|s| {
                let mut ns = NameServerConfig::udp_and_tcp(s.ip());
                for c in &mut ns.connections {
                    c.port = s.port();
                }
                ns
            })
            .collect();
        let mut opts = ResolverOpts::default();
        opts.timeout = ANSWER_TIMEOUT;
        opts.attempts = 1;
        opts.cache_size = 0;
        opts.use_hosts_file = ResolveHosts::Never;
        opts.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
        TokioResolver::builder_with_config(
            ResolverConfig::from_name_servers(name_servers),
            TokioRuntimeProvider::default(),
        )
        .with_options(opts)
        .build()
        .map_err(|e| crate::Failure(e.to_string()))
    }

    /// `name`'s addresses (IPv4 first) with `port`; "no such host" when
    /// the name does not exist or has no addresses.
    pub(crate) async fn lookup(&self, name: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        let resolver = self
            .resolver
            .get_or_init(|| self.build())
            .as_ref()
            .map_err(|e| io::Error::other(e.clone()))?;
        let found = match resolver.lookup_ip(name).await {
            Ok(found) => found,
            Err(e) if e.is_nx_domain() || e.is_no_records_found() => {
                return Err(io::Error::other("no such host"))
            }
            Err(e) => return Err(io::Error::other(self.unanswered(&e))),
        };
        let mut ips: Vec<IpAddr> = found.iter().collect();
        // IPv4 first, each family in the order given.
        ips.sort_by_key(|ip| ip.is_ipv6());
        if ips.is_empty() {
            return Err(io::Error::other("no such host"));
        }
        Ok(ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }

    /// Why no server answered, naming them.
    fn unanswered(&self, e: &dyn std::fmt::Display) -> String {
        let names: Vec<String> = self.servers.iter().map(|s| s.to_string()).collect();
        let which = if names.len() == 1 {
            format!("DNS server {}", names[0])
        } else {
            format!("DNS servers {}", names.join(", "))
        };
        format!("no answer from {which} ({e})")
    }
}
