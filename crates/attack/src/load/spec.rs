//! What [`super::targets`] is asked for, and why it may refuse.

use barrage_client::ProtoSet;
use barrage_targets::{BadValue, Feed};

use crate::SourceError;

/// What the flags say of how targets are read.
#[derive(Default)]
pub struct TargetsSpec {
    /// Where they come from, as typed (`-targets`).
    pub name: String,
    /// `-format flow`: the targets are a flow's steps.
    pub flow: bool,
    /// `-feed`: its rows, and the file as typed.
    pub feed: Option<(Feed, String)>,
    /// `-feed-random`.
    pub feed_random: bool,
    /// `-lazy`.
    pub lazy: bool,
    /// `-har-timing`: sent in the recording's order, at its times.
    pub recorded: bool,
    /// `-proto-set` or `-proto`, read.
    pub protos: Option<ProtoSet>,
    /// `-cookies` (a flow's sessions keep a jar each).
    pub cookies: bool,
    /// This attacker's shard (`{{shard}}`).
    pub shard: u64,
    /// `-dataset`, `-prompt-tokens`, `-output-tokens`: each request's LLM
    /// input, put in its target's body.
    pub prompts: Option<barrage_targets::Prompts>,
}

/// Why targets could not be made ready; each names the file, and the
/// line where there is one.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A target file that does not read.
    #[error(transparent)]
    Targets(#[from] barrage_targets::TargetError),
    /// A value in a target, a `-feed` row or a gRPC body.
    #[error(transparent)]
    Value(#[from] BadValue),
    /// A target that cannot be sent, in `file`.
    #[error("{file}: {error}")]
    Unsendable {
        /// The targets as typed.
        file: String,
        /// Why.
        error: SourceError,
    },
    /// At a line of a file.
    #[error("{file}:{line}: {what}")]
    At {
        /// The file (`-feed FILE` for a feed's).
        file: String,
        /// Its line.
        line: u64,
        /// What is wrong there.
        what: String,
    },
    /// `-har-timing` with an entry that has no time.
    #[error("-har-timing: entry {entry} of {file} ({method} {url}) has no startedDateTime to replay it at")]
    NoTime {
        /// Its index.
        entry: usize,
        /// The HAR file.
        file: String,
        /// Its method.
        method: String,
        /// Its URL, its secrets left out.
        url: String,
    },
    /// `-mix`: a group that cannot be sent.
    #[error("-mix {file}: group {group:?}: {error}")]
    Group {
        /// The mix file.
        file: String,
        /// The group's name.
        group: String,
        /// Why.
        error: SourceError,
    },
    /// No target read.
    #[error("{0}: no targets")]
    NoTargets(String),
    /// A target with placeholders where each must be sent as it is.
    #[error("sweep does not render templated targets ({{{{...}}}}) yet; attack does")]
    Templated,
    /// A file a flag names (`-feed`, `-proto-set`) that cannot be read
    /// whole: the tool's own I/O ([`LoadError::is_io`]), or bad input
    /// (too big, a device).
    #[error("{flag} {path}: {why}")]
    Unread {
        /// The flag.
        flag: &'static str,
        /// The file, as typed.
        path: String,
        /// Why.
        why: barrage_targets::Unread,
    },
    /// Descriptors that do not decode or compile.
    #[error("{flag} {path}: {why}")]
    Protos {
        /// `-proto-set` or `-proto`.
        flag: &'static str,
        /// The file, as typed.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// `-dataset` that does not read.
    #[error(transparent)]
    Dataset(#[from] barrage_targets::BadDataset),
    /// A target no prompt can be put in.
    #[error("{0}")]
    NoPrompt(#[from] barrage_targets::NotJson),
    /// `-format flow` with a reader of another format.
    #[error("-format flow: no flow reader")]
    NotAFlow,
}

impl LoadError {
    /// Whether the tool's own I/O failed (exit 1), not the input.
    pub fn is_io(&self) -> bool {
        matches!(
            self,
            LoadError::Unread {
                why: barrage_targets::Unread::Io(_),
                ..
            }
        )
    }
}
