//! Where a connection goes.

use http::Uri;

/// Where a connection goes: scheme, host and port.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Key {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// HTTP/2 with prior knowledge over plain TCP whatever `-h2c` says
    /// (gRPC's `http://` targets).
    pub h2c: bool,
    /// WebSocket (`ws://`, `wss://`): its connections are upgraded, kept
    /// apart from the host's HTTP ones.
    pub ws: bool,
}

impl Key {
    /// The key of `uri`; the error names what cannot be dialed.
    pub(crate) fn of(uri: &Uri) -> Result<Key, crate::Failure> {
        let ws = matches!(uri.scheme_str(), Some("ws" | "wss"));
        let tls = match uri.scheme_str() {
            Some("https" | "wss") => true,
            Some("http" | "ws") => false,
            Some(other) => {
                return Err(crate::Failure::from(format!(
                    "unsupported protocol scheme \"{other}\""
                )))
            }
            None => {
                return Err(crate::Failure::from(
                    "unsupported protocol scheme \"\"".to_string(),
                ))
            }
        };
        let host = uri
            .host()
            .filter(|h| !h.is_empty())
            .ok_or("no Host in request URL")?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        Ok(Key {
            tls,
            host,
            port,
            h2c: false,
            ws,
        })
    }
}
