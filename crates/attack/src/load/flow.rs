//! `-format flow`: a flow file read whole and made into the attack's
//! sessions ([`FlowPlan`]). Every refusal names the file and line, before
//! anything is sent.

use std::{io::BufRead, sync::Arc};

use barrage_client::{Check, Checks, Extract, PreparedTarget, StepReads};
use barrage_targets::{Context, Flow, TargetReader};

use super::spec::{LoadError, TargetsSpec};
use crate::{FlowPlan, PlanStep, Targets};

/// The attack's sessions from the flow `reader` reads, with the `-feed`
/// rows; `shard`: `-shard i/n`'s i; `usage`: what `-llm-usage` puts in
/// each streaming JSON body, as rendered.
pub(super) fn targets(
    spec: TargetsSpec,
    reader: TargetReader<Box<dyn BufRead + Send>>,
    usage: Option<barrage_client::LlmUsage>,
) -> Result<Targets, LoadError> {
    let Some(http) = reader.into_flow() else {
        return Err(LoadError::NotAFlow);
    };
    let shard = spec.shard;
    let (feed, feed_name) = spec
        .feed
        .map_or((None, String::from("-")), |(f, n)| (Some(f), n));
    let (columns, rows, lines) = feed.map_or((Vec::new(), Vec::new(), Vec::new()), |f| {
        (f.columns, f.rows, f.lines)
    });
    let flow = Flow::from_targets(http, &columns)?;
    let at = |line: u64, what: String| LoadError::At {
        file: flow.source.clone(),
        line,
        what,
    };
    let mut steps = Vec::with_capacity(flow.steps.len());
    for step in &flow.steps {
        let checks = step
            .checks
            .iter()
            .map(|c| {
                c.text
                    .parse::<Check>()
                    .map_err(|e| at(c.line, format!(":check {}: {e}", c.text)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let extracts = step
            .extractions
            .iter()
            .map(|x| {
                x.expr
                    .parse::<Extract>()
                    .map(|e| (x.column, x.var.clone(), e))
                    .map_err(|e| at(x.line, format!(":extract {} {e}", x.var)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Sent as written when nothing varies; else what its record
        // names when a rendering cannot be sent: the step with its
        // values empty.
        // A step whose host is a value (`http://{{host}}/`) cannot be
        // sent with it empty: its record's stand-in then has an `x` for
        // each value.
        let template = step.template.clone();
        let varies = barrage_targets::has_placeholders(&step.target);
        let mut rng = fastrand::Rng::new();
        let mut stand_in = |value: &str| {
            let values = vec![value.to_string(); flow.columns.len()];
            PreparedTarget::new(asked(
                template.render(&mut Context {
                    seq: 0,
                    shard,
                    row: Some(&values[..]),
                    rng: &mut rng,
                }),
                usage,
            ))
        };
        let prepared = match stand_in("") {
            Err(_) if varies => stand_in("x"),
            other => other,
        }
        .map_err(|e| at(step.line, format!("step {}: {e}", step.name)))?;
        // A step that takes `-feed` columns and no variable: each row's
        // request is checked before the first session, as for targets
        // (one a variable shapes is known only when it is sent).
        if template.last_column().is_some_and(|c| c < columns.len()) {
            for (row, line) in rows.iter().zip(&lines) {
                let t = template.render(&mut Context {
                    seq: 0,
                    shard,
                    row: Some(&row[..]),
                    rng: &mut rng,
                });
                PreparedTarget::new(t).map_err(|e| LoadError::At {
                    file: format!("-feed {feed_name}"),
                    line: *line,
                    what: format!("step {}: {e}", step.name),
                })?;
            }
        }
        let think = step.think;
        steps.push(PlanStep {
            varies,
            render: Box::new(move |id, row, rng| {
                let t = template.render(&mut Context {
                    seq: id,
                    shard,
                    row: Some(row),
                    rng,
                });
                asked(t, usage)
            }),
            reads: StepReads {
                checks: (!checks.is_empty()).then_some(Checks(checks)),
                extracts,
            },
            think: Box::new(move |rng| think.draw(rng)),
            prepared: Arc::new(prepared),
        });
    }
    Ok(Targets::Flow(Arc::new(FlowPlan {
        steps,
        rows,
        random_rows: spec.feed_random,
        columns: flow.columns.len(),
        cookies: spec.cookies,
    })))
}

/// `t` with the usage `usage` asks for in its streaming JSON body
/// (`-llm`): a step's body is whole JSON only once rendered.
fn asked(
    mut t: barrage_model::Target,
    usage: Option<barrage_client::LlmUsage>,
) -> barrage_model::Target {
    if let Some(body) = usage.and_then(|u| barrage_client::ask_usage(&t.body, u)) {
        t.body = body.into();
    }
    t
}
