//! `-stream` and its limits (`-max-events`, `-max-event-bytes`,
//! `-event-filter`), checked against what they go with.

use crate::failed::Failed;
use barrage_flags::AttackArgs;

/// `-stream` and its limits, checked against what it goes with.
pub fn stream_spec(a: &AttackArgs) -> Result<Option<barrage_client::StreamSpec>, Failed> {
    if a.ws_events > 0 && a.hold.is_some() {
        return Err(Failed::usage(
            "-ws-events waits for messages per request; -hold's connections do not take it",
        ));
    }
    // Always a spec: server-streaming gRPC methods are read as events
    // whatever the flags; HTTP answers only with -stream.
    let mode = a.stream.unwrap_or(barrage_client::StreamMode::Chunks);
    if a.stream.is_none() && a.ws_events == 0 {
        if a.event_filter.is_some() {
            return Err(Failed::usage(
                "-event-filter goes with -stream or -ws-events (for gRPC streams, give -stream)",
            ));
        }
        if a.checks.iter().any(|c| c.needs_events()) {
            return Err(Failed::usage(
                "-check events>=N and event~REGEX go with -stream or -ws-events (for gRPC streams, give -stream)",
            ));
        }
    }
    if a.pipeline > 1 && a.stream.is_some() {
        return Err(Failed::usage(
            "-stream reads one answer at a time: it does not take -pipeline",
        ));
    }
    if !(1..=barrage_stream::MAX_EVENTS as u64).contains(&a.max_events) {
        return Err(Failed::usage(format!(
            "-max-events {}: from 1 to {}",
            a.max_events,
            barrage_stream::MAX_EVENTS
        )));
    }
    if a.max_event_bytes < 1 {
        return Err(Failed::usage("-max-event-bytes must be at least 1 byte"));
    }
    let filter = match &a.event_filter {
        Some(f) => Some(
            barrage_client::StreamSpec::filter_of(f)
                .map_err(|e| Failed::usage(format!("-event-filter {e}")))?,
        ),
        None => None,
    };
    Ok(Some(barrage_client::StreamSpec {
        mode,
        http: a.stream.is_some(),
        max_events: a.max_events as usize,
        max_event_bytes: a.max_event_bytes as usize,
        filter,
        patterns: Vec::new(),
    }))
}
