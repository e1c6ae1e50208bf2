//! [`Sessions`]: what a flow's sessions (`-format flow`) came to: how
//! many started, completed, and ended at each step (with the most common
//! reason), and how long a completed session took, think times included.
//! A session the attack's end stopped between steps has started and not
//! ended.

use std::collections::HashMap;

use barrage_model::{Hit, SessionEnd};

use crate::Distribution;

/// Reasons kept per step: past this many distinct ones, new ones are
/// counted as "other" (a crafted stream cannot grow them without bound).
const MAX_REASONS: usize = 64;

/// Where sessions ended on one step.
#[derive(Clone, Default)]
struct Ended {
    name: String,
    count: u64,
    reasons: HashMap<String, u64>,
}

/// The session figures of a flow's records.
#[derive(Clone, Default)]
pub struct Sessions {
    started: u64,
    completed: u64,
    /// By step index.
    ended: std::collections::BTreeMap<u32, Ended>,
    /// Sessions cut after a step by the attack's end and its `-grace`:
    /// by step index, the step's name and the count.
    interrupted: std::collections::BTreeMap<u32, (String, u64)>,
    took: Distribution,
    /// The first and last first-step send (unix ns): sessions a second.
    first: Option<i64>,
    last: i64,
}

impl Sessions {
    /// Adds one record (one without a session is left out).
    pub fn add(&mut self, hit: &Hit) {
        let Some(m) = &hit.session else {
            return;
        };
        if m.step == 0 {
            self.started += 1;
            self.first = Some(self.first.map_or(hit.timestamp, |f| f.min(hit.timestamp)));
            self.last = self.last.max(hit.timestamp);
        }
        match m.end {
            SessionEnd::Going => {}
            SessionEnd::Interrupted => {
                let e = self.interrupted.entry(m.step).or_default();
                if e.0.is_empty() {
                    e.0.clone_from(&hit.name);
                }
                e.1 += 1;
            }
            SessionEnd::Completed => {
                self.completed += 1;
                self.took.record(m.took);
            }
            SessionEnd::Failed => {
                let e = self.ended.entry(m.step).or_default();
                if e.name.is_empty() {
                    e.name.clone_from(&hit.name);
                }
                e.count += 1;
                let why = if hit.error.is_empty() {
                    "(no error)"
                } else {
                    hit.error.as_str()
                };
                if let Some(n) = e.reasons.get_mut(why) {
                    *n += 1;
                } else if e.reasons.len() < MAX_REASONS {
                    e.reasons.insert(why.to_string(), 1);
                } else {
                    *e.reasons.entry("other reasons".into()).or_default() += 1;
                }
            }
        }
    }

    /// Adds everything in `other`.
    pub fn merge(&mut self, other: &Sessions) {
        self.started += other.started;
        self.completed += other.completed;
        for (step, e) in &other.ended {
            let mine = self.ended.entry(*step).or_default();
            if mine.name.is_empty() {
                mine.name.clone_from(&e.name);
            }
            mine.count += e.count;
            for (why, n) in &e.reasons {
                *mine.reasons.entry(why.clone()).or_default() += n;
            }
        }
        for (step, (name, n)) in &other.interrupted {
            let mine = self.interrupted.entry(*step).or_default();
            if mine.0.is_empty() {
                mine.0.clone_from(name);
            }
            mine.1 += n;
        }
        self.took.merge(&other.took);
        if let Some(f) = other.first {
            self.first = Some(self.first.map_or(f, |m| m.min(f)));
        }
        self.last = self.last.max(other.last);
    }

    /// Sessions whose first step was sent.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Sessions whose last step succeeded.
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// Sessions ended by a failed step.
    pub fn failed(&self) -> u64 {
        self.ended.values().map(|e| e.count).sum()
    }

    /// Sessions cut after a step by the attack's end (or a stop) and
    /// its `-grace`.
    pub fn interrupted(&self) -> u64 {
        self.interrupted.values().map(|e| e.1).sum()
    }

    /// Each step after which sessions were interrupted, in the flow's
    /// order: its name and how many.
    pub fn interrupted_at(&self) -> Vec<(&str, u64)> {
        self.interrupted
            .values()
            .map(|(name, n)| (name.as_str(), *n))
            .collect()
    }

    /// Sessions started and not ended: whose later records are in
    /// another input, or stopped while thinking by a Ctrl-C whose grace
    /// ran out first (and streams from before `-grace`).
    pub fn unfinished(&self) -> u64 {
        self.started
            .saturating_sub(self.completed + self.failed() + self.interrupted())
    }

    /// Each step where sessions ended, in the flow's order: its name, how
    /// many ended there, and the most common reason (the first in text
    /// order among equals).
    pub fn ended(&self) -> Vec<(&str, u64, &str)> {
        self.ended
            .values()
            .map(|e| {
                let why = e
                    .reasons
                    .iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                    .map_or("", |(w, _)| w.as_str());
                (e.name.as_str(), e.count, why)
            })
            .collect()
    }

    /// Completed sessions' durations: from the first send to the last
    /// answer, think times included, ns.
    pub fn took(&self) -> &Distribution {
        &self.took
    }

    /// Sessions started a second, over the span of their first sends.
    pub fn rate(&self) -> f64 {
        match self.first {
            Some(f) if self.last > f && self.started > 1 => {
                (self.started - 1) as f64 / ((self.last - f) as f64 / 1e9)
            }
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use barrage_model::SessionMark;

    use super::*;

    fn hit(id: u64, step: u32, name: &str, end: SessionEnd, error: &str) -> Hit {
        Hit {
            timestamp: id as i64 * 100_000_000,
            name: name.into(),
            error: error.into(),
            session: Some(SessionMark {
                id,
                step,
                end,
                took: if end == SessionEnd::Going {
                    0
                } else {
                    5_000 + id
                },
            }),
            ..Hit::default()
        }
    }

    #[test]
    fn counts_starts_ends_and_reasons() {
        let mut s = Sessions::default();
        for id in 0..10 {
            s.add(&hit(id, 0, "login", SessionEnd::Going, ""));
        }
        s.add(&hit(0, 1, "me", SessionEnd::Completed, ""));
        s.add(&hit(1, 1, "me", SessionEnd::Completed, ""));
        s.add(&hit(2, 1, "me", SessionEnd::Failed, "401 Unauthorized"));
        s.add(&hit(3, 1, "me", SessionEnd::Failed, "401 Unauthorized"));
        s.add(&hit(
            4,
            1,
            "me",
            SessionEnd::Failed,
            "extract id: json .id not found",
        ));
        s.add(&hit(
            10,
            0,
            "login",
            SessionEnd::Failed,
            "connection refused",
        ));
        s.add(&Hit::default());
        assert_eq!((s.started(), s.completed(), s.failed()), (11, 2, 4));
        assert_eq!(s.unfinished(), 5);
        assert_eq!(
            s.ended(),
            [
                ("login", 1, "connection refused"),
                ("me", 3, "401 Unauthorized")
            ]
        );
        assert_eq!((s.took().count(), s.took().min()), (2, 5_000));
        // 11 first sends over 1 s.
        assert!((s.rate() - 10.0).abs() < 1e-9, "{}", s.rate());
        let mut two = Sessions::default();
        two.merge(&s);
        two.merge(&s);
        assert_eq!((two.started(), two.failed()), (22, 8));
        assert_eq!(two.ended()[1], ("me", 6, "401 Unauthorized"));
    }
}
