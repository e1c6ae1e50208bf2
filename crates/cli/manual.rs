//! The manual's words beyond the flags: for each page (`barrage` and each
//! subcommand), sections drawn from the README (the formats, the exit
//! codes, examples), written as plain text and turned into roff here.
//! The flags themselves come from their definitions (clap_mangen).

/// A section: its title and its paragraphs. A paragraph whose lines all
/// start with two spaces is an example, set as it is.
pub struct Section {
    pub title: &'static str,
    pub text: &'static str,
}

const EXIT: Section = Section {
    title: "EXIT STATUS",
    text: "0  done; a graceful stop on the first Ctrl-C or SIGTERM; a closed stdout pipe.

1  the tool's own I/O failed: a file named on the command line cannot be opened or written, the disk is full; doctor: the plan does not fit this host.

2  bad usage or input: flags, targets, not a result stream, a newer stream version, a corrupt or truncated stream (for truncation the report is still printed), an input whose attack failed before its first request.

3  a -fail-on condition held (report), or a sweep's limit was crossed; the report is printed first.

130  a hard stop on a second Ctrl-C; what finished is written, the abandoned are counted on stderr.",
};

const TARGETS: Section = Section {
    title: "TARGET FORMATS",
    text: "http (the default, vegeta's): a request line METHOD URL, header lines Name: value, an optional @FILE body line, and a blank line between targets. @ paths are read from the working directory, as in vegeta. Lines starting with # are comments.

  POST http://127.0.0.1:8080/api
  Content-Type: application/json
  @body.json

  GET http://127.0.0.1:8080/health

json: one object a line (the body in base64):

  {\"method\":\"GET\",\"url\":\"http://127.0.0.1:8080/\",\"header\":{\"X\":[\"1\"]},\"body\":\"\"}

curl: curl command lines as a browser's \"Copy as cURL\" gives them (-X, -H, -d and its kin, --json, -F, -u, -b, -A, -e, -G, -I, --compressed, --url); options that change nothing for a load test are accepted, any other is refused naming the file, line and option.

har: a HAR 1.2 file's requests in order; -har-filter REGEX keeps those whose URL matches.

Templates: {{seq}}, {{rand N}}, -feed CSV columns as {{column}} and the rest, in URLs, headers and bodies. GRPC targets (method GRPC) call the method their URL names, with descriptors from -proto-set or, without it, from the server's reflection service, asked once per service before the clock (a failure exits 2 naming the service); a server-streaming method's messages are events. ws:// and wss:// targets send their body as a WebSocket message (-hold keeps connections open instead; -ws-events N waits for N server messages, each an event). -stream sse|ndjson|chunks|auto reads HTTP answers event by event: each event's arrival is kept in the record, and the report gives the time to the first event, the gaps between events and events per second per stream.",
};

const ATTACK_MODEL: Section = Section {
    title: "SCHEDULE",
    text: "The open model: request i is due at start + i/rate whatever the server does, so a slow server makes latency grow, not the rate fall. When barrage itself falls behind, each record's scheduled and timestamp fields say by how much, and the progress line says so once. -rate 0 with -max-workers N is the closed model: N requests in flight at a time, each sent when the last one answered (ab's and hey's -c N; autocannon's -c with -pipeline).

Every scheduled request becomes exactly one record: a response, an HTTP error or a transport error. The end of -duration, -requests, Ctrl-C (the first finishes the requests in flight, the second abandons them) and a closed stdout all leave a valid stream.

The stream is binary and never written to a terminal: pipe it to barrage report, or give -output FILE. An attack that fails before its first request leaves a stream that says why on a pipe, and barrage report downstream prints that reason instead of a report of nothing.",
};

const ATTACK_EXAMPLES: Section = Section {
    title: "EXAMPLES",
    text: "  echo \"GET http://127.0.0.1:8080/\" | barrage attack -rate 5000 -duration 30s | tee -i r.bin | barrage report
  barrage attack -targets targets.http -rate 100/1s -duration 5m -output r.bin
  barrage attack -format curl -targets copied.txt -rate 200 -duration 1m | barrage report
  echo \"GET http://127.0.0.1:8080/\" | barrage attack -rate 0 -max-workers 100 -requests 1000 | barrage report

tee -i keeps tee alive through Ctrl-C, so the file holds what the report shows.",
};

const REPORT_TYPES: Section = Section {
    title: "REPORT TYPES",
    text: "text: vegeta's layout to the byte, with a Lag line when a request went out after its scheduled time.

json: vegeta's keys and units, then barrage's lag and per_second.

hist[0,1ms,5ms]: vegeta's bucket histogram.

hdrplot: the HdrHistogram percentile distribution, for plotFiles.html.

seconds: autocannon's table of answers and bytes per second.

html: one self-contained page (no scripts, nothing fetched): vegeta's figures, the latency spectrum to the 99.999th percentile, success, errors, p50, p99 and lag over time, status codes, errors, the groups of -by, connection costs, and a sweep's table and charts when the records are a sweep's steps.

plot: the page barrage plot draws.

Inputs are binary streams, vegeta's CSV or JSON lines, detected from their first bytes; several inputs are merged in timestamp order. Percentiles are exact to 3 significant digits (HdrHistogram), and memory stays flat however many records are read. A truncated stream reports every complete record, then names the byte offset and exits 2. An empty input is a stream of no records.",
};

const REPORT_EXAMPLES: Section = Section {
    title: "EXAMPLES",
    text: "  barrage report r.bin
  barrage report -type json r.bin
  barrage report -type 'hist[0,1ms,5ms,10ms]' r.bin
  barrage report -by url -percentiles 50,99,99.9 r.bin
  barrage report -fail-on 'success<99.9%,p99>250ms' r.bin || echo too slow
  barrage attack ... | tee -i r.bin | barrage report -every 1s",
};

const DUMP: Section = Section {
    title: "FORMATS",
    text: "csv: vegeta's 12 columns, no header row: timestamp ns, code, latency ns, bytes out, bytes in, error, base64 body, attack, seq, method, URL, base64 headers.

json: one object a line, vegeta's fields plus scheduled and first_byte; barrage report reads them back, so dump | jq | report works.

  barrage dump -dumper csv r.bin | awk -F, '$2 != 200'
  barrage dump -dumper json r.bin | jq -c 'select(.code != 200)' | barrage report",
};

const PLOT: Section = Section {
    title: "THE PAGE",
    text: "Every record's latency against the time it was sent, a series per attack name and outcome (OK or ERROR), each attack counted from its own first request, log scale with a linear one behind a checkbox. The page is self-contained HTML with inline SVG: no scripts, nothing fetched.

  barrage plot r.bin > plot.html
  barrage plot -title 'before and after' before.bin after.bin > plot.html",
};

const COMPARE: Section = Section {
    title: "METHOD",
    text: "For throughput, success, mean, p50, p90, p99, p99.9 and max: base, new, the change, its 95% interval and a verdict (faster, slower or same; for success and throughput better, worse or same). The interval comes from a bootstrap that redraws runs, then blocks of send time within each run; a side's only run is cut in thirds that stand in for runs; with few runs the interval is widened (Hesterberg's expanded percentile interval). The seed is fixed (-seed), so the output repeats. A drift of the machine between two single runs cannot be told from a change: give several interleaved runs a side after --. The maximum, and a percentile with fewer than 10 records beyond it on a side, are shown but not judged. -fail-on exits 3 when a change is significant and past its bound.

  barrage compare before.bin after.bin
  barrage compare -fail-on 'p99>+5%,success<-0.1%' a1.bin a2.bin a3.bin -- b1.bin b2.bin b3.bin
  barrage compare -by url -type html before.bin after.bin > compare.html",
};

const EXPORT: Section = Section {
    title: "SERIES",
    text: "Records are folded per -interval of send time and per label set (-by: method, url, code, attack, name) and each interval is pushed as it closes (once records an interval past its end arrive; the rest at the end), stamped with its end, not with the time of the push. Prometheus remote-write gets counters from the stream's start (barrage_requests_total, barrage_request_errors_total, barrage_response_bytes_total, barrage_request_bytes_total, barrage_request_duration_seconds_sum and _count) and each interval's quantiles (barrage_request_duration_seconds and barrage_lag_seconds, quantile 0.5, 0.9, 0.99, 0.999). InfluxDB gets a point per interval and label set in the measurement barrage with the fields requests, errors, bytes_in, bytes_out, latency_mean, latency_p50, latency_p90, latency_p99, latency_p999, latency_max and lag_p99 (seconds). An OpenTelemetry collector (OTLP/HTTP, /v1/metrics) gets the monotonic cumulative sums barrage.requests, barrage.request.errors, barrage.response.bytes and barrage.request.bytes and the summaries barrage.request.duration and barrage.lag. A write that fails is retried (-retries, with backoff); an endpoint that still refuses is said in one line once the whole stream is read, with exit 1.

  attack ... | tee -i r.bin | barrage export -to prometheus-remote-write http://127.0.0.1:9090/api/v1/write
  barrage export -to influx -db loadtests http://127.0.0.1:8086/ r.bin",
};

const COLLECT: Section = Section {
    title: "LIVE MERGE",
    text: "barrage collect takes result streams over TCP (or TLS with -tls-cert and -tls-key) from attack -output tcp://HOST:PORT and barrage send, and writes one merged stream: records wait at most -interval for a slower attacker's earlier ones and go out in the order their answers completed. Every sender gives the shared token (-token or BARRAGE_TOKEN; attack reads BARRAGE_TOKEN); a wrong one is refused at the hello. It says on stderr when an attacker joins, drops, comes back and ends, and warns when the shards' schedules, lags or clocks disagree past -max-skew or shards have not joined. -fail-on is judged every 100 ms over all attackers once -min-requests records have come; when a condition holds every attacker stops as on Ctrl-C and exits 3, as does the collector. An attacker writes its stream to a spool file and resends from the collector's byte count after a drop, so nothing is lost or sent twice. It ends once -attackers streams (default: the shard count, else 1) have ended; the first Ctrl-C stops the attackers, the second ends it at once (exit 1, naming the unfinished streams).

  BARRAGE_TOKEN=T barrage collect -listen 10.0.0.1:7690 -fail-on 'success<99%' > all.bin
  BARRAGE_TOKEN=T barrage attack -rate 60000 -duration 5m -shard 0/3 -start-at $at -output tcp://10.0.0.1:7690 < targets.txt
  attack ... | BARRAGE_TOKEN=T barrage send tcp://10.0.0.1:7690",
};

const SWEEP: Section = Section {
    title: "STEPS",
    text: "One attack per step at rising loads (-rates, open model) or rising connections (-concurrency, closed model), each measured for -step-duration, and a table of each step's figures with the knee marked. -find-max searches for the highest load where all conditions hold; -stop-on stops after the first step where one does. sweep sets each step's rate and duration itself, so -rate, -duration, -requests, -stages and the other schedule flags of attack are refused.

  echo \"GET http://127.0.0.1:8080/\" | barrage sweep -rates 1000..8000/+1000 -step-duration 2s -chart sweep.html
  echo \"GET http://127.0.0.1:8080/\" | barrage sweep -rates 500 -find-max 'p99<=250ms,success>=99.9%'",
};

const SERVE: Section = Section {
    title: "PATHS",
    text: "Any path answers 200 with -body. /status/N answers N, /delay/MS waits MS milliseconds, /size/N sends N bytes, /echo sends the request body back. -capacity N answers N a second and 503 beyond, a limit for sweep to find.

  barrage serve -addr 127.0.0.1:8080 &
  echo \"GET http://127.0.0.1:8080/\" | barrage attack -rate 1000 -duration 5s | barrage report",
};

const DOCTOR: Section = Section {
    title: "CHECKS",
    text: "Takes the attack's own flags and targets, estimates the connections and descriptors they need (the closed model's -max-workers, -hold's count, or in the open model every request in flight for -timeout at most and for a second surely), and sets them against this host: the open-files limit, fs.nr_open, fs.file-max, the ephemeral ports per local address and destination, TIME_WAIT without keep-alive (tcp_tw_reuse, tcp_fin_timeout), conntrack's table, a local target's listen queue (somaxconn), memory and CPU. One line per check (ok, warn, FAIL with the connections it fails at), a failing one followed by its fix. Every attack runs the same checks at start and warns once when the plan cannot fit.

  echo \"GET http://127.0.0.1:8080/\" | barrage doctor -rate 20000 -timeout 10s
  barrage doctor -rate 0 -max-workers 50000 -laddr 127.0.0.0/29 -targets t.txt",
};

const TARGETS_CMD: Section = Section {
    title: "EXAMPLES",
    text: "  barrage targets -format curl copied.txt
  barrage targets -format har -to http -bodies b/ session.har",
};

const WHOLE: Section = Section {
    title: "OVERVIEW",
    text: "barrage is a Unix toolchain in the style of vegeta: attack writes one binary record per scheduled request to stdout, and report, dump, encode and plot read that stream from stdin or files, so results can be stored, merged, filtered and replayed with ordinary shell tools.

  echo \"GET http://127.0.0.1:8080/\" | barrage attack -rate 5000 -duration 30s | tee -i r.bin | barrage report
  barrage report -type json r.bin
  barrage dump -dumper csv r.bin | awk -F, '$2 != 200'

Flags take one or two dashes and = or a space: -rate 5000, -rate=5000, --rate 5000. Each subcommand has its page: barrage-attack(1), barrage-report(1) and so on; barrage man -dir DIR writes them all.",
};

/// The sections of `page` (`barrage` or a subcommand's name).
pub fn sections(page: &str) -> Vec<&'static Section> {
    match page {
        "barrage" => vec![&WHOLE, &EXIT],
        "attack" => vec![&ATTACK_MODEL, &TARGETS, &ATTACK_EXAMPLES, &EXIT],
        "report" => vec![&REPORT_TYPES, &REPORT_EXAMPLES, &EXIT],
        "dump" | "encode" => vec![&DUMP, &EXIT],
        "plot" => vec![&PLOT, &EXIT],
        "compare" => vec![&COMPARE, &EXIT],
        "export" => vec![&EXPORT, &EXIT],
        "collect" | "send" => vec![&COLLECT, &EXIT],
        "sweep" => vec![&SWEEP, &TARGETS, &EXIT],
        "serve" => vec![&SERVE, &EXIT],
        "doctor" => vec![&DOCTOR, &TARGETS, &EXIT],
        "targets" => vec![&TARGETS, &TARGETS_CMD, &EXIT],
        _ => vec![&EXIT],
    }
}

/// Text as roff: backslashes and dashes escaped, a line that would read
/// as a request (a leading `.` or `'`) guarded.
fn escaped(text: &str) -> String {
    let s = text.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with(['.', '\'']) {
        format!("\\&{s}")
    } else {
        s
    }
}

/// `sections` as roff.
pub fn roff(sections: &[&Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!(".SH \"{}\"\n", s.title));
        for para in s.text.split("\n\n") {
            if para.lines().all(|l| l.starts_with("  ")) {
                out.push_str(".PP\n.RS 4\n.nf\n");
                for l in para.lines() {
                    out.push_str(&escaped(&l[2..]));
                    out.push('\n');
                }
                out.push_str(".fi\n.RE\n");
            } else if let Some((head, rest)) = para
                .split_once("  ")
                .filter(|(h, _)| !h.is_empty() && h.bytes().all(|b| b.is_ascii_digit()))
            {
                // An exit code: a tagged paragraph.
                out.push_str(&format!(".TP\n\\fB{head}\\fR\n{}\n", escaped(rest)));
            } else {
                let mut lines = para.lines();
                out.push_str(".PP\n");
                if let Some(first) = lines.next() {
                    out.push_str(&escaped(first));
                    out.push('\n');
                }
                for l in lines {
                    if let Some(example) = l.strip_prefix("  ") {
                        out.push_str(&format!(".br\n{}\n", escaped(example)));
                    } else {
                        out.push_str(&escaped(l));
                        out.push('\n');
                    }
                }
            }
        }
    }
    out
}
