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

/// A request's error in Go's words: `Get "http://…": …`.
pub(crate) fn go_failed(
    method: &str,
    uri: &dyn std::fmt::Display,
    e: &dyn std::fmt::Display,
) -> String {
    format!("{} \"{}\": {}", go_op(method), uri, e)
}

/// Go's wording for the operation in an error: `Get`, `Post`, `Purge`.
pub(crate) fn go_op(method: &str) -> String {
    let mut s = String::with_capacity(method.len());
    for (i, c) in method.chars().enumerate() {
        s.push(if i == 0 {
            c.to_ascii_uppercase()
        } else {
            c.to_ascii_lowercase()
        });
    }
    s
}
