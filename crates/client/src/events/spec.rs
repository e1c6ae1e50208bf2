//! `-stream`'s settings: how answers are cut into events ([`StreamMode`]),
//! the limits and readers that go with it ([`StreamSpec`]), `-llm`'s
//! server shapes and usage ([`Llm`], [`LlmUsage`]), and the values that
//! are none ([`BadStream`]).

use std::str::FromStr;

use crate::flow::check::Step;

/// How a streamed answer is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamMode {
    /// `text/event-stream`: an event ends at a blank line.
    Sse,
    /// One event per line.
    Ndjson,
    /// One event per HTTP/1.1 chunk or HTTP/2 DATA frame (per read of a
    /// body that is not chunked).
    Chunks,
    /// By the answer's `Content-Type`: `text/event-stream` is sse, NDJSON
    /// and JSON-lines types are ndjson, the rest chunks.
    Auto,
}

/// A `-stream` or `-event-filter` value that is none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadStream {
    /// `-stream` not one of the modes.
    #[error("{0:?}: want sse, ndjson, chunks or auto")]
    Mode(String),
    /// `-event-filter` not a JSON path.
    #[error("{0:?}: want a JSON path such as .choices[0].delta.content")]
    Filter(String),
    /// `-llm` not a known server shape.
    #[error("{0:?}: want openai")]
    Llm(String),
    /// `-llm-usage` not one of its values.
    #[error("{0:?}: want continuous, final or none")]
    LlmUsage(String),
}

impl FromStr for StreamMode {
    type Err = BadStream;

    fn from_str(s: &str) -> Result<Self, BadStream> {
        match s {
            "sse" => Ok(StreamMode::Sse),
            "ndjson" => Ok(StreamMode::Ndjson),
            "chunks" => Ok(StreamMode::Chunks),
            "auto" => Ok(StreamMode::Auto),
            _ => Err(BadStream::Mode(s.to_string())),
        }
    }
}

/// `-stream` and its limits.
#[derive(Debug, Clone)]
pub struct StreamSpec {
    /// How events are cut.
    pub mode: StreamMode,
    /// Whether HTTP answers are read as streams (`-stream`); false when
    /// only WebSocket messages are events (`-ws-events` alone).
    pub http: bool,
    /// Events stamped per record (`-max-events`); the rest are counted.
    pub max_events: usize,
    /// Longest event (`-max-event-bytes`): a longer one fails the record.
    pub max_event_bytes: usize,
    /// `-event-filter`: a JSON path an event's data must hold to count
    /// (keep-alives and `[DONE]` do not).
    pub filter: Option<(String, Vec<Step>)>,
    /// The `-check event~REGEX` patterns, tried on each event's data
    /// (the client fills them in from the checks).
    pub patterns: Vec<regex::bytes::Regex>,
    /// `-llm`: events are an LLM server's chunks, token events only
    /// counted, and its token counts read ([`barrage_model::Tokens`]).
    pub llm: Option<Llm>,
    /// `-llm-usage`: the usage asked of the server in each streaming
    /// body ([`super::llm::ask_usage`]).
    pub llm_usage: LlmUsage,
}

impl StreamSpec {
    /// Parses `-event-filter`'s path (`.choices[0].delta`).
    pub fn filter_of(text: &str) -> Result<(String, Vec<Step>), BadStream> {
        crate::flow::check::json_path(text)
            .filter(|p| !p.is_empty())
            .map(|p| (text.to_string(), p))
            .ok_or_else(|| BadStream::Filter(text.to_string()))
    }
}

/// The chunk shapes `-llm` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Llm {
    /// OpenAI's `chat.completion.chunk` and `text_completion` shapes
    /// (vLLM, SGLang, TGI, llama.cpp, any OpenAI-compatible server): a
    /// token event is a chunk with non-empty generated text
    /// (`choices[0].delta.content`, `choices[0].text`, or reasoning:
    /// `delta.reasoning_content`, `delta.reasoning`); the role chunk,
    /// the finish chunk, usage-only chunks, keep-alives and `[DONE]` are
    /// not. `usage` is read where it comes.
    OpenAi,
}

impl FromStr for Llm {
    type Err = BadStream;

    fn from_str(s: &str) -> Result<Self, BadStream> {
        match s {
            "openai" => Ok(Llm::OpenAi),
            _ => Err(BadStream::Llm(s.to_string())),
        }
    }
}

/// `-llm-usage`: what usage barrage asks for in a streaming body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LlmUsage {
    /// `stream_options: {"include_usage": true,
    /// "continuous_usage_stats": true}`: the final usage, and usage on
    /// every chunk where the server gives it (vLLM).
    #[default]
    Continuous,
    /// `stream_options: {"include_usage": true}`: the final usage only
    /// (OpenAI's own API refuses fields it does not know).
    Final,
    /// The body as it is.
    None,
}

impl FromStr for LlmUsage {
    type Err = BadStream;

    fn from_str(s: &str) -> Result<Self, BadStream> {
        match s {
            "continuous" => Ok(LlmUsage::Continuous),
            "final" => Ok(LlmUsage::Final),
            "none" => Ok(LlmUsage::None),
            _ => Err(BadStream::LlmUsage(s.to_string())),
        }
    }
}
