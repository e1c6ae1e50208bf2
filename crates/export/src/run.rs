//! One export from end to end: the endpoint a protocol writes to, and an
//! [`Export`] that folds records into intervals, encodes each batch in
//! that protocol and pushes it as it closes.

use std::time::Duration;

use barrage_model::Hit;

use crate::{influx, otlp, remote_write, Batch, Endpoint, Intervals, Label, PushError, Pusher};

/// Batches queued for the endpoint at most.
const QUEUE: usize = 64;

/// Where an export goes, and how it says its figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protocol {
    /// Prometheus remote-write 1.0.
    RemoteWrite,
    /// InfluxDB's line protocol: 2.x with a token, else 1.x.
    Influx {
        /// 2.x's API token.
        token: Option<String>,
        /// 2.x's organisation.
        org: String,
        /// 2.x's bucket.
        bucket: String,
        /// 1.x's database.
        db: String,
    },
    /// OTLP/HTTP metrics.
    Otlp,
}

impl Endpoint {
    /// The write URL and headers `protocol` asks for at `url`: a URL
    /// without a path gets the protocol's own (InfluxDB's `/write` or
    /// `/api/v2/write`, OTLP's `/v1/metrics`).
    pub fn for_protocol(
        protocol: &Protocol,
        url: &str,
        timeout: Duration,
        retries: u32,
    ) -> Result<Endpoint, PushError> {
        let mut url = Endpoint::parse(url)?;
        let bare = matches!(url.path(), "" | "/");
        let header = |k: &str, v: &str| (k.to_string(), v.to_string());
        let headers = match protocol {
            Protocol::Influx {
                token,
                org,
                bucket,
                db,
            } => {
                let mut h = vec![header("Content-Type", "text/plain; charset=utf-8")];
                match token {
                    Some(token) => {
                        if bare {
                            url.set_path("/api/v2/write");
                            url.query_pairs_mut()
                                .append_pair("org", org)
                                .append_pair("bucket", bucket)
                                .append_pair("precision", "ns");
                        }
                        h.push(header("Authorization", &format!("Token {token}")));
                    }
                    None if bare => {
                        url.set_path("/write");
                        url.query_pairs_mut()
                            .append_pair("db", db)
                            .append_pair("precision", "ns");
                    }
                    None => {}
                }
                h
            }
            Protocol::Otlp => {
                if bare {
                    url.set_path("/v1/metrics");
                }
                vec![header("Content-Type", "application/x-protobuf")]
            }
            Protocol::RemoteWrite => vec![
                header("Content-Encoding", "snappy"),
                header("Content-Type", "application/x-protobuf"),
                header("X-Prometheus-Remote-Write-Version", "0.1.0"),
            ],
        };
        let mut e = Endpoint {
            url,
            headers,
            timeout,
            retries,
            create: None,
        };
        // InfluxDB 1.x takes no write into a database not there: on the
        // path export chose (/write?db=-db), a write refused for it
        // creates -db and is tried again. A URL given whole is left as
        // it is (its refusal says how).
        if let Protocol::Influx {
            token: None, db, ..
        } = protocol
        {
            if bare {
                e.create = Some(Box::new(create_database(&e, db)));
            }
        }
        Ok(e)
    }
}

/// An export under way: records in, batches out as intervals close.
pub struct Export {
    protocol: Protocol,
    width: i64,
    intervals: Intervals,
    pusher: Pusher,
    prom: remote_write::Encoder,
    otel: otlp::Encoder,
    records: u64,
    batches: u64,
}

/// What an export came to.
#[derive(Debug)]
pub struct Exported {
    /// Records read.
    pub records: u64,
    /// Intervals made.
    pub batches: u64,
    /// Intervals the endpoint never took.
    pub undelivered: u64,
    /// The first failure, said as a line.
    pub error: Option<String>,
    /// The undelivered intervals, said: the first few runs by their ends'
    /// times.
    pub gaps: String,
}

impl Export {
    /// Starts pushing to `endpoint` in `protocol`, intervals `width` ns
    /// wide, a series per label set of `by`.
    pub fn start(protocol: Protocol, endpoint: Endpoint, width: i64, by: Vec<Label>) -> Export {
        if let Protocol::Influx {
            token: None, db, ..
        } = &protocol
        {
            // InfluxDB 1.x takes no write into a database not there; for
            // the path export chose (/write?db=-db), it creates -db first
            // (CREATE DATABASE is a no-op for one that exists). When that
            // fails, the first write says why.
            if endpoint.url.path() == "/write" {
                let _ = create_database(&endpoint, db);
            }
        }
        Export {
            protocol,
            width,
            intervals: Intervals::new(width, by),
            pusher: Pusher::start(endpoint, QUEUE, width),
            prom: remote_write::Encoder::new(),
            otel: otlp::Encoder::new(),
            records: 0,
            batches: 0,
        }
    }

    /// Also writes native histograms (remote-write only).
    pub fn native_histograms(mut self, on: bool) -> Export {
        self.prom = std::mem::take(&mut self.prom).native(on);
        self
    }

    /// Adds a record (`ok`: a success; `latency` as the report counts it).
    pub fn add(&mut self, hit: &Hit, ok: bool, latency: u64) {
        self.records += 1;
        for b in self.intervals.add(hit, ok, latency) {
            self.push(&b);
        }
    }

    fn push(&mut self, b: &Batch) {
        let body = match self.protocol {
            Protocol::Influx { .. } => influx::lines(b).into_bytes(),
            Protocol::Otlp => self.otel.body(b, self.width),
            Protocol::RemoteWrite => self.prom.body(b),
        };
        self.pusher.push(body, b.end);
        self.batches += 1;
    }

    /// Closes the open intervals, pushes them and a scraped server's
    /// `samples` (`attack -scrape`), and waits for the pusher.
    pub fn finish(mut self, samples: Vec<&barrage_model::ServerSample>) -> Exported {
        for b in
            std::mem::replace(&mut self.intervals, Intervals::new(self.width, Vec::new())).finish()
        {
            self.push(&b);
        }
        for chunk in samples.chunks(crate::scraped::PER_WRITE) {
            let body = match self.protocol {
                Protocol::Influx { .. } => crate::scraped::influx(chunk).into_bytes(),
                Protocol::RemoteWrite => crate::scraped::remote_write(chunk),
                Protocol::Otlp => crate::scraped::otlp(chunk),
            };
            let end = chunk.iter().map(|s| s.at).max().unwrap_or(0);
            self.pusher.push(body, end);
            self.batches += 1;
        }
        let sum = self.pusher.finish();
        Exported {
            records: self.records,
            batches: self.batches,
            undelivered: sum.undelivered,
            error: sum.error,
            gaps: gaps(&sum.gaps, self.width),
        }
    }
}

/// The request that makes `CREATE DATABASE "db"` on the InfluxDB 1.x
/// server of `write`.
fn create_database(write: &Endpoint, db: &str) -> Endpoint {
    let mut query = write.clone();
    query.url.set_path("/query");
    let statement = format!("CREATE DATABASE \"{}\"", db.replace('"', "\\\""));
    query
        .url
        .query_pairs_mut()
        .clear()
        .append_pair("q", &statement);
    query.headers = vec![(
        "Content-Type".into(),
        "application/x-www-form-urlencoded".into(),
    )];
    query.retries = 0;
    query
}

/// Runs of intervals not written, by their ends' times (the first few).
fn gaps(gaps: &[(i64, i64)], width: i64) -> String {
    use barrage_model::time::format_rfc3339;
    let mut said: Vec<String> = gaps
        .iter()
        .take(5)
        .map(|&(a, b)| {
            if a == b {
                format!("ending {}", format_rfc3339(a))
            } else {
                format!("{} to {}", format_rfc3339(a - width), format_rfc3339(b))
            }
        })
        .collect();
    if gaps.len() > 5 {
        said.push(format!("{} runs more", gaps.len() - 5));
    }
    said.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_protocol_gets_its_path_and_headers() {
        let at = |p: &Protocol, url: &str| {
            Endpoint::for_protocol(p, url, Duration::from_secs(1), 0).unwrap()
        };
        let v1 = Protocol::Influx {
            token: None,
            org: "o".into(),
            bucket: "b".into(),
            db: "d".into(),
        };
        assert_eq!(
            at(&v1, "http://h:8086").url.as_str(),
            "http://h:8086/write?db=d&precision=ns"
        );
        let v2 = Protocol::Influx {
            token: Some("t".into()),
            org: "o".into(),
            bucket: "b".into(),
            db: "d".into(),
        };
        let e = at(&v2, "http://h:8086/");
        assert!(e
            .url
            .as_str()
            .ends_with("/api/v2/write?org=o&bucket=b&precision=ns"));
        assert!(e
            .headers
            .contains(&("Authorization".into(), "Token t".into())));
        assert_eq!(
            at(&Protocol::Otlp, "http://h:4318").url.path(),
            "/v1/metrics"
        );
        assert_eq!(
            at(&Protocol::RemoteWrite, "http://h:9/api/v1/write")
                .headers
                .len(),
            3
        );
    }

    #[test]
    fn the_gaps_are_said_as_runs() {
        let s = 1_000_000_000;
        assert_eq!(gaps(&[(5 * s, 5 * s)], s), "ending 1970-01-01T00:00:05Z");
        let many: Vec<_> = (0..7).map(|i| (i * 10 * s, i * 10 * s)).collect();
        assert!(gaps(&many, s).ends_with(", 2 runs more"));
    }
}
