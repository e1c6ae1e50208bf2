//! An LLM request's input, made for each request: `-dataset` rows, or
//! synthetic prompts of `-prompt-tokens` words after a shared
//! `-prefix-tokens` prefix, and `-output-tokens` as `max_tokens`. Every
//! draw comes from the seed and the request's number, so two runs with
//! one seed send byte-identical bodies.
//!
//! Without a tokenizer, a synthetic prompt is words of [`VOCABULARY`]:
//! common English words that GPT-2's, cl100k's, o200k's and Llama's
//! tokenizers each count as one token (with the space before them), so
//! N words are N tokens of prompt; a chat template's own tokens come on
//! top, which the record's `asked_input` beside the server's
//! `usage.prompt_tokens` shows.

mod dataset;
mod length;

use std::{fmt, str::FromStr};

use barrage_model::{Asked, Target};
pub use serde_json::{Map, Value};

pub use dataset::{estimated_tokens, read_dataset, BadDataset, Input, Row};
pub use length::{rng_for, BadLength, Length, MAX_LENGTH};

/// Words each one token to common BPE tokenizers (see the module docs).
pub const VOCABULARY: [&str; 128] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
    "been", "if", "more", "when", "will", "would", "who", "so", "no", "time", "people", "year",
    "way", "day", "man", "thing", "world", "life", "hand", "part", "place", "work", "week", "case",
    "point", "number", "group", "water", "house", "school", "state", "home", "night", "room",
    "city", "light", "family", "name", "line", "book", "word", "body", "road", "door", "car",
    "game", "music", "paper", "story", "table", "power", "money", "market", "level", "order",
    "price", "value", "data", "system", "program", "question", "answer", "letter", "street",
    "river", "field", "color", "food", "plant", "animal", "country", "friend", "small", "large",
    "long", "great", "little", "old", "new", "good", "high", "first", "last", "next", "early",
    "young", "open", "free", "full",
];

/// `-output-tokens`: a length, or `dataset` (each row's own).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutputTokens {
    /// Drawn as the length says.
    Length(Length),
    /// The `-dataset` row's `max_tokens`, or its recorded answer's length.
    Dataset,
}

impl FromStr for OutputTokens {
    type Err = BadLength;

    fn from_str(s: &str) -> Result<Self, BadLength> {
        if s == "dataset" {
            return Ok(OutputTokens::Dataset);
        }
        s.parse()
            .map(OutputTokens::Length)
            .map_err(|_| BadLength(format!("{s}\" (or \"dataset")))
    }
}

impl fmt::Display for OutputTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputTokens::Length(l) => l.fmt(f),
            OutputTokens::Dataset => f.write_str("dataset"),
        }
    }
}

/// What each request's input is made of.
#[derive(Debug, Clone, Default)]
pub struct Prompts {
    /// `-dataset`: its rows.
    pub rows: Vec<Row>,
    /// `-dataset-random`: a random row each request (else in order).
    pub random: bool,
    /// `-prompt-tokens`: synthetic prompts of this many words.
    pub prompt: Option<Length>,
    /// `-output-tokens`.
    pub output: Option<OutputTokens>,
    /// `-prefix-tokens`: the prompt's first words, the same for all.
    prefix: String,
    /// Its words.
    prefix_words: u64,
    /// `-seed`.
    pub seed: u64,
    /// A sweep's step: each draws other prompts (and rows from another
    /// place), so that no step finds the last one's in a prefix cache.
    round: u64,
}

/// A target's body that a prompt cannot be put in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url}: the body is not a JSON object, so no prompt can go in it (-dataset, -prompt-tokens and -output-tokens fill a chat or completions request's JSON)")]
pub struct NotJson {
    /// The target's URL.
    pub url: String,
}

impl Prompts {
    /// Requests' inputs from `rows` (or synthetic ones of `prompt` words),
    /// after a prefix of `prefix` words, with `output`, under `seed`.
    pub fn new(
        rows: Vec<Row>,
        random: bool,
        prompt: Option<Length>,
        output: Option<OutputTokens>,
        prefix: u64,
        seed: u64,
    ) -> Prompts {
        let mut rng = rng_for(seed, u64::MAX);
        let mut text = String::new();
        words(&mut rng, prefix, &mut text);
        Prompts {
            rows,
            random,
            prompt,
            output,
            prefix: text,
            prefix_words: prefix,
            seed,
            round: 0,
        }
    }

    /// The next round's prompts (a sweep's next step): the same prefix,
    /// other draws.
    pub fn next_round(&mut self) {
        self.round += 1;
    }

    /// Puts request `seq`'s input into `t`'s JSON body: `messages` for a
    /// chat request, `prompt` for a completions one (by the body's own
    /// key, else the URL's path), `max_tokens` and `ignore_eos` (unless
    /// the body has it) for an output length; notes what was asked.
    pub fn fill(&self, t: &mut Target, seq: u64) -> Result<(), NotJson> {
        self.fill_then(t, seq, |_| {})
    }

    /// [`Prompts::fill`], `then` given the body's JSON before it is
    /// written (what the client adds, without a second parse).
    pub fn fill_then(
        &self,
        t: &mut Target,
        seq: u64,
        then: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<(), NotJson> {
        let not_json = || NotJson {
            url: barrage_model::words::redacted(&t.url).to_string(),
        };
        let mut doc: Map<String, Value> = if t.body.trim_ascii().is_empty() {
            Map::new()
        } else {
            match serde_json::from_slice(&t.body) {
                Ok(Value::Object(m)) => m,
                _ => return Err(not_json()),
            }
        };
        let seq = seq.wrapping_add(self.round << 40);
        let mut rng = rng_for(self.seed, seq);
        let row = (!self.rows.is_empty()).then(|| {
            let i = if self.random {
                rng_for(self.seed ^ 0x5EED, seq).usize(..self.rows.len())
            } else {
                (seq % self.rows.len() as u64) as usize
            };
            &self.rows[i]
        });
        let mut asked = Asked::default();
        let input = match (row, self.prompt) {
            (Some(r), _) => Some(match &r.input {
                Input::Prompt(p) => Input::Prompt(self.prefixed(p)),
                Input::Messages(m) => Input::Messages(self.prefixed_messages(m)),
            }),
            (None, Some(len)) => {
                let n = len.draw(&mut rng);
                let mut text = self.prefix.clone();
                words(&mut rng, n, &mut text);
                asked.input = Some(self.prefix_words + n);
                Some(Input::Prompt(text))
            }
            (None, None) => None,
        };
        if let Some(input) = input {
            let chat = if doc.contains_key("prompt") {
                false
            } else if doc.contains_key("messages") {
                true
            } else {
                let path = t.url.split(['?', '#']).next().unwrap_or("");
                !path.ends_with("/completions") || path.ends_with("/chat/completions")
            };
            match (input, chat) {
                (Input::Prompt(p), true) => {
                    let user = serde_json::json!([{"role": "user", "content": p}]);
                    doc.insert("messages".into(), user);
                }
                (Input::Prompt(p), false) => {
                    doc.insert("prompt".into(), Value::String(p));
                }
                (Input::Messages(m), true) => {
                    doc.insert("messages".into(), m);
                }
                (Input::Messages(m), false) => {
                    let joined: Vec<&str> = m
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|m| m.get("content").and_then(Value::as_str))
                        .collect();
                    doc.insert("prompt".into(), Value::String(joined.join("\n")));
                }
            }
        }
        asked.output = match self.output {
            Some(OutputTokens::Length(len)) => Some(len.draw(&mut rng)),
            Some(OutputTokens::Dataset) => row.and_then(|r| r.output),
            None => None,
        };
        if let Some(n) = asked.output {
            doc.insert("max_tokens".into(), Value::from(n));
            doc.entry("ignore_eos").or_insert(Value::Bool(true));
        }
        then(&mut doc);
        t.body = serde_json::to_vec(&doc).map_err(|_| not_json())?.into();
        t.asked = Some(asked);
        Ok(())
    }

    fn prefixed(&self, p: &str) -> String {
        if self.prefix.is_empty() {
            p.to_string()
        } else {
            format!("{} {p}", self.prefix)
        }
    }

    /// `m` with the prefix before the first user message's text.
    fn prefixed_messages(&self, m: &Value) -> Value {
        let mut m = m.clone();
        if self.prefix.is_empty() {
            return m;
        }
        let first = m
            .as_array_mut()
            .and_then(|a| a.iter_mut().find(|m| m["role"] == "user"))
            .and_then(|m| m.get_mut("content"));
        if let Some(Value::String(s)) = first {
            *s = self.prefixed(s);
        }
        m
    }
}

/// Appends `n` words of [`VOCABULARY`] drawn from `rng` to `out`.
fn words(rng: &mut fastrand::Rng, n: u64, out: &mut String) {
    out.reserve(n as usize * 6);
    for _ in 0..n {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(VOCABULARY[rng.usize(..VOCABULARY.len())]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str, body: &str) -> Target {
        Target {
            method: "POST".into(),
            url: url.into(),
            body: body.to_string().into(),
            ..Target::default()
        }
    }

    fn body(t: &Target) -> Value {
        serde_json::from_slice(&t.body).unwrap()
    }

    #[test]
    fn synthetic_prompts_are_words_and_repeat_under_one_seed() {
        let p = Prompts::new(
            Vec::new(),
            false,
            Some(Length::Fixed(12)),
            Some(OutputTokens::Length(Length::Fixed(40))),
            4,
            9,
        );
        let mut a = target(
            "http://h/v1/chat/completions",
            r#"{"model":"m","stream":true}"#,
        );
        let mut b = a.clone();
        p.fill(&mut a, 5).unwrap();
        p.fill(&mut b, 5).unwrap();
        assert_eq!(a.body, b.body);
        let doc = body(&a);
        let text = doc["messages"][0]["content"].as_str().unwrap();
        assert_eq!(text.split(' ').count(), 16, "{text}");
        assert!(text.split(' ').all(|w| VOCABULARY.contains(&w)));
        assert_eq!(doc["max_tokens"], 40);
        assert_eq!(doc["ignore_eos"], true);
        assert_eq!(doc["model"], "m");
        assert_eq!(
            a.asked,
            Some(Asked {
                input: Some(16),
                output: Some(40)
            })
        );
        // Another request: the same prefix, other words.
        let mut c = target("http://h/v1/chat/completions", "");
        p.fill(&mut c, 6).unwrap();
        let other = body(&c)["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string();
        let head = |s: &str| s.split(' ').take(4).collect::<Vec<_>>().join(" ");
        assert_eq!(head(&other), head(text));
        assert_ne!(other, text);
    }

    #[test]
    fn rows_go_in_order_or_at_random_into_chat_or_completions() {
        let rows = vec![
            Row {
                input: Input::Prompt("one".into()),
                output: Some(3),
            },
            Row {
                input: Input::Messages(serde_json::json!([{"role":"user","content":"two"}])),
                output: None,
            },
        ];
        let p = Prompts::new(rows, false, None, Some(OutputTokens::Dataset), 0, 1);
        let mut t = target("http://h/v1/completions", r#"{"ignore_eos":false}"#);
        p.fill(&mut t, 0).unwrap();
        let doc = body(&t);
        assert_eq!(
            (doc["prompt"].as_str(), doc["max_tokens"].as_u64()),
            (Some("one"), Some(3))
        );
        assert_eq!(doc["ignore_eos"], false, "the body's own word stands");
        let mut t = target("http://h/v1/chat/completions", "{}");
        p.fill(&mut t, 3).unwrap();
        assert_eq!(body(&t)["messages"][0]["content"], "two");
        assert!(body(&t).get("max_tokens").is_none());
        let random = Prompts { random: true, ..p };
        let picks: Vec<String> = (0..64)
            .map(|seq| {
                let mut t = target("http://h/v1/completions", "");
                random.fill(&mut t, seq).unwrap();
                body(&t)["prompt"].as_str().unwrap().to_string()
            })
            .collect();
        assert!(picks.iter().any(|p| p == "one") && picks.iter().any(|p| p == "two"));
        assert!(picks.windows(2).any(|w| w[0] == w[1]), "not round-robin");
        let mut bad = target("http://h/v1/completions", "prompt=1");
        assert!(random
            .fill(&mut bad, 0)
            .unwrap_err()
            .to_string()
            .starts_with("http://h/v1/completions: the body is not a JSON object"));
    }
}
