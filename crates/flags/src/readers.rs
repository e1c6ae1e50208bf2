//! The flags of the commands that read result streams into something
//! else than a report: `compare` (two sides of runs) and `export` (pushes
//! to monitoring).

use std::time::Duration;

use clap::Args;

use crate::values::*;

/// `barrage compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Output type: text, json or html (the two latency spectra and time series overlaid)
    #[arg(long = "type", default_value = "text", value_parser = ["text", "json", "html"])]
    pub kind: String,
    /// Compare per url, method, code, attack, error, grpc-status, proto, name, remote, conn, step or phase (groups matched by key), plus the total
    #[arg(long)]
    pub by: Option<barrage_metrics::GroupBy>,
    /// Exit 3 when a change is significant and past its bound, e.g. 'p99>+5%,success<-0.1%' (figures: throughput, success, mean, p50, p90, p99, p99.9; max is shown, never judged)
    #[arg(long, allow_hyphen_values = true)]
    pub fail_on: Option<barrage_report::compare::Gate>,
    /// Seed of the bootstrap's redraws (the output is the same for the same seed)
    #[arg(long, default_value_t = barrage_report::compare::DEFAULT_SEED)]
    pub seed: u64,
    /// Which latency the figures use: actual, intended, first-byte, ttft (an LLM stream's time to first token, from the send) or ttft-intended (from the schedule)
    #[arg(long, default_value = "actual")]
    pub latency: barrage_metrics::LatencyView,
    /// Which status codes succeed: classes, codes and ranges, e.g. 2xx,3xx or 200-299,404
    #[arg(long, default_value = "2xx,3xx")]
    pub success: barrage_metrics::SuccessRule,
    /// The thresholds of each run's verdict (as report's): a change is not judged when a run is NOT VALID
    #[arg(long, default_value = "")]
    pub limits: barrage_metrics::Limits,
    /// Output file
    #[arg(long, default_value = "stdout")]
    pub output: String,
    /// BASE NEW: two result files; or the base's runs, then -- and the new side's runs (compare a1.bin a2.bin -- b1.bin b2.bin)
    pub files: Vec<String>,
    /// The new side's runs, after --
    #[arg(last = true)]
    pub new: Vec<String>,
}

/// `barrage export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Where to: prometheus-remote-write (the URL of its /api/v1/write), influx (the server's URL: 1.x /write?db=-db, or with -token 2.x /api/v2/write; a URL with a path is used as it is) or otlp (an OTLP/HTTP collector: its URL, /v1/metrics when no path is given)
    #[arg(long = "to", value_parser = ["prometheus-remote-write", "influx", "otlp"])]
    pub to: String,
    /// Records are folded per this much send time: one point per interval and label set
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Labels (tags) of each series: any of method, url, code, attack, name, error (its text; none on successes), comma-separated
    #[arg(long, default_value = "method,url,code,attack,error")]
    pub by: String,
    /// InfluxDB 1.x database
    #[arg(long, default_value = "barrage")]
    pub db: String,
    /// InfluxDB 2.x token: writes to /api/v2/write?org=-org&bucket=-bucket with it
    #[arg(long)]
    pub token: Option<String>,
    /// InfluxDB 2.x organization (with -token)
    #[arg(long, default_value = "barrage")]
    pub org: String,
    /// InfluxDB 2.x bucket (with -token)
    #[arg(long, default_value = "barrage")]
    pub bucket: String,
    /// Deadline of each write, the whole of it: connect, request and answer
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Attempts after a failed write (on a refused connection, a timeout, 5xx or 429), waiting 100 ms, then twice as long each time, or the endpoint's Retry-After
    #[arg(long, default_value_t = 3)]
    pub retries: u32,
    /// Which latency the figures use: actual, intended, first-byte, ttft (an LLM stream's time to first token, from the send) or ttft-intended (from the schedule)
    #[arg(long, default_value = "actual")]
    pub latency: barrage_metrics::LatencyView,
    /// Which status codes succeed (the rest count as errors)
    #[arg(long, default_value = "2xx,3xx")]
    pub success: barrage_metrics::SuccessRule,
    /// Also write latency as a native histogram, barrage_request_latency_seconds (schema 3), beside the classic buckets: for a Prometheus (2.40 or later) run with --enable-feature=native-histograms, which a receiver without it refuses
    #[arg(long)]
    pub native_histograms: bool,
    /// The endpoint's URL (http://)
    pub url: String,
    /// Result files (default: stdin)
    pub files: Vec<String>,
}
