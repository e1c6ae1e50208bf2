//! Who the collection waits for: the awaited count, the join deadline,
//! attackers lost to `-silence`, and the lines naming who is missing.

use std::time::{Duration, Instant};

use super::{show, who, Merge};

impl Merge<'_> {
    /// How many streams are awaited: `-attackers`, else the shard count,
    /// else 1.
    pub(super) fn awaited(&self) -> usize {
        let shards = self
            .attackers
            .iter()
            .filter_map(|a| a.hello.shard)
            .map(|(_, n)| n as usize)
            .max();
        self.config.attackers.or(shards).unwrap_or(1).max(1)
    }

    /// Whether every awaited stream ended (or, once the join deadline
    /// passed, every joined one).
    pub(super) fn complete(&self, gave_up_joining: bool) -> bool {
        let joined = self.attackers.len();
        (joined >= self.awaited() || (gave_up_joining && joined > 0))
            && self.attackers.iter().all(|a| a.ended)
    }

    /// Whether an attacker is still sending, or may come back.
    pub(super) fn any_live(&self) -> bool {
        self.attackers.iter().any(|a| !a.ended)
    }

    /// The line naming who never joined within `t`.
    pub(super) fn missing(&self, t: Duration) -> String {
        let awaited = self.awaited();
        let joined = self.attackers.len();
        let shards: Vec<String> = match self.attackers.iter().find_map(|a| a.hello.shard) {
            Some((_, n)) => (0..n)
                .filter(|i| {
                    !self
                        .attackers
                        .iter()
                        .any(|a| a.hello.shard.map(|s| s.0) == Some(*i))
                })
                .take(16)
                .map(|i| format!("{i}/{n}"))
                .collect(),
            None => Vec::new(),
        };
        let which = if shards.is_empty() {
            String::new()
        } else {
            format!(" (shards {})", shards.join(", "))
        };
        if joined == 0 {
            format!(
                "no attacker joined within {} (-join-timeout); {awaited} awaited",
                show(t.as_nanos() as u64)
            )
        } else {
            format!(
                "{} of {awaited} awaited attackers never joined within {} (-join-timeout){which}",
                awaited - joined,
                show(t.as_nanos() as u64)
            )
        }
    }

    /// Gives up on attackers whose connection has been gone past
    /// `-silence`.
    pub(super) fn lose_silent(&mut self, now: Instant) {
        let Some(silence) = self.config.silence else {
            return;
        };
        for a in &mut self.attackers {
            if a.ended || a.lost {
                continue;
            }
            if a.left.is_some_and(|t| now.duration_since(t) >= silence) {
                a.lost = true;
                a.ended = true;
                let line = format!(
                    "{} lost: its connection has been gone for {} (-silence); {} of its records kept",
                    who(&a.hello),
                    show(silence.as_nanos() as u64),
                    a.records
                );
                eprintln!("barrage collect: {line}");
                self.summary.unfinished.push(line);
            }
        }
    }

    pub(super) fn unfinished(&mut self) {
        let mut lines: Vec<String> = self
            .attackers
            .iter()
            .filter(|a| !a.ended)
            .map(|a| {
                format!(
                    "{} did not finish its stream ({} records held)",
                    who(&a.hello),
                    a.records
                )
            })
            .collect();
        if self.attackers.is_empty() {
            lines.push("no attacker joined".into());
        } else if self.attackers.len() < self.awaited()
            && !self
                .summary
                .unfinished
                .iter()
                .any(|l| l.contains("-join-timeout"))
        {
            lines.push(format!(
                "{} of {} awaited attackers never joined",
                self.awaited() - self.attackers.len(),
                self.awaited()
            ));
        }
        self.summary.unfinished.extend(lines);
    }
}
