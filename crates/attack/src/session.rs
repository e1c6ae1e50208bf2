//! Sessions (`-format flow`): each ticket of the schedule is a session,
//! which sends its flow's steps one after another, carrying its cookies
//! and the values its steps extract. Session *i*'s first step is due when
//! ticket *i* is; a later step goes when the previous answer and its
//! think time are done, and that moment is its `scheduled` time, so that
//! lag stays the generator's own delay. Each request is one record,
//! marked with its session and step; the record of a session's last
//! request says how it ended.
//!
//! A session holds its HTTP/1.1 connection from its first answer to its
//! end, think time included, as a user's browser or a k6 virtual user
//! does: no other session's request goes on it meanwhile. At its end the
//! connection goes back to the pool, for a later session.
//!
//! At the attack's end (`-duration`, a first Ctrl-C, a closed output) no
//! session starts, and those in flight have `-grace` (30 s, k6's
//! `gracefulStop`) to finish: a session whose next step would start past
//! it ends after its current one, that step's record marked
//! [`SessionEnd::Interrupted`]. A session thinking when a Ctrl-C shortens
//! its grace below its think time was marked going: it is counted as
//! unfinished (started, not ended). A second Ctrl-C abandons them all.

use std::time::Instant;

use barrage_client::{Client, SessionState};
use barrage_model::{SessionEnd, SessionMark};

use crate::{
    flow_plan::FlowPlan,
    writer::{deliver, record, took, RequestContext},
};

/// Runs session `id`, whose first step is due at `scheduled` (unix ns),
/// to its end: each request's record goes to the writer as it is done.
pub(crate) async fn run(
    client: &Client,
    ctx: &RequestContext,
    plan: &FlowPlan,
    id: u64,
    scheduled: i64,
) {
    let mut rng = fastrand::Rng::new();
    let mut state = SessionState::new(
        plan.first_values(id, &mut rng),
        plan.cookies.then(cookie_store::CookieStore::default),
    );
    steps(client, ctx, plan, id, scheduled, &mut state, &mut rng).await;
    client.end_session(&mut state);
}

/// Session `id`'s steps, from the first (due at `scheduled`) to its end.
async fn steps(
    client: &Client,
    ctx: &RequestContext,
    plan: &FlowPlan,
    id: u64,
    mut scheduled: i64,
    state: &mut SessionState,
    rng: &mut fastrand::Rng,
) {
    // Past this, no further step: the end (or a stop) and its grace.
    let cut = || {
        let by_end = ctx.end.map(|e| e + ctx.grace);
        let by_stop = ctx.stopper.stopped_at().map(|s| s + ctx.grace);
        match (by_end, by_stop) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    };
    let mut first_sent = None;
    for (i, step) in plan.steps.iter().enumerate() {
        let sent = Instant::now();
        let first = *first_sent.get_or_insert(sent);
        ctx.steps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (target, result) = match plan.target_of(step, id, state, rng) {
            Ok(t) => {
                let r = client.send_step(&t, id, &step.reads, state).await;
                (t, r)
            }
            Err(e) => (step.prepared.clone(), Err(e)),
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
        done.redact(&state.vars);
        // Its think time, drawn now: whether the next step comes within
        // the grace decides how this record ends the session.
        let resume = Instant::now() + (step.think)(rng);
        let end = if !done.ok() {
            SessionEnd::Failed
        } else if i + 1 == plan.steps.len() {
            SessionEnd::Completed
        } else if cut().is_some_and(|c| resume > c) {
            SessionEnd::Interrupted
        } else {
            SessionEnd::Going
        };
        done.session = Some(SessionMark {
            id,
            step: i as u32,
            end,
            took: match end {
                SessionEnd::Going | SessionEnd::Interrupted => 0,
                _ => first.elapsed().as_nanos() as u64,
            },
        });
        deliver(&ctx.tx, done);
        if end != SessionEnd::Going {
            return;
        }
        // Its think time; a stop meanwhile may bring the cut before it.
        if resume > Instant::now() {
            let stopped = tokio::select! {
                biased;
                () = ctx.stopper.stopped(), if !ctx.stopper.is_stopped() => true,
                () = tokio::time::sleep_until(resume.into()) => false,
            };
            if stopped {
                if ctx.stopper.is_abandoned() || cut().is_some_and(|c| resume > c) {
                    return;
                }
                tokio::time::sleep_until(resume.into()).await;
            }
        }
        if ctx.stopper.is_abandoned() {
            return;
        }
        scheduled = ctx.clock.unix(Instant::now());
    }
}
