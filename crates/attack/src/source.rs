use std::sync::Arc;

use barrage_model::Target;

use barrage_client::PreparedTarget;

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
}

impl Targets {
    /// Prepares fixed targets; fails on the first that hyper cannot send.
    pub fn fixed(targets: Vec<Target>) -> Result<Self, SourceError> {
        if targets.is_empty() {
            return Err(SourceError("no targets to attack".into()));
        }
        let prepared = targets
            .into_iter()
            .map(|t| PreparedTarget::new(t).map(Arc::new))
            .collect::<Result<_, _>>()?;
        Ok(Targets::Fixed(prepared))
    }
}
