use bytes::Bytes;

/// One request to send: what a line (or block) of a targets file describes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// HTTP method, upper case as written (`GET`, `POST`, `PURGE`).
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Headers in order, names with their case kept; repeats allowed.
    pub headers: Vec<(String, String)>,
    /// Request body (may be empty).
    pub body: Bytes,
    /// Its share of the schedule (`:weight N`, `"weight": N`): in every
    /// run of requests as long as the weights' sum, exactly this many go
    /// to it. `None` is a weight of 1.
    pub weight: Option<u32>,
    /// Its name (`:name NAME`, `"name"`), carried by its records for
    /// `report -by name`; empty when unnamed.
    pub name: String,
    /// When it was sent in a recording (a HAR entry's `startedDateTime`),
    /// nanoseconds after the recording's first request; for
    /// `-har-timing`.
    pub at: Option<u64>,
    /// What a synthetic or dataset LLM request asked for (`-prompt-tokens`,
    /// `-output-tokens`, `-dataset`), carried into its record's tokens.
    pub asked: Option<Asked>,
}

/// The token counts an LLM request asked for, as barrage counts them:
/// `input` the words of a synthetic prompt (one token each to common
/// tokenizers; unknown for a dataset's text), `output` its `max_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asked {
    /// The prompt's tokens, where barrage made it.
    pub input: Option<u64>,
    /// `max_tokens`, where barrage set it.
    pub output: Option<u64>,
}

impl Target {
    /// Its weight: 1 unless given.
    pub fn weight(&self) -> u32 {
        self.weight.unwrap_or(1)
    }
}
