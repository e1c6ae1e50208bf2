//! Running a sweep: each step an attack on the same engine as `attack`,
//! one after another into one result stream; `-stop-on` and `-find-max`.

use std::{
    io,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use barrage_attack::{
    Attack, AttackConfig, AttackError, HitSink, Rate, StopReason, Stopper, Targets,
};
use barrage_client::ClientConfig;
use barrage_metrics::{Metrics, Threshold};
use barrage_model::{Hit, Target};

use crate::{
    found::Found,
    row::Decision,
    row::{Bounds, Row},
    steps::{number, Load},
};

/// What a sweep does besides its steps.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The steps in order (with `find_max`, the first is where the search
    /// starts and the rest are unused).
    pub steps: Vec<Load>,
    /// `-stop-on`: stop after the first step for which any holds.
    pub stop_on: Vec<Threshold>,
    /// `-find-max`: the conditions a step must all meet, and their text.
    pub find_max: Option<(Vec<Threshold>, String)>,
    /// `-slo` and `-attain`: objectives the share `-attain` of a step's
    /// requests must meet, decided on its interval (a search too).
    pub slo: Option<(barrage_metrics::Slo, f64)>,
    /// `-precision`: the search ends when the first failing load is
    /// within this share above the last passing one.
    pub precision: f64,
    /// `-pause` between steps.
    pub pause: Duration,
}

/// A step's figures and the records they come from.
pub struct Step {
    /// The table's row.
    pub row: Row,
    /// The step's records (warm-up left out), for conditions.
    pub metrics: Metrics,
}

/// What ran.
pub struct Outcome {
    /// The finished steps, by load.
    pub rows: Vec<Row>,
    /// What `-find-max` found.
    pub found: Option<Found>,
    /// A `-stop-on` condition that held, and at which step.
    pub stopped_on: Option<(Load, String)>,
}

/// Runs one step at a load; `Ok(None)` when stopped (Ctrl-C) before its
/// end, so that the table covers finished steps only.
pub trait RunStep {
    /// The error a step can fail with.
    type Error;
    /// Runs the step.
    fn step(&mut self, load: Load) -> Result<Option<Step>, Self::Error>;
    /// Waits `pause` between steps; false when stopped meanwhile.
    fn pause(&mut self, pause: Duration) -> bool;
}

/// The most probes a `-find-max` search makes.
const MAX_PROBES: usize = 40;
/// The highest rate a search tries (requests per second).
const MAX_RATE: f64 = 10_000_000.0;

/// Runs `plan`'s steps (or its search) on `runner`, calling `done` after
/// each finished step.
pub fn sweep<R: RunStep>(
    plan: &Plan,
    runner: &mut R,
    mut done: impl FnMut(&Row),
) -> Result<Outcome, R::Error> {
    let mut out = Outcome {
        rows: Vec::new(),
        found: None,
        stopped_on: None,
    };
    let mut first = true;
    let mut run = |load: Load, out: &mut Outcome| -> Result<Option<Step>, R::Error> {
        if !std::mem::take(&mut first) && !plan.pause.is_zero() && !runner.pause(plan.pause) {
            return Ok(None);
        }
        let step = runner.step(load)?;
        if let Some(s) = &step {
            done(&s.row);
            out.rows.push(s.row.clone());
        }
        Ok(step)
    };
    let search = match (&plan.find_max, &plan.slo) {
        (None, None) => None,
        (find, slo) => {
            let mut text: Vec<String> = slo
                .iter()
                .map(|(s, attain)| format!("{}% meeting {s}", attain * 100.0))
                .collect();
            text.extend(find.iter().map(|f| f.1.clone()));
            let conditions = find.as_ref().map(|f| f.0.clone()).unwrap_or_default();
            Some((conditions, text.join(", ")))
        }
    };
    match &search {
        None => {
            for &load in &plan.steps {
                let Some(step) = run(load, &mut out)? else {
                    break;
                };
                if let Some(why) = plan.stop_on.iter().find_map(|t| t.check(&step.metrics)) {
                    out.stopped_on = Some((load, why));
                    break;
                }
            }
        }
        Some((conditions, text)) => {
            let (mut good, mut bad): (Option<Load>, Option<Load>) = (None, None);
            let mut bad_undecided = false;
            let confidence = plan.slo.as_ref().map(|_| 0.95);
            let mut load = plan.steps[0];
            let mut found = Found::Unfinished;
            for _ in 0..MAX_PROBES {
                let Some(step) = run(load, &mut out)? else {
                    break;
                };
                if step.row.generator_bound {
                    found = Found::GeneratorBound {
                        load,
                        held: good,
                        conditions: text.clone(),
                        why: step.row.bound_by.clone(),
                    };
                    break;
                }
                // A growing queue fails a step whatever its figures say
                // yet: the server is past its capacity. An undecided SLO
                // is not a pass.
                let held = conditions.iter().all(|c| c.check(&step.metrics).is_some());
                let slo = step.row.slo.map(|s| s.decision);
                if held && step.row.backlog.is_none() && slo.is_none_or(|d| d == Decision::Pass) {
                    good = Some(load);
                } else {
                    bad = Some(load);
                    bad_undecided = slo == Some(Decision::Undecided);
                }
                let next = match (good, bad) {
                    (None, _) => {
                        found = Found::FirstFails {
                            conditions: text.clone(),
                        };
                        break;
                    }
                    (Some(g), None) => {
                        let up = g.amount() * 2.0;
                        if up > MAX_RATE {
                            found = Found::Max {
                                load: g,
                                above: None,
                                conditions: text.clone(),
                                undecided: false,
                                confidence,
                                throughput: ok_at(&out, g),
                            };
                            break;
                        }
                        g.with_amount(up)
                    }
                    (Some(g), Some(b)) => {
                        let mid = g.with_amount(round((g.amount() + b.amount()) / 2.0));
                        let close = (b.amount() - g.amount()) / g.amount() <= plan.precision;
                        if close || mid == g || mid == b {
                            found = Found::Max {
                                load: g,
                                above: Some(b),
                                conditions: text.clone(),
                                undecided: bad_undecided,
                                confidence,
                                throughput: ok_at(&out, g),
                            };
                            break;
                        }
                        mid
                    }
                };
                load = next;
            }
            out.found = Some(found);
        }
    }
    out.rows
        .sort_by(|a, b| a.load.amount().total_cmp(&b.load.amount()));
    Ok(out)
}

/// The successful answers a second of the step at `load`.
fn ok_at(out: &Outcome, load: Load) -> f64 {
    let row = out.rows.iter().find(|r| r.load == load);
    row.map_or(0.0, |r| r.throughput)
}

/// A probe's rate: whole requests per second from 10/s up.
fn round(v: f64) -> f64 {
    if v >= 10.0 {
        v.round()
    } else {
        (v * 1000.0).round() / 1000.0
    }
}

/// Why a step could not run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The attack could not start (TLS files, threads).
    #[error(transparent)]
    Attack(#[from] AttackError),
    /// Writing the result stream failed.
    #[error("writing the results: {0}")]
    Output(io::Error),
    /// The targets cannot be sent.
    #[error("{0}")]
    Targets(String),
}

/// Runs steps as attacks, on the engine of `barrage attack`, writing every
/// record to one sink: a step's records carry its name (`rate=5000`,
/// `c=200`), its warm-up's that name and ` warmup`.
pub struct Attacker {
    /// The targets, for every step.
    pub targets: Vec<Target>,
    /// A flow's sessions instead (`-format flow`): the load is sessions.
    pub flow: Option<Arc<barrage_attack::FlowPlan>>,
    /// The attack's settings (its rate, duration and name are the step's).
    pub base: AttackConfig,
    /// How requests are sent.
    pub client: ClientConfig,
    /// Where every step's records go.
    pub sink: Arc<Mutex<Box<dyn HitSink>>>,
    /// Stops the step in progress (and the sweep).
    pub stopper: Stopper,
    /// Measured part of each step.
    pub step_duration: Duration,
    /// `-step-until`: each step ends once this figure is sure.
    pub step_until: Option<barrage_metrics::Until>,
    /// `-slo` and `-attain`: each step counts its attainment, is decided
    /// on its interval, and runs up to [`SLO_BUDGET`] times
    /// `step_duration` while undecided.
    pub slo: Option<(barrage_metrics::Slo, f64)>,
    /// The first part of each step, written but left out of its figures.
    pub warmup: Duration,
    /// When a step counts as generator-bound.
    pub bounds: Bounds,
    /// Each request's LLM input (`-dataset`, `-prompt-tokens`), other
    /// draws each step.
    pub prompts: Option<barrage_targets::Prompts>,
}

/// The suffix of a warm-up record's attack name.
pub const WARMUP: &str = " warmup";

/// One step's view of the shared sink: warm-up records renamed, the rest
/// counted.
struct StepSink {
    sink: Arc<Mutex<Box<dyn HitSink>>>,
    counted: Arc<Mutex<Metrics>>,
    warmup_ns: i64,
    first: Option<i64>,
    scratch: Hit,
    warm_name: String,
    until: Option<StepUntil>,
}

/// `-step-until` in a step: its counted records judged once a second of
/// sends; once the figure is sure, the step's stopper is met and the
/// words kept. With `-slo`, also once the step's measured part is over and
/// its attainment is decided (pass or fail): a step whose interval still
/// straddles `-attain` runs on, to its budget.
struct StepUntil {
    until: Option<barrage_metrics::Until>,
    /// `-attain`, and the send time (ns from the step's first) before
    /// which no decision ends the step.
    attain: Option<(f64, i64)>,
    judged: Option<i64>,
    stop: Stopper,
    said: Arc<Mutex<Option<String>>>,
}

/// How many times `-step-duration` a step with `-slo` may run while its
/// attainment's interval straddles `-attain`.
pub const SLO_BUDGET: u32 = 3;

/// How often `-step-until` judges a step, in send time.
const STEP_UNTIL_EVERY: i64 = 1_000_000_000;

impl HitSink for StepSink {
    fn write(&mut self, hit: &Hit) -> io::Result<()> {
        // Records arrive as they finish, the earliest scheduled about
        // first: the step's start is the earliest `scheduled` seen.
        let first = self.first.map_or(hit.scheduled, |f| f.min(hit.scheduled));
        self.first = Some(first);
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        if hit.scheduled < first.saturating_add(self.warmup_ns) {
            self.scratch.clone_from(hit);
            self.scratch.attack.clone_from(&self.warm_name);
            return sink.write(&self.scratch);
        }
        let mut counted = self.counted.lock().unwrap_or_else(|p| p.into_inner());
        counted.add(hit);
        if let Some(u) = &mut self.until {
            let start = *u.judged.get_or_insert(hit.timestamp);
            if hit.timestamp >= start.saturating_add(STEP_UNTIL_EVERY) {
                let settled = u.until.as_ref().and_then(|until| until.settled(&counted));
                let decided = u.attain.is_some_and(|(attain, after)| {
                    counted
                        .latest()
                        .zip(counted.earliest())
                        .is_some_and(|(l, e)| l - e >= after)
                        && counted
                            .decide(attain)
                            .is_some_and(|d| d != Decision::Undecided)
                });
                u.judged = Some(hit.timestamp);
                if settled.is_some() || decided {
                    *u.said.lock().unwrap_or_else(|p| p.into_inner()) = settled;
                    u.stop.met();
                    self.until = None;
                }
            }
        }
        drop(counted);
        sink.write(hit)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.lock().unwrap_or_else(|p| p.into_inner()).flush()
    }

    fn audit(&mut self, sample: &barrage_model::Audit) -> io::Result<()> {
        // The step's verdict reads its generator's self-audit too.
        self.counted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add_run(&[], &[(0, sample)]);
        self.sink
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .audit(sample)
    }
}

impl RunStep for Attacker {
    type Error = SweepError;

    fn step(&mut self, load: Load) -> Result<Option<Step>, SweepError> {
        let mut config = self.base.clone();
        config.name = load.name();
        let budget = if self.slo.is_some() { SLO_BUDGET } else { 1 };
        config.duration = Some(self.warmup + self.step_duration * budget);
        config.requests = None;
        config.stages = None;
        match load {
            Load::Rate(r) => {
                config.rate = number(r)
                    .parse::<Rate>()
                    .map_err(|e| SweepError::Targets(e.to_string()))?;
            }
            Load::Concurrency(c) => {
                config.rate = Rate::Max;
                config.max_workers = Some(c);
            }
        }
        // The verdict's lag limit is the sweep's -lag-limit; blocks for
        // -step-until's intervals and the backlog's line.
        let options = barrage_metrics::Options {
            limits: barrage_metrics::Limits {
                lag: self.bounds.lag_p99.as_nanos().min(u64::MAX as u128) as u64,
                ..Default::default()
            },
            intervals: true,
            slo: self.slo.as_ref().map(|s| s.0.clone()),
            ..Default::default()
        };
        let stop = self.stopper.child();
        let said = Arc::new(Mutex::new(None));
        let counted = Arc::new(Mutex::new(Metrics::with_options(options)));
        let sink = StepSink {
            sink: self.sink.clone(),
            counted: counted.clone(),
            warmup_ns: self.warmup.as_nanos() as i64,
            first: None,
            scratch: Hit::default(),
            warm_name: format!("{}{WARMUP}", config.name),
            until: (self.step_until.is_some() || self.slo.is_some()).then(|| StepUntil {
                until: self.step_until.clone(),
                attain: self
                    .slo
                    .as_ref()
                    .map(|s| (s.1, self.step_duration.as_nanos() as i64)),
                judged: None,
                stop: stop.clone(),
                said: said.clone(),
            }),
        };
        let targets = match (&self.flow, &mut self.prompts) {
            (Some(plan), _) => Targets::Flow(plan.clone()),
            (None, Some(p)) => {
                p.next_round();
                let (all, p) = (self.targets.clone(), p.clone());
                barrage_attack::load::prompted_plain("targets", all, p, Some(&self.client))
                    .map_err(|e| SweepError::Targets(e.to_string()))?
            }
            (None, None) => {
                Targets::fixed(self.targets.clone()).map_err(|e| SweepError::Targets(e.0))?
            }
        };
        let report =
            Attack::new(config, self.client.clone())?.run(targets, Box::new(sink), stop)?;
        match report.reason {
            StopReason::OutputFailed => {
                return Err(SweepError::Output(
                    report
                        .output_error
                        .unwrap_or_else(|| io::Error::other("the output failed")),
                ))
            }
            StopReason::BadTarget => {
                return Err(SweepError::Targets(
                    report.target_error.map(|e| e.0).unwrap_or_default(),
                ))
            }
            StopReason::Stopped | StopReason::Abandoned => return Ok(None),
            StopReason::Done | StopReason::TargetsExhausted => {}
        }
        let metrics = std::mem::take(&mut *counted.lock().unwrap_or_else(|p| p.into_inner()));
        let mut row = Row::new(load, &metrics, self.bounds);
        row.until = said.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((_, attain)) = &self.slo {
            row.slo = metrics.decide(*attain).map(|decision| crate::SloRow {
                attainment: metrics.attainment().unwrap_or(0.0),
                goodput: metrics.goodput().unwrap_or(0.0),
                decision,
            });
        }
        Ok(Some(Step { row, metrics }))
    }

    fn pause(&mut self, pause: Duration) -> bool {
        self.stopper.sleep_until(Instant::now() + pause)
    }
}

/// Rebuilds a saved sweep's steps from its records (warm-up records and
/// records of other attacks left out).
#[derive(Default)]
pub struct Collect {
    steps: Vec<(Load, Metrics)>,
}

impl Collect {
    /// Adds a record to its step.
    pub fn add(&mut self, hit: &Hit) {
        let Some(load) = Load::from_name(&hit.attack) else {
            return;
        };
        // Records come step after step: the last step first.
        match self.steps.iter_mut().rev().find(|(l, _)| *l == load) {
            Some((_, m)) => m.add(hit),
            None => {
                // Blocks, for the backlog's line (as the live step keeps).
                let mut m = Metrics::with_options(barrage_metrics::Options {
                    intervals: true,
                    ..Default::default()
                });
                m.add(hit);
                self.steps.push((load, m));
            }
        }
    }

    /// The rows, by load.
    pub fn rows(mut self, bounds: Bounds) -> Vec<Row> {
        self.steps
            .sort_by(|a, b| a.0.amount().total_cmp(&b.0.amount()));
        self.steps
            .iter()
            .map(|(l, m)| Row::new(*l, m, bounds))
            .collect()
    }
}

#[cfg(test)]
mod tests;
