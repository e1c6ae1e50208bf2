//! The client's error: why a request (or a connection, or a setting) did
//! not work, worded as Go words it, since a request's becomes its record's
//! `error` (`Get "http://…": dial tcp …: connection refused`).

/// Why a request, connection or setting failed, as the text a record or
/// the user sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Failure(pub String);

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure(s)
    }
}

impl From<&str> for Failure {
    fn from(s: &str) -> Self {
        Failure(s.to_string())
    }
}

impl std::ops::Deref for Failure {
    type Target = str;

    /// The text.
    fn deref(&self) -> &str {
        &self.0
    }
}
