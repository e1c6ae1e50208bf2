//! [`Llm`]: what an LLM server's streams (`attack -llm`) came to, token by
//! token (issue 62): TTFT, ITL, TPOT and E2E, each from the send and from
//! the schedule (the second holds every wait the first hides: a
//! `-max-workers` slot, a generator behind its schedule), the output and
//! input tokens with the source each count came from, and the records
//! whose server count differs from their chunks.
//!
//! Definitions, per record with token counts ([`barrage_model::Tokens`]):
//! - TTFT: to the first token event (a chunk that carried text);
//! - ITL: the gaps between consecutive token events (the first excluded),
//!   per chunk: a server that sends four tokens a chunk shows its chunk
//!   cadence here;
//! - TPOT: (E2E − TTFT) / (output tokens − 1), per token, over records of
//!   two tokens or more, output tokens by their best source (vLLM's);
//! - ITL per token: (last token event − first) / (output tokens − the
//!   first chunk's), the decode time of a token where a chunk carries
//!   several (the first chunk's count from the server's per-chunk usage;
//!   one a chunk when the chunks match the count);
//! - E2E: the record's latency, to the answer's last byte.
//!
//! "From the schedule" adds the record's lag (its send less its scheduled
//! time) to TTFT and E2E.

use barrage_model::{Hit, TokenSource};

use crate::Distribution;

/// LLM figures of the records that carried token counts.
#[derive(Clone, Default)]
pub struct Llm {
    /// Records with token counts.
    streams: u64,
    /// Of them, with at least one token event.
    answered: u64,
    ttft: Distribution,
    ttft_scheduled: Distribution,
    itl: Distribution,
    tpot: Distribution,
    per_token: Distribution,
    e2e: Distribution,
    e2e_scheduled: Distribution,
    /// Output tokens by their best source, in all.
    output: u64,
    /// Input tokens (`usage.prompt_tokens`), over the records that said.
    input: u64,
    /// Records whose input the server said.
    input_said: u64,
    /// Reasoning tokens (usage), or reasoning chunks where usage gave
    /// none.
    reasoning: u64,
    /// Records by the source of their output count: usage, per-chunk
    /// usage, chunks.
    sources: [u64; 3],
    /// Records whose server count differs from their chunks.
    mismatched: u64,
    /// Chunks with text, in all.
    chunks: u64,
    /// Over the records made with a prompt length (`-prompt-tokens`) whose
    /// server said its input: the lengths asked, the server's counts,
    /// the records.
    asked_input: [u64; 3],
    /// Likewise for `max_tokens` (`-output-tokens`) and the output
    /// counts.
    asked_output: [u64; 3],
}

impl Llm {
    /// Adds one record (one without token counts is left out).
    pub fn add(&mut self, hit: &Hit) {
        let Some(t) = &hit.tokens else {
            return;
        };
        self.streams += 1;
        let (out, source) = t.output();
        self.output = self.output.saturating_add(out);
        self.chunks = self.chunks.saturating_add(t.chunks);
        self.sources[match source {
            TokenSource::Usage => 0,
            TokenSource::Running => 1,
            TokenSource::Chunks => 2,
        }] += 1;
        if t.mismatch() {
            self.mismatched += 1;
        }
        if let Some(n) = t.input {
            self.input = self.input.saturating_add(n);
            self.input_said += 1;
        }
        for (sums, pair) in [
            (&mut self.asked_input, t.asked_input.zip(t.input)),
            (&mut self.asked_output, t.asked_output.map(|a| (a, out))),
        ] {
            if let Some((asked, got)) = pair {
                sums[0] = sums[0].saturating_add(asked);
                sums[1] = sums[1].saturating_add(got);
                sums[2] += 1;
            }
        }
        self.reasoning = self
            .reasoning
            .saturating_add(t.reasoning.unwrap_or(t.reasoning_chunks));
        let lag = hit.lag();
        self.e2e.record(hit.latency);
        self.e2e_scheduled.record(hit.latency.saturating_add(lag));
        let Some(&first) = hit.events.first() else {
            return;
        };
        self.answered += 1;
        self.ttft.record(first);
        self.ttft_scheduled.record(first.saturating_add(lag));
        let mut last = first;
        for &at in &hit.events[1..] {
            self.itl.record(at.saturating_sub(last));
            last = last.max(at);
        }
        if let Some(tpot) = tpot(hit.latency, first, out) {
            self.tpot.record(tpot);
        }
        let whole = hit.event_count <= hit.events.len() as u64;
        if let Some(p) = per_token(&hit.events, out, t.first_chunk, t.chunks).filter(|_| whole) {
            self.per_token.record(p);
        }
    }

    /// Adds everything in `other`.
    pub fn merge(&mut self, other: &Llm) {
        self.streams += other.streams;
        self.answered += other.answered;
        for (a, b) in [
            (&mut self.ttft, &other.ttft),
            (&mut self.ttft_scheduled, &other.ttft_scheduled),
            (&mut self.itl, &other.itl),
            (&mut self.tpot, &other.tpot),
            (&mut self.per_token, &other.per_token),
            (&mut self.e2e, &other.e2e),
            (&mut self.e2e_scheduled, &other.e2e_scheduled),
        ] {
            a.merge(b);
        }
        self.output = self.output.saturating_add(other.output);
        self.input = self.input.saturating_add(other.input);
        self.input_said += other.input_said;
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        for (a, b) in self.sources.iter_mut().zip(other.sources) {
            *a += b;
        }
        self.mismatched += other.mismatched;
        self.chunks = self.chunks.saturating_add(other.chunks);
        for (a, b) in [
            (&mut self.asked_input, &other.asked_input),
            (&mut self.asked_output, &other.asked_output),
        ] {
            for (x, y) in a.iter_mut().zip(b) {
                *x = x.saturating_add(*y);
            }
        }
    }

    /// What requests asked for against what the server counted, as means
    /// per record: (asked, server's) for the input (`-prompt-tokens`)
    /// and the output (`-output-tokens`), `None` where none asked.
    pub fn asked(&self) -> [Option<(f64, f64)>; 2] {
        [self.asked_input, self.asked_output]
            .map(|[a, g, n]| (n > 0).then(|| (a as f64 / n as f64, g as f64 / n as f64)))
    }

    /// Records with token counts.
    pub fn streams(&self) -> u64 {
        self.streams
    }

    /// Of them, those with at least one token.
    pub fn answered(&self) -> u64 {
        self.answered
    }

    /// Time to the first token, from the send, ns.
    pub fn ttft(&self) -> &Distribution {
        &self.ttft
    }

    /// Time to the first token from the scheduled send, ns.
    pub fn ttft_scheduled(&self) -> &Distribution {
        &self.ttft_scheduled
    }

    /// Gaps between token events, ns.
    pub fn itl(&self) -> &Distribution {
        &self.itl
    }

    /// Time per output token after the first, ns.
    pub fn tpot(&self) -> &Distribution {
        &self.tpot
    }

    /// Decode time per token after the first chunk, ns.
    pub fn per_token(&self) -> &Distribution {
        &self.per_token
    }

    /// From the send to the answer's end, ns.
    pub fn e2e(&self) -> &Distribution {
        &self.e2e
    }

    /// From the scheduled send to the answer's end, ns.
    pub fn e2e_scheduled(&self) -> &Distribution {
        &self.e2e_scheduled
    }

    /// Output tokens in all, each record's by its best source.
    pub fn output(&self) -> u64 {
        self.output
    }

    /// Input tokens the server said, and over how many records.
    pub fn input(&self) -> (u64, u64) {
        (self.input, self.input_said)
    }

    /// Reasoning tokens (the server's count, else reasoning chunks).
    pub fn reasoning(&self) -> u64 {
        self.reasoning
    }

    /// Chunks that carried text.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Records counted by each source: the server's final usage, its
    /// per-chunk usage, the chunks.
    pub fn sources(&self) -> [(TokenSource, u64); 3] {
        [
            (TokenSource::Usage, self.sources[0]),
            (TokenSource::Running, self.sources[1]),
            (TokenSource::Chunks, self.sources[2]),
        ]
    }

    /// The source most records' output came from.
    pub fn main_source(&self) -> TokenSource {
        let all = self.sources();
        all.iter()
            .max_by_key(|(_, n)| *n)
            .map_or(all[0].0, |(s, _)| *s)
    }

    /// [`Llm::main_source`] in words, with how many records used another
    /// where some did.
    pub fn source_words(&self) -> String {
        let main = self.main_source();
        let n = self
            .sources()
            .iter()
            .find(|(s, _)| *s == main)
            .map_or(0, |(_, n)| *n);
        let others = self.streams - n;
        if others == 0 {
            main.word().to_string()
        } else {
            format!("{} ({others} records: another source)", main.word())
        }
    }

    /// Records whose server count differs from their chunks (a server
    /// that sends several tokens a chunk, or miscounts).
    pub fn mismatched(&self) -> u64 {
        self.mismatched
    }
}

/// TPOT of one record: (E2E − TTFT) / (tokens − 1), ns; `None` under two
/// tokens.
pub fn tpot(latency: u64, ttft: u64, tokens: u64) -> Option<u64> {
    (tokens >= 2).then(|| latency.saturating_sub(ttft) / (tokens - 1))
}

/// Decode time per token of one record whose token events came at
/// `events` (ns from the send): (last − first) / (`out` − the first
/// chunk's tokens), the first chunk's known from `first_chunk`, or one
/// when the `chunks` are as many as the tokens; `None` otherwise, or
/// with no token past the first chunk.
pub fn per_token(events: &[u64], out: u64, first_chunk: Option<u64>, chunks: u64) -> Option<u64> {
    let (first, last) = (*events.first()?, *events.last()?);
    let before = match first_chunk {
        Some(n) => n,
        None if chunks == out => 1,
        None => return None,
    };
    let after = out.checked_sub(before).filter(|n| *n > 0)?;
    Some(last.saturating_sub(first) / after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use barrage_model::Tokens;

    /// A stream sent `lag` late: its first token after `ttft`, then one
    /// chunk every `gap` carrying `per` tokens, `chunks` in all; the
    /// server's usage says the whole count.
    fn stream(lag: i64, ttft: u64, gap: u64, chunks: u64, per: u64) -> Hit {
        let events: Vec<u64> = (0..chunks).map(|i| ttft + i * gap).collect();
        Hit {
            scheduled: 1_000,
            timestamp: 1_000 + lag,
            latency: events.last().unwrap() + 1_000_000,
            code: 200,
            event_count: chunks,
            events,
            tokens: Some(Tokens {
                input: Some(100),
                output: Some(chunks * per),
                chunks,
                first_chunk: Some(per),
                ..Tokens::default()
            }),
            ..Hit::default()
        }
    }

    #[test]
    fn ttft_itl_tpot_and_e2e_from_the_send_and_the_schedule() {
        let mut l = Llm::default();
        // 64 tokens, 150 ms to the first, 15 ms apart; sent 2 s late.
        l.add(&stream(2_000_000_000, 150_000_000, 15_000_000, 64, 1));
        assert_eq!(l.ttft().quantile(0.5) / 1_000_000, 150);
        assert_eq!(l.ttft_scheduled().quantile(0.5) / 1_000_000, 2_150);
        assert_eq!(l.itl().quantile(0.5) / 100_000, 150);
        assert_eq!(l.itl().count(), 63);
        // (150 + 63 × 15 + 1 − 150) / 63 ms.
        let tpot = l.tpot().quantile(0.5) as f64 / 1e6;
        assert!((tpot - (63.0 * 15.0 + 1.0) / 63.0).abs() < 0.02, "{tpot}");
        assert_eq!(l.output(), 64);
        assert_eq!(l.input(), (100, 1));
        assert_eq!(l.mismatched(), 0);
        assert_eq!(l.source_words(), "server usage");
        // Four tokens a chunk: 16 chunks, 64 tokens; TPOT per token.
        let mut four = Llm::default();
        four.add(&stream(0, 150_000_000, 60_000_000, 16, 4));
        assert_eq!(four.output(), 64);
        assert_eq!(four.mismatched(), 1);
        let tpot = four.tpot().quantile(0.5) as f64 / 1e6;
        assert!((tpot - (15.0 * 60.0 + 1.0) / 63.0).abs() < 0.02, "{tpot}");
        assert_eq!(four.itl().quantile(0.5) / 1_000_000, 60);
        // Per token: 15 gaps of 60 ms over the 60 tokens after the first
        // chunk's 4: 15 ms.
        assert_eq!(four.per_token().quantile(0.5) / 100_000, 150);
        assert_eq!(per_token(&[0, 60], 8, None, 2), None, "unknown first chunk");
        l.merge(&four);
        assert_eq!((l.streams(), l.output()), (2, 128));
    }
}
