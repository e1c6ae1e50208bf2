use std::sync::Arc;

use barrage_model::{Rate, Stages, Target};

use barrage_client::{PreparedTarget, TargetGroup};

/// A target that cannot be read or sent; the text names where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SourceError(pub String);

impl From<barrage_client::Failure> for SourceError {
    fn from(f: barrage_client::Failure) -> Self {
        SourceError(f.0)
    }
}

/// A source of targets read one per request (`-lazy`).
pub trait TargetSource: Send {
    /// The target of request `seq` (of the whole schedule: templated
    /// targets render it), `Ok(None)` when there are no more; errors are
    /// shown to the user as they are (they name the file and line).
    fn next_target(&mut self, seq: u64) -> Result<Option<Target>, SourceError>;
}

/// The targets of an attack.
pub enum Targets {
    /// All read up front and used round-robin.
    Fixed(Vec<Arc<PreparedTarget>>),
    /// Made one per request (read as requests go, `-lazy`, or rendered
    /// from templates); the attack ends when they run out.
    Lazy(Box<dyn TargetSource>),
    /// A `-mix`: groups, each with its own targets and schedule, in one
    /// attack.
    Groups(Vec<Group>),
    /// A flow (`-format flow`): each ticket a session of its steps.
    Flow(Arc<crate::FlowPlan>),
}

impl Targets {
    /// The targets read up front, in order (a `-lazy` or templated
    /// source is not read ahead: none).
    pub fn known(&self) -> Vec<&PreparedTarget> {
        match self {
            Targets::Fixed(t) => t.iter().map(|t| &**t).collect(),
            Targets::Groups(groups) => groups
                .iter()
                .flat_map(|g| g.targets.iter().map(|t| &**t))
                .collect(),
            Targets::Flow(plan) => plan.steps.iter().map(|s| &*s.prepared).collect(),
            Targets::Lazy(_) => Vec::new(),
        }
    }

    /// The first three distinct URLs of [`Targets::known`], and "and N
    /// more", for a page's run table.
    pub fn shown_urls(&self) -> Vec<String> {
        barrage_model::words::first_distinct(self.known().iter().map(|t| &*t.url_text), 3)
    }
}

/// One group of a `-mix`: its targets (read up front, weighted as they
/// say) on a schedule of its own.
pub struct Group {
    /// Its targets, each carrying the group (its name, timeout and slots).
    pub targets: Vec<Arc<PreparedTarget>>,
    /// Its rate (unused with stages).
    pub rate: Rate,
    /// Its ramp, instead of the rate.
    pub stages: Option<Stages>,
}

impl Group {
    /// The group `name` of `targets` at `rate` (or `stages`), with its own
    /// `-timeout` and `-max-workers` where given.
    pub fn new(
        name: &str,
        targets: Vec<Target>,
        rate: Rate,
        stages: Option<Stages>,
        timeout: Option<std::time::Duration>,
        max_workers: Option<u64>,
    ) -> Result<Self, SourceError> {
        let group = Arc::new(TargetGroup {
            name: name.to_string(),
            timeout,
            slots: max_workers.map(|n| {
                tokio::sync::Semaphore::new(
                    n.clamp(1, tokio::sync::Semaphore::MAX_PERMITS as u64) as usize
                )
            }),
        });
        let targets = prepare(targets)?
            .into_iter()
            .map(|mut t| {
                t.group = Some(group.clone());
                Arc::new(t)
            })
            .collect();
        Ok(Group {
            targets,
            rate,
            stages,
        })
    }
}

impl Targets {
    /// Prepares fixed targets; fails on the first that hyper cannot send.
    pub fn fixed(targets: Vec<Target>) -> Result<Self, SourceError> {
        Ok(Targets::Fixed(
            prepare(targets)?.into_iter().map(Arc::new).collect(),
        ))
    }
}

/// Prepares targets read up front; fails on the first that cannot be
/// sent, on none, or on weights that make no order.
fn prepare(targets: Vec<Target>) -> Result<Vec<PreparedTarget>, SourceError> {
    if targets.is_empty() {
        return Err(SourceError("no targets to attack".into()));
    }
    let weights: Vec<u32> = targets.iter().map(Target::weight).collect();
    barrage_model::weights::order(&weights).map_err(|e| SourceError(e.0))?;
    targets
        .into_iter()
        .map(|t| PreparedTarget::new(t).map_err(SourceError::from))
        .collect()
}
