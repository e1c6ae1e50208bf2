//! The command line: each subcommand's flags, with vegeta's names and
//! defaults (defaults are the stage crates' named constants).

use std::{path::PathBuf, time::Duration};

use barrage_attack::DEFAULT_WORKERS;
use barrage_client::{DEFAULT_CONNECTIONS, DEFAULT_REDIRECTS};
use barrage_model::{size, Rate, Stages};
use barrage_stream::Encoding;
use barrage_targets::Format;
use clap::{ArgAction, Args, Parser, Subcommand};

use crate::{
    live::{CollectArgs, SendArgs},
    readers::{CompareArgs, ExportArgs},
    values::*,
};

/// The whole command line.
#[derive(Parser, Debug)]
#[command(
    name = "barrage",
    version,
    term_width = 0,
    about = "HTTP load testing toolchain: attack at a constant rate, then report or dump the results",
    after_help = "Flags take one or two dashes: -rate 100, -rate=100, --rate 100.\n\nExample:\n  echo \"GET http://127.0.0.1:8080/\" | barrage attack -rate 100 -duration 5s | barrage report"
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// A subcommand and its flags.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Send requests at a fixed rate; write one binary result per request
    Attack(Box<AttackArgs>),
    /// Check whether this host can hold an attack: the attack's own flags and targets, set against the open-files limit, ports, TIME_WAIT, conntrack, the listen queue, memory and CPU (exit 1 when the plan does not fit)
    Doctor(Box<AttackArgs>),
    /// Find a server's limit: an attack per step at rising loads, a table of each step's figures, the knee, a chart
    Sweep(Box<SweepArgs>),
    /// Report on result streams (binary, CSV or JSON lines; merged by time)
    Report(ReportArgs),
    /// Write results as CSV or JSON lines
    Dump(DumpArgs),
    /// Convert results between encodings (vegeta's `encode`)
    Encode(EncodeArgs),
    /// Plot latency over time as a self-contained HTML page
    Plot(PlotArgs),
    /// Compare two runs (or sets of runs): each figure's change with a 95% interval and a verdict; exit 3 on a -fail-on regression
    Compare(CompareArgs),
    /// Push results into Prometheus (remote-write), InfluxDB or an OpenTelemetry collector (OTLP/HTTP), each interval stamped with its records' own time
    Export(ExportArgs),
    /// Meet many attackers live: take their result streams over TCP (attack -output tcp://HOST:PORT, or barrage send), merge them by time into one stream, check the shards, and stop them all on -fail-on
    Collect(CollectArgs),
    /// Send a result stream (stdin or a file) to barrage collect, spooled and resent after a drop
    Send(SendArgs),
    /// Serve a tiny HTTP target on loopback, for trying barrage out
    #[command(after_help = barrage_serve::target::ROUTES)]
    Serve(ServeArgs),
    /// Convert targets: curl commands or a HAR file into vegeta's JSON or http format, http into JSON and back
    Targets(TargetsArgs),
    /// Print a shell completion script: barrage completions bash > /etc/bash_completion.d/barrage
    Completions(CompletionsArgs),
    /// Print a manual page (roff): barrage man > barrage.1, barrage man attack > barrage-attack.1, or all of them: barrage man -dir DIR
    Man(ManArgs),
}

/// `barrage man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// The subcommand whose page to print (default: barrage(1), the whole tool)
    pub page: Option<String>,
    /// Write every page into this directory instead (barrage.1, barrage-attack.1, ...), e.g. /usr/local/share/man/man1
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// `barrage completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell
    pub shell: clap_complete::Shell,
}

/// `barrage attack` (and the attack flags `sweep` shares).
#[derive(Args, Debug)]
pub struct AttackArgs {
    /// Requests per time unit: N, N/s, N/1m, N/500ms; 0 or infinity with -max-workers
    #[arg(long, default_value_t = barrage_model::DEFAULT_RATE, allow_hyphen_values = true)]
    pub rate: Rate,
    /// A rate ramped in straight lines instead of -rate: DURATION:RATE,... e.g. 30s:1000,2m:1000,10s:0 (from 0; 0s:N jumps to N)
    #[arg(long, value_parser = parse_stages, conflicts_with = "rate")]
    pub stages: Option<Stages>,
    /// Send only this share of the attack: i/n sends requests i, i+n, i+2n, ... of the schedule the other flags describe (run n processes, 0/n to n-1/n, with -start-at); auto or auto/n in a Kubernetes Indexed Job: the index from JOB_COMPLETION_INDEX, n from BARRAGE_SHARDS
    #[arg(long)]
    pub shard: Option<barrage_attack::ShardSpec>,
    /// Start the schedule at this time (RFC 3339, or unix seconds such as $(date -d +10sec +%s)), after opening connections
    #[arg(long, value_parser = barrage_model::time::parse_instant)]
    pub start_at: Option<i64>,
    /// Read a server's Prometheus text endpoint during the run (vLLM's /metrics, node_exporter; http://, repeatable): its series go into the stream with their time, a gauge as read, a counter as its rate a second, with up and scrape_duration_seconds; never delays a request
    #[arg(long = "scrape", value_parser = parse_scrape)]
    pub scrape: Vec<String>,
    /// With -scrape: how often each endpoint is read
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub scrape_every: Duration,
    /// With -scrape: the metric names kept, a regular expression (all without it), e.g. 'vllm:num_requests_waiting|process_cpu_seconds_total'
    #[arg(long, value_parser = parse_filter)]
    pub scrape_match: Option<barrage_targets::Filter>,
    /// Serve live control of the attack at http://ADDR/ (e.g. 127.0.0.1:7691): its state, and POST /rate, /stages, /pause, /resume, /stop; each change is a marker in the stream (off loopback, BARRAGE_TOKEN is required as a Bearer token)
    #[arg(long)]
    pub control: Option<std::net::SocketAddr>,
    /// Serve Prometheus metrics of the records so far at http://ADDR/metrics while the attack runs (e.g. 127.0.0.1:8880)
    #[arg(long)]
    pub prometheus_addr: Option<std::net::SocketAddr>,
    /// How long to attack (0 = until stopped or, with -lazy, until targets run out)
    #[arg(long, default_value = "0s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Stop after scheduling this many requests (with -duration, whichever comes first)
    #[arg(long, value_parser = parse_count, allow_hyphen_values = true)]
    pub requests: Option<u64>,
    /// The run's first DURATION is warm-up: its records are written, marked (the stream's fact warmup), and reports leave them out of the figures unless given -warmup 0
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Stop once a figure is sure: its interval from the run so far within a width of it, e.g. 'p99±5%', 'mean±2%@90', 'success±0.5%' (-duration or -requests stays the cap)
    #[arg(long)]
    pub until: Option<barrage_metrics::Until>,
    /// Targets file
    #[arg(long, default_value = "stdin")]
    pub targets: String,
    /// URLs to GET, as oha and hey take them (each a target; without any, targets come from -targets or stdin)
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,
    /// Targets format: http, json, curl (curl command lines, as "Copy as cURL" gives them), har (a HAR 1.2 file's requests) or flow (one session's steps in the http format, with :name, :check, :extract VAR EXPR and :think lines; -rate is then sessions a second)
    #[arg(long, default_value = "http")]
    pub format: Format,
    /// With -format flow: each session keeps the cookies its answers set and sends them back (RFC 6265's domain, path, expiry and Secure rules)
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true", action = ArgAction::Set)]
    pub cookies: bool,
    /// With -format har: keep only the requests whose URL matches this regular expression
    #[arg(long, value_parser = parse_filter)]
    pub har_filter: Option<barrage_targets::Filter>,
    /// With -format har: send each request at the time the HAR recorded it (its startedDateTime, from the first), looping the recording until -duration or -requests ends it
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub har_timing: bool,
    /// With -har-timing: play the recording this many times as fast (2: in half the time; 0.5: in twice the time)
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
    pub har_speed: f64,
    /// How requests fall around the rate: uniform (evenly spaced), poisson or poisson:SEED (exponential gaps with the same mean; the seed is printed and stored in the stream, so a run can be repeated), or gamma:B[:SEED] (gamma gaps of burstiness B, vLLM's --burstiness: 1 is Poisson, below 1 burstier)
    #[arg(long, default_value = "uniform", value_parser = parse_arrivals)]
    pub arrivals: barrage_model::Arrivals,
    /// A YAML file of groups sent together in one attack, each with its own targets and -rate or -stages (and optionally -max-workers, -timeout, headers); each group's records carry its name as their attack name
    #[arg(long, conflicts_with_all = ["rate", "stages"])]
    pub mix: Option<String>,
    /// A CSV file with a header line: {{column}} in targets takes the value of row seq % rows (or a random row with -feed-random)
    #[arg(long)]
    pub feed: Option<String>,
    /// With -feed: a random row for each request
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub feed_random: bool,
    /// LLM prompts, a request each, put in each target's JSON body (messages for a chat request, prompt for completions): JSON lines ({"prompt": ...}, {"messages": [...]}, "max_tokens" optional) or a ShareGPT JSON file (the first human turn; its answer's length with -output-tokens dataset)
    #[arg(long, conflicts_with = "prompt_tokens")]
    pub dataset: Option<String>,
    /// With -dataset: a random row for each request, drawn from -seed (else in order)
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub dataset_random: bool,
    /// Synthetic LLM prompts of this many tokens (words of a vocabulary common tokenizers count one token each), N or a distribution: uniform:256..1024, normal:512,64
    #[arg(long)]
    pub prompt_tokens: Option<barrage_targets::Length>,
    /// Each request's max_tokens (and ignore_eos, unless the body says it), N, uniform:LOW..HIGH, normal:MEAN,SD, or dataset (each -dataset row's own)
    #[arg(long)]
    pub output_tokens: Option<barrage_targets::OutputTokens>,
    /// With -prompt-tokens or -dataset: the first N tokens of every prompt are the same (prefix-cache tests); a synthetic prompt is N plus -prompt-tokens
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=barrage_targets::MAX_LENGTH))]
    pub prefix_tokens: u64,
    /// The seed of -dataset-random's rows and of synthetic prompts and lengths: one seed, the same bodies
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Read one target per request instead of all up front
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub lazy: bool,
    /// Output file, or a collector: tcp://HOST:PORT or tls://HOST:PORT (barrage collect; the token from BARRAGE_TOKEN)
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// With -output tcp://: where the stream is kept while it is sent, and resent from after a drop (default: a file in the temporary directory, removed once the collector holds it all)
    #[arg(long)]
    pub spool: Option<PathBuf>,
    /// Connections opened to each host before the clock starts, at rates above 1000/s (vegeta's initial workers)
    #[arg(long, default_value_t = DEFAULT_WORKERS, value_parser = parse_count, allow_hyphen_values = true)]
    pub workers: u64,
    /// Maximum requests in flight (default unlimited)
    #[arg(long)]
    pub max_workers: Option<u64>,
    /// -format flow: how long sessions in flight may go on after the end of -duration or a first Ctrl-C to finish (k6's gracefulStop); a session whose next step would start later is counted as interrupted
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub grace: Duration,
    /// The answer time the host's limits are sized for (requests in flight = rate x this, twice over): the check before the attack and doctor fail a plan only past that, and warn of -timeout's worst case [default: 100ms]
    #[arg(long, value_parser = parse_duration)]
    pub expect_latency: Option<Duration>,
    /// Run a plan this host cannot come near (a rate a hundred times what its cores send) instead of refusing it
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub force: bool,
    /// Idle connections kept per host
    #[arg(long, default_value_t = DEFAULT_CONNECTIONS)]
    pub connections: usize,
    /// Maximum connections in use at once (0 = unlimited)
    #[arg(long, default_value_t = 0)]
    pub max_connections: usize,
    /// Limit on a whole request, body included (0 = none)
    #[arg(long, default_value_t = GoDuration(barrage_client::DEFAULT_TIMEOUT), value_parser = parse_go_duration, allow_hyphen_values = true)]
    pub timeout: GoDuration,
    /// Reuse connections
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true", action = ArgAction::Set)]
    pub keepalive: bool,
    /// Offer HTTP/2 on TLS connections (ALPN)
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true", action = ArgAction::Set)]
    pub http2: bool,
    /// HTTP/2 over cleartext with prior knowledge
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub h2c: bool,
    /// HTTP/3 over QUIC with prior knowledge for https:// targets
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub http3: bool,
    /// Most requests at once on one HTTP/3 connection (0 = the server's limit)
    #[arg(long = "h3-streams", default_value_t = 0)]
    pub h3_streams: usize,
    /// Do not verify server certificates
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub insecure: bool,
    /// Client certificate (PEM)
    #[arg(long)]
    pub cert: Option<PathBuf>,
    /// Client private key (PEM; default: the -cert file)
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Comma-separated PEM files that replace the system roots
    #[arg(long, value_delimiter = ',')]
    pub root_certs: Vec<PathBuf>,
    /// Send request bodies with Transfer-Encoding: chunked
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub chunked: bool,
    /// Resume TLS sessions on new connections (default: full handshakes)
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub session_tickets: bool,
    /// Redirects to follow (-1 = do not follow; the 3xx counts as success)
    #[arg(long, default_value_t = DEFAULT_REDIRECTS, allow_negative_numbers = true)]
    pub redirects: i64,
    /// Request header for every target, "Name: value" (repeatable)
    #[arg(long = "header", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
    /// Header for the CONNECT request to an HTTPS_PROXY, "Name: value" (repeatable)
    #[arg(long = "proxy-header", value_parser = parse_header)]
    pub proxy_headers: Vec<(String, String)>,
    /// Body file for targets without one
    #[arg(long)]
    pub body: Option<PathBuf>,
    /// Body for targets without one, given inline (as curl's -d and k6's scripts write it): -body-text '{"user":"ann"}'
    #[arg(long, conflicts_with = "body", allow_hyphen_values = true)]
    pub body_text: Option<String>,
    /// Local IP addresses or CIDR ranges to connect from (comma-separated or repeated; used in turn for new connections)
    #[arg(long, value_delimiter = ',', value_parser = parse_laddr)]
    pub laddr: Vec<Vec<std::net::IpAddr>>,
    /// HTTP/1.1 engine: barrage (its own) or hyper
    #[arg(long = "h1-engine", default_value = "barrage")]
    pub h1_engine: barrage_client::H1Engine,
    /// How connections' bytes move: uring (io_uring), epoll, ring (HTTP/1.1 on worker threads that park in io_uring_enter; https:// with -http2=false), or auto (ring for http:// targets, a -mix's too, and https:// with -http2=false, where the other flags allow it; else io_uring for -rate 0, epoll when paced). BARRAGE_IO overrides it
    #[arg(long = "io", default_value = "auto")]
    pub io: barrage_client::IoMode,
    /// Longest response head read, in bytes (sizes like 1MB); larger is an error result
    #[arg(long, default_value = "64KiB", value_parser = parse_header_bytes)]
    pub max_header_bytes: usize,
    /// Requests written on an HTTP/1.1 connection before their answers (closed model)
    #[arg(long, default_value_t = barrage_client::DEFAULT_PIPELINE, value_parser = parse_pipeline)]
    pub pipeline: usize,
    /// Connect to this Unix socket instead of each URL's host
    #[arg(long)]
    pub unix_socket: Option<PathBuf>,
    /// src_host:port:dst_host:port: connect there instead (repeatable; several for one src are used in turn)
    #[arg(long = "connect-to")]
    pub connect_to: Vec<barrage_client::ConnectTo>,
    /// Keep a host name's addresses this long (-1 = look up every new connection, 0 = for the whole attack)
    #[arg(long, default_value = "0s", value_parser = parse_dns_ttl, allow_hyphen_values = true)]
    pub dns_ttl: DnsTtl,
    /// Comma-separated DNS servers, ip[:port], that replace the system's
    #[arg(long, value_delimiter = ',', value_parser = parse_resolver)]
    pub resolvers: Vec<std::net::SocketAddr>,
    /// Which of a host's addresses new connections go to: first, rr (each in turn) or random
    #[arg(long = "dns-select", default_value = "rr")]
    pub dns_select: barrage_client::DnsSelect,
    /// Attack name, stored in results and sent as X-Barrage-Attack
    #[arg(long, default_value = "")]
    pub name: String,
    /// Response body bytes kept per result (-1 = all, up to 128MiB; sizes like 10KB)
    #[arg(long, default_value = "0", value_parser = size::parse, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub max_body: i64,
    /// GRPC targets: a descriptor set (protoc --descriptor_set_out, buf build -o) to convert JSON request bodies with
    #[arg(long)]
    pub proto_set: Option<String>,
    /// GRPC targets: a .proto file, compiled here (no protoc needed), to convert JSON request bodies with, as -proto-set does
    #[arg(long, conflicts_with = "proto_set")]
    pub proto: Option<String>,
    /// With -proto: where its imports are looked for (repeatable; default: the file's own directory)
    #[arg(long)]
    pub import_path: Vec<String>,
    /// GRPC targets: the largest answer message read (larger: an error record, RESOURCE_EXHAUSTED)
    #[arg(long, default_value = "4MiB", value_parser = parse_limit)]
    pub grpc_max_message: i64,
    /// ws:// and wss:// targets: hold this many connections open instead (opened at -rate a second, held for -duration; closed with a close frame at the end or on Ctrl-C)
    #[arg(long, value_parser = parse_count)]
    pub hold: Option<u64>,
    /// With -hold: each held connection sends its target's message (a ping without a body) this often, and its reply is recorded (default: never)
    #[arg(long, value_parser = parse_duration)]
    pub hold_every: Option<Duration>,
    /// ws:// and wss:// targets: send the body as a text or binary frame
    #[arg(long, default_value = "text")]
    pub ws_frame: barrage_client::WsFrame,
    /// ws:// and wss:// targets: the largest message read (larger: an error record)
    #[arg(long, default_value = "64MiB", value_parser = parse_limit)]
    pub ws_max_message: i64,
    /// ws:// and wss:// targets: after its message (none without a body), a request waits for this many server messages, each an event stamped as -stream stamps them (subscribe-then-stream APIs)
    #[arg(long, default_value_t = 0)]
    pub ws_events: u32,
    /// Read answers as streams of events, each stamped: sse (text/event-stream), ndjson (a line each), chunks (an HTTP/1.1 chunk or HTTP/2 DATA frame each) or auto (by Content-Type)
    #[arg(long)]
    pub stream: Option<barrage_client::StreamMode>,
    /// With -stream: events stamped per result (more are counted, not stamped)
    #[arg(long, default_value_t = 100_000, value_parser = parse_count)]
    pub max_events: u64,
    /// With -stream: the longest event (a longer one fails the result; sizes like 64KiB)
    #[arg(long, default_value = "1MiB", value_parser = parse_limit)]
    pub max_event_bytes: i64,
    /// With -stream sse or ndjson: count only events whose data is JSON holding this path, e.g. .choices[0].delta (skips keep-alives and [DONE])
    #[arg(long)]
    pub event_filter: Option<String>,
    /// Read streamed answers as an LLM server's chunks: openai (chat and text completions, as vLLM, SGLang, TGI or llama.cpp stream them). A token event is a chunk carrying generated text, not the role, finish or usage chunks; the server's usage is kept beside the chunks' count. Implies -stream sse
    #[arg(long)]
    pub llm: Option<barrage_client::Llm>,
    /// With -llm: the usage asked for in each streaming JSON body (stream_options, unless the body has its own): continuous (the final usage, and per chunk where the server gives it, as vLLM does), final, or none (the body as it is)
    #[arg(long, default_value = "continuous")]
    pub llm_usage: barrage_client::LlmUsage,
    /// Keep response headers in results
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub keep_headers: bool,
    /// A condition a response must meet to succeed (repeatable): status=200 (2xx, 200-299,404), body~REGEX, header:Name~REGEX, json:.path==VALUE (or !=); a failure is an error record "check failed: ..."
    #[arg(long = "check")]
    pub checks: Vec<barrage_client::Check>,
    /// Worker threads (0: one per core; in the open model with keep-alive, one per 30,000 requests/s of the peak rate, up to one per core)
    #[arg(long, default_value_t = 0)]
    pub cpus: usize,
    /// Live progress on stderr: a line redrawn on a terminal (the default there), one line a second elsewhere; -progress=false for none
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub progress: Option<bool>,
}

/// `barrage sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Open-model steps, requests per second: 1000,2000,5000 or 1000..20000/+1000 or 500..64000/x2
    #[arg(long, value_parser = parse_rates, conflicts_with = "concurrency")]
    pub rates: Option<Steps>,
    /// Closed-model steps, connections each with a request in flight: 200,500,1000 (or ranges as -rates)
    #[arg(long, value_parser = parse_concurrency)]
    pub concurrency: Option<Steps>,
    /// How long each step is measured
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub step_duration: Duration,
    /// End each step once a figure is sure, as attack -until does ('p99±5%'): a step at a steady load is short, a noisy one runs to -step-duration
    #[arg(long)]
    pub step_until: Option<barrage_metrics::Until>,
    /// Idle time between steps
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub pause: Duration,
    /// Stop after the first step where a condition holds (-fail-on's grammar), e.g. 'p99>250ms,success<99%'
    #[arg(long, value_parser = parse_conditions)]
    pub stop_on: Option<Conditions>,
    /// Search for the highest load where all conditions hold, e.g. 'p99<=250ms,success>=99.9%': from the first step, doubling until one fails, then halving the gap
    #[arg(long, value_parser = parse_conditions)]
    pub find_max: Option<Conditions>,
    /// Objectives each request must meet, e.g. 'latency<=200ms,first<=100ms,success' (an LLM stream's, -llm: 'ttft<=200ms,tpot<=25ms,e2e<=10s'): the search finds the highest load where at least -attain of the requests meet them all (its goodput), each step decided on the 95% interval of that share
    #[arg(long)]
    pub slo: Option<barrage_metrics::Slo>,
    /// With -slo: the share of requests that must meet it; a step whose interval straddles it runs on, up to three -step-duration, then is undecided
    #[arg(long, default_value = "99%", value_parser = parse_precision)]
    pub attain: f64,
    /// -find-max stops when the failing load is within this share above the holding one
    #[arg(long, default_value = "5%", value_parser = parse_precision)]
    pub precision: f64,
    /// A step whose lag p99 is above this (or that sent under 95% of its rate) is generator-bound
    #[arg(long, default_value = "10ms", value_parser = parse_duration)]
    pub lag_limit: Duration,
    /// Table type: text, json or csv
    #[arg(long = "type", default_value = "text")]
    pub kind: barrage_sweep::Format,
    /// Also write the chart (throughput, latency and success against load) to this HTML file
    #[arg(long)]
    pub chart: Option<PathBuf>,
    /// Title of the chart page
    #[arg(long, default_value = "Barrage Sweep")]
    pub title: String,
    /// Redraw the table (and -chart) from a saved sweep's results instead of attacking
    #[arg(long)]
    pub from: Option<String>,
    /// The attack's own flags.
    #[command(flatten)]
    pub attack: AttackArgs,
}

/// `barrage report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Report type: text, json, hist[BUCKETS] (or hist with -buckets), hdrplot, plot (HTML, as the plot command)
    #[arg(long = "type", default_value = "text")]
    pub kind: barrage_report::ReportType,
    /// Histogram buckets, e.g. '[0,1ms,5ms,10ms]' (for hist, and added to json)
    #[arg(long, value_parser = parse_buckets)]
    pub buckets: Option<barrage_metrics::Buckets>,
    /// Print the figures of each interval while reading (e.g. 1s), then the whole report
    #[arg(long, value_parser = parse_duration)]
    pub every: Option<Duration>,
    /// When the inputs are shards of one schedule (-shard i/n): warn on stderr when one's lag p50 or schedule is this far from the others'
    #[arg(long, default_value = "10ms", value_parser = parse_duration)]
    pub max_skew: Duration,
    /// Which latency the main figures show: actual (from the send, as vegeta), intended (from the scheduled time), first-byte (from the send to the response's head), ttft or ttft-intended (a stream's first token, from the send or the schedule)
    #[arg(long, default_value = "actual")]
    pub latency: barrage_metrics::LatencyView,
    /// Latency percentiles to show
    #[arg(long, default_value = "50,90,95,99")]
    pub percentiles: barrage_report::Percentiles,
    /// One report per url, method, code, attack, error, grpc-status, proto, name (a target's :name), remote (the connection's address), conn (new or reused), step (a flow's step) or phase (live control's changes: -control), plus the total
    #[arg(long)]
    pub by: Option<barrage_metrics::GroupBy>,
    /// Which status codes succeed: classes, codes and ranges, e.g. 2xx,3xx or 200-299,404
    #[arg(long, default_value = "2xx,3xx")]
    pub success: barrage_metrics::SuccessRule,
    /// Exit 3 when a condition holds, e.g. 'success<99.9%,p99>250ms,lag.p99>5ms' (with -format flow also session_success<99% and session.p99>2s; with -llm ttft.p99>2s, tpot.p99>50ms, itl, e2e and their _sched; 'valid' when the verdict is NOT VALID)
    #[arg(long, value_parser = parse_fail_on)]
    pub fail_on: Option<FailOn>,
    /// The verdict's thresholds, e.g. 'lag=5ms,cpu=70%': name only those to change (defaults: lag=10ms, rate=90%, cpu=80%, wait=10%, stacked=10%, tail=10, trend=50%)
    #[arg(long, default_value = "")]
    pub limits: barrage_metrics::Limits,
    /// Significant digits of the percentiles: 3 (within 0.1% of the sorted values), 4 (0.01%, 16 times the memory) or 5 (0.001%, 128 times)
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(3..=5))]
    pub precision: u8,
    /// Show each figure's 95% interval from the run itself (a block bootstrap over its time; JSON and HTML always have them)
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub intervals: bool,
    /// Leave out the run's first DURATION (records scheduled within it of the first), or 'auto': the warm-up the records show (MSER; reads its files twice, not stdin)
    #[arg(long, value_parser = parse_warmup)]
    pub warmup: Option<WarmupFlag>,
    /// Objectives each request must meet, e.g. 'latency<=200ms,first<=100ms,success' (an LLM stream's, -llm: 'ttft<=200ms,tpot<=25ms,e2e<=10s'): the report adds the share that met them all (attainment), those a second (goodput), its 95% interval and its decision against -attain
    #[arg(long)]
    pub slo: Option<barrage_metrics::Slo>,
    /// With -slo: the share of requests that must meet it
    #[arg(long, default_value = "99%", value_parser = parse_precision)]
    pub attain: f64,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Result files (default: stdin)
    pub files: Vec<String>,
}

/// `barrage targets`.
#[derive(Args, Debug)]
pub struct TargetsArgs {
    /// Input format: http, json, curl or har
    #[arg(long, default_value = "http")]
    pub format: Format,
    /// Output format: json or http
    #[arg(long, default_value = "json")]
    pub to: Format,
    /// With -to http: the directory that gets each body as a file (body-N.bin, N counting targets from 1)
    #[arg(long)]
    pub bodies: Option<std::path::PathBuf>,
    /// With -format har: keep only the requests whose URL matches this regular expression
    #[arg(long, value_parser = parse_filter)]
    pub har_filter: Option<barrage_targets::Filter>,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Targets file (default: stdin)
    pub file: Option<String>,
}

/// `barrage dump`.
#[derive(Args, Debug)]
pub struct DumpArgs {
    /// Output encoding: csv or json
    #[arg(long, default_value = "json", value_parser = parse_dumper)]
    pub dumper: Encoding,
    /// Comma-separated input files (default: stdin)
    #[arg(long, value_delimiter = ',')]
    pub inputs: Vec<String>,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Result files
    pub files: Vec<String>,
}

/// `barrage plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// Title of the page and chart
    #[arg(long, default_value = barrage_plot::DEFAULT_TITLE)]
    pub title: String,
    /// Most points drawn per series (each slice of time keeps its lowest and highest latency); 0 draws every record
    #[arg(long, default_value_t = barrage_plot::DEFAULT_THRESHOLD)]
    pub threshold: usize,
    /// Which latency to plot: actual (from the send, as vegeta), intended (from the scheduled time, at the scheduled time), first-byte (from the send to the response's head), ttft or ttft-intended (a stream's first token)
    #[arg(long, default_value = "actual")]
    pub latency: barrage_metrics::LatencyView,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Result files (default: stdin)
    pub files: Vec<String>,
}

/// `barrage encode`.
#[derive(Args, Debug)]
pub struct EncodeArgs {
    /// Output encoding: json, csv or bin (barrage's binary stream)
    #[arg(long, default_value = "json")]
    pub to: Encoding,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Result files (default: stdin)
    pub files: Vec<String>,
}

/// `barrage serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (loopback)
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: std::net::SocketAddr,
    /// Delay before each response
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub delay: Duration,
    /// Response body
    #[arg(long, default_value = "hello\n")]
    pub body: String,
    /// Answers a second served; the rest get 503 at once (a limit for sweep to find)
    #[arg(long, value_parser = parse_capacity)]
    pub capacity: Option<f64>,
    /// With -capacity: the rest wait their turn in an unbounded queue instead of a 503 (latency then grows while the load is above capacity)
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set, requires = "capacity")]
    pub queue: bool,
}

#[cfg(test)]
mod tests;
