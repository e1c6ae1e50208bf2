//! Numbered tickets for workers that keep their own time, so that no
//! pacer thread wakes a worker thread for every request (two cross-thread
//! wake-ups each).
//!
//! - The closed model (`-rate 0` / `infinity` with `-max-workers N`): N
//!   workers, each taking its next ticket as soon as its last request is
//!   done.
//! - The open model with fixed targets, up to one request per tick: each
//!   worker thread takes the next ticket, sleeps on its own timer until
//!   the ticket is due (see [`crate::alarm`]) and sends it, so the threads
//!   share the schedule between them and one that is off the CPU holds up
//!   one ticket at most.
//! - Above that, each worker thread wakes at its own ticks and takes every
//!   ticket due by then ([`Tickets::take_due_by`]), so one that is off the
//!   CPU holds up none: the next to wake sends what it left.
//!
//! Sequence numbers stay contiguous: a ticket is only issued while the
//! attack is open, and every issued ticket is sent, except in the open
//! model those due after a stop: the first worker to see the stop fixes
//! the cut-off (its clock then), every ticket due by it is sent and every
//! one due later is given back. Due times grow with the sequence number,
//! so what is sent is a prefix.
use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc, Mutex,
};

use barrage_client::PreparedTarget;

use crate::{
    pacer::Segment,
    steering::{Plan, Retime},
    Due, Pacer, StopReason, Stopper, TargetSource,
};

mod retime;

/// The scheduler's clock: nanoseconds since the schedule's start (the
/// monotonic clock in an attack, a hand-moved one in tests).
pub(crate) type Now = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The monotonic clock, counted from `start`.
pub(crate) fn since(start: std::time::Instant) -> Now {
    Arc::new(move || start.elapsed().as_nanos() as u64)
}

/// Set in the ticket counter once no more tickets are issued.
const CLOSED: u64 = 1 << 63;

/// A ticket taken: its sequence number, target and due time.
pub(crate) type Ticket = (u64, Arc<PreparedTarget>, Due);

/// [`Tickets::take`]'s answer while paused: nothing is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paused;

/// What [`Tickets::take_due_by`] found next.
pub(crate) enum Next {
    /// A ticket due by then: its sequence number, target and due offset
    /// (ns from the start), now issued.
    Take(u64, Arc<PreparedTarget>, u64),
    /// The next ticket is due at this offset, later; not issued.
    Later(u64),
    /// Paused (`-control`): nothing is due until a change.
    Paused,
}

/// No segments: the schedule as the flags made it.
const NONE: &[Vec<Segment>] = &[];

/// One schedule of fixed targets: the whole attack's, or a `-mix`
/// group's. Its sequence numbers are its own.
pub(crate) struct Lane {
    next: AtomicU64,
    pacer: Pacer,
    fixed: Vec<Arc<PreparedTarget>>,
    /// Weighted targets' order over one period (`None`: round-robin).
    order: Option<Vec<u32>>,
}

impl Lane {
    /// A schedule of `targets` (weighted as they say) kept by `pacer`.
    pub(crate) fn new(targets: Vec<Arc<PreparedTarget>>, pacer: Pacer) -> Self {
        let weights: Vec<u32> = targets.iter().map(|t| t.weight).collect();
        // Targets::fixed checked the weights; a table that cannot be made
        // leaves plain round-robin.
        let order = barrage_model::weights::order(&weights).ok().flatten();
        Lane {
            next: AtomicU64::new(0),
            pacer,
            fixed: targets,
            order,
        }
    }

    /// Fixed target for this lane's sequence number `seq`: its weighted
    /// order's, or round-robin.
    fn target(&self, seq: u64) -> Arc<PreparedTarget> {
        let i = match &self.order {
            Some(o) => o[(seq % o.len() as u64) as usize] as usize,
            None => (seq % self.fixed.len() as u64) as usize,
        };
        self.fixed[i].clone()
    }
}

/// Hands out sequence numbers, targets and due times to workers.
pub(crate) struct Tickets {
    /// Every schedule: one, or a `-mix`'s groups (tickets go out in the
    /// order they fall due across them).
    lanes: Vec<Lane>,
    /// The stop's offset from the start (ns) once a worker has seen it;
    /// `u64::MAX` before.
    cutoff: AtomicU64,
    /// Issued tickets given back unsent (due after the cut-off).
    returned: Arc<AtomicU64>,
    /// Requests due before the end of `-duration` that were never sent:
    /// the generator was past the end (and the grace) when they came up.
    dropped: Arc<AtomicU64>,
    /// Whether some dropped count is the Poisson schedule's expected one.
    dropped_estimated: std::sync::atomic::AtomicBool,
    now: Now,
    stopper: Stopper,
    lazy: Option<Mutex<Box<dyn TargetSource>>>,
    outcome: Mutex<(Option<StopReason>, Option<crate::SourceError>)>,
    /// Live control's changes (`-control`).
    retime: Option<Retime>,
}

impl Tickets {
    pub(crate) fn fixed(
        targets: Vec<Arc<PreparedTarget>>,
        pacer: Pacer,
        now: Now,
        stopper: Stopper,
    ) -> Self {
        Self::new(vec![Lane::new(targets, pacer)], None, now, stopper)
    }

    /// Several schedules at once (a `-mix`'s groups).
    pub(crate) fn lanes(lanes: Vec<Lane>, now: Now, stopper: Stopper) -> Self {
        Self::new(lanes, None, now, stopper)
    }

    pub(crate) fn lazy(
        source: Box<dyn TargetSource>,
        pacer: Pacer,
        now: Now,
        stopper: Stopper,
    ) -> Self {
        let lane = Lane::new(Vec::new(), pacer);
        Self::new(vec![lane], Some(Mutex::new(source)), now, stopper)
    }

    fn new(
        lanes: Vec<Lane>,
        lazy: Option<Mutex<Box<dyn TargetSource>>>,
        now: Now,
        stopper: Stopper,
    ) -> Self {
        Tickets {
            lanes,
            cutoff: AtomicU64::new(u64::MAX),
            returned: Arc::new(AtomicU64::new(0)),
            dropped: Arc::new(AtomicU64::new(0)),
            dropped_estimated: std::sync::atomic::AtomicBool::new(false),
            now,
            stopper,
            lazy,
            outcome: Mutex::new((None, None)),
            retime: None,
        }
    }

    /// These tickets taking live control's changes (`-control`).
    pub(crate) fn steered(mut self) -> Self {
        self.retime = Some(Retime::new(self.lanes.len()));
        self
    }

    /// Live control's segments, read-locked while a ticket is taken.
    fn plan(&self) -> Option<std::sync::RwLockReadGuard<'_, Plan>> {
        self.retime
            .as_ref()
            .map(|r| r.plan.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn close(&self, reason: StopReason, error: Option<crate::SourceError>) {
        for lane in &self.lanes {
            lane.next.fetch_or(CLOSED, Ordering::SeqCst);
        }
        let mut o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        if o.0.is_none() {
            *o = (Some(reason), error);
        }
    }

    /// When `lane`'s `seq` is due, or `None` after the end of its schedule
    /// (the lane is closed; with the last lane, the attack) or a stop.
    fn due(&self, lane: usize, seq: u64, segs: &[Vec<Segment>]) -> Option<Due> {
        let segs = segs.get(lane).map_or(&[][..], |s| &s[..]);
        if self.stopper.is_stopped() {
            self.close(StopReason::Stopped, None);
            return None;
        }
        let l = &self.lanes[lane];
        let now = (self.now)();
        if l.pacer
            .end_ns()
            .is_some_and(|end| now >= end.saturating_add(crate::outcome::LATE_GRACE_NS))
        {
            // Past the end, this far behind: nothing more goes out, and
            // what the schedule still wanted is counted (once: by the
            // taker that closes the lane).
            let prev = l.next.fetch_or(CLOSED, Ordering::SeqCst);
            if prev & CLOSED == 0 {
                self.count_dropped(&l.pacer, prev, segs);
            }
            if self
                .lanes
                .iter()
                .all(|l| l.next.load(Ordering::SeqCst) & CLOSED != 0)
            {
                self.close(StopReason::Done, None);
            }
            return None;
        }
        match l.pacer.due_on(seq, now, segs) {
            Due::Stop => {
                l.next.fetch_or(CLOSED, Ordering::SeqCst);
                if self.lanes.len() == 1
                    || self
                        .lanes
                        .iter()
                        .all(|l| l.next.load(Ordering::SeqCst) & CLOSED != 0)
                {
                    self.close(StopReason::Done, None);
                }
                None
            }
            due => Some(due),
        }
    }

    /// The lane whose next ticket falls due first, that ticket's number in
    /// it and when it is due; `None` when every lane is over.
    fn earliest(&self, segs: &[Vec<Segment>]) -> Option<(usize, u64, Due)> {
        if self.lanes.len() == 1 {
            let seq = self.lanes[0].next.load(Ordering::SeqCst);
            if seq & CLOSED != 0 {
                return None;
            }
            return Some((0, seq, self.due(0, seq, segs)?));
        }
        let mut best: Option<(usize, u64, Due)> = None;
        for (i, lane) in self.lanes.iter().enumerate() {
            let seq = lane.next.load(Ordering::SeqCst);
            if seq & CLOSED != 0 {
                continue;
            }
            let Some(due) = self.due(i, seq, segs) else {
                if self.stopper.is_stopped() {
                    return None;
                }
                continue;
            };
            let at = |d: Due| match d {
                Due::At(o) => o,
                Due::Paused => u64::MAX,
                _ => 0,
            };
            if best.is_none_or(|(_, _, b)| at(due) < at(b)) {
                best = Some((i, seq, due));
            }
        }
        best
    }

    fn count_dropped(&self, pacer: &Pacer, from: u64, segs: &[Segment]) {
        let (n, exact) = pacer.due_from_on(from, segs);
        self.dropped.fetch_add(n, Ordering::SeqCst);
        if !exact {
            self.dropped_estimated.store(true, Ordering::SeqCst);
        }
    }

    /// Closes every lane past the end of `-duration` after `given_back`
    /// tickets were given back unsent (a `-max-workers` slot that did not
    /// come by then): those and every one the lanes still had due are
    /// dropped.
    pub(crate) fn expire(&self, given_back: u64) {
        self.dropped.fetch_add(given_back, Ordering::SeqCst);
        let plan = self.plan();
        let segs = plan.as_ref().map_or(NONE, |p| &p.lanes[..]);
        for (i, l) in self.lanes.iter().enumerate() {
            let prev = l.next.fetch_or(CLOSED, Ordering::SeqCst);
            if prev & CLOSED == 0 {
                let segs = segs.get(i).map_or(&[][..], |s| &s[..]);
                self.count_dropped(&l.pacer, prev, segs);
            }
        }
        self.close(StopReason::Done, None);
    }

    /// Whether the attack was stopped (a signal, the collector, a closed
    /// output).
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopper.is_stopped()
    }

    /// Requests due before the end of `-duration` and never sent, and
    /// whether the count is exact.
    pub(crate) fn dropped(&self) -> (u64, bool) {
        (
            self.dropped.load(Ordering::SeqCst),
            !self.dropped_estimated.load(Ordering::SeqCst),
        )
    }

    /// Whether an issued ticket due at `offset` goes out: always before a
    /// stop; after one, when it was due by the cut-off. A ticket that does
    /// not is given back (not counted as sent).
    pub(crate) fn goes_out(&self, offset: u64) -> bool {
        if !self.stopper.is_stopped() {
            return true;
        }
        let now = (self.now)();
        let cutoff =
            match self
                .cutoff
                .compare_exchange(u64::MAX, now, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => now,
                Err(set) => set,
            };
        if offset > cutoff {
            self.returned.fetch_add(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// The next request to send and when it is due (`Err`: paused, none
    /// is), or `None` when the attack is over.
    pub(crate) fn take(&self) -> Option<Result<Ticket, Paused>> {
        if let Some(source) = &self.lazy {
            let lane = &self.lanes[0];
            let mut src = source.lock().unwrap_or_else(|p| p.into_inner());
            let seq = lane.next.load(Ordering::SeqCst);
            if seq & CLOSED != 0 {
                return None;
            }
            let plan = self.plan();
            let due = self.due(0, seq, plan.as_ref().map_or(NONE, |p| &p.lanes[..]))?;
            if due == Due::Paused {
                return Some(Err(Paused));
            }
            let target = match src
                .next_target(lane.pacer.global(seq))
                .and_then(|t| Ok(t.map(PreparedTarget::new).transpose()?))
            {
                Ok(Some(t)) => Arc::new(t),
                Ok(None) => {
                    self.close(StopReason::TargetsExhausted, None);
                    return None;
                }
                Err(e) => {
                    self.close(StopReason::BadTarget, Some(e));
                    return None;
                }
            };
            lane.next.store(seq + 1, Ordering::SeqCst);
            return Some(Ok((lane.pacer.global(seq), target, due)));
        }
        match self.issue(u64::MAX)? {
            (seq, Some(target), due) => Some(Ok((seq, target, due))),
            (_, None, Due::Paused) => Some(Err(Paused)),
            (_, None, _) => None,
        }
    }

    /// The next fixed-target ticket if it is due by `by` (ns from the
    /// start), else when it is due without taking it; `None` when the
    /// attack is over. Open model only.
    pub(crate) fn take_due_by(&self, by: u64) -> Option<Next> {
        if self.lazy.is_some() {
            return None;
        }
        Some(match self.issue(by)? {
            (seq, Some(target), Due::At(offset)) => Next::Take(seq, target, offset),
            (seq, Some(target), _) => Next::Take(seq, target, 0),
            (_, None, Due::At(offset)) => Next::Later(offset),
            (_, None, Due::Paused) => Next::Paused,
            (_, None, _) => Next::Later(0),
        })
    }

    /// Issues the next fixed-target ticket (of the lane whose next falls
    /// due first) if it is due by `by` (ns from the start; a closed-model
    /// ticket always is): its global sequence number, target and due time.
    /// A ticket due later is not issued: its target is `None`. `None` when
    /// the attack is over. Several threads take tickets at once: the
    /// counter moves by compare-and-swap.
    fn issue(&self, by: u64) -> Option<(u64, Option<Arc<PreparedTarget>>, Due)> {
        let plan = self.plan();
        let segs = plan.as_ref().map_or(NONE, |p| &p.lanes[..]);
        loop {
            let (lane, seq, due) = self.earliest(segs)?;
            if due == Due::Paused || matches!(due, Due::At(offset) if offset > by) {
                return Some((seq, None, due));
            }
            let l = &self.lanes[lane];
            if l.next
                .compare_exchange(seq, seq + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                let seq = l.pacer.global(seq);
                return Some((seq, Some(l.target(seq)), due));
            }
        }
    }

    /// Whether the targets were all read up front.
    pub(crate) fn is_fixed(&self) -> bool {
        self.lazy.is_none()
    }

    /// Gives back the ticket issued last, unsent (the stop came while it
    /// waited for a `-max-workers` slot); only a lone taker (the pacer
    /// thread) does, so what is sent stays a prefix.
    pub(crate) fn give_back(&self) {
        self.returned.fetch_add(1, Ordering::SeqCst);
    }

    /// The count of tickets given back, for requests that give theirs
    /// back themselves: a `-mix` group's, stopped while waiting for the
    /// group's `-max-workers` slot. They wait in their order (the slot's
    /// queue is first come, first served), so what each group sends
    /// stays a prefix of its schedule.
    pub(crate) fn returns(&self) -> Arc<AtomicU64> {
        self.returned.clone()
    }

    /// Tickets issued so far over every lane, less those given back
    /// (requests sent or about to be).
    pub(crate) fn issued(&self) -> u64 {
        let issued: u64 = self
            .lanes
            .iter()
            .map(|l| l.next.load(Ordering::Relaxed) & !CLOSED)
            .sum();
        issued.saturating_sub(self.returned.load(Ordering::Relaxed))
    }

    /// Tickets sent (issued and not given back), why it ended, and a bad
    /// lazy target's error.
    pub(crate) fn finish(&self) -> (u64, StopReason, Option<crate::SourceError>) {
        let issued: u64 = self
            .lanes
            .iter()
            .map(|l| l.next.load(Ordering::SeqCst) & !CLOSED)
            .sum();
        let issued = issued.saturating_sub(self.returned.load(Ordering::SeqCst));
        let o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        (issued, o.0.unwrap_or(StopReason::Done), o.1.clone())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::AtomicU64;

    use barrage_model::{Rate, Target};

    use super::*;

    /// One target, to a port nothing listens on.
    pub(crate) fn one_target() -> Vec<Arc<PreparedTarget>> {
        let target = Target {
            method: "GET".into(),
            url: "http://127.0.0.1:1/".into(),
            ..Target::default()
        };
        vec![Arc::new(PreparedTarget::new(target).unwrap())]
    }

    /// A clock moved by hand: `clock`'s ns.
    pub(crate) fn by_hand(clock: &Arc<AtomicU64>) -> Now {
        let clock = clock.clone();
        Arc::new(move || clock.load(Ordering::SeqCst))
    }

    fn tickets(rate: &str, stopper: &Stopper) -> Tickets {
        let rate: Rate = rate.parse().unwrap();
        Tickets::fixed(
            one_target(),
            Pacer::new(rate, None, None),
            since(std::time::Instant::now()),
            stopper.clone(),
        )
    }

    fn offset(due: Due) -> u64 {
        match due {
            Due::At(o) => o,
            other => panic!("not a paced ticket: {other:?}"),
        }
    }

    #[test]
    fn open_model_tickets_due_after_a_stop_are_given_back() {
        let stopper = Stopper::new();
        // One an hour: the first ticket is due at once, the others hours
        // after any stop this test makes.
        let t = tickets("1/1h", &stopper);
        let taken: Vec<(u64, u64)> = (0..3)
            .map(|_| {
                let (seq, _, due) = t.take().unwrap().unwrap();
                (seq, offset(due))
            })
            .collect();
        assert_eq!(
            taken,
            [(0, 0), (1, 3_600_000_000_000), (2, 7_200_000_000_000)]
        );
        assert!(t.goes_out(taken[2].1), "no stop yet: every ticket goes");
        stopper.stop();
        assert!(t.goes_out(0), "due before the stop");
        for (_, off) in &taken[1..] {
            assert!(!t.goes_out(*off), "due after the stop");
        }
        assert!(t.take().is_none(), "nothing issued after a stop");
        let (sent, reason, error) = t.finish();
        assert_eq!((sent, reason, error), (1, StopReason::Stopped, None));
    }

    #[test]
    fn past_the_end_and_its_grace_nothing_goes_and_the_rest_is_dropped() {
        let clock = Arc::new(AtomicU64::new(0));
        let t = Tickets::fixed(
            one_target(),
            Pacer::new(
                "1000".parse().unwrap(),
                Some(std::time::Duration::from_secs(1)),
                None,
            ),
            by_hand(&clock),
            Stopper::new(),
        );
        for _ in 0..10 {
            t.take().unwrap().unwrap();
        }
        // Behind, within the grace: what was due still goes.
        clock.store(
            1_000_000_000 + crate::outcome::LATE_GRACE_NS - 1,
            Ordering::SeqCst,
        );
        assert!(t.take().is_some());
        // Past it: nothing more, and the 989 still due are counted once.
        clock.store(
            1_000_000_000 + crate::outcome::LATE_GRACE_NS,
            Ordering::SeqCst,
        );
        assert!(t.take().is_none());
        assert!(t.take().is_none());
        assert_eq!(t.dropped(), (989, true));
        let (sent, reason, _) = t.finish();
        assert_eq!((sent, reason), (11, StopReason::Done));
    }

    #[test]
    fn the_cutoff_is_fixed_by_the_first_look() {
        let stopper = Stopper::new();
        let t = tickets("1000", &stopper);
        stopper.stop();
        assert!(t.goes_out(0));
        let cutoff = t.cutoff.load(Ordering::SeqCst);
        assert_ne!(cutoff, u64::MAX);
        // Later looks keep it, however late they come.
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(t.goes_out(cutoff));
        assert!(!t.goes_out(cutoff + 1));
        assert_eq!(t.cutoff.load(Ordering::SeqCst), cutoff);
    }
}
