//! Go's wording for a request's errors, as vegeta's records read:
//! `Get "http://…": …`, and the `-timeout` error.

use std::time::Duration;

pub(super) use crate::core::error::go_op;
use crate::PreparedTarget;

/// The error of a request that took longer than `-timeout` (`t`).
pub(crate) fn timed_out(target: &PreparedTarget, t: Duration) -> crate::Failure {
    crate::Failure(format!(
        "{} \"{}\": timeout after {} (-timeout)",
        go_op(&target.method_text),
        target.url_shown(),
        barrage_model::duration::format(t.as_nanos() as i64)
    ))
}

/// A transport error in Go's words, `Get "http://…": …`, for the
/// target's request or a redirect's (`hop`).
pub(super) fn failed(
    hop: Option<&crate::core::ask::Hop>,
    target: &PreparedTarget,
    e: &dyn std::fmt::Display,
) -> String {
    let (method, uri) = match hop {
        Some(h) => (&h.method, &h.uri),
        None => (&target.method, &target.uri),
    };
    crate::core::error::go_failed(method.as_str(), uri, e)
}

/// A streamed answer's outcome with its events: an answer that broke
/// off, or was cut by `-timeout` (its exchange dropped mid-way), keeps
/// the events that came, and says how many (`stream cut after 37 events:
/// …`); an event past `-max-event-bytes` fails the record.
pub(crate) fn streamed(
    result: Result<crate::Response, crate::Failure>,
    tape: &crate::Tape,
) -> Result<crate::Response, crate::Failure> {
    let taped = tape.take();
    let cut = |n: u64, why: &str| format!("stream cut after {n} events: {why}");
    match result {
        Ok(mut r) => {
            if let Some(e) = &taped.error {
                r.error = Some(e.to_string());
            } else if let Some(e) = r.error.take() {
                r.error = Some(cut(taped.count, &e));
            }
            r.events = Some(Box::new((tape.base(), taped)));
            Ok(r)
        }
        Err(e) if taped.count > 0 || taped.error.is_some() || taped.bytes > 0 => {
            Ok(crate::Response {
                error: Some(
                    taped
                        .error
                        .as_deref()
                        .map_or_else(|| cut(taped.count, &e.0), String::from),
                ),
                // What came before the end (a -timeout's) is counted.
                bytes_in: taped.bytes,
                events: Some(Box::new((tape.base(), taped))),
                ..crate::Response::default()
            })
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_op_names() {
        assert_eq!(go_op("GET"), "Get");
        assert_eq!(go_op("POST"), "Post");
    }
}
