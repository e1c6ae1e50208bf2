//! Live control's changes to the schedule (`attack -control`): each is a
//! segment per lane (from request *g* of the whole schedule, due on a
//! line so that *g* is due at the change's time, or paused), written
//! under the plan's write lock while the ticket paths read it with the
//! lanes' counters, so a change holds from the first ticket not taken
//! when it is made. Tickets already taken keep the line they were taken
//! on: both lines stay exact, and due times still grow with the number.

use std::sync::{atomic::Ordering, Arc};

use barrage_model::{Command, Marker, Rate};

use super::{Tickets, CLOSED};
use crate::{
    pacer::{first_past, Line, Segment},
    steering::{ControlError, Steering},
    Due, Pacer,
};

/// Request `g`'s due time on `segments`, when it has one.
fn due_at(pacer: &Pacer, g: u64, segments: &[Segment]) -> Option<u64> {
    match pacer.due_global(g, 0, segments) {
        Due::At(at) => Some(at),
        _ => None,
    }
}

/// The first request of the whole schedule not due before `t` on
/// `segments` (due times grow with the number).
fn first_from(pacer: &Pacer, t: u64, segments: &[Segment]) -> u64 {
    first_past(|g| due_at(pacer, g, segments).is_some_and(|at| at < t))
}

impl Tickets {
    /// The changes' count, for loops that sleep on a line (`None`
    /// without `-control`).
    pub(crate) fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.retime.as_ref().map(|r| r.changes.subscribe())
    }

    /// Markers made since the last call, for the writer.
    pub(crate) fn take_markers(&self) -> Vec<Marker> {
        self.retime.as_ref().map_or_else(Vec::new, |r| {
            std::mem::take(&mut *r.markers.lock().unwrap_or_else(|p| p.into_inner()))
        })
    }

    /// Live control's state.
    pub(crate) fn steering(&self) -> Option<Steering> {
        let r = self.retime.as_ref()?;
        let plan = r.plan.read().unwrap_or_else(|p| p.into_inner());
        Some(Steering {
            line: match plan.lines.first() {
                Some(Line::Rate(rate, _)) => Some(format!("rate {rate}")),
                Some(Line::Stages(s, _)) => Some(format!("stages {s}")),
                _ => None,
            },
            paused: plan.paused,
            changes: *r.changes.borrow(),
        })
    }

    /// Applies `command` from schedule time `at` (ns from the start;
    /// `None` or a time past: now) and returns its first request and
    /// time. A stop is the stopper's; the rest are segments.
    #[cfg(test)]
    pub(crate) fn change(
        &self,
        command: &Command,
        at: Option<u64>,
    ) -> Result<(u64, u64), ControlError> {
        let mut made = (0, 0);
        self.change_marked(command, at, |first, from| {
            made = (first, from);
            Marker::default()
        })?;
        Ok(made)
    }

    /// [`Tickets::change`], with the marker `mark` makes of its first
    /// request and time kept for the writer before any ticket is taken
    /// on the new line (so the stream has it before their records).
    pub(crate) fn change_marked(
        &self,
        command: &Command,
        at: Option<u64>,
        mark: impl FnOnce(u64, u64) -> Marker,
    ) -> Result<Marker, ControlError> {
        let Some(r) = &self.retime else {
            return Err(ControlError::NotRunning);
        };
        let mut plan = r.plan.write().unwrap_or_else(|p| p.into_inner());
        let now = (self.now)();
        let t = at.map_or(now, |a| a.max(now));
        if let Command::Rate(_) | Command::Stages(_) = command {
            let pacer = &self.lanes[0].pacer;
            if self.lanes.len() > 1 {
                return Err(ControlError::Mix);
            }
            if pacer.is_recorded() {
                return Err(ControlError::Recorded);
            }
            if !pacer.is_paced() {
                return Err(ControlError::Closed);
            }
            if matches!(command, Command::Rate(Rate::Max)) {
                return Err(ControlError::Unpaced);
            }
        }
        match command {
            Command::Pause if plan.paused => return Err(ControlError::Paused),
            Command::Resume if !plan.paused => return Err(ControlError::NotPaused),
            _ => {}
        }
        if self
            .lanes
            .iter()
            .all(|l| l.next.load(Ordering::SeqCst) & CLOSED != 0)
        {
            return Err(ControlError::NotRunning);
        }
        let mut made = (u64::MAX, t);
        for (i, lane) in self.lanes.iter().enumerate() {
            let next = lane.next.load(Ordering::SeqCst);
            if next & CLOSED != 0 {
                continue;
            }
            let pacer = &lane.pacer;
            let untaken = pacer.global(next);
            let segments = &plan.lanes[i];
            // The first on the new line: the first due from `t` on, unless
            // this process has taken it already (then its first not taken,
            // from just after its last taken was due, so that times still
            // grow with the number).
            let (first, from) = match command {
                Command::Resume => {
                    let paused = segments.last().map_or(0, |s| s.first);
                    (paused.max(untaken), t)
                }
                _ => {
                    let g = first_from(pacer, t, segments);
                    if untaken > g {
                        let last = next
                            .checked_sub(1)
                            .and_then(|k| due_at(pacer, pacer.global(k), segments));
                        (untaken, last.map_or(t, |l| l.saturating_add(1).max(t)))
                    } else {
                        (g, t)
                    }
                }
            };
            made = (made.0.min(first), from);
            let new = match command {
                Command::Rate(rate) => Some(Line::Rate(*rate, first)),
                Command::Stages(s) => Some(Line::Stages(Arc::new(s.clone()), first)),
                _ => None,
            };
            let line = match (command, new) {
                // A stop is the stopper's.
                (Command::Stop, _) => continue,
                (Command::Pause, _) => None,
                // A new line is kept, and in force unless paused (then it
                // waits for the resume).
                (_, Some(new)) => {
                    plan.lines[i] = new.clone();
                    if plan.paused {
                        continue;
                    }
                    Some(new)
                }
                (_, None) => Some(plan.lines[i].clone()),
            };
            let segments = &mut plan.lanes[i];
            segments.retain(|s| s.first < first);
            segments.push(Segment {
                first,
                at: from,
                line,
            });
        }
        match command {
            Command::Pause => plan.paused = true,
            Command::Resume => plan.paused = false,
            Command::Stop => self.stopper.stop(),
            _ => {}
        }
        let first = if made.0 == u64::MAX { 0 } else { made.0 };
        let marker = mark(first, made.1);
        r.markers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(marker.clone());
        drop(plan);
        r.changes.send_modify(|n| *n += 1);
        Ok(marker)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use super::*;
    use crate::{
        tickets::tests::{by_hand, one_target},
        Stopper,
    };

    const MS: u64 = 1_000_000;

    fn steered(rate: &str, shard: Option<(u64, u64)>, clock: &Arc<AtomicU64>) -> Tickets {
        let pacer = Pacer::new(rate.parse().unwrap(), None, None).with_shard(shard);
        Tickets::fixed(one_target(), pacer, by_hand(clock), Stopper::new()).steered()
    }

    /// The next `n` tickets' numbers and due times.
    fn take(t: &Tickets, n: usize) -> Vec<(u64, u64)> {
        (0..n)
            .map(|_| match t.take().unwrap().unwrap() {
                (seq, _, Due::At(at)) => (seq, at),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_rate_change_puts_the_untaken_on_the_new_line_from_its_time() {
        let clock = Arc::new(AtomicU64::new(0));
        let t = steered("1000", None, &clock);
        let before = take(&t, 10);
        assert_eq!(before[9], (9, 9 * MS));
        clock.store(9 * MS + 400_000, Ordering::SeqCst);
        let rate = Command::Rate("3000".parse().unwrap());
        // Request 10 was due at 10 ms on the old line, after the change
        // at 9.4 ms: it is the first on the new line, due at 9.4 ms.
        assert_eq!(t.change(&rate, None), Ok((10, 9 * MS + 400_000)));
        let after = take(&t, 4);
        let want: Vec<(u64, u64)> = (0..4)
            .map(|j| (10 + j, 9 * MS + 400_000 + j * 1_000_000_000 / 3000))
            .collect();
        assert_eq!(after, want);
        assert_eq!(t.steering().unwrap().line.as_deref(), Some("rate 3000/1s"));
        // A rate of 0 changes nothing.
        assert_eq!(
            t.change(&Command::Rate(Rate::Max), None),
            Err(ControlError::Unpaced)
        );
        assert_eq!(take(&t, 1), [(14, 9 * MS + 400_000 + 1_333_333)]);
    }

    #[test]
    fn tickets_taken_ahead_keep_their_line_and_times_still_grow() {
        let clock = Arc::new(AtomicU64::new(0));
        let t = steered("1000", None, &clock);
        take(&t, 20);
        clock.store(10 * MS, Ordering::SeqCst);
        // 10..19 are taken (due 10..19 ms): the new line starts with 20,
        // just after 19 is due.
        let rate = Command::Rate("100".parse().unwrap());
        assert_eq!(t.change(&rate, None), Ok((20, 19 * MS + 1)));
        assert_eq!(take(&t, 2), [(20, 19 * MS + 1), (21, 29 * MS + 1)]);
    }

    #[test]
    fn a_pause_sends_nothing_and_a_resume_goes_on_from_its_time() {
        let clock = Arc::new(AtomicU64::new(0));
        let t = steered("1000", None, &clock);
        take(&t, 5);
        clock.store(4 * MS + 500_000, Ordering::SeqCst);
        assert_eq!(t.change(&Command::Pause, None), Ok((5, 4 * MS + 500_000)));
        assert!(matches!(t.take(), Some(Err(super::super::Paused))));
        assert_eq!(t.change(&Command::Pause, None), Err(ControlError::Paused));
        // A rate while paused waits for the resume.
        clock.store(2_000 * MS, Ordering::SeqCst);
        let rate = Command::Rate("500".parse().unwrap());
        assert!(t.change(&rate, None).is_ok());
        assert!(matches!(t.take(), Some(Err(super::super::Paused))));
        clock.store(3_000 * MS, Ordering::SeqCst);
        assert_eq!(t.change(&Command::Resume, None), Ok((5, 3_000 * MS)));
        assert_eq!(take(&t, 2), [(5, 3_000 * MS), (6, 3_002 * MS)]);
        assert_eq!(
            t.change(&Command::Resume, None),
            Err(ControlError::NotPaused)
        );
        assert_eq!(t.steering().unwrap().changes, 3);
    }

    #[test]
    fn shards_told_one_time_stay_one_schedule() {
        let clock = Arc::new(AtomicU64::new(0));
        let shards: Vec<Tickets> = (0..3)
            .map(|i| steered("300", Some((i, 3)), &clock))
            .collect();
        for s in &shards {
            take(s, 2);
        }
        clock.store(10 * MS, Ordering::SeqCst);
        let rate = Command::Rate("1200".parse().unwrap());
        let mut all = Vec::new();
        for s in &shards {
            // At 1 s: request 300 of the whole schedule is the first.
            assert_eq!(s.change(&rate, Some(1_000 * MS)), Ok((300, 1_000 * MS)));
            all.extend(take(s, 200));
        }
        all.sort();
        let after: Vec<(u64, u64)> = all
            .into_iter()
            .filter(|(g, _)| (300..600).contains(g))
            .collect();
        assert_eq!(after.len(), 300);
        for (j, (g, at)) in after.iter().enumerate() {
            let j = j as u64;
            assert_eq!((*g, *at), (300 + j, 1_000 * MS + j * 1_000_000_000 / 1200));
        }
    }
}
