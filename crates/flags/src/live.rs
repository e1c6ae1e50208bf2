//! The flags of the live meeting point: `collect` (the collector) and
//! `send` (a stream from stdin or a file to it). `attack -output
//! tcp://HOST:PORT` is the attack's own flag.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::Args;

use crate::values::*;

/// `barrage collect`.
#[derive(Args, Debug)]
pub struct CollectArgs {
    /// Where to listen for attackers (loopback unless told otherwise: -listen 0.0.0.0:7690 takes every interface)
    #[arg(long, default_value = "127.0.0.1:7690", value_parser = parse_listen)]
    pub listen: SocketAddr,
    /// The token every attacker must give (also BARRAGE_TOKEN; one of them is required)
    #[arg(long)]
    pub token: Option<String>,
    /// TLS certificate chain (PEM) for the port; with -tls-key
    #[arg(long)]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM)
    #[arg(long)]
    pub tls_key: Option<PathBuf>,
    /// How long a record may wait for a slower attacker's earlier ones before it is written
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// How many streams to wait for (default: the shard count of -shard i/n, else 1); also -expect N
    #[arg(long, visible_alias = "expect")]
    pub attackers: Option<usize>,
    /// End with exit 1, naming who is missing, when the awaited attackers have not all joined this long after the start (0 waits for ever)
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub join_timeout: Duration,
    /// An attacker whose connection is gone this long (killed, or its host lost) counts as lost: the collection ends without it, with exit 1 naming it (0 waits for ever)
    #[arg(long, default_value = "1m", value_parser = parse_duration)]
    pub silence: Duration,
    /// Stop every attacker, and exit 3, when a condition holds over all of them, e.g. 'success<99%,p99>250ms' (report's grammar)
    #[arg(long, value_parser = parse_fail_on)]
    pub fail_on: Option<FailOn>,
    /// -fail-on is judged live once this many records have come in (and at the end whatever their number)
    #[arg(long, default_value_t = 100)]
    pub min_requests: u64,
    /// Warn when a shard's lag p50, schedule or clock is this far from the others'
    #[arg(long, default_value = "10ms", value_parser = parse_duration)]
    pub max_skew: Duration,
    /// Output file of the merged stream
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Serve live control of every attacker at http://ADDR/ (as attack -control): each change reaches them all and holds from one schedule time (500ms ahead, or the call's "at" or "in"); off loopback, the token is required as a Bearer token
    #[arg(long)]
    pub control: Option<SocketAddr>,
}

/// `barrage send`.
#[derive(Args, Debug)]
pub struct SendArgs {
    /// The token (also BARRAGE_TOKEN)
    #[arg(long)]
    pub token: Option<String>,
    /// Where the stream from stdin is kept while it is sent, and resent from after a drop (default: a file in the temporary directory, removed once the collector holds it all)
    #[arg(long)]
    pub spool: Option<PathBuf>,
    /// The collector: tcp://HOST:PORT or tls://HOST:PORT (TLS verified against BARRAGE_CA, a PEM file, else the system's roots)
    pub address: String,
    /// A result file to send (default: stdin)
    pub file: Option<String>,
}

/// `collect` flags that do not go together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollectConflict {
    /// One of `-tls-cert` and `-tls-key`.
    #[error("-tls-cert and -tls-key go together")]
    HalfTls,
    /// `-interval` under a millisecond.
    #[error(
        "-interval must be at least 1ms (it is how long a record waits for a slower attacker)"
    )]
    Interval,
}

impl CollectArgs {
    /// The TLS files, both or neither.
    pub fn tls_files(
        &self,
    ) -> Result<Option<(&std::path::Path, &std::path::Path)>, CollectConflict> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(c), Some(k)) => Ok(Some((c, k))),
            (None, None) => Ok(None),
            _ => Err(CollectConflict::HalfTls),
        }
    }

    /// The collector's configuration, with its `token` and `tls`.
    pub fn config(
        &self,
        token: String,
        tls: Option<std::sync::Arc<rustls::ServerConfig>>,
    ) -> Result<barrage_collect::CollectConfig, CollectConflict> {
        if self.interval < Duration::from_millis(1) {
            return Err(CollectConflict::Interval);
        }
        Ok(barrage_collect::CollectConfig {
            token,
            tls,
            interval: self.interval,
            attackers: self.attackers,
            join_timeout: Some(self.join_timeout).filter(|d| !d.is_zero()),
            silence: Some(self.silence).filter(|d| !d.is_zero()),
            fail_on: self.fail_on.clone().map(|f| f.0).unwrap_or_default(),
            min_requests: self.min_requests,
            max_skew: self.max_skew,
        })
    }
}
