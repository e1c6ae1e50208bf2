//! A flow, ready to run as an attack's sessions ([`FlowPlan`]): its
//! steps, each with how its request is rendered for a session, what its
//! answer is read for, and its think time. [`crate::session`] runs it.

use std::{sync::Arc, time::Duration};

use barrage_client::{PreparedTarget, SessionState, StepNeeds, StepReads};
use barrage_model::Target;

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
}

impl FlowPlan {
    /// What some step reads of answers (bodies, headers, and the jar its
    /// cookies): what the client keeps of each answer until the step is
    /// judged.
    pub fn reads(&self) -> StepNeeds {
        StepNeeds {
            body: self.steps.iter().any(|s| s.reads.need_body()),
            headers: self.steps.iter().any(|s| s.reads.need_headers()),
            cookies: self.cookies,
        }
    }

    /// The target a session's step `step` goes to: its prepared one when
    /// nothing varies, else rendered with the session's values and its
    /// cookies; why not, when that cannot be sent.
    pub(crate) fn target_of(
        &self,
        step: &PlanStep,
        id: u64,
        state: &SessionState,
        rng: &mut fastrand::Rng,
    ) -> Result<Arc<PreparedTarget>, barrage_client::Failure> {
        // The jar's cookies for the URL it goes to: the rendered one when
        // it varies (a path or host from a value scopes its cookies).
        let rendered = step.varies.then(|| (step.render)(id, &state.vars, rng));
        let url = rendered
            .as_ref()
            .map_or(&step.prepared.url_text, |t| &t.url);
        let cookie = state.cookie_header(url);
        if rendered.is_none() && cookie.is_none() {
            return Ok(step.prepared.clone());
        }
        let mut target = rendered.unwrap_or_else(|| (step.render)(id, &state.vars, rng));
        if let Some(c) = cookie {
            target.headers.push(("Cookie".into(), c));
        }
        // The session's values stay out of the error (a record's error
        // reaches reports and Prometheus labels; an extracted token must
        // not).
        PreparedTarget::new(target).map(Arc::new).map_err(|e| {
            let mut why = e.0;
            for v in state.vars.iter().filter(|v| v.len() >= 3) {
                why = why.replace(v.as_str(), "{{…}}");
            }
            barrage_client::Failure(why)
        })
    }

    /// A new session's values: its `-feed` row, then empty variables.
    pub(crate) fn first_values(&self, id: u64, rng: &mut fastrand::Rng) -> Vec<String> {
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
