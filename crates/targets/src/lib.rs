//! barrage-targets: reads the requests to send, in vegeta's formats.
//!
//! - [`HttpTargets`]: the line-based `http` format (`GET http://h/path`,
//!   `Header: value` lines, an `@/path/to/body` line, `#` comments, blank
//!   lines between targets).
//! - [`JsonTargets`]: one JSON object per line with `method`, `url`, base64
//!   `body` and a `header` object of string arrays.
//! - [`CurlTargets`]: curl command lines (`-format curl`).
//! - [`HarTargets`]: a HAR 1.2 file's requests (`-format har`).
//! - [`Flow`]: a session's steps (`-format flow`): http-format targets
//!   with `:check`, `:extract` and `:think` lines.
//! - [`read_mix`]: a `-mix` YAML file's groups, each with its targets and
//!   schedule.
//! - [`TargetReader`]: any of them behind one `next()`, so the attack can
//!   read all targets up front or one per request (`-lazy`).
//!
//! Both apply the global `-header` values (first) and `-body` (when a target
//! has none) from [`Defaults`]. Every error names the input and line.
//!
//! ```
//! use barrage_targets::{Defaults, Format, TargetReader};
//! let text = "GET http://127.0.0.1:8080/\nX-Test: 1\n\nPOST http://127.0.0.1:8080/p\n";
//! let mut r = TargetReader::new(text.as_bytes(), "stdin", Format::Http, Defaults::default());
//! let first = r.next().unwrap().unwrap();
//! assert_eq!(first.headers, vec![("X-Test".to_string(), "1".to_string())]);
//! assert_eq!(r.next().unwrap().unwrap().method, "POST");
//! assert!(r.next().unwrap().is_none());
//! ```
#![deny(missing_docs)]

mod bounded;
mod curl;
mod defaults;
mod error;
mod flow;
mod har;
mod http;
mod json;
mod load;
mod mix;
mod prompts;
mod reader;
mod renderer;
mod template;
mod write;

pub use bounded::{mib, read_bounded, Unread, MAX_BODY, MAX_FILE, MAX_LINE};
pub use curl::CurlTargets;
pub use defaults::Defaults;
pub use error::{BadValue, TargetError};
pub use flow::{BadThink, Extraction, Flow, FlowStep, StepCheck, Think, MAX_STEPS};
pub use har::{Filter, HarTargets};
pub use http::{Directive, HttpTargets};
pub use json::JsonTargets;
pub use load::{LazyTargets, Loaded, Prepare};
pub use mix::{read_mix, MixGroup};
pub use prompts::{
    estimated_tokens, read_dataset, rng_for, BadDataset, BadLength, Input, Length, Map, NotJson,
    OutputTokens, Prompts, Row, Value, MAX_LENGTH, VOCABULARY,
};
pub use reader::{Format, TargetReader, Whole};
pub use renderer::{Renderer, Sendable};
pub use template::{has_placeholders, Context, Feed, Template, TemplatedTarget};
pub use write::{convert, write_http, write_json, ConvertError};

/// Checks a target URL: absolute, `http` or `https`, with a host.
pub fn check_url(url: &str) -> Result<(), BadValue> {
    let bad = |why: String| Err(BadValue(why));
    // A URL that is a placeholder from its start (`{{next}}`, a link a
    // flow's earlier step extracted) is checked as each request's is made:
    // a bad one is that request's error.
    if url.starts_with("{{") {
        return Ok(());
    }
    // A templated URL is checked with each placeholder as `0`.
    let mut plain = String::new();
    let mut rest = url;
    while let Some((before, after)) = rest.split_once("{{") {
        plain.push_str(before);
        plain.push('0');
        rest = after.split_once("}}").map_or("", |(_, a)| a);
    }
    plain.push_str(rest);
    if !plain.contains("://") {
        return bad(if plain.starts_with('/') {
            format!("a URL needs its scheme and host: http://127.0.0.1:8080{url}")
        } else {
            format!("a URL needs its scheme: http://{url}")
        });
    }
    let uri: ::http::Uri = match plain.parse() {
        Ok(u) => u,
        Err(e) => return bad(e.to_string()),
    };
    match uri.scheme_str() {
        Some("http" | "https" | "ws" | "wss") => {}
        Some(other) => {
            return bad(format!(
                "unsupported scheme {other:?} (use http, https, ws or wss)"
            ))
        }
        None => return bad("not an absolute URL (missing http:// or https://)".into()),
    }
    if uri.host().is_none_or(str::is_empty) {
        return bad("missing host".into());
    }
    Ok(())
}
