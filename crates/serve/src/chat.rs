//! `/v1/chat/completions` (and `/v1/completions`): an OpenAI-compatible
//! server with ground truth, for `attack -llm` and its tests (issue 62).
//! It streams as vLLM does, and as other servers differ from it:
//!
//! - `max_tokens` (or `max_completion_tokens`, default 16) tokens, `per`
//!   a chunk (`?per=4`: a batching or speculative server), the first
//!   after `first` (150 ms), then a chunk every `gap` (15 ms);
//! - a role chunk (`{"role":"assistant","content":""}`) just before the
//!   first token (`?role=first`, vLLM) or at once (`?role=arrival`, a
//!   server that announces before prefill);
//! - the first `?reasoning=N` chunks as `reasoning_content`;
//! - the finish in a chunk of its own (`?finish=separate`) or on the last
//!   token's (`?finish=last`);
//! - usage as the body asks (`stream_options.include_usage`: a final
//!   usage chunk; `continuous_usage_stats`: usage on every chunk), input
//!   tokens counted as the words of the prompt;
//! - the finish, the usage and `[DONE]` in the same write as the last
//!   token, as vLLM sends them.
//!
//! The truth rides in an SSE comment before `[DONE]`, which clients skip:
//! `: barrage-truth {"written_ns":[...],"tokens":N,"chunks":C,
//! "prompt_tokens":P}`, each token chunk's write as ns from the request's
//! arrival (its head read), and `first` and `gap` count from there too.

use std::{
    convert::Infallible,
    fmt::Write as _,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::{body::Frame, Response};
// tokio's clock: the tests pause it.
use tokio::time::Instant;

use crate::answer::{query_count, query_duration, whole, Answer, MAX_EVENTS};

/// What one request asked for, and how the server answers it.
#[derive(Debug, Clone)]
struct Plan {
    tokens: u64,
    per: u64,
    first: Duration,
    gap: Duration,
    role_at_arrival: bool,
    finish_separate: bool,
    reasoning: u64,
    include_usage: bool,
    continuous: bool,
    prompt_tokens: u64,
    /// `/v1/completions`: `text` chunks, no role.
    completions: bool,
}

/// The answer to `body` at `query`, for a request whose head was read at
/// `arrival`: a stream when the body says `"stream": true`, else one
/// JSON answer.
pub(crate) fn chat(
    query: &str,
    body: &[u8],
    completions: bool,
    arrival: Instant,
) -> Response<Answer> {
    let doc: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let n = |key: &str| doc.get(key).and_then(serde_json::Value::as_u64);
    let flag = |p: &str| doc.pointer(p).and_then(serde_json::Value::as_bool) == Some(true);
    let word = |key: &str| {
        query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    };
    let plan = Plan {
        tokens: n("max_tokens")
            .or_else(|| n("max_completion_tokens"))
            .unwrap_or(16)
            .clamp(1, MAX_EVENTS),
        per: query_count(query, "per", 1).max(1),
        first: query_duration(query, "first", Duration::from_millis(150)),
        gap: query_duration(query, "gap", Duration::from_millis(15)),
        role_at_arrival: word("role") == Some("arrival"),
        finish_separate: word("finish") != Some("last"),
        reasoning: query_count(query, "reasoning", 0),
        include_usage: flag("/stream_options/include_usage"),
        continuous: flag("/stream_options/continuous_usage_stats"),
        prompt_tokens: prompt_words(&doc).max(1),
        completions,
    };
    if !flag("/stream") {
        let (p, t) = (plan.prompt_tokens, plan.tokens);
        let text = "tok ".repeat(t as usize);
        let json = if completions {
            format!(
                r#"{{"id":"cmpl-barrage","object":"text_completion","model":"barrage-serve","choices":[{{"index":0,"text":"{text}","finish_reason":"length"}}],"usage":{{"prompt_tokens":{p},"completion_tokens":{t},"total_tokens":{}}}}}"#,
                p + t
            )
        } else {
            format!(
                r#"{{"id":"chatcmpl-barrage","object":"chat.completion","model":"barrage-serve","choices":[{{"index":0,"message":{{"role":"assistant","content":"{text}"}},"finish_reason":"length"}}],"usage":{{"prompt_tokens":{p},"completion_tokens":{t},"total_tokens":{}}}}}"#,
                p + t
            )
        };
        return Response::builder()
            .header("content-type", "application/json")
            .body(whole(Bytes::from(json)))
            .expect("a head");
    }
    let stream = ChatStream {
        sleep: Box::pin(tokio::time::sleep_until(arrival + plan.first)),
        chunks: plan.tokens.div_ceil(plan.per),
        plan,
        arrival,
        next: 0,
        role_due: true,
        written: Vec::new(),
        done: false,
    };
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(stream.boxed())
        .expect("a head")
}

/// The prompt's words: each `messages[].content` (a string) and `prompt`.
fn prompt_words(doc: &serde_json::Value) -> u64 {
    let words = |v: &serde_json::Value| v.as_str().map_or(0, |s| s.split_whitespace().count());
    let messages = doc
        .get("messages")
        .and_then(|m| m.as_array())
        .map_or(0, |m| m.iter().map(|m| words(&m["content"])).sum());
    (messages + doc.get("prompt").map_or(0, words)) as u64
}

/// A streamed answer, chunk by chunk on its schedule.
struct ChatStream {
    plan: Plan,
    arrival: Instant,
    sleep: Pin<Box<tokio::time::Sleep>>,
    /// Token chunks in all, and the next one's index.
    chunks: u64,
    next: u64,
    /// The role chunk is still to be sent (chat only).
    role_due: bool,
    /// Each token chunk's write, ns from the arrival.
    written: Vec<u64>,
    done: bool,
}

impl ChatStream {
    fn head(&self) -> &'static str {
        if self.plan.completions {
            r#"{"id":"cmpl-barrage","object":"text_completion","model":"barrage-serve","choices":["#
        } else {
            r#"{"id":"chatcmpl-barrage","object":"chat.completion.chunk","model":"barrage-serve","choices":["#
        }
    }

    fn usage(&self, completion: u64) -> String {
        let p = self.plan.prompt_tokens;
        format!(
            r#""usage":{{"prompt_tokens":{p},"completion_tokens":{completion},"total_tokens":{}}}"#,
            p + completion
        )
    }

    /// `data: …` of one choice (its `delta`, or `text` for completions).
    fn chunk(&self, delta: &str, text: &str, finish: bool, usage: Option<u64>) -> String {
        let finish = if finish { r#""length""# } else { "null" };
        let choice = if self.plan.completions {
            format!(r#"{{"index":0,"text":"{text}","finish_reason":{finish}}}"#)
        } else {
            format!(r#"{{"index":0,"delta":{delta},"finish_reason":{finish}}}"#)
        };
        let usage = usage.map_or(String::new(), |u| format!(",{}", self.usage(u)));
        format!("data: {}{choice}]{usage}}}\n\n", self.head())
    }

    fn role(&self) -> String {
        let usage = self.plan.continuous.then_some(0);
        self.chunk(r#"{"role":"assistant","content":""}"#, "", false, usage)
    }

    /// Token chunk `i`, and, after the last, what ends the stream.
    fn token_chunk(&mut self, i: u64) -> String {
        let plan = self.plan.clone();
        let last = i + 1 == self.chunks;
        let so_far = ((i + 1) * plan.per).min(plan.tokens);
        let k = so_far - i * plan.per;
        let text = "tok ".repeat(k as usize);
        let delta = if i < plan.reasoning {
            format!(r#"{{"reasoning_content":"{text}"}}"#)
        } else {
            format!(r#"{{"content":"{text}"}}"#)
        };
        let usage = plan.continuous.then_some(so_far);
        let mut out = self.chunk(&delta, &text, last && !plan.finish_separate, usage);
        self.written
            .push(self.arrival.elapsed().as_nanos().min(u64::MAX as u128) as u64);
        if last {
            if plan.finish_separate {
                let usage = plan.continuous.then_some(plan.tokens);
                let finish = self.chunk("{}", "", true, usage);
                out.push_str(&finish);
            }
            if plan.include_usage {
                let _ = write!(
                    out,
                    "data: {}],{}}}\n\n",
                    self.head(),
                    self.usage(plan.tokens)
                );
            }
            let written: Vec<String> = self.written.iter().map(u64::to_string).collect();
            let _ = write!(
                out,
                ": barrage-truth {{\"written_ns\":[{}],\"tokens\":{},\"chunks\":{},\"prompt_tokens\":{}}}\n\ndata: [DONE]\n\n",
                written.join(","),
                plan.tokens,
                self.chunks,
                plan.prompt_tokens
            );
        }
        out
    }
}

impl hyper::body::Body for ChatStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let chat = !self.plan.completions;
        if chat && self.role_due && self.plan.role_at_arrival {
            self.role_due = false;
            let role = self.role();
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(role)))));
        }
        if std::future::Future::poll(self.sleep.as_mut(), cx).is_pending() {
            return Poll::Pending;
        }
        let mut out = String::new();
        if chat && std::mem::take(&mut self.role_due) {
            // vLLM's role chunk, just before the first token.
            out.push_str(&self.role());
        }
        let i = self.next;
        out.push_str(&self.token_chunk(i));
        self.next += 1;
        if self.next == self.chunks {
            self.done = true;
        } else {
            let next = self.sleep.deadline() + self.plan.gap;
            self.sleep.as_mut().reset(next);
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(query: &str, body: &str) -> String {
        let r = chat(query, body.as_bytes(), false, Instant::now());
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_as_vllm_sends_it_with_its_truth() {
        let text = body(
            "per=4&first=150ms&gap=15ms",
            r#"{"stream":true,"max_tokens":10,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"say three words"}]}"#,
        )
        .await;
        let data: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        // The role, three chunks of 4, 4 and 2 tokens, the finish, the
        // usage, [DONE].
        assert_eq!(data.len(), 7, "{text}");
        assert!(data[0].contains(r#""role":"assistant","content":"""#));
        assert!(data[3].contains(r#""content":"tok tok ""#));
        assert!(data[4].contains(r#""finish_reason":"length""#));
        assert!(
            data[5].contains(r#""completion_tokens":10"#)
                && data[5].contains(r#""prompt_tokens":3"#)
        );
        let truth = text
            .lines()
            .find_map(|l| l.strip_prefix(": barrage-truth "))
            .unwrap();
        let truth: serde_json::Value = serde_json::from_str(truth).unwrap();
        let written: Vec<u64> = truth["written_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        // On the paused clock, exactly on the schedule.
        assert_eq!(written, [150_000_000, 165_000_000, 180_000_000]);
        assert_eq!(
            (truth["tokens"].as_u64(), truth["chunks"].as_u64()),
            (Some(10), Some(3))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn no_usage_unless_asked_and_per_chunk_when_asked() {
        let plain = body("", r#"{"stream":true,"max_tokens":2}"#).await;
        assert!(!plain.contains("usage"), "{plain}");
        let each = body(
            "role=arrival&finish=last",
            r#"{"stream":true,"max_tokens":2,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}"#,
        )
        .await;
        let data: Vec<&str> = each
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        // Role, two tokens (the finish on the second), usage, [DONE].
        assert_eq!(data.len(), 5, "{each}");
        assert!(data[1].contains(r#""completion_tokens":1"#));
        assert!(
            data[2].contains(r#""finish_reason":"length""#)
                && data[2].contains(r#""completion_tokens":2"#)
        );
    }
}
