//! barrage-collect: one live meeting point for many attackers.
//!
//! - [`Collector`]: `barrage collect`, a TCP (or TLS) port that takes
//!   result streams from attackers, merges them by time into one stream,
//!   checks the shards live, and stops every attacker when a `-fail-on`
//!   condition holds across them.
//! - [`Uplink`]: the attacker's end (`attack -output tcp://`, `barrage
//!   send`): a spool file sent as it grows, resent from where the
//!   collector stands after a drop.
//! - [`wire`]: the protocol between the two.
#![deny(missing_docs)]

mod collector;
pub mod link;
pub mod live;
mod orders;
mod origins;
mod uplink;
pub mod wire;

pub use collector::{CollectConfig, Collector, Summary};
pub use orders::{Orders, LEAD};
pub use uplink::{spool, temp_spool, OnStop, Uplink, UplinkConfig, UplinkError};

/// `tcp://HOST:PORT` or `tls://HOST:PORT`: the address and whether it is
/// TLS; `None` for anything else (a file name).
pub fn parse_address(s: &str) -> Option<Result<(String, bool), wire::WireError>> {
    let (rest, tls) = if let Some(r) = s.strip_prefix("tcp://") {
        (r, false)
    } else if let Some(r) = s.strip_prefix("tls://") {
        (r, true)
    } else {
        return None;
    };
    let rest = rest.trim_end_matches('/');
    match rest.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {
            Some(Ok((rest.to_string(), tls)))
        }
        _ => Some(Err(wire::WireError::Address(s.to_string()))),
    }
}
