use thiserror::Error;

/// A target that could not be read, with where it is.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{source_name}:{line}: {message}")]
pub struct TargetError {
    /// The file name, or `stdin`.
    pub source_name: String,
    /// 1-based line number.
    pub line: u64,
    /// vegeta's wording: `bad target: …`, `bad method: …`, `bad URL: …`,
    /// `bad header: …`, `bad body: …`.
    pub message: String,
}

/// A value that is not what it should be, without a place in a file: a
/// `-format` flag, a URL before it is placed at its line.
#[derive(Debug, Error, PartialEq, Eq, Clone)]
#[error("{0}")]
pub struct BadValue(pub String);

impl From<String> for BadValue {
    fn from(s: String) -> Self {
        BadValue(s)
    }
}

impl From<&str> for BadValue {
    fn from(s: &str) -> Self {
        BadValue(s.to_string())
    }
}

impl std::ops::Deref for BadValue {
    type Target = str;

    /// The text.
    fn deref(&self) -> &str {
        &self.0
    }
}

/// Builds the error for `line` of `source`.
pub(crate) fn error(source: &str, line: u64, message: String) -> TargetError {
    TargetError {
        source_name: source.to_string(),
        line,
        message,
    }
}
