//! [`ServerSample`]: one value of a server's own metric, read during a run
//! (`attack -scrape`), kept in the result stream beside the records.

/// One sample of one series that a scraped endpoint gave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerSample {
    /// The endpoint, as typed (`-scrape URL`).
    pub source: String,
    /// When it was read: the scrape's start, unix ns.
    pub at: i64,
    /// The series: its name and its labels, as Prometheus writes them
    /// (`vllm:num_requests_waiting{model_name="m"}`).
    pub name: String,
    /// A gauge's value, or a counter's rate a second since the scrape
    /// before (`rate`).
    pub value: f64,
    /// Whether `value` is a counter's rate a second.
    pub rate: bool,
}
