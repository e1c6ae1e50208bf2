//! [`Loaded`]: an attack's targets as the flags ask for them — read up
//! front and sent as they are, rendered per request when some have
//! placeholders, or read as requests go (`-lazy`) — each target passed
//! through a `prepare` step of the caller's (gRPC's JSON bodies become
//! protobuf there) before it is used.

use std::io::BufRead;

use barrage_model::Target;

use crate::{BadValue, Feed, Renderer, Sendable, TargetError, TargetReader};

/// What the caller does to each plain target before it is sent: its
/// error is bad input at the target's line.
pub type Prepare = Box<dyn Fn(Target) -> Result<Target, BadValue> + Send>;

/// How an attack's targets come.
pub enum Loaded<R: BufRead> {
    /// Every target, read up front, none with placeholders.
    Plain(Vec<Target>),
    /// Some with placeholders: one rendered per request, round-robin.
    Rendered(Renderer),
    /// `-lazy`: read (and rendered) as requests go.
    Lazy(Box<LazyTargets<R>>),
}

/// `-lazy`'s targets: read as requests go, templated ones rendered for
/// their request.
pub struct LazyTargets<R: BufRead> {
    reader: TargetReader<R>,
    name: String,
    columns: Vec<String>,
    renderer: Renderer,
    prepare: Prepare,
}

/// `target` through `prepare` when it is plain.
fn prepared(t: Sendable, prepare: &Prepare) -> Result<Sendable, BadValue> {
    match t {
        Sendable::Plain(t) => prepare(t).map(Sendable::Plain),
        other => Ok(other),
    }
}

impl<R: BufRead> LazyTargets<R> {
    /// The target for request `seq`, `None` when the input ends.
    pub fn next(&mut self, seq: u64) -> Result<Option<Target>, TargetError> {
        let Some(t) = self.reader.next_sendable(&self.columns)? else {
            return Ok(None);
        };
        if t.weighted() {
            return Err(crate::error::error(
                &self.name,
                self.reader.line(),
                "-lazy sends targets in the order read: :weight needs them read up front (leave out -lazy)".into(),
            ));
        }
        let t = prepared(t, &self.prepare)
            .map_err(|e| crate::error::error(&self.name, self.reader.line(), e.0))?;
        Ok(Some(self.renderer.render_one(&t, seq)))
    }
}

impl<R: BufRead> Loaded<R> {
    /// The targets of `reader` (named `name` in errors), with `feed`'s
    /// columns for placeholders (`random_rows`: `-feed-random`), for
    /// shard `shard`; `lazy` reads them as requests go.
    pub fn load(
        mut reader: TargetReader<R>,
        name: &str,
        feed: Option<Feed>,
        random_rows: bool,
        shard: u64,
        lazy: bool,
        prepare: Prepare,
    ) -> Result<Self, TargetError> {
        let columns = feed.as_ref().map(|f| f.columns.clone()).unwrap_or_default();
        if lazy {
            return Ok(Loaded::Lazy(Box::new(LazyTargets {
                reader,
                name: name.to_string(),
                columns,
                renderer: Renderer::new(Vec::new(), feed, random_rows, shard),
                prepare,
            })));
        }
        let mut all = Vec::new();
        while let Some(t) = reader.next_sendable(&columns)? {
            let t =
                prepared(t, &prepare).map_err(|e| crate::error::error(name, reader.line(), e.0))?;
            all.push(t);
        }
        let weights: Vec<u32> = all.iter().map(Sendable::weight).collect();
        barrage_model::weights::order(&weights)
            .map_err(|e| crate::error::error(name, reader.line(), e.0))?;
        if all.iter().any(|t| matches!(t, Sendable::Templated(_))) {
            return Ok(Loaded::Rendered(Renderer::new(
                all,
                feed,
                random_rows,
                shard,
            )));
        }
        Ok(Loaded::Plain(
            all.into_iter()
                .filter_map(|t| match t {
                    Sendable::Plain(t) => Some(t),
                    Sendable::Templated(_) => None,
                })
                .collect(),
        ))
    }
}
