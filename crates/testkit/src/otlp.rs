//! A loopback OTLP/HTTP metrics receiver: it takes `POST /v1/metrics`
//! bodies, decodes them as `ExportMetricsServiceRequest` with its own
//! declarations of the published messages (so a wrong field number in
//! barrage's shows as a missing value here), keeps every data point, and
//! answers 200 with an empty response message.

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpListener},
    sync::{Arc, Mutex},
    thread,
};

use prost::Message;

#[derive(Clone, PartialEq, Message)]
struct Request {
    #[prost(message, repeated, tag = "1")]
    resource_metrics: Vec<ResourceMetrics>,
}

#[derive(Clone, PartialEq, Message)]
struct ResourceMetrics {
    #[prost(message, repeated, tag = "2")]
    scope_metrics: Vec<ScopeMetrics>,
}

#[derive(Clone, PartialEq, Message)]
struct ScopeMetrics {
    #[prost(message, repeated, tag = "2")]
    metrics: Vec<Metric>,
}

#[derive(Clone, PartialEq, Message)]
struct Metric {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, optional, tag = "7")]
    sum: Option<Sum>,
    #[prost(message, optional, tag = "11")]
    summary: Option<Summary>,
}

#[derive(Clone, PartialEq, Message)]
struct Sum {
    #[prost(message, repeated, tag = "1")]
    data_points: Vec<NumberPoint>,
    #[prost(int32, tag = "2")]
    aggregation_temporality: i32,
    #[prost(bool, tag = "3")]
    is_monotonic: bool,
}

#[derive(Clone, PartialEq, Message)]
struct NumberPoint {
    #[prost(message, repeated, tag = "7")]
    attributes: Vec<KeyValue>,
    #[prost(fixed64, tag = "3")]
    time_unix_nano: u64,
    #[prost(double, optional, tag = "4")]
    as_double: Option<f64>,
    #[prost(sfixed64, optional, tag = "6")]
    as_int: Option<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct Summary {
    #[prost(message, repeated, tag = "1")]
    data_points: Vec<SummaryPoint>,
}

#[derive(Clone, PartialEq, Message)]
struct SummaryPoint {
    #[prost(message, repeated, tag = "7")]
    attributes: Vec<KeyValue>,
    #[prost(fixed64, tag = "3")]
    time_unix_nano: u64,
    #[prost(fixed64, tag = "4")]
    count: u64,
}

#[derive(Clone, PartialEq, Message)]
struct KeyValue {
    #[prost(string, tag = "1")]
    key: String,
    #[prost(message, optional, tag = "2")]
    value: Option<AnyValue>,
}

#[derive(Clone, PartialEq, Message)]
struct AnyValue {
    #[prost(string, tag = "1")]
    string_value: String,
}

/// One data point as received.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpPoint {
    /// The metric's name.
    pub metric: String,
    /// Its attributes, as (key, string value).
    pub attributes: Vec<(String, String)>,
    /// Its time (unix ns).
    pub time: u64,
    /// A sum's value, or a summary's count.
    pub value: f64,
    /// Whether it was a monotonic cumulative sum (temporality 2).
    pub cumulative: bool,
}

/// The receiver; stops with the test process.
pub struct OtlpReceiver {
    addr: SocketAddr,
    points: Arc<Mutex<Vec<OtlpPoint>>>,
}

fn pairs(kv: &[KeyValue]) -> Vec<(String, String)> {
    kv.iter()
        .map(|k| {
            (
                k.key.clone(),
                k.value
                    .as_ref()
                    .map(|v| v.string_value.clone())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

impl OtlpReceiver {
    /// Listens on a loopback port.
    pub fn start() -> OtlpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let points = Arc::new(Mutex::new(Vec::new()));
        let kept = points.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = kept.clone();
                thread::spawn(move || serve(stream, &kept));
            }
        });
        OtlpReceiver { addr, points }
    }

    /// The collector's base URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Every data point received so far.
    pub fn points(&self) -> Vec<OtlpPoint> {
        self.points.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

fn serve(mut stream: std::net::TcpStream, kept: &Mutex<Vec<OtlpPoint>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 << 10];
    let (head, length) = loop {
        let Ok(n) = stream.read(&mut chunk) else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length);
        }
    };
    while buf.len() < head + length {
        let Ok(n) = stream.read(&mut chunk) else {
            return;
        };
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let ok = buf.starts_with(b"POST /v1/metrics ");
    let decoded = Request::decode(&buf[head..(head + length).min(buf.len())]);
    let status = match (ok, decoded) {
        (true, Ok(req)) => {
            let mut out = kept.lock().unwrap_or_else(|p| p.into_inner());
            for m in req
                .resource_metrics
                .iter()
                .flat_map(|r| &r.scope_metrics)
                .flat_map(|s| &s.metrics)
            {
                if let Some(sum) = &m.sum {
                    for p in &sum.data_points {
                        out.push(OtlpPoint {
                            metric: m.name.clone(),
                            attributes: pairs(&p.attributes),
                            time: p.time_unix_nano,
                            value: p
                                .as_int
                                .map(|v| v as f64)
                                .or(p.as_double)
                                .unwrap_or(f64::NAN),
                            cumulative: sum.aggregation_temporality == 2 && sum.is_monotonic,
                        });
                    }
                }
                if let Some(s) = &m.summary {
                    for p in &s.data_points {
                        out.push(OtlpPoint {
                            metric: m.name.clone(),
                            attributes: pairs(&p.attributes),
                            time: p.time_unix_nano,
                            value: p.count as f64,
                            cumulative: false,
                        });
                    }
                }
            }
            "200 OK"
        }
        (false, _) => "404 Not Found",
        (true, Err(_)) => "400 Bad Request",
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
}
