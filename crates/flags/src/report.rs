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
    /// `-warmup auto` on stdin or with `-every`.
    #[error("-warmup auto reads its inputs twice: give files (not stdin), without -every")]
    WarmupOnce,
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
        let stdin = self.files.is_empty() || self.files.iter().any(|f| f == "-" || f == "stdin");
        if self.warmup == Some(crate::WarmupFlag::Auto) && (stdin || self.every.is_some()) {
            return Err(ReportConflict::WarmupOnce);
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
            limits: self.limits.clone(),
            intervals: self.intervals
                || self.slo.is_some()
                || matches!(kind, Kind::Json | Kind::Html),
            slo: self.slo.clone(),
            attain: self.attain,
            precision: self.precision,
        })
    }
}

/// `compare`'s inputs that do not make two sides.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareConflict {
    /// Not `BASE NEW` and no `--`.
    #[error("needs two result files, BASE NEW, or the base's runs, --, and the new side's runs (got {0} files)")]
    NotTwo(usize),
    /// `-- NEW...` with no base before it.
    #[error("no base runs before --")]
    NoBase,
    /// stdin on both sides, or twice.
    #[error("only one input can be stdin")]
    StdinTwice,
}

impl crate::CompareArgs {
    /// The two sides' files, from `BASE NEW` or `BASE... -- NEW...`.
    pub fn sides(&self) -> Result<(Vec<String>, Vec<String>), CompareConflict> {
        let (base, new) = if self.new.is_empty() {
            match self.files.as_slice() {
                [base, new] => (vec![base.clone()], vec![new.clone()]),
                _ => return Err(CompareConflict::NotTwo(self.files.len())),
            }
        } else if self.files.is_empty() {
            return Err(CompareConflict::NoBase);
        } else {
            (self.files.clone(), self.new.clone())
        };
        let stdin = |f: &&String| *f == "-" || *f == "stdin";
        if base.iter().chain(&new).filter(stdin).count() > 1 {
            return Err(CompareConflict::StdinTwice);
        }
        Ok((base, new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{testing::parsed, Command};

    fn report(args: &[&str]) -> ReportArgs {
        match parsed("report", args) {
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

    #[test]
    fn compare_takes_two_sides_and_stdin_once() {
        let sides = |args: &[&str]| match parsed("compare", args) {
            Command::Compare(c) => c.sides(),
            _ => panic!("not a compare"),
        };
        assert_eq!(sides(&["a", "b"]), Ok((vec!["a".into()], vec!["b".into()])));
        assert_eq!(sides(&["a"]), Err(CompareConflict::NotTwo(1)));
        assert_eq!(sides(&["-", "stdin"]), Err(CompareConflict::StdinTwice));
        assert_eq!(
            sides(&["a1", "a2", "--", "b"]).map(|(a, b)| (a.len(), b.len())),
            Ok((2, 1))
        );
    }
}
