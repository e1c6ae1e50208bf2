//! The LLM block of the text and JSON reports (`attack -llm`, issue 62):
//! token counts with their source, tokens a second, and TTFT, ITL, TPOT
//! and E2E, the first and last from the send and from the schedule, each
//! figure named by where it is measured from.

use std::io::{self, Write};

use barrage_metrics::{Distribution, Llm, Metrics};
use barrage_model::gojson;

use crate::{Percentiles, TabWriter};

/// The token counts' figures in words: output, input (or "not said"),
/// per request, the source, and the mismatched records.
pub(crate) fn tokens_words(l: &Llm) -> String {
    let (input, said) = l.input();
    format!(
        "{}, {}, {:.2}, {}, {}",
        l.output(),
        if said > 0 {
            input.to_string()
        } else {
            "not said".into()
        },
        l.output() as f64 / l.streams().max(1) as f64,
        l.source_words(),
        l.mismatched()
    )
}

/// The tokens requests asked for beside the server's counts, in words
/// (`-` where none asked); `None` when no request asked.
pub(crate) fn asked_words(l: &Llm) -> Option<String> {
    let asked = l.asked();
    if asked.iter().all(Option::is_none) {
        return None;
    }
    let pair = |p: Option<(f64, f64)>| {
        p.map_or("-, -".to_string(), |(a, g)| {
            let off = if a > 0.0 { (g - a) / a * 100.0 } else { 0.0 };
            format!("{a:.2}, {g:.2} ({off:+.1}%)")
        })
    };
    Some(format!("{}, {}", pair(asked[0]), pair(asked[1])))
}

/// The figures in the order both reports give them: name (text), JSON
/// key, distribution.
fn figures(l: &Llm) -> [(&'static str, &'static str, &Distribution); 7] {
    [
        ("TTFT", "ttft", l.ttft()),
        ("TTFT (sched)", "ttft_scheduled", l.ttft_scheduled()),
        ("ITL (chunk)", "itl", l.itl()),
        ("ITL/token", "itl_per_token", l.per_token()),
        ("TPOT", "tpot", l.tpot()),
        ("E2E", "e2e", l.e2e()),
        ("E2E (sched)", "e2e_scheduled", l.e2e_scheduled()),
    ]
}

/// The text lines; nothing when no record had token counts.
pub(crate) fn text<W: Write>(
    m: &Metrics,
    p: &Percentiles,
    cols: &[usize],
    out: W,
) -> io::Result<()> {
    let Some(l) = m.llm() else {
        return Ok(());
    };
    let mut tw = TabWriter::at_least(out, cols);
    writeln!(
        tw,
        "Tokens\t[output, input, per request, from, mismatched]\t{}",
        tokens_words(l)
    )?;
    if let Some(words) = asked_words(l) {
        writeln!(
            tw,
            "Asked\t[input, server's, output, server's] means\t{words}"
        )?;
    }
    let (out_s, all_s) = m.tokens_per_second().unwrap_or_default();
    writeln!(tw, "Tokens/s\t[output, total]\t{out_s:.2}, {all_s:.2}")?;
    for (name, _, d) in figures(l) {
        if d.count() > 0 {
            crate::lines::spread(&mut tw, name, d, p)?;
        }
    }
    tw.flush_table()
}

/// `"llm"`: `"streams"`, `"answered"` (with a token), `"tokens"`
/// (`"output"`, `"input"` (null when no server said), `"reasoning"`,
/// `"chunks"`, `"per_request"`, `"source"` (the source most records'
/// output came from: `server usage`, `server usage per chunk`, `chunks
/// with text`), `"sources"` (records by each), `"asked"` (`"input"`,
/// `"output"`: the means of what `-prompt-tokens` and `-output-tokens`
/// asked, `"asked"`, and of the server's counts, `"server"`, over the
/// records that had both; null where none asked), `"mismatched"`),
/// `"tokens_per_second"` (`"output"`, `"total"`), then `"ttft"`,
/// `"ttft_scheduled"`, `"itl"` (between chunks), `"itl_per_token"`,
/// `"tpot"`, `"e2e"` and `"e2e_scheduled"`
/// (ns, with vegeta's latency keys, null when none); left out when no
/// record had token counts.
pub(crate) fn json(s: &mut Vec<u8>, m: &Metrics, p: &Percentiles) -> io::Result<()> {
    let Some(l) = m.llm() else {
        return Ok(());
    };
    let (input, said) = l.input();
    let sources = l.sources();
    let main = l.main_source().word();
    write!(
        s,
        ",\"llm\":{{\"streams\":{},\"answered\":{},\"tokens\":{{\"output\":{},\"input\":{},\"reasoning\":{},\"chunks\":{},\"per_request\":{},\"source\":\"{main}\",\"sources\":{{",
        l.streams(),
        l.answered(),
        l.output(),
        if said > 0 { input.to_string() } else { "null".into() },
        l.reasoning(),
        l.chunks(),
        gojson::float(l.output() as f64 / l.streams().max(1) as f64),
    )?;
    for (i, (src, n)) in sources.iter().enumerate() {
        let comma = if i > 0 { "," } else { "" };
        write!(s, "{comma}\"{}\":{n}", src.word())?;
    }
    let (out_s, all_s) = m.tokens_per_second().unwrap_or_default();
    s.extend_from_slice(b"},\"asked\":{");
    for (i, (key, p)) in ["input", "output"].into_iter().zip(l.asked()).enumerate() {
        let comma = if i > 0 { "," } else { "" };
        match p {
            Some((a, g)) => {
                let (a, g) = (gojson::float(a), gojson::float(g));
                write!(s, "{comma}\"{key}\":{{\"asked\":{a},\"server\":{g}}}")?
            }
            None => write!(s, "{comma}\"{key}\":null")?,
        }
    }
    write!(
        s,
        "}},\"mismatched\":{}}},\"tokens_per_second\":{{\"output\":{},\"total\":{}}}",
        l.mismatched(),
        gojson::float(out_s),
        gojson::float(all_s)
    )?;
    for (_, key, d) in figures(l) {
        if d.count() == 0 {
            write!(s, ",\"{key}\":null")?;
            continue;
        }
        write!(s, ",\"{key}\":{{\"mean\":{},", d.mean())?;
        for (q, label) in p.iter() {
            write!(s, "\"{label}th\":{},", d.quantile(q))?;
        }
        write!(s, "\"max\":{},\"min\":{}}}", d.max(), d.min())?;
    }
    s.push(b'}');
    Ok(())
}
