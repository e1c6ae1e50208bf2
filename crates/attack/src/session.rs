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
//! At the attack's end (`-duration`, Ctrl-C, a closed output) a session
//! finishes the step it is on and sends no more: it is started and not
//! ended.

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
    let end_at = ctx.end;
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
        // Its think time, cut short by the attack's end. A session whose
        // think runs past the end waits for the end all the same: a
        // closed-model user must not start session after session, each
        // sending one step, in the schedule's last think time.
        let resume = Instant::now() + (step.think)(rng);
        let wake = end_at.map_or(resume, |e| resume.min(e));
        if wake > Instant::now() {
            tokio::select! {
                biased;
                () = ctx.stopper.stopped() => return,
                () = tokio::time::sleep_until(wake.into()) => {}
            }
        }
        if wake < resume || ctx.stopper.is_stopped() {
            return;
        }
        scheduled = ctx.clock.unix(Instant::now());
    }
}
