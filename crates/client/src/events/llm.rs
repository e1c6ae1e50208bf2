//! `-llm`: an LLM server's streamed chunks read for what they are, so that
//! a token event is a chunk that carried generated text, and the server's
//! token counts are kept beside the chunks' (issue 62). What a new user
//! found without it: vLLM's first chunk (`{"role":"assistant",
//! "content":""}`) counted as a token, TTFT 0.37 ms where the truth was
//! 200 ms, 65 tokens for 64.

use barrage_model::Tokens;
use serde_json::Value;

use super::spec::LlmUsage;

/// A request body with the usage `usage` asks for, where it streams
/// (`"stream": true` in a JSON object) and says nothing of
/// `stream_options` itself; `None`: sent as it is.
pub fn ask_usage(body: &[u8], usage: LlmUsage) -> Option<Vec<u8>> {
    if usage == LlmUsage::None
        || !body.starts_with(b"{") && !body.trim_ascii_start().starts_with(b"{")
    {
        return None;
    }
    let Ok(Value::Object(mut doc)) = serde_json::from_slice::<Value>(body) else {
        return None;
    };
    if !ask_usage_in(&mut doc, usage) {
        return None;
    }
    serde_json::to_vec(&doc).ok()
}

/// [`ask_usage`] on a body being made (`-dataset`, `-prompt-tokens`: a
/// 50K-token prompt is not parsed again); whether it asked.
pub fn ask_usage_in(doc: &mut serde_json::Map<String, Value>, usage: LlmUsage) -> bool {
    if usage == LlmUsage::None
        || doc.get("stream") != Some(&Value::Bool(true))
        || doc.contains_key("stream_options")
    {
        return false;
    }
    let mut options = serde_json::Map::new();
    options.insert("include_usage".into(), Value::Bool(true));
    if usage == LlmUsage::Continuous {
        options.insert("continuous_usage_stats".into(), Value::Bool(true));
    }
    doc.insert("stream_options".into(), Value::Object(options));
    true
}

/// The text an LLM answer's body holds: a stream's chunks' content
/// (`delta.content`, `text`) joined, or a whole answer's
/// `message.content` (or `text`); reasoning is left out. `None` when no
/// chunk or answer had choices.
pub fn answer_text(body: &[u8]) -> Option<String> {
    let mut text = String::new();
    let mut found = false;
    let mut take = |doc: &Value| {
        let Some(choice) = doc.pointer("/choices/0") else {
            return;
        };
        found = true;
        for p in ["/delta/content", "/message/content", "/text"] {
            if let Some(s) = choice.pointer(p).and_then(Value::as_str) {
                text.push_str(s);
                break;
            }
        }
    };
    let streamed = body.split(|&b| b == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        line.strip_prefix(b"data:")
    });
    let mut any = false;
    for data in streamed {
        any = true;
        if let Ok(doc) = serde_json::from_slice::<Value>(data.trim_ascii()) {
            take(&doc);
        }
    }
    if !any {
        if let Ok(doc) = serde_json::from_slice::<Value>(body) {
            take(&doc);
        }
    }
    found.then_some(text)
}

/// Reads one chunk's `data` into `t`: its usage where it has one, and
/// whether it carried text (then counted as a chunk); true when it is a
/// token event.
pub(crate) fn read_chunk(t: &mut Tokens, data: &[u8]) -> bool {
    let Ok(doc) = serde_json::from_slice::<Value>(data) else {
        // `[DONE]`, keep-alives, anything not JSON: no token.
        return false;
    };
    let choice = doc.pointer("/choices/0");
    if let Some(u) = doc.get("usage").filter(|u| u.is_object()) {
        let n = |p: &str| u.pointer(p).and_then(Value::as_u64);
        t.input = n("/prompt_tokens").or(t.input);
        t.reasoning = n("/completion_tokens_details/reasoning_tokens").or(t.reasoning);
        if let Some(out) = n("/completion_tokens") {
            // A usage-only chunk (no choices), or the one that finishes:
            // the server's count of the whole output; on any other chunk,
            // the count so far.
            let finished =
                choice.is_none_or(|c| c.get("finish_reason").is_some_and(|f| !f.is_null()));
            if finished {
                t.output = Some(out);
            } else {
                t.running = Some(out);
            }
        }
    }
    let Some(choice) = choice else {
        return false;
    };
    let text = |p: &str| {
        choice
            .pointer(p)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    let content = text("/delta/content") || text("/text");
    let reasoning = text("/delta/reasoning_content") || text("/delta/reasoning");
    if !(content || reasoning) {
        return false;
    }
    t.chunks += 1;
    if t.chunks == 1 {
        // Per-chunk usage counts this chunk's tokens in already.
        t.first_chunk = t.running;
    }
    if !content {
        t.reasoning_chunks += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(chunks: &[&str]) -> (Tokens, u64) {
        let mut t = Tokens::default();
        let events = chunks
            .iter()
            .filter(|c| read_chunk(&mut t, c.as_bytes()))
            .count();
        (t, events as u64)
    }

    #[test]
    fn only_chunks_with_text_are_tokens_and_usage_is_kept_by_source() {
        let (t, events) = read(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"hm"},"finish_reason":null}],"usage":{"prompt_tokens":8,"completion_tokens":1}}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":{"prompt_tokens":8,"completion_tokens":3}}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":1}}}"#,
            "[DONE]",
            "",
        ]);
        assert_eq!(events, 2);
        assert_eq!(
            t,
            Tokens {
                input: Some(8),
                running: Some(3),
                output: Some(3),
                chunks: 2,
                reasoning_chunks: 1,
                reasoning: Some(1),
                first_chunk: Some(1),
                ..Tokens::default()
            }
        );
        assert!(t.mismatch(), "3 tokens in 2 chunks");
        // Completions: `text`; a finish on the last content chunk.
        let (t, events) = read(&[
            r#"{"choices":[{"text":"a","index":0,"finish_reason":null}]}"#,
            r#"{"choices":[{"text":"b","index":0,"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
        ]);
        assert_eq!((events, t.output, t.chunks), (2, Some(2), 2));
        assert!(!t.mismatch());
    }

    #[test]
    fn an_answers_text_is_its_chunks_content_joined() {
        let sse = concat!(
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}\r\n\r\n",
            "data:{\"choices\":[{\"delta\":{\"content\":\"Hi \\\"you\\\"\"}}]}\n\n",
            ": comment\n\ndata: {\"choices\":[],\"usage\":{}}\n\ndata: [DONE]\n\n",
        );
        assert_eq!(answer_text(sse.as_bytes()).as_deref(), Some("Hi \"you\""));
        let whole = br#"{"choices":[{"message":{"role":"assistant","content":"ok"}}]}"#;
        assert_eq!(answer_text(whole).as_deref(), Some("ok"));
        assert_eq!(answer_text(b"data: [DONE]\n\n"), None);
        assert_eq!(answer_text(b"<html>"), None);
    }

    #[test]
    fn usage_is_asked_of_streaming_bodies_only() {
        let body = br#"{"model":"m","stream":true,"messages":[]}"#;
        let asked: Value =
            serde_json::from_slice(&ask_usage(body, LlmUsage::Continuous).unwrap()).unwrap();
        assert_eq!(asked["stream_options"]["include_usage"], true);
        assert_eq!(asked["stream_options"]["continuous_usage_stats"], true);
        assert_eq!(asked["model"], "m");
        let asked: Value =
            serde_json::from_slice(&ask_usage(body, LlmUsage::Final).unwrap()).unwrap();
        assert!(asked["stream_options"]
            .get("continuous_usage_stats")
            .is_none());
        assert_eq!(ask_usage(body, LlmUsage::None), None);
        assert_eq!(ask_usage(br#"{"stream":false}"#, LlmUsage::Final), None);
        let own = br#"{"stream":true,"stream_options":{"include_usage":false}}"#;
        assert_eq!(ask_usage(own, LlmUsage::Continuous), None);
        assert_eq!(ask_usage(b"not json", LlmUsage::Continuous), None);
    }
}
