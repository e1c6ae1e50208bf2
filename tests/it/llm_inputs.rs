//! Issue 62's inputs: `-dataset` rows, synthetic prompts and answer
//! lengths (`-prompt-tokens`, `-output-tokens`, `-prefix-tokens`,
//! `-seed`), held against what `barrage serve`'s OpenAI-compatible route
//! counted, and the bodies a server received.

use barrage_stream::Hit;
use barrage_testkit::{CapacityServer, Server};
use serde_json::Value;

use crate::common::{self, attack_ok, refused};

/// A chat target at `url` whose body names only the model and streaming.
fn chat_target(dir: &std::path::Path, url: &str) -> String {
    let body = dir.join("chat.json");
    std::fs::write(&body, r#"{"model":"m","stream":true}"#).unwrap();
    format!(
        "POST {url}\nContent-Type: application/json\n@{}\n",
        body.display()
    )
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    (mean, var.sqrt())
}

/// Over 500 requests the server's `prompt_tokens` and `max_tokens` match
/// what each request asked, every one, and the asked lengths hold their
/// law's mean and spread; the report sets them side by side.
#[test]
fn synthetic_lengths_reach_the_server_as_drawn() {
    let server = CapacityServer::unlimited();
    let dir = common::tempdir("llm-synth");
    let target = chat_target(
        &dir,
        &server.url("/v1/chat/completions?first=1ms&gap=0ms&finish=last"),
    );
    let (hits, _) = attack_ok(
        &[
            "-llm=openai",
            "-prompt-tokens",
            "normal:200,20",
            "-output-tokens",
            "uniform:20..40",
            "-prefix-tokens",
            "16",
            "-seed",
            "3",
            "-rate",
            "500",
            "-requests",
            "500",
            "-timeout",
            "10s",
        ],
        &target,
    );
    assert_eq!(hits.len(), 500);
    let (mut asked_in, mut asked_out) = (Vec::new(), Vec::new());
    for h in &hits {
        assert!(h.error.is_empty(), "{h:?}");
        let t = h.tokens.unwrap_or_else(|| panic!("{h:?}"));
        assert_eq!(
            t.input, t.asked_input,
            "the server counted the prompt asked"
        );
        assert_eq!(t.output, t.asked_output, "and answered max_tokens");
        asked_in.push((t.asked_input.unwrap() - 16) as f64);
        asked_out.push(t.asked_output.unwrap() as f64);
    }
    // The draws against their law, within three standard errors (over
    // 500 draws: 0.45% of the mean for the prompts, 0.9% for the
    // answers; 3.2% of the spread).
    let n = hits.len() as f64;
    let holds = |v: &[f64], mean: f64, sd: f64| {
        let (m, s) = mean_sd(v);
        let (se_mean, se_sd) = (sd / n.sqrt(), sd / (2.0 * (n - 1.0)).sqrt());
        assert!((m - mean).abs() <= 3.0 * se_mean, "mean {m}, want {mean}");
        assert!((s - sd).abs() <= 3.0 * se_sd, "sd {s}, want {sd}");
    };
    holds(&asked_in, 200.0, 20.0);
    holds(&asked_out, 30.0, ((21f64 * 21.0 - 1.0) / 12.0).sqrt());
    let text = String::from_utf8(common::ok(&["report"], &encode(&hits))).unwrap();
    assert!(
        text.contains("Asked         [input, server's, output, server's] means"),
        "{text}"
    );
    assert!(text.contains("(+0.0%)"), "{text}");
}

/// `hits` as a stream.
fn encode(hits: &[Hit]) -> Vec<u8> {
    let mut enc = barrage_stream::Encoder::new(Vec::new()).unwrap();
    for h in hits {
        enc.write(h).unwrap();
    }
    enc.finish().unwrap()
}

/// The bodies a server received, sorted.
fn bodies(server: &Server) -> Vec<Vec<u8>> {
    let mut b: Vec<Vec<u8>> = server.received().into_iter().map(|r| r.body).collect();
    b.sort();
    b
}

/// Two runs with one seed send byte-identical bodies; another seed other
/// ones; every prompt starts with the shared prefix.
#[test]
fn one_seed_sends_the_same_bodies() {
    let dir = common::tempdir("llm-seed");
    let run = |seed: &str| {
        let server = Server::http();
        let target = chat_target(&dir, &server.url("/v1/chat/completions"));
        let args = [
            "-prompt-tokens",
            "uniform:5..50",
            "-output-tokens",
            "8",
            "-prefix-tokens",
            "4",
            "-seed",
            seed,
            "-rate",
            "100",
            "-requests",
            "30",
        ];
        attack_ok(&args, &target);
        bodies(&server)
    };
    let (a, b, c) = (run("11"), run("11"), run("12"));
    assert_eq!(a.len(), 30);
    assert_eq!(a, b, "one seed, the same bodies");
    assert_ne!(a, c);
    let prompts: Vec<String> = a
        .iter()
        .map(|b| {
            let v: Value = serde_json::from_slice(b).unwrap();
            assert_eq!(
                (v["model"].as_str(), v["max_tokens"].as_u64()),
                (Some("m"), Some(8))
            );
            assert_eq!(v["ignore_eos"], true);
            v["messages"][0]["content"].as_str().unwrap().to_string()
        })
        .collect();
    let prefix: Vec<&str> = prompts[0].split(' ').take(4).collect();
    assert!(prompts
        .iter()
        .all(|p| p.split(' ').take(4).eq(prefix.iter().copied())));
    let distinct: std::collections::HashSet<&String> = prompts.iter().collect();
    assert_eq!(distinct.len(), 30);
}

/// `-dataset` JSON lines go in order (chat messages as given, completions'
/// prompts), ShareGPT's first human turn with its answer's length as
/// `max_tokens` when asked, `-dataset-random` from the seed.
#[test]
fn datasets_go_in_order_or_at_random() {
    let dir = common::tempdir("llm-dataset");
    let rows = dir.join("rows.jsonl");
    std::fs::write(
        &rows,
        "{\"prompt\": \"one\"}\n{\"messages\": [{\"role\": \"system\", \"content\": \"be brief\"}, {\"role\": \"user\", \"content\": \"two\"}], \"max_tokens\": 5}\n\n\"three\"\n",
    )
    .unwrap();
    let server = Server::http();
    let target = chat_target(&dir, &server.url("/v1/chat/completions"));
    let ds = rows.to_str().unwrap();
    attack_ok(
        &[
            "-dataset",
            ds,
            "-rate",
            "20",
            "-requests",
            "6",
            "-max-workers",
            "1",
        ],
        &target,
    );
    let got: Vec<Value> = server
        .received()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let users: Vec<&str> = got
        .iter()
        .map(|v| {
            let m = v["messages"].as_array().unwrap();
            m.last().unwrap()["content"].as_str().unwrap()
        })
        .collect();
    assert_eq!(users, ["one", "two", "three", "one", "two", "three"]);
    assert_eq!(got[1]["messages"][0]["role"], "system");
    assert!(got[1].get("max_tokens").is_none(), "not asked");
    // ShareGPT to /v1/completions, the answers' lengths as max_tokens.
    let share = dir.join("sharegpt.json");
    std::fs::write(
        &share,
        r#"[{"id":"x","conversations":[{"from":"human","value":"hello"},{"from":"gpt","value":"a twenty char answer"}]},
            {"id":"y","conversations":[{"from":"gpt","value":"no question"}]},
            {"id":"z","conversations":[{"from":"human","value":"why"},{"from":"gpt","value":"because"}]}]"#,
    )
    .unwrap();
    let server = Server::http();
    let body = dir.join("text.json");
    std::fs::write(&body, r#"{"model":"m","stream":true}"#).unwrap();
    let target = format!(
        "POST {}\n@{}\n",
        server.url("/v1/completions"),
        body.display()
    );
    let share = share.to_str().unwrap();
    attack_ok(
        &[
            "-dataset",
            share,
            "-output-tokens",
            "dataset",
            "-rate",
            "20",
            "-requests",
            "4",
            "-max-workers",
            "1",
        ],
        &target,
    );
    let got: Vec<(String, u64)> = server
        .received()
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_slice(&r.body).unwrap();
            (
                v["prompt"].as_str().unwrap().into(),
                v["max_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [("hello", 5), ("why", 2), ("hello", 5), ("why", 2)];
    assert_eq!(got, want.map(|(p, n)| (p.to_string(), n)));
    // At random: every row, not in turn, the same under one seed.
    let pick = |seed: &str| {
        let server = Server::http();
        let target = chat_target(&dir, &server.url("/v1/chat/completions"));
        let args = [
            "-dataset",
            ds,
            "-dataset-random",
            "-seed",
            seed,
            "-rate",
            "50",
            "-requests",
            "24",
            "-max-workers",
            "1",
        ];
        attack_ok(&args, &target);
        server
            .received()
            .iter()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned())
            .collect::<Vec<_>>()
    };
    let (a, b) = (pick("5"), pick("5"));
    assert_eq!(a, b);
    assert!(a.windows(2).any(|w| w[0] == w[1]), "random, not in turn");
    for row in ["one", "two", "three"] {
        assert!(
            a.iter().any(|body| body.contains(&format!("\"{row}\""))),
            "{row}"
        );
    }
}

/// Bad inputs are one line each, naming the flag or the file's line.
#[test]
fn bad_llm_inputs_are_refused_where_they_are() {
    let dir = common::tempdir("llm-bad");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, "{\"prompt\": \"ok\"}\n{\"promt\": \"typo\"}\n").unwrap();
    let target = "POST http://127.0.0.1:1/v1/chat/completions\n";
    let bad = bad.to_str().unwrap().to_string();
    refused(
        &["attack", "-dataset", &bad, "-duration", "1s"],
        target.as_bytes(),
        &format!("-dataset {bad}:2: a row has one of \"prompt\""),
    );
    refused(
        &["attack", "-prompt-tokens", "normal:512", "-duration", "1s"],
        target.as_bytes(),
        "\"normal:512\": a token count is N, uniform:LOW..HIGH or normal:MEAN,SD",
    );
    refused(
        &["attack", "-prefix-tokens", "8", "-duration", "1s"],
        target.as_bytes(),
        "-prefix-tokens goes with -prompt-tokens or -dataset",
    );
    refused(
        &["attack", "-output-tokens", "dataset", "-duration", "1s"],
        target.as_bytes(),
        "-output-tokens dataset goes with -dataset",
    );
    let body = dir.join("form.txt");
    std::fs::write(&body, "a=1").unwrap();
    let t = format!(
        "POST http://127.0.0.1:1/v1/completions\n@{}\n",
        body.display()
    );
    refused(
        &["attack", "-prompt-tokens", "9", "-duration", "1s"],
        t.as_bytes(),
        "the body is not a JSON object, so no prompt can go in it",
    );
}

/// A multi-turn chat: a flow whose later turns carry the earlier answers,
/// assembled from the streamed chunks (`:extract VAR answer`). The
/// server counts a prompt's words: the third turn's 15 are its own two,
/// the first two questions' five and the two answers' eight.
#[test]
fn a_chat_flow_carries_the_answers_so_far() {
    let server = CapacityServer::unlimited();
    let dir = common::tempdir("llm-chat");
    let url = server.url("/v1/chat/completions?first=1ms&gap=1ms");
    let turn = |name: &str, messages: &str| {
        let path = dir.join(name);
        let body =
            format!(r#"{{"model":"m","stream":true,"max_tokens":4,"messages":[{messages}]}}"#);
        std::fs::write(&path, body).unwrap();
        path.display().to_string()
    };
    let q1 = r#"{"role":"user","content":"a b c"}"#;
    let q2 = r#"{"role":"user","content":"d e"}"#;
    let q3 = r#"{"role":"user","content":"f g"}"#;
    let a1 = r#"{"role":"assistant","content":{{a1}}}"#;
    let a2 = r#"{"role":"assistant","content":{{a2}}}"#;
    let flow = format!(
        "POST {url}\n@{}\n:extract a1 answer\n\nPOST {url}\n@{}\n:extract a2 answer\n\nPOST {url}\n@{}\n",
        turn("t1.json", q1),
        turn("t2.json", &[q1, a1, q2].join(",")),
        turn("t3.json", &[q1, a1, q2, a2, q3].join(",")),
    );
    let (hits, _) = attack_ok(
        &[
            "-format",
            "flow",
            "-llm",
            "openai",
            "-rate",
            "2",
            "-requests",
            "2",
            "-timeout",
            "5s",
        ],
        &flow,
    );
    assert_eq!(hits.len(), 6);
    let mut inputs: Vec<(u32, u64)> = hits
        .iter()
        .map(|h| {
            assert!(h.error.is_empty(), "{h:?}");
            let step = h.session.unwrap().step;
            (step, h.tokens.unwrap().input.unwrap())
        })
        .collect();
    inputs.sort();
    assert_eq!(inputs, [(0, 3), (0, 3), (1, 9), (1, 9), (2, 15), (2, 15)]);
    // A step whose answer is no LLM answer fails, saying why.
    let plain = server.url("/");
    let flow = format!("GET {plain}\n:extract a answer\n\nGET {plain}\n");
    let (hits, _) = attack_ok(&["-format", "flow", "-rate", "1", "-requests", "1"], &flow);
    assert!(
        hits[0].error.contains("extract a: answer: no LLM answer"),
        "{:?}",
        hits[0].error
    );
}
