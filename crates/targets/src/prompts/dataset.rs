//! `-dataset FILE`: prompts as the LLM tools take them. Either JSON lines
//! (a row a line: `{"prompt": "..."}`, `{"text": "..."}`, `{"messages":
//! [...]}` or a bare JSON string; `"max_tokens"` or `"output_tokens"` a
//! row's answer length; blank lines skipped) or one JSON array of such
//! rows or ShareGPT entries (`{"conversations": [{"from": "human",
//! "value": ...}, {"from": "gpt", ...}]}`: the first human turn is the
//! prompt, the answer after it gives its length). The array is read as a
//! stream: of a ShareGPT entry only its prompt and its answer's length are
//! kept, so a 600 MB file holds its prompts' bytes, not its own.

use std::{
    fmt,
    io::{BufRead, BufReader, Read},
};

use serde::{de, Deserialize};
use serde_json::Value;

/// A row's input.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// One user prompt.
    Prompt(String),
    /// A chat's messages, as the row gave them (an array of objects with
    /// a `role`).
    Messages(Value),
}

/// One row: its input, and the answer length it recorded or asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The prompt or messages.
    pub input: Input,
    /// `max_tokens`/`output_tokens`, or a ShareGPT answer's length.
    pub output: Option<u64>,
}

/// A dataset that does not read: where, and why.
#[derive(Debug, thiserror::Error)]
#[error("-dataset {place}: {why}")]
pub struct BadDataset {
    /// `FILE:LINE` or `FILE: entry N`.
    pub place: String,
    /// Why.
    pub why: String,
}

/// A ShareGPT answer's length in tokens without a tokenizer: a token is
/// about four characters of English (OpenAI's rule of thumb).
pub fn estimated_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4).max(1)
}

/// The rows of `input`, the file `name`.
pub fn read_dataset(input: impl Read, name: &str) -> Result<Vec<Row>, BadDataset> {
    let mut input = BufReader::with_capacity(1 << 16, input);
    let bad = |place: String, why: String| BadDataset { place, why };
    let first = loop {
        let buf = input
            .fill_buf()
            .map_err(|e| bad(name.into(), e.to_string()))?;
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let b = buf[i];
                input.consume(i);
                break Some(b);
            }
            None if buf.is_empty() => break None,
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    };
    let rows = match first {
        None => Vec::new(),
        Some(b'[') => {
            let mut de = serde_json::Deserializer::from_reader(input);
            let rows = Array::deserialize(&mut de).map_err(|e| {
                let place = if e.line() > 0 {
                    format!("{name}:{}", e.line())
                } else {
                    name.to_string()
                };
                bad(place, e.to_string())
            })?;
            rows.0
                .into_iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    r.row(|why| bad(format!("{name}: entry {i}"), why))
                        .transpose()
                })
                .collect::<Result<_, _>>()?
        }
        Some(_) => {
            let mut rows = Vec::new();
            let mut line = String::new();
            let mut at = 0u64;
            loop {
                line.clear();
                let n = input
                    .read_line(&mut line)
                    .map_err(|e| bad(format!("{name}:{}", at + 1), e.to_string()))?;
                if n == 0 {
                    break;
                }
                at += 1;
                let text = line.trim();
                if text.is_empty() {
                    continue;
                }
                let place = || format!("{name}:{at}");
                let raw: RawRow = if text.starts_with('"') {
                    RawRow::prompt(
                        serde_json::from_str(text).map_err(|e| bad(place(), e.to_string()))?,
                    )
                } else {
                    serde_json::from_str(text).map_err(|e| bad(place(), e.to_string()))?
                };
                match raw.row(|why| bad(place(), why))? {
                    Some(r) => rows.push(r),
                    None => return Err(bad(place(), "a conversation with no human turn".into())),
                }
            }
            rows
        }
    };
    if rows.is_empty() {
        return Err(bad(name.into(), "no prompts in it".into()));
    }
    Ok(rows)
}

/// A row as written: whichever of its fields it has.
#[derive(Deserialize, Default)]
struct RawRow {
    prompt: Option<String>,
    text: Option<String>,
    messages: Option<Value>,
    conversations: Option<Turns>,
    max_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl RawRow {
    fn prompt(p: String) -> RawRow {
        RawRow {
            prompt: Some(p),
            ..RawRow::default()
        }
    }

    /// Its row; `None`: a conversation with no human turn (skipped in a
    /// ShareGPT file, as vLLM's sampler skips them).
    fn row<E>(self, bad: impl Fn(String) -> E) -> Result<Option<Row>, E> {
        let output = self.max_tokens.or(self.output_tokens);
        if output == Some(0) {
            return Err(bad("max_tokens 0: an answer needs a token".into()));
        }
        let input =
            match (self.prompt.or(self.text), self.messages, self.conversations) {
                (Some(p), None, None) => Input::Prompt(p),
                (None, Some(m), None) => {
                    let ok = m.as_array().is_some_and(|a| {
                        !a.is_empty()
                            && a.iter()
                                .all(|m| m.get("role").is_some_and(Value::is_string))
                    });
                    if !ok {
                        return Err(bad(
                            "\"messages\" is an array of objects each with a \"role\"".into(),
                        ));
                    }
                    Input::Messages(m)
                }
                (None, None, Some(t)) => {
                    return Ok(t.prompt.map(|p| Row {
                        input: Input::Prompt(p),
                        output: output.or(t.answer),
                    }))
                }
                _ => return Err(bad(
                    "a row has one of \"prompt\" (or \"text\"), \"messages\" or \"conversations\""
                        .into(),
                )),
            };
        Ok(Some(Row { input, output }))
    }
}

/// The whole array, read element by element.
struct Array(Vec<RawRow>);

impl<'de> Deserialize<'de> for Array {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Array;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of rows")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Array, A::Error> {
                let mut rows = Vec::new();
                while let Some(r) = seq.next_element::<RawRow>()? {
                    rows.push(r);
                }
                Ok(Array(rows))
            }
        }
        d.deserialize_seq(V)
    }
}

/// A ShareGPT conversation, of which only the first human turn and the
/// length of the answer after it are kept.
#[derive(Default)]
struct Turns {
    prompt: Option<String>,
    answer: Option<u64>,
}

#[derive(Deserialize)]
struct Turn {
    #[serde(default)]
    from: String,
    #[serde(default)]
    value: String,
}

impl<'de> Deserialize<'de> for Turns {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Turns;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of turns ({\"from\": ..., \"value\": ...})")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Turns, A::Error> {
                let mut t = Turns::default();
                while let Some(turn) = seq.next_element::<Turn>()? {
                    match (&t.prompt, turn.from.as_str()) {
                        (None, "human" | "user") => t.prompt = Some(turn.value),
                        (Some(_), "gpt" | "assistant" | "chatgpt" | "bard")
                            if t.answer.is_none() =>
                        {
                            t.answer = Some(estimated_tokens(&turn.value))
                        }
                        _ => {}
                    }
                }
                Ok(t)
            }
        }
        d.deserialize_seq(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Row>, String> {
        read_dataset(text.as_bytes(), "d.jsonl").map_err(|e| e.to_string())
    }

    #[test]
    fn json_lines_take_prompts_and_messages() {
        let rows = read(concat!(
            "{\"prompt\": \"hello there\", \"max_tokens\": 7}\n",
            "\n",
            "\"a bare string\"\n",
            "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"id\": 3}\n",
        ))
        .unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].input, Input::Prompt("hello there".into()));
        assert_eq!(rows[0].output, Some(7));
        assert_eq!(rows[1].input, Input::Prompt("a bare string".into()));
        assert!(matches!(rows[2].input, Input::Messages(_)));
    }

    #[test]
    fn sharegpt_keeps_the_first_human_turn_and_its_answer_length() {
        let rows = read(
            r#"[{"id":"a","conversations":[{"from":"system","value":"s"},{"from":"human","value":"why?"},{"from":"gpt","value":"because of sixteen"},{"from":"human","value":"more"}]},
                {"id":"b","conversations":[{"from":"gpt","value":"orphan"}]},
                {"prompt":"plain"}]"#,
        )
        .unwrap();
        assert_eq!(rows.len(), 2, "the entry without a human turn is skipped");
        assert_eq!(rows[0].input, Input::Prompt("why?".into()));
        assert_eq!(rows[0].output, Some(5), "18 characters, four a token");
        assert_eq!(rows[1].output, None);
    }

    #[test]
    fn a_bad_row_names_its_line() {
        assert_eq!(
            read("{\"prompt\":\"a\"}\n{\"prompt\": 3}\n").unwrap_err(),
            "-dataset d.jsonl:2: invalid type: integer `3`, expected a string at line 1 column 12"
        );
        assert_eq!(
            read("{\"prompt\":\"a\"}\n{\"id\": 1}\n").unwrap_err(),
            "-dataset d.jsonl:2: a row has one of \"prompt\" (or \"text\"), \"messages\" or \"conversations\""
        );
        assert!(read("[{\"prompt\":\"a\"},\n{\"messages\": []}]")
            .unwrap_err()
            .starts_with("-dataset d.jsonl: entry 1: \"messages\" is an array"));
        assert!(read("[{\"prompt\":\"a\"},\n{\"prompt\": ]")
            .unwrap_err()
            .starts_with("-dataset d.jsonl:2: "));
        assert_eq!(
            read("\n\n").unwrap_err(),
            "-dataset d.jsonl: no prompts in it"
        );
    }
}
