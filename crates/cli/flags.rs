//! Command-line flags in vegeta's spelling: `-rate 5000`, `-rate=5000`,
//! `--rate 5000` and `--rate=5000` all work, because single-dash long flags
//! are rewritten to double-dash before clap sees them.

use std::{ffi::OsString, path::PathBuf, time::Duration};

use barrage_attack::{DEFAULT_CONNECTIONS, DEFAULT_REDIRECTS, DEFAULT_WORKERS};
use barrage_model::{duration, size, Rate, Stages};
use barrage_stream::Encoding;
use barrage_targets::Format;
use clap::{ArgAction, Args, Parser, Subcommand};

/// A duration shown in Go's notation (`30s`), for defaults given as a
/// `Duration` where they are defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoDuration(pub Duration);

impl std::fmt::Display for GoDuration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&duration::format(self.0.as_nanos() as i64))
    }
}

/// A Go duration flag value as a [`GoDuration`].
pub fn parse_go_duration(s: &str) -> Result<GoDuration, String> {
    parse_duration(s).map(GoDuration)
}

/// Rewrites `-name` and `-name=value` to `--name…` so clap parses vegeta's
/// single-dash long flags. Negative numbers (`-1`) and one-letter flags
/// (`-h`) are left alone, as is everything after `--`.
pub fn normalize(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut rest = false;
    for (i, arg) in args.into_iter().enumerate() {
        if i == 0 || rest {
            out.push(arg);
            continue;
        }
        let Some(s) = arg.to_str() else {
            out.push(arg);
            continue;
        };
        if s == "--" {
            rest = true;
            out.push(arg);
            continue;
        }
        let b = s.as_bytes();
        let name_len = s[1.min(s.len())..].split('=').next().map_or(0, str::len);
        if b.len() > 2 && b[0] == b'-' && b[1].is_ascii_alphabetic() && name_len > 1 {
            out.push(format!("-{s}").into());
        } else {
            out.push(arg);
        }
    }
    out
}

/// A clap error line with its flags spelled as the user typed them
/// (`'--bogus'` back to `'-bogus'`, `'--rate <RATE>'` to `'-rate'`), and
/// the subcommand it is about, if any.
pub fn as_typed(line: &str, typed: &[String]) -> (String, Option<String>) {
    const COMMANDS: [&str; 9] = [
        "attack",
        "sweep",
        "report",
        "dump",
        "encode",
        "plot",
        "serve",
        "completions",
        "man",
    ];
    let command = typed
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|a| COMMANDS.contains(&a.as_str()))
        .cloned();
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("'--") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 3..];
        let end = after.find('\'').unwrap_or(after.len());
        let quoted = &after[..end];
        let name = quoted.split([' ', '=']).next().unwrap_or(quoted);
        // The spelling typed for this flag: one dash or two (one, as in
        // vegeta, when it was not typed at all).
        let dashes = typed
            .iter()
            .skip(1)
            .find_map(|a| {
                let bare = a.trim_start_matches('-');
                let flag = bare.split('=').next().unwrap_or(bare);
                (flag == name && a.starts_with('-')).then(|| &a[..a.len() - bare.len()])
            })
            .unwrap_or("-");
        out.push('\'');
        out.push_str(dashes);
        out.push_str(name);
        out.push('\'');
        rest = after.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    (out, command)
}

/// Help text with long flags in the one-dash spelling the README uses
/// (`-rate`, not `--rate`; both work).
pub fn one_dash_help(help: &str) -> String {
    let mut out = String::with_capacity(help.len());
    for line in help.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        let body = &line[indent..];
        out.push_str(&line[..indent]);
        if let Some(flag) = body
            .strip_prefix("--")
            .filter(|f| f.starts_with(|c: char| c.is_ascii_alphabetic()))
        {
            out.push('-');
            out.push_str(flag);
        } else if let Some(rest) = body.strip_prefix("-h, --") {
            out.push_str("-h, -");
            out.push_str(rest);
        } else if let Some(rest) = body.strip_prefix("-V, --") {
            out.push_str("-V, -");
            out.push_str(rest);
        } else {
            out.push_str(body);
        }
    }
    out
}

/// `-requests` and `-workers`: a whole number of at least 1.
pub fn parse_count(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{s:?} is not a whole number of at least 1")),
    }
}

/// `-max-header-bytes`: a size from 1 KB to 64 MiB.
pub fn parse_header_bytes(s: &str) -> Result<usize, String> {
    match size::parse(s).map_err(|e| e.to_string())? {
        n if n < 1024 => Err(format!("{s:?} is under 1KB")),
        n if n as usize > barrage_attack::MAX_HEAD_BYTES => Err(format!("{s:?} is over 64MiB")),
        n => Ok(n as usize),
    }
}

/// `-pipeline`: 1 to 1024 requests per connection.
pub fn parse_pipeline(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("{s:?} is not a number from 1 to 1024")),
    }
}

/// A Go duration flag value (`30s`, `1m30s`, `0`); negatives refused.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let ns = duration::parse(s).map_err(|e| e.to_string())?;
    if ns < 0 {
        return Err(format!("negative duration {s:?}"));
    }
    Ok(Duration::from_nanos(ns as u64))
}

/// `-dns-ttl`: how long looked-up addresses are kept; `None`: not at all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DnsTtl(pub Option<Duration>);

/// `-dns-ttl`: a duration (0 = for ever), or any negative value (no cache).
pub fn parse_dns_ttl(s: &str) -> Result<DnsTtl, String> {
    if s.trim() == "-1" {
        return Ok(DnsTtl(None));
    }
    let ns = duration::parse(s).map_err(|e| e.to_string())?;
    Ok(DnsTtl((ns >= 0).then(|| Duration::from_nanos(ns as u64))))
}

/// One `-resolvers` server: `ip:port`, `[ipv6]:port`, or an IP (port 53).
pub fn parse_resolver(s: &str) -> Result<std::net::SocketAddr, String> {
    let s = s.trim();
    s.parse()
        .or_else(|_| s.parse::<std::net::IpAddr>().map(|ip| (ip, 53).into()))
        .map_err(|_| format!("bad resolver {s:?} (use ip:port)"))
}

/// `-stages`.
pub fn parse_stages(s: &str) -> Result<Stages, String> {
    s.parse().map_err(|e: barrage_model::StagesError| e.why)
}

/// `-header "Name: value"`: split at the first colon, neither part empty.
pub fn parse_header(s: &str) -> Result<(String, String), String> {
    match s.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
        Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("bad header {s:?} (use \"Name: value\")")),
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "barrage",
    version,
    term_width = 0,
    about = "HTTP load testing toolchain: attack at a constant rate, then report or dump the results",
    after_help = "Flags take one or two dashes: -rate 100, -rate=100, --rate 100.\n\nExample:\n  echo \"GET http://127.0.0.1:8080/\" | barrage attack -rate 100 -duration 5s | barrage report"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Send requests at a fixed rate; write one binary result per request
    Attack(Box<AttackArgs>),
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
    /// Serve a tiny HTTP target on loopback, for trying barrage out
    Serve(ServeArgs),
    /// Convert targets: curl commands or a HAR file into vegeta's JSON or http format, http into JSON and back
    Targets(TargetsArgs),
    /// Print a shell completion script: barrage completions bash > /etc/bash_completion.d/barrage
    Completions(CompletionsArgs),
    /// Print the manual page (roff): barrage man > barrage.1
    Man,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell
    pub shell: clap_complete::Shell,
}

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
    /// Serve Prometheus metrics of the records so far at http://ADDR/metrics while the attack runs (e.g. 127.0.0.1:8880)
    #[arg(long)]
    pub prometheus_addr: Option<std::net::SocketAddr>,
    /// How long to attack (0 = until stopped or, with -lazy, until targets run out)
    #[arg(long, default_value = "0s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Stop after scheduling this many requests (with -duration, whichever comes first)
    #[arg(long, value_parser = parse_count, allow_hyphen_values = true)]
    pub requests: Option<u64>,
    /// Targets file
    #[arg(long, default_value = "stdin")]
    pub targets: String,
    /// Targets format: http, json, curl (curl command lines, as "Copy as cURL" gives them) or har (a HAR 1.2 file's requests)
    #[arg(long, default_value = "http")]
    pub format: Format,
    /// With -format har: keep only the requests whose URL matches this regular expression
    #[arg(long)]
    pub har_filter: Option<barrage_targets::Filter>,
    /// A CSV file with a header line: {{column}} in targets takes the value of row seq % rows (or a random row with -feed-random)
    #[arg(long)]
    pub feed: Option<String>,
    /// With -feed: a random row for each request
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub feed_random: bool,
    /// Read one target per request instead of all up front
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub lazy: bool,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Connections opened to each host before the clock starts, at rates above 1000/s (vegeta's initial workers)
    #[arg(long, default_value_t = DEFAULT_WORKERS, value_parser = parse_count, allow_hyphen_values = true)]
    pub workers: u64,
    /// Maximum requests in flight (default unlimited)
    #[arg(long)]
    pub max_workers: Option<u64>,
    /// Idle connections kept per host
    #[arg(long, default_value_t = DEFAULT_CONNECTIONS)]
    pub connections: usize,
    /// Maximum connections in use at once (0 = unlimited)
    #[arg(long, default_value_t = 0)]
    pub max_connections: usize,
    /// Limit on a whole request, body included (0 = none)
    #[arg(long, default_value_t = GoDuration(barrage_attack::DEFAULT_TIMEOUT), value_parser = parse_go_duration, allow_hyphen_values = true)]
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
    /// Local IP addresses to connect from (comma-separated or repeated; used in turn for new connections)
    #[arg(long, value_delimiter = ',')]
    pub laddr: Vec<std::net::IpAddr>,
    /// HTTP/1.1 engine: barrage (its own) or hyper
    #[arg(long = "h1-engine", default_value = "barrage")]
    pub h1_engine: barrage_attack::H1Engine,
    /// Longest response head read, in bytes (sizes like 1MB); larger is an error result
    #[arg(long, default_value = "64KiB", value_parser = parse_header_bytes)]
    pub max_header_bytes: usize,
    /// Requests written on an HTTP/1.1 connection before their answers (closed model)
    #[arg(long, default_value_t = barrage_attack::DEFAULT_PIPELINE, value_parser = parse_pipeline)]
    pub pipeline: usize,
    /// Connect to this Unix socket instead of each URL's host
    #[arg(long)]
    pub unix_socket: Option<PathBuf>,
    /// src_host:port:dst_host:port: connect there instead (repeatable; several for one src are used in turn)
    #[arg(long = "connect-to")]
    pub connect_to: Vec<barrage_attack::ConnectTo>,
    /// Keep a host name's addresses this long (-1 = look up every new connection, 0 = for the whole attack)
    #[arg(long, default_value = "0s", value_parser = parse_dns_ttl, allow_hyphen_values = true)]
    pub dns_ttl: DnsTtl,
    /// Comma-separated DNS servers, ip[:port], that replace the system's
    #[arg(long, value_delimiter = ',', value_parser = parse_resolver)]
    pub resolvers: Vec<std::net::SocketAddr>,
    /// Attack name, stored in results and sent as X-Barrage-Attack
    #[arg(long, default_value = "")]
    pub name: String,
    /// Response body bytes kept per result (-1 = all, up to 128MiB; sizes like 10KB)
    #[arg(long, default_value = "0", value_parser = size::parse, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub max_body: i64,
    /// GRPC targets: a descriptor set (protoc --descriptor_set_out, buf build -o) to convert JSON request bodies with
    #[arg(long)]
    pub proto_set: Option<String>,
    /// GRPC targets: the largest answer message read (larger: an error record, RESOURCE_EXHAUSTED)
    #[arg(long, default_value = "4MiB", value_parser = size::parse)]
    pub grpc_max_message: i64,
    /// ws:// and wss:// targets: hold this many connections open instead (opened at -rate a second, held for -duration; closed with a close frame at the end or on Ctrl-C)
    #[arg(long, value_parser = parse_count)]
    pub hold: Option<u64>,
    /// With -hold: each held connection sends its target's message (a ping without a body) this often, and its reply is recorded (default: never)
    #[arg(long, value_parser = parse_duration)]
    pub hold_every: Option<Duration>,
    /// ws:// and wss:// targets: send the body as a text or binary frame
    #[arg(long, default_value = "text")]
    pub ws_frame: barrage_attack::WsFrame,
    /// ws:// and wss:// targets: the largest message read (larger: an error record)
    #[arg(long, default_value = "64MiB", value_parser = size::parse)]
    pub ws_max_message: i64,
    /// Keep response headers in results
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub keep_headers: bool,
    /// A condition a response must meet to succeed (repeatable): status=200 (2xx, 200-299,404), body~REGEX, header:Name~REGEX, json:.path==VALUE (or !=); a failure is an error record "check failed: ..."
    #[arg(long = "check")]
    pub checks: Vec<barrage_attack::Check>,
    /// Runtime threads (0 = one per core)
    #[arg(long, default_value_t = 0)]
    pub cpus: usize,
    /// Live progress on stderr: a line redrawn on a terminal (the default there), one line a second elsewhere; -progress=false for none
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub progress: Option<bool>,
}

/// `-find-max` and `-stop-on`: conditions in `-fail-on`'s grammar, and
/// their text as typed.
#[derive(Clone, Debug)]
pub struct Conditions(pub Vec<barrage_metrics::Threshold>, pub String);

/// Parses `-find-max` and `-stop-on`.
pub fn parse_conditions(s: &str) -> Result<Conditions, barrage_metrics::ParseError> {
    let list = barrage_metrics::Threshold::parse_list(s)?;
    if list.is_empty() {
        return Err(barrage_metrics::ParseError::from(
            "no condition".to_string(),
        ));
    }
    Ok(Conditions(list, s.trim().to_string()))
}

/// A sweep's steps (a newtype: clap reads `Option<Vec<_>>` as a flag
/// given several times).
#[derive(Clone, Debug)]
pub struct Steps(pub Vec<barrage_sweep::Load>);

/// `-rates`: open-model steps.
pub fn parse_rates(s: &str) -> Result<Steps, barrage_sweep::StepsError> {
    barrage_sweep::steps::parse(s, false).map(Steps)
}

/// `-concurrency`: closed-model steps.
pub fn parse_concurrency(s: &str) -> Result<Steps, barrage_sweep::StepsError> {
    barrage_sweep::steps::parse(s, true).map(Steps)
}

/// `-precision`: a share, as `5%` or `0.05`, above 0 and below 1.
pub fn parse_precision(s: &str) -> Result<f64, String> {
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => s.trim().parse::<f64>(),
    };
    match v {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a share between 0 and 100% (such as 5%)"
        )),
    }
}

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
    /// The first part of each step: sent and written (as "NAME warmup"), left out of its figures
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Idle time between steps
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub pause: Duration,
    /// Stop after the first step where a condition holds (-fail-on's grammar), e.g. 'p99>250ms,success<99%'
    #[arg(long, value_parser = parse_conditions)]
    pub stop_on: Option<Conditions>,
    /// Search for the highest load where all conditions hold, e.g. 'p99<=250ms,success>=99.9%': from the first step, doubling until one fails, then halving the gap
    #[arg(long, value_parser = parse_conditions)]
    pub find_max: Option<Conditions>,
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
    #[command(flatten)]
    pub attack: AttackArgs,
}

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
    /// Which latency the main figures show: actual (from the send, as vegeta), intended (from the scheduled time) or first-byte (from the send to the response's head)
    #[arg(long, default_value = "actual")]
    pub latency: barrage_metrics::LatencyView,
    /// Latency percentiles to show
    #[arg(long, default_value = "50,90,95,99")]
    pub percentiles: barrage_report::Percentiles,
    /// One report per url, method, code, attack, error or grpc-status, plus the total
    #[arg(long)]
    pub by: Option<barrage_metrics::GroupBy>,
    /// Which status codes succeed: classes, codes and ranges, e.g. 2xx,3xx or 200-299,404
    #[arg(long, default_value = "2xx,3xx")]
    pub success: barrage_metrics::SuccessRule,
    /// Exit 3 when a condition holds, e.g. 'success<99.9%,p99>250ms,lag.p99>5ms'
    #[arg(long, value_parser = parse_fail_on)]
    pub fail_on: Option<FailOn>,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Result files (default: stdin)
    pub files: Vec<String>,
}

/// `-buckets`.
pub fn parse_buckets(s: &str) -> Result<barrage_metrics::Buckets, barrage_metrics::ParseError> {
    barrage_metrics::Buckets::parse(s)
}

/// `-fail-on`'s conditions.
#[derive(Clone, Debug, Default)]
pub struct FailOn(pub Vec<barrage_metrics::Threshold>);

/// `-fail-on`: the conditions, all at once.
pub fn parse_fail_on(s: &str) -> Result<FailOn, barrage_metrics::ParseError> {
    barrage_metrics::Threshold::parse_list(s).map(FailOn)
}

/// `-dumper`: csv or json (`bin` is `encode -to`'s alone).
pub fn parse_dumper(s: &str) -> Result<Encoding, String> {
    match s.parse() {
        Ok(Encoding::Bin) | Err(_) => Err(format!("unknown encoding {s:?} (use csv or json)")),
        Ok(e) => Ok(e),
    }
}

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
    #[arg(long)]
    pub har_filter: Option<barrage_targets::Filter>,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Targets file (default: stdin)
    pub file: Option<String>,
}

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

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// Title of the page and chart
    #[arg(long, default_value = crate::plot::DEFAULT_TITLE)]
    pub title: String,
    /// Most points drawn per series (each slice of time keeps its lowest and highest latency); 0 draws every record
    #[arg(long, default_value_t = barrage_plot::DEFAULT_THRESHOLD)]
    pub threshold: usize,
    /// Which latency to plot: actual (from the send, as vegeta), intended (from the scheduled time, at the scheduled time) or first-byte (from the send to the response's head)
    #[arg(long, default_value = "actual")]
    pub latency: barrage_metrics::LatencyView,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// Result files (default: stdin)
    pub files: Vec<String>,
}

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
}

/// `serve -capacity`: answers a second, above 0.
pub fn parse_capacity(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches("/s").parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("{s:?} is not a rate above 0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        normalize(args.iter().map(OsString::from))
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect()
    }

    #[test]
    fn single_dash_long_flags_become_double() {
        assert_eq!(
            norm(&[
                "barrage",
                "attack",
                "-rate",
                "5",
                "-duration=1s",
                "--name",
                "x",
                "-h",
                "-redirects",
                "-1",
                "--",
                "-keep"
            ]),
            [
                "barrage",
                "attack",
                "--rate",
                "5",
                "--duration=1s",
                "--name",
                "x",
                "-h",
                "--redirects",
                "-1",
                "--",
                "-keep"
            ]
        );
    }

    #[test]
    fn every_spelling_parses() {
        for args in [
            ["barrage", "attack", "-rate", "7"],
            ["barrage", "attack", "-rate=7", ""],
            ["barrage", "attack", "--rate", "7"],
            ["barrage", "attack", "--rate=7", ""],
        ] {
            let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
            let cli = Cli::try_parse_from(normalize(args.iter().map(OsString::from))).unwrap();
            let Command::Attack(a) = cli.command else {
                panic!()
            };
            assert_eq!(a.rate.per_second(), 7.0, "{args:?}");
        }
    }

    #[test]
    fn defaults_match_vegeta() {
        let cli = Cli::try_parse_from(["barrage", "attack"]).unwrap();
        let Command::Attack(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.rate.per_second(), 50.0);
        assert_eq!(a.timeout.0, Duration::from_secs(30));
        assert_eq!((a.workers, a.connections, a.redirects), (10, 10_000, 10));
        assert!(a.keepalive && a.http2 && !a.h2c && !a.insecure && !a.session_tickets);
        assert_eq!(a.dns_ttl, DnsTtl(Some(Duration::ZERO)), "cached for ever");
        assert_eq!(a.max_body, 0);
    }

    #[test]
    fn bools_take_go_syntax() {
        let cli = Cli::try_parse_from(normalize(
            [
                "barrage",
                "attack",
                "-keepalive=false",
                "-insecure",
                "-redirects",
                "-1",
                "-max-body",
                "-1",
            ]
            .map(OsString::from),
        ))
        .unwrap();
        let Command::Attack(a) = cli.command else {
            panic!()
        };
        assert!(!a.keepalive && a.insecure);
        assert_eq!((a.redirects, a.max_body), (-1, -1));
    }

    #[test]
    fn dns_ttl_values() {
        for (v, want) in [
            ("-1", None),
            ("-1s", None),
            ("0", Some(Duration::ZERO)),
            ("5s", Some(Duration::from_secs(5))),
            ("250ms", Some(Duration::from_millis(250))),
        ] {
            let cli = Cli::try_parse_from(normalize(
                ["barrage", "attack", &format!("-dns-ttl={v}")].map(OsString::from),
            ))
            .unwrap_or_else(|e| panic!("{v}: {e}"));
            let Command::Attack(a) = cli.command else {
                panic!()
            };
            assert_eq!(a.dns_ttl, DnsTtl(want), "{v}");
        }
        assert!(Cli::try_parse_from(["barrage", "attack", "-dns-ttl", "soon"]).is_err());
    }

    #[test]
    fn bad_values_are_refused() {
        for args in [
            ["barrage", "attack", "-rate", "-5"],
            ["barrage", "attack", "-duration", "-1s"],
            ["barrage", "attack", "-duration", "abc"],
            ["barrage", "attack", "-header", "nocolon"],
            ["barrage", "attack", "-max-body", "lots"],
            ["barrage", "attack", "-format", "yaml"],
            ["barrage", "attack", "-bogus", "1"],
        ] {
            assert!(
                Cli::try_parse_from(normalize(args.map(OsString::from))).is_err(),
                "{args:?}"
            );
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(size::parse("10KB"), Ok(10_000));
        assert_eq!(size::parse("2MiB"), Ok(2 << 20));
        assert_eq!(size::parse("-1"), Ok(-1));
        assert!(size::parse("-2").is_err());
    }
}
