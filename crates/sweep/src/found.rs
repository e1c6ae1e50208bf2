//! [`Found`]: what a `-find-max` (or `-slo`) search found, in words for
//! the table's last line and the chart, and as JSON's `"find_max"`.

use serde_json::{json, Value};

use crate::Load;

/// What a `-find-max` search found, for the table's last line and JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// The highest load that held the conditions.
    Max {
        /// The load.
        load: Load,
        /// The lowest load above it that failed them: the answer lies
        /// between the two (`None`: the search reached its top).
        above: Option<Load>,
        /// The conditions, as typed.
        conditions: String,
        /// Whether `above` failed by an undecided `-slo` (its interval
        /// straddled the target after the whole budget).
        undecided: bool,
        /// The confidence of each decision (0.95 with `-slo`; `None`:
        /// decided on the figures alone).
        confidence: Option<f64>,
        /// Successful answers a second at `load`.
        throughput: f64,
    },
    /// Even the first step failed them.
    FirstFails {
        /// The conditions, as typed.
        conditions: String,
    },
    /// barrage could not keep the schedule at this load.
    GeneratorBound {
        /// The load.
        load: Load,
        /// The highest load below it that held the conditions: the
        /// server takes at least that.
        held: Option<Load>,
        /// The conditions, as typed.
        conditions: String,
        /// Why the step was the generator's ([`crate::Row::bound_by`]).
        why: Vec<String>,
    },
    /// Stopped (Ctrl-C) before an answer.
    Unfinished,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Found::Max {
                load,
                above,
                conditions,
                undecided,
                throughput,
                ..
            } => {
                let what = match load {
                    Load::Rate(_) => "rate",
                    Load::Concurrency(_) => "concurrency",
                };
                write!(f, "max {what} holding {conditions}: {}", grouped(load))?;
                if let Load::Concurrency(_) = load {
                    let ok = barrage_model::words::thousands(throughput.round() as u64);
                    write!(f, ", {ok} ok/s")?;
                }
                match above {
                    Some(a) => write!(
                        f,
                        " (between {}, which held, and {}, which {})",
                        grouped(load),
                        grouped(a),
                        if *undecided {
                            "stayed undecided"
                        } else {
                            "did not"
                        }
                    ),
                    None => write!(f, " (the search's top: the server may take more)"),
                }
            }
            Found::FirstFails { conditions } => {
                write!(f, "even the first step fails {conditions}")
            }
            Found::GeneratorBound {
                load,
                held,
                conditions,
                why,
            } => {
                let why = if why.is_empty() {
                    String::new()
                } else {
                    format!(": {}", why.join("; "))
                };
                let what = match load {
                    Load::Rate(_) => "rate",
                    Load::Concurrency(_) => "concurrency",
                };
                match held {
                    Some(h) => write!(
                        f,
                        "max {what} holding {conditions}: at least {}; barrage was the limit above it (limited by the generator at {}{why}), so the server's limit is not known",
                        grouped(h),
                        grouped(load)
                    )?,
                    None => write!(
                        f,
                        "limited by the generator at {}{why}: barrage could not keep the schedule, so the server's limit is not known",
                        grouped(load)
                    )?,
                }
                write!(f, " (try more -cpus, another machine, or -shard)")
            }
            Found::Unfinished => write!(f, "stopped before the search finished"),
        }
    }
}

/// `12,400/s` or `1,200 connections`.
fn grouped(load: &Load) -> String {
    let out = barrage_model::words::thousands(load.amount().round() as u64);
    match load {
        Load::Rate(_) => format!("{out}/s"),
        Load::Concurrency(_) => format!("{out} connections"),
    }
}

/// `{"rate": R}` or `{"concurrency": C}`.
pub(crate) fn load_json(l: &Load) -> Value {
    match l {
        Load::Rate(r) => json!({"rate": r}),
        Load::Concurrency(c) => json!({"concurrency": c}),
    }
}

/// `"find_max"`: `"load"` (the answer; `"found"`, its older name),
/// `"low"` and `"high"` (the bracket: the highest load that held, the
/// lowest that did not; null where the search has no such step),
/// `"confidence"` (0.95 with `-slo`, each step decided on the interval of
/// its attainment; null: decided on its figures alone), `"limited_by"`
/// (`"server"` when a load failed the conditions, `"undecided"` when its
/// interval still straddled `-attain`, `"generator"` when barrage could
/// not keep a schedule, null otherwise; then `"load"` is the highest
/// load that held, an "at least", and `"bound_by"` says why), `"slo"`
/// (the conditions), `"throughput"` (ok/s at the answer) and `"text"`.
pub(crate) fn find_max_json(f: &Found) -> Value {
    let load = |l: &Option<Load>| l.as_ref().map_or(Value::Null, load_json);
    let (answer, low, high, limited_by, slo, confidence) = match f {
        Found::Max {
            load: l,
            above,
            conditions,
            undecided,
            confidence,
            ..
        } => (
            Some(*l),
            Some(*l),
            *above,
            above.map(|_| if *undecided { "undecided" } else { "server" }),
            Some(conditions.as_str()),
            *confidence,
        ),
        Found::FirstFails { conditions } => (
            None,
            None,
            None,
            Some("server"),
            Some(conditions.as_str()),
            None,
        ),
        Found::GeneratorBound {
            load: l,
            held,
            conditions,
            ..
        } => (
            *held,
            *held,
            Some(*l),
            Some("generator"),
            Some(conditions.as_str()),
            None,
        ),
        Found::Unfinished => (None, None, None, None, None, None),
    };
    let bound_by = match f {
        Found::GeneratorBound { why, .. } => json!(why),
        _ => Value::Null,
    };
    json!({
        "bound_by": bound_by,
        "load": load(&answer),
        "found": load(&answer),
        "low": load(&low),
        "high": load(&high),
        "confidence": confidence,
        "throughput": match f {
            Found::Max { throughput, .. } => json!(throughput),
            _ => Value::Null,
        },
        "limited_by": limited_by,
        "slo": slo,
        "text": f.to_string(),
    })
}
