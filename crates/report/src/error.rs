//! The error of parsing a flag's value: one line naming the flag and
//! what is wrong, as the CLI shows it.

/// A flag value that does not parse; its text names the flag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

impl From<String> for ParseError {
    fn from(s: String) -> Self {
        ParseError(s)
    }
}

impl From<&str> for ParseError {
    fn from(s: &str) -> Self {
        ParseError(s.to_string())
    }
}

impl From<barrage_metrics::ParseError> for ParseError {
    fn from(e: barrage_metrics::ParseError) -> Self {
        ParseError(e.0)
    }
}

impl std::ops::Deref for ParseError {
    type Target = str;

    /// The message, for matching in tests and callers.
    fn deref(&self) -> &str {
        &self.0
    }
}
