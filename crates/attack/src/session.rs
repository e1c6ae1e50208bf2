//! Sessions (`-format flow`): each ticket of the schedule is a session,
//! which sends its flow's steps one after another, carrying its cookies
//! and the values its steps extract. Session *i*'s first step is due when
//! ticket *i* is; a later step goes when the previous answer and its
//! think time are done, and that moment is its `scheduled` time, so that
//! lag stays the generator's own delay. Each request is one record,
//! marked with its session and step; the record of a session's last
//! request says how it ended.
//!
//! At the attack's end (`-duration`, Ctrl-C, a closed output) a session
//! finishes the step it is on and sends no more: it is started and not
//! ended.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use barrage_client::{Client, PreparedTarget, SessionState, StepReads};
use barrage_model::{SessionEnd, SessionMark, Target};

use crate::writer::{deliver, record, took, RequestContext};

/// A step's request for a session: from its number and its values (the
/// `-feed` row, then the variables), with random numbers for `{{rand}}`.
pub type Render = Box<dyn Fn(u64, &[String], &mut fastrand::Rng) -> Target + Send + Sync>;

/// A step's think time, drawn.
pub type ThinkTime = Box<dyn Fn(&mut fastrand::Rng) -> Duration + Send + Sync>;

/// One step, ready to send.
pub struct PlanStep {
    /// Its request, rendered per session.
    pub render: Render,
    /// Whether the rendering varies by session (placeholders): else
    /// `prepared` goes, unless the jar has a cookie for it.
    pub varies: bool,
    /// What its answer is read for.
    pub reads: StepReads,
    /// Its wait after the answer.
    pub think: ThinkTime,
    /// Its target as sent when nothing varies per session (no
    /// placeholder, no cookie for it), and the target its record names
    /// when its rendering cannot be sent.
    pub prepared: Arc<PreparedTarget>,
}

/// A flow, ready to run as an attack's sessions.
pub struct FlowPlan {
    /// Its steps, in order.
    pub steps: Vec<PlanStep>,
    /// `-feed`'s rows: one per session.
    pub rows: Vec<Vec<String>>,
    /// `-feed-random`.
    pub random_rows: bool,
    /// The template columns: the `-feed` file's, then the variables.
    pub columns: usize,
    /// Whether sessions keep cookies (`-cookies`).
    pub cookies: bool,
    /// The schedule's length (`-duration`, or its stages'): past it, a
    /// session sends no further step.
    pub duration: Option<Duration>,
}

impl FlowPlan {
    /// Whether some step reads answers' bodies, and whether some reads
    /// their headers (the cookie jar does): what the client keeps of
    /// each answer until the step is judged.
    pub fn reads(&self) -> (bool, bool) {
        (
            self.steps.iter().any(|s| s.reads.need_body()),
            self.cookies || self.steps.iter().any(|s| s.reads.need_headers()),
        )
    }

    /// The target a session's step `step` goes to: its prepared one when
    /// nothing varies, else rendered with the session's values and its
    /// cookies; why not, when that cannot be sent.
    fn target_of(
        &self,
        step: &PlanStep,
        id: u64,
        state: &SessionState,
        rng: &mut fastrand::Rng,
    ) -> Result<Arc<PreparedTarget>, String> {
        let cookie = state.cookie_header(&step.prepared.url_text);
        if !step.varies && cookie.is_none() {
            return Ok(step.prepared.clone());
        }
        let mut target = (step.render)(id, &state.vars, rng);
        if let Some(c) = cookie {
            target.headers.push(("Cookie".into(), c));
        }
        PreparedTarget::new(target).map(Arc::new).map_err(|e| e.0)
    }

    /// A new session's values: its `-feed` row, then empty variables.
    fn first_values(&self, id: u64, rng: &mut fastrand::Rng) -> Vec<String> {
        let rows = &self.rows;
        let mut vars = match rows.len() {
            0 => Vec::new(),
            n if self.random_rows => rows[rng.usize(..n)].clone(),
            n => rows[(id % n as u64) as usize].clone(),
        };
        vars.resize(self.columns, String::new());
        vars
    }
}

/// Runs session `id`, whose first step is due at `scheduled` (unix ns),
/// to its end: each request's record goes to the writer as it is done.
pub(crate) async fn run(
    client: &Client,
    ctx: &RequestContext,
    plan: &FlowPlan,
    id: u64,
    mut scheduled: i64,
) {
    let mut rng = fastrand::Rng::new();
    let mut state = SessionState {
        vars: plan.first_values(id, &mut rng),
        jar: plan.cookies.then(cookie_store::CookieStore::default),
    };
    let end_at = plan.duration.map(|d| ctx.clock.start + d);
    let mut first_sent = None;
    for (i, step) in plan.steps.iter().enumerate() {
        let sent = Instant::now();
        let first = *first_sent.get_or_insert(sent);
        let (target, result) = match plan.target_of(step, id, &state, &mut rng) {
            Ok(t) => {
                let r = client.send_step(&t, id, &step.reads, &mut state).await;
                (t, r)
            }
            Err(e) => (step.prepared.clone(), Err(barrage_client::Failure(e))),
        };
        let latency = took(&result, sent);
        let mut done = record(
            target,
            id,
            scheduled,
            ctx.clock.unix(sent),
            sent,
            latency,
            result,
        );
        let end = if !done.ok() {
            SessionEnd::Failed
        } else if i + 1 == plan.steps.len() {
            SessionEnd::Completed
        } else {
            SessionEnd::Going
        };
        done.session = Some(SessionMark {
            id,
            step: i as u32,
            end,
            took: match end {
                SessionEnd::Going => 0,
                _ => first.elapsed().as_nanos() as u64,
            },
        });
        deliver(&ctx.tx, done);
        if end != SessionEnd::Going {
            return;
        }
        // Its think time, cut short by the attack's end.
        let resume = Instant::now() + (step.think)(&mut rng);
        if end_at.is_some_and(|e| resume >= e) || ctx.stopper.is_stopped() {
            return;
        }
        if resume > Instant::now() {
            tokio::select! {
                biased;
                () = ctx.stopper.stopped() => return,
                () = tokio::time::sleep_until(resume.into()) => {}
            }
        }
        scheduled = ctx.clock.unix(Instant::now());
    }
}
