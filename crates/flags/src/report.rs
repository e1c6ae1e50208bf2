//! What `barrage report`'s flags ask that clap cannot check alone.

use barrage_metrics::Options;
use barrage_report::Kind;

use crate::ReportArgs;

/// `report` flags that do not go together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportConflict {
    /// `-type hist` without buckets.
    #[error("-type hist needs -buckets '[0,1ms,5ms]' (or write -type 'hist[0,1ms,5ms]')")]
    NoBuckets,
    /// `-every 0`.
    #[error("-every must be above 0 (such as 1s)")]
    ZeroEvery,
    /// `-every` with `-by`.
    #[error("-every and -by cannot be combined")]
    EveryBy,
    /// `-type plot` with a flag of the text reports.
    #[error("-type plot takes none of -every, -by and -fail-on")]
    Plot,
    /// `-type html -every`.
    #[error("-type html takes no -every (the page has its figures over time)")]
    HtmlEvery,
}

impl ReportArgs {
    /// The report's options, the flags checked together.
    pub fn options(&self) -> Result<Options, ReportConflict> {
        let buckets = self.kind.buckets.clone().or_else(|| self.buckets.clone());
        let kind = self.kind.kind;
        if kind == Kind::Hist && buckets.is_none() {
            return Err(ReportConflict::NoBuckets);
        }
        if self.every.is_some_and(|e| e.is_zero()) {
            return Err(ReportConflict::ZeroEvery);
        }
        if self.every.is_some() && self.by.is_some() {
            return Err(ReportConflict::EveryBy);
        }
        if kind == Kind::Plot
            && (self.every.is_some() || self.by.is_some() || self.fail_on.is_some())
        {
            return Err(ReportConflict::Plot);
        }
        if kind == Kind::Html && self.every.is_some() {
            return Err(ReportConflict::HtmlEvery);
        }
        Ok(Options {
            latency: self.latency,
            success: self.success.clone(),
            buckets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{normalize, parse, Command};

    fn report(args: &[&str]) -> ReportArgs {
        let all = ["barrage", "report"].iter().chain(args);
        match parse(normalize(all.map(std::ffi::OsString::from)))
            .expect("parses")
            .command
        {
            Command::Report(r) => r,
            _ => panic!("not a report"),
        }
    }

    #[test]
    fn the_report_flags_are_checked_together() {
        let e = |args: &[&str]| report(args).options().unwrap_err();
        assert_eq!(e(&["-type", "hist"]), ReportConflict::NoBuckets);
        assert_eq!(e(&["-every", "1s", "-by", "code"]), ReportConflict::EveryBy);
        assert_eq!(
            e(&["-type", "html", "-every", "1s"]),
            ReportConflict::HtmlEvery
        );
        let o = report(&["-type", "hist[0,1ms]"]).options().unwrap();
        assert!(o.buckets.is_some());
    }
}
