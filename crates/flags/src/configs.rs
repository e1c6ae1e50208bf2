//! The configurations a set of flags describes: the attack's, the
//! client's and the streamed answers' (`-stream`, `-ws-events`), the flags
//! checked together first.

use barrage_attack::AttackConfig;
use barrage_client::{ClientConfig, IoMode, Proxies, StreamSpec};

use crate::AttackArgs;

/// Flags of streamed answers that do not go together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamConflict {
    /// `-ws-events` with `-hold`.
    #[error("-ws-events waits for messages per request; -hold's connections do not take it")]
    WsEventsHold,
    /// `-event-filter` on answers not read as streams.
    #[error("-event-filter goes with -stream or -ws-events (for gRPC streams, give -stream)")]
    FilterAlone,
    /// An event check on answers not read as streams.
    #[error("-check events>=N and event~REGEX go with -stream or -ws-events (for gRPC streams, give -stream)")]
    EventChecksAlone,
    /// `-stream` with `-pipeline`.
    #[error("-stream reads one answer at a time: it does not take -pipeline")]
    Pipeline,
    /// `-max-events` out of its range.
    #[error("-max-events {0}: from 1 to {max}", max = barrage_stream::MAX_EVENTS)]
    MaxEvents(u64),
    /// `-max-event-bytes 0`.
    #[error("-max-event-bytes must be at least 1 byte")]
    MaxEventBytes,
    /// `-event-filter` with `-llm`, which knows the chunks.
    #[error(
        "-event-filter goes without -llm: -llm counts the chunks that carry text, and reads usage"
    )]
    FilterWithLlm,
    /// An `-event-filter` that does not parse.
    #[error("-event-filter {0}")]
    Filter(String),
}

impl AttackArgs {
    /// The attack's configuration; `shard` resolved, `arrivals` with its
    /// seed fixed.
    pub fn attack_config(
        &self,
        shard: Option<(u64, u64)>,
        arrivals: barrage_attack::Arrivals,
    ) -> AttackConfig {
        let a = self;
        AttackConfig {
            rate: a.rate,
            stages: a.stages.clone(),
            shard,
            start_at: a.start_at,
            duration: Some(a.duration).filter(|d| !d.is_zero()),
            requests: a.requests,
            workers: a.workers,
            max_workers: a.max_workers,
            name: a.name.clone(),
            cpus: a.cpus,
            arrivals,
            recorded: a.har_timing.then_some(a.har_speed),
            mix_peak: None,
            grace: a.grace,
            scrape: (!a.scrape.is_empty()).then(|| barrage_attack::ScrapeSpec {
                urls: a.scrape.clone(),
                every: a.scrape_every,
                matching: a.scrape_match.clone(),
            }),
        }
    }

    /// How targets are read, for shard `shard`, with the `-feed` rows and
    /// `-proto-set` (or `-proto`) descriptors read.
    pub fn targets_spec(
        &self,
        shard: u64,
        feed: Option<(barrage_targets::Feed, String)>,
        protos: Option<barrage_client::ProtoSet>,
        prompts: Option<barrage_targets::Prompts>,
    ) -> barrage_attack::load::TargetsSpec {
        barrage_attack::load::TargetsSpec {
            name: self.targets.clone(),
            flow: self.format == barrage_targets::Format::Flow,
            feed,
            feed_random: self.feed_random,
            lazy: self.lazy,
            recorded: self.har_timing,
            protos,
            cookies: self.cookies,
            shard,
            prompts,
        }
    }

    /// The client's configuration, with the `proxies` of the environment,
    /// the `io` back end settled and the `stream` spec
    /// ([`AttackArgs::stream_spec`]).
    pub fn client_config(
        &self,
        proxies: Option<Proxies>,
        io: IoMode,
        stream: Option<StreamSpec>,
    ) -> ClientConfig {
        let a = self;
        ClientConfig {
            timeout: Some(a.timeout.0).filter(|d| !d.is_zero()),
            keepalive: a.keepalive,
            connections: a.connections,
            max_connections: a.max_connections,
            http2: a.http2,
            h2c: a.h2c,
            http3: a.http3,
            h3_streams: a.h3_streams,
            insecure: a.insecure,
            cert: a.cert.clone(),
            key: a.key.clone(),
            root_certs: a.root_certs.clone(),
            session_tickets: a.session_tickets,
            chunked: a.chunked,
            redirects: a.redirects,
            max_body: a.max_body,
            keep_headers: a.keep_headers,
            laddr: a.laddr.iter().flatten().copied().collect(),
            dns_select: a.dns_select,
            h1_engine: a.h1_engine,
            io,
            max_header_bytes: a.max_header_bytes,
            pipeline: a.pipeline,
            unix_socket: a.unix_socket.clone(),
            connect_to: a.connect_to.clone(),
            dns_ttl: a.dns_ttl.0,
            resolvers: a.resolvers.clone(),
            proxies,
            name: a.name.clone(),
            grpc_max_message: a.grpc_max_message.max(0) as usize,
            ws_frame: a.ws_frame,
            ws_max_message: a.ws_max_message.max(1) as usize,
            checks: (!a.checks.is_empty())
                .then(|| std::sync::Arc::new(barrage_client::Checks(a.checks.clone()))),
            stream,
            ws_events: a.ws_events,
            grpc_streams: Default::default(),
            // A flow's steps' (set once the flow is read).
            step_reads: Default::default(),
        }
    }

    /// `-stream` and its limits, checked against what it goes with.
    pub fn stream_spec(&self) -> Result<Option<StreamSpec>, StreamConflict> {
        let a = self;
        if a.ws_events > 0 && a.hold.is_some() {
            return Err(StreamConflict::WsEventsHold);
        }
        // Always a spec: server-streaming gRPC methods are read as events
        // whatever the flags; HTTP answers only with -stream (or -llm,
        // which reads server-sent events unless -stream says otherwise).
        let stream = a.stream.or(a.llm.map(|_| barrage_client::StreamMode::Sse));
        let mode = stream.unwrap_or(barrage_client::StreamMode::Chunks);
        if a.llm.is_some() && a.event_filter.is_some() {
            return Err(StreamConflict::FilterWithLlm);
        }
        if stream.is_none() && a.ws_events == 0 {
            if a.event_filter.is_some() {
                return Err(StreamConflict::FilterAlone);
            }
            if a.checks.iter().any(|c| c.needs_events()) {
                return Err(StreamConflict::EventChecksAlone);
            }
        }
        if a.pipeline > 1 && stream.is_some() {
            return Err(StreamConflict::Pipeline);
        }
        if !(1..=barrage_stream::MAX_EVENTS as u64).contains(&a.max_events) {
            return Err(StreamConflict::MaxEvents(a.max_events));
        }
        if a.max_event_bytes < 1 {
            return Err(StreamConflict::MaxEventBytes);
        }
        let filter = match &a.event_filter {
            Some(f) => {
                Some(StreamSpec::filter_of(f).map_err(|e| StreamConflict::Filter(e.to_string()))?)
            }
            None => None,
        };
        Ok(Some(StreamSpec {
            mode,
            http: stream.is_some(),
            max_events: a.max_events as usize,
            max_event_bytes: a.max_event_bytes as usize,
            filter,
            patterns: Vec::new(),
            llm: a.llm,
            llm_usage: a.llm_usage,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::attack;

    #[test]
    fn streamed_answers_refuse_what_does_not_go_with_them() {
        let e = |args: &[&str]| attack(args).stream_spec().unwrap_err();
        assert_eq!(e(&["-event-filter", ".a"]), StreamConflict::FilterAlone);
        assert_eq!(
            e(&["-stream", "sse", "-pipeline", "2"]),
            StreamConflict::Pipeline
        );
        assert_eq!(
            e(&["-stream", "sse", "-max-events", "99999999"]),
            StreamConflict::MaxEvents(99_999_999)
        );
        let spec = attack(&["-stream", "sse"]).stream_spec().unwrap().unwrap();
        assert!(spec.http);
        assert_eq!(
            e(&["-llm", "openai", "-event-filter", ".a"]),
            StreamConflict::FilterWithLlm
        );
        // -llm reads server-sent events unless -stream says otherwise.
        let spec = attack(&["-llm", "openai"]).stream_spec().unwrap().unwrap();
        assert!(spec.http && spec.mode == barrage_client::StreamMode::Sse);
        assert_eq!(spec.llm, Some(barrage_client::Llm::OpenAi));
    }

    #[test]
    fn the_configs_carry_the_flags() {
        let a = attack(&["-rate", "7", "-timeout", "0", "-name", "n"]);
        let c = a.attack_config(Some((1, 2)), a.arrivals);
        assert_eq!((c.shard, c.name.as_str()), (Some((1, 2)), "n"));
        let client = a.client_config(None, IoMode::Epoll, None);
        assert_eq!(client.timeout, None);
    }
}
