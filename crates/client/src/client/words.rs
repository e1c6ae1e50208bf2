//! Go's wording for a request's errors, as vegeta's records read:
//! `Get "http://…": …`, and the `-timeout` error.

use std::time::Duration;

use crate::PreparedTarget;

/// The error of a request that took longer than `-timeout` (`t`).
pub(super) fn timed_out(target: &PreparedTarget, t: Duration) -> crate::Failure {
    crate::Failure(format!(
        "{} \"{}\": timeout after {} (-timeout)",
        go_op(&target.method_text),
        target.url_shown,
        barrage_model::duration::format(t.as_nanos() as i64)
    ))
}

/// Go's wording for the operation in an error: `Get`, `Post`, `Purge`.
pub(super) fn go_op(method: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_op_names() {
        assert_eq!(go_op("GET"), "Get");
        assert_eq!(go_op("POST"), "Post");
    }
}
