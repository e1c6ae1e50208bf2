/// The record of one scheduled request: a response, an HTTP error or a
/// transport error. Every request the pacer schedules becomes exactly one Hit.
///
/// Fields are owned so that decoders can read into one `Hit` again and again
/// without allocating once its buffers have grown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hit {
    /// Attack name (`-name`), empty when unnamed.
    pub attack: String,
    /// 0-based sequence number in schedule order.
    pub seq: u64,
    /// When the pacer wanted this request sent, unix nanoseconds.
    pub scheduled: i64,
    /// When it was actually sent, unix nanoseconds. `timestamp - scheduled`
    /// is the generator's lag.
    pub timestamp: i64,
    /// From send to the last byte of the body (or the error), nanoseconds.
    pub latency: u64,
    /// From send to the response's head (status line and headers),
    /// nanoseconds: the server's time to first byte, where `latency` also
    /// holds the body's transfer. 0 when no response came (and in results
    /// from before barrage measured it, or from CSV).
    pub first_byte: u64,
    /// HTTP status code, 0 when there was no response.
    pub code: u16,
    /// Request body bytes sent.
    pub bytes_out: u64,
    /// Response body bytes received.
    pub bytes_in: u64,
    /// Empty on success; the transport error, or the status text for codes
    /// outside [200, 400).
    pub error: String,
    /// Request method.
    pub method: String,
    /// Request URL.
    pub url: String,
    /// Up to `-max-body` bytes of the response body.
    pub body: Vec<u8>,
    /// Response headers in received order (kept only when asked for).
    pub headers: Vec<(String, String)>,
    /// The HTTP version the request went over, where known.
    pub proto: crate::Proto,
    /// The name of the target it was sent for (`:name NAME` in the http
    /// format, `"name"` in JSON targets); empty when unnamed.
    pub name: String,
    /// The connection it went on, where the attack measured it (`None`
    /// in older streams and in CSV: absent, not zero).
    pub link: Option<crate::Link>,
    /// A streamed answer's events (`-stream`): when each arrived, in
    /// nanoseconds from the send, in order, for the first `-max-events`
    /// of them. Empty when the answer was not read as a stream.
    pub events: Vec<u64>,
    /// The events counted, stamped or not: above `events.len()` when
    /// some came past `-max-events` (counted, not stamped). 0 when the
    /// answer was not read as a stream, or had no event.
    pub event_count: u64,
    /// SSE lines that were not SSE (no known field), skipped and counted.
    pub event_malformed: u64,
    /// A flow's request (`-format flow`): its session and step; `None`
    /// for a request that is no flow's (and in older streams). Its step's
    /// name is the record's `name`.
    pub session: Option<SessionMark>,
    /// An LLM stream's token counts (`-llm openai`), each from its own
    /// source; `None` for any other record (and in older streams).
    pub tokens: Option<Tokens>,
}

/// One LLM stream's token counts (`-llm openai`), each from the source
/// that gave it: the server's `usage` (final and per chunk) and the
/// chunks that carried text. A figure the server did not give is `None`,
/// never 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// `usage.prompt_tokens`: the input.
    pub input: Option<u64>,
    /// The last `usage.completion_tokens` that came with a chunk that also
    /// carried choices (`continuous_usage_stats`: per chunk).
    pub running: Option<u64>,
    /// `usage.completion_tokens` of the final usage (the chunk with no
    /// choices, or the last one), the server's count of the output.
    pub output: Option<u64>,
    /// Chunks that carried generated text (content or reasoning): one a
    /// token event, several tokens each where the server batches.
    pub chunks: u64,
    /// Of them, chunks that carried reasoning (`reasoning_content`,
    /// `reasoning`) and no content.
    pub reasoning_chunks: u64,
    /// `usage.completion_tokens_details.reasoning_tokens`, where given.
    pub reasoning: Option<u64>,
    /// The tokens the first text chunk carried, where the server's
    /// per-chunk usage said (a batching server sends several).
    pub first_chunk: Option<u64>,
    /// The prompt's tokens the request was made with (`-prompt-tokens`
    /// and `-prefix-tokens`), to hold `input` against.
    pub asked_input: Option<u64>,
    /// The `max_tokens` it was sent with (`-output-tokens`).
    pub asked_output: Option<u64>,
}

/// Where a record's output token count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// The server's final `usage.completion_tokens`.
    Usage,
    /// The server's per-chunk usage (no final one came).
    Running,
    /// The chunks that carried text, one token each (no usage came).
    Chunks,
}

impl TokenSource {
    /// How reports name it.
    pub fn word(self) -> &'static str {
        match self {
            TokenSource::Usage => "server usage",
            TokenSource::Running => "server usage per chunk",
            TokenSource::Chunks => "chunks with text",
        }
    }
}

impl Tokens {
    /// The output tokens and where the count comes from: the server's
    /// final usage, else its per-chunk usage, else the chunks.
    pub fn output(&self) -> (u64, TokenSource) {
        match (self.output, self.running) {
            (Some(n), _) => (n, TokenSource::Usage),
            (None, Some(n)) => (n, TokenSource::Running),
            (None, None) => (self.chunks, TokenSource::Chunks),
        }
    }

    /// Whether the server's count and the chunks disagree (each chunk
    /// one token): a server that batches tokens, or one that miscounts.
    pub fn mismatch(&self) -> bool {
        self.output
            .or(self.running)
            .is_some_and(|n| n != self.chunks)
    }
}

/// Where a flow's request stands in its session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionMark {
    /// The session's number in the schedule (its ticket's, as `seq`).
    pub id: u64,
    /// The step's index in the flow, from 0.
    pub step: u32,
    /// Whether the session ended with this request, and how. A session
    /// the attack's end (its `-duration`, Ctrl-C) stopped between steps
    /// has no such record: it is started and not ended.
    pub end: SessionEnd,
    /// On the request that ends its session: from the session's first
    /// send to this answer's end (think times included), ns; else 0.
    pub took: u64,
}

/// How a session stands after one of its requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionEnd {
    /// It goes on to its next step.
    #[default]
    Going,
    /// Its last step is done and succeeded.
    Completed,
    /// This step failed (its record's error says why): the session ends.
    Failed,
    /// This step succeeded, and the session was cut after it: the
    /// attack's end (or a stop) and its `-grace` came before its next.
    Interrupted,
}

impl SessionEnd {
    /// The wire's number for it.
    pub fn code(self) -> u64 {
        match self {
            SessionEnd::Going => 0,
            SessionEnd::Completed => 1,
            SessionEnd::Failed => 2,
            SessionEnd::Interrupted => 3,
        }
    }

    /// The end a wire number stands for.
    pub fn of_code(code: u64) -> Option<SessionEnd> {
        Some(match code {
            0 => SessionEnd::Going,
            1 => SessionEnd::Completed,
            2 => SessionEnd::Failed,
            3 => SessionEnd::Interrupted,
            _ => return None,
        })
    }

    /// How dump's JSON says it.
    pub fn word(self) -> &'static str {
        match self {
            SessionEnd::Going => "",
            SessionEnd::Completed => "completed",
            SessionEnd::Failed => "failed",
            SessionEnd::Interrupted => "interrupted",
        }
    }

    /// The end a word of [`SessionEnd::word`] names.
    pub fn of_word(word: &str) -> Option<SessionEnd> {
        [
            SessionEnd::Going,
            SessionEnd::Completed,
            SessionEnd::Failed,
            SessionEnd::Interrupted,
        ]
        .into_iter()
        .find(|e| e.word() == word)
    }
}

/// Fields a record's source does not have (vegeta's CSV and JSON have no
/// scheduled time and no time to first byte): readers fill them with
/// stand-ins (`scheduled` = `timestamp`, `first_byte` = 0), and this says
/// which are stand-ins, so that reports show them as absent, not as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lacks {
    /// No scheduled send time: no lag, no intended latency.
    pub scheduled: bool,
    /// No time to the response's head.
    pub first_byte: bool,
}

impl Hit {
    /// The most header lines a record holds: the attack keeps the first
    /// this many (`-keep-headers`), and readers refuse a record with more,
    /// so that a crafted stream cannot make a reader allocate without
    /// bound (48 bytes a line in memory for 2 on disk).
    pub const MAX_HEADERS: usize = 65_536;
    /// The most bytes of header names and values a record holds (the
    /// attack's `-max-header-bytes` is at most this).
    pub const MAX_HEADER_BYTES: usize = 64 << 20;

    /// Latency measured from the intended send time (`scheduled`), free of
    /// coordinated omission: `timestamp - scheduled + latency`, nanoseconds.
    pub fn intended_latency(&self) -> u64 {
        self.lag().saturating_add(self.latency)
    }

    /// Its time to first token (an LLM stream's first token event, or any
    /// stream's first event), ns from the send; a record with none, its
    /// whole latency (no token came before it ended).
    pub fn ttft(&self) -> u64 {
        self.events.first().copied().unwrap_or(self.latency)
    }

    /// How late the request went out, nanoseconds (0 when on time or early).
    pub fn lag(&self) -> u64 {
        self.timestamp.saturating_sub(self.scheduled).max(0) as u64
    }

    /// When the response was complete, unix nanoseconds.
    pub fn end(&self) -> i64 {
        self.timestamp
            .saturating_add(i64::try_from(self.latency).unwrap_or(i64::MAX))
    }

    /// vegeta's success rule: a status code in [200, 400), and neither a
    /// failed `-check` nor a gRPC status other than OK.
    pub fn is_success(&self) -> bool {
        ((200..400).contains(&self.code) || self.is_websocket_reply()) && !self.judged_failure()
    }

    /// Whether the record is a WebSocket message answered (code 101 on a
    /// `ws://` or `wss://` URL, no error): a success whatever the rule
    /// for HTTP codes.
    pub fn is_websocket_reply(&self) -> bool {
        self.code == 101
            && self.error.is_empty()
            && (self.url.starts_with("ws://") || self.url.starts_with("wss://"))
    }

    /// Whether the record failed whatever its HTTP status says: any error
    /// other than the status line vegeta writes for a code outside
    /// [200, 400) (which the `-success` rule judges by the code). A failed
    /// `-check`, a gRPC status other than OK, a WebSocket upgrade answered
    /// with 200 (issue 29), a body cut short: all failures, whatever the
    /// code.
    pub fn judged_failure(&self) -> bool {
        !self.error.is_empty() && !self.error_is_status()
    }

    /// Whether the error is only the response's status line (`404 Not
    /// Found`, `503 Backend Down`): what vegeta and barrage write as the
    /// error of a code outside [200, 400).
    pub fn error_is_status(&self) -> bool {
        if self.code == 0 || (200..400).contains(&self.code) {
            return false;
        }
        let b = self.error.as_bytes();
        let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
        (n == b.len() || b[n] == b' ') && self.error[..n].parse::<u16>() == Ok(self.code)
    }
}

/// How the error of a response that failed a `-check` begins.
pub const CHECK_FAILED: &str = "check failed: ";

/// How the error of a gRPC call whose status is not OK begins: `grpc-status
/// 14 (UNAVAILABLE): …`.
pub const GRPC_FAILED: &str = "grpc-status ";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intended_latency_adds_lag() {
        let h = Hit {
            scheduled: 1_000,
            timestamp: 1_250,
            latency: 100,
            ..Hit::default()
        };
        assert_eq!(h.lag(), 250);
        assert_eq!(h.intended_latency(), 350);
        assert_eq!(h.end(), 1_350);
    }

    #[test]
    fn early_send_has_no_lag() {
        let h = Hit {
            scheduled: 2_000,
            timestamp: 1_000,
            latency: 5,
            ..Hit::default()
        };
        assert_eq!(h.lag(), 0);
        assert_eq!(h.intended_latency(), 5);
    }

    #[test]
    fn success_is_200_to_399() {
        for (code, ok) in [
            (0, false),
            (199, false),
            (200, true),
            (399, true),
            (400, false),
        ] {
            let h = Hit {
                code,
                ..Hit::default()
            };
            assert_eq!(h.is_success(), ok, "code {code}");
        }
    }

    /// Issue 29: a record with an error is a failure whatever its code;
    /// only the status line of a code outside [200, 400) is left to the
    /// `-success` rule.
    #[test]
    fn an_error_fails_whatever_the_code() {
        for (code, error, failed) in [
            (200, "websocket: bad handshake (200 OK)", true),
            (200, "unexpected EOF", true),
            (302, "stopped after 10 redirects", true),
            (404, "404 Not Found", false),
            (503, "503 Backend Down", false),
            (503, "503", false),
            (503, "5034 x", true),
            (404, "405 Method Not Allowed", true),
            (0, "dial tcp: connection refused", true),
            (200, "", false),
        ] {
            let h = Hit {
                code,
                error: error.into(),
                ..Hit::default()
            };
            assert_eq!(h.judged_failure(), failed, "{code} {error:?}");
            if failed {
                assert!(!h.is_success(), "{code} {error:?}");
            }
        }
    }
}
