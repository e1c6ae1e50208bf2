//! [`Renderer`]: the target of each request, read as it is or rendered
//! from its template, round-robin or in its weights' order.

use barrage_model::Target;

use crate::{BadValue, Context, Feed, TemplatedTarget};

/// A target as sent: as read, or a template rendered per request.
#[derive(Debug, Clone)]
pub enum Sendable {
    /// No placeholders.
    Plain(Target),
    /// Placeholders, parsed.
    Templated(TemplatedTarget),
}

impl Sendable {
    /// Its weight (`:weight`; 1 unless given).
    pub fn weight(&self) -> u32 {
        match self {
            Sendable::Plain(t) => t.weight(),
            Sendable::Templated(t) => t.weight.unwrap_or(1),
        }
    }

    /// Whether it was given a weight.
    pub fn weighted(&self) -> bool {
        match self {
            Sendable::Plain(t) => t.weight.is_some(),
            Sendable::Templated(t) => t.weight.is_some(),
        }
    }
}

/// Renders the target of each request: target `seq % n`, round-robin as
/// fixed targets are, with the `-feed` row `seq % rows` (or a random row).
pub struct Renderer {
    targets: Vec<Sendable>,
    /// The weighted targets' order over one period (`None`: round-robin).
    order: Option<Vec<u32>>,
    feed: Option<Feed>,
    random_rows: bool,
    shard: u64,
    rng: fastrand::Rng,
}

impl Renderer {
    /// A renderer over `targets` (not empty), weighted as they say
    /// (weights that make no order, which [`crate::Loaded::load`]
    /// refuses, leave round-robin).
    pub fn new(targets: Vec<Sendable>, feed: Option<Feed>, random_rows: bool, shard: u64) -> Self {
        let weights: Vec<u32> = targets.iter().map(Sendable::weight).collect();
        Renderer {
            order: barrage_model::weights::order(&weights).ok().flatten(),
            targets,
            feed,
            random_rows,
            shard,
            rng: fastrand::Rng::new(),
        }
    }

    /// The target of request `seq` (of the whole schedule), round-robin
    /// over the renderer's targets.
    pub fn render(&mut self, seq: u64) -> Target {
        let n = self.targets.len().max(1) as u64;
        let Renderer {
            targets,
            order,
            feed,
            random_rows,
            shard,
            rng,
        } = self;
        let i = match order {
            Some(o) => o[(seq % o.len() as u64) as usize] as u64,
            None => seq % n,
        };
        one(
            &targets[i as usize],
            seq,
            feed.as_ref(),
            *random_rows,
            *shard,
            rng,
        )
    }

    /// Renders every target that takes `-feed` columns with every row
    /// and passes each to `check`, before the first request: a row that
    /// makes a request that cannot be sent is refused up front, by file
    /// and line (issue 29: it aborted the attack mid-run, naming
    /// neither). `feed_name` is the `-feed` file as typed.
    pub fn check_rows<E: std::fmt::Display>(
        &mut self,
        feed_name: &str,
        check: impl Fn(Target) -> Result<(), E>,
    ) -> Result<(), BadValue> {
        let Some(feed) = &self.feed else {
            return Ok(());
        };
        for (i, t) in self.targets.iter().enumerate() {
            let Sendable::Templated(t) = t else { continue };
            if !t.uses_columns() {
                continue;
            }
            for (row, line) in feed.rows.iter().zip(&feed.lines) {
                let mut ctx = Context {
                    seq: i as u64,
                    shard: self.shard,
                    row: Some(row),
                    rng: &mut self.rng,
                };
                check(t.render(&mut ctx))
                    .map_err(|e| BadValue(format!("-feed {feed_name}:{line}: {e}")))?;
            }
        }
        Ok(())
    }

    /// `target` rendered for request `seq` (`-lazy`: targets as read).
    pub fn render_one(&mut self, target: &Sendable, seq: u64) -> Target {
        one(
            target,
            seq,
            self.feed.as_ref(),
            self.random_rows,
            self.shard,
            &mut self.rng,
        )
    }
}

fn one(
    target: &Sendable,
    seq: u64,
    feed: Option<&Feed>,
    random_rows: bool,
    shard: u64,
    rng: &mut fastrand::Rng,
) -> Target {
    match target {
        Sendable::Plain(t) => t.clone(),
        Sendable::Templated(t) => {
            let row = feed.map(|f| {
                let i = if random_rows {
                    rng.usize(..f.rows.len())
                } else {
                    (seq % f.rows.len() as u64) as usize
                };
                f.rows[i].as_slice()
            });
            let mut ctx = Context {
                seq,
                shard,
                row,
                rng,
            };
            t.render(&mut ctx)
        }
    }
}
