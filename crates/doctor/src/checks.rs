//! [`Check`]: one wall, the plan's [`Verdict`] against it, and the fix;
//! [`judge`], the rule every connection-count wall follows.

use std::fmt;

use crate::{Needs, Plan};

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The plan fits.
    Ok,
    /// It fits, but something is close or depends on the server.
    Warn,
    /// The plan cannot fit: it will fail at about [`Check::fails_at`].
    Fail,
}

/// One wall and how the plan stands against it.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What is checked (`open files`, `ports`, ...).
    pub name: &'static str,
    /// The verdict.
    pub verdict: Verdict,
    /// What was found, in a sentence.
    pub detail: String,
    /// For a failure: about how many connections the plan reaches before
    /// it fails.
    pub fails_at: Option<u64>,
    /// How to move the wall: a command or a config line.
    pub fix: Option<String>,
}

impl Check {
    pub(crate) fn ok(name: &'static str, detail: String) -> Check {
        Check {
            name,
            verdict: Verdict::Ok,
            detail,
            fails_at: None,
            fix: None,
        }
    }

    pub(crate) fn fail(name: &'static str, detail: String, at: u64, fix: String) -> Check {
        Check {
            name,
            verdict: Verdict::Fail,
            detail,
            fails_at: Some(at),
            fix: Some(fix),
        }
    }

    pub(crate) fn warn(name: &'static str, detail: String, fix: Option<String>) -> Check {
        Check {
            name,
            verdict: Verdict::Warn,
            detail,
            fails_at: None,
            fix,
        }
    }
}

impl fmt::Display for Check {
    /// `ok    open files: ...`, then the fix on a line of its own.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self.verdict {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
        };
        write!(f, "{word:<5} {}: {}", self.name, self.detail)?;
        if let Some(at) = self.fails_at {
            write!(f, "; will fail at about {} connections", n(at))?;
        }
        if let Some(fix) = &self.fix {
            write!(f, "\n      fix: {fix}")?;
        }
        Ok(())
    }
}

/// A count with thousands separators (`1,234,567`).
pub fn n(v: u64) -> String {
    barrage_model::words::thousands(v)
}

/// How a plan stands against a wall that holds `room` connections: a
/// failure when even its likely connections pass it, a warning (saying at
/// what answer time) when only its most do.
pub(crate) fn judge(
    name: &'static str,
    plan: &Plan,
    needs: &Needs,
    room: u64,
    detail: String,
    fix: String,
) -> Check {
    if needs.connections <= room {
        return Check::ok(name, detail);
    }
    if needs.likely > room {
        let assumed = match plan.rate {
            Some(_) if plan.hold.is_none() => format!(
                " (with answers taking {} ms, the expected latency twice over: -expect-latency)",
                (plan.likely_secs() * 1000.0).round()
            ),
            _ => String::new(),
        };
        return Check::fail(name, format!("{detail}{assumed}"), room, fix);
    }
    let when = match plan.rate {
        Some(rate) if rate > 0.0 => format!(
            "; answers slower than {:.1}s would pass it (every request waits in flight until its answer or -timeout)",
            room as f64 / rate
        ),
        _ => String::new(),
    };
    Check {
        name,
        verdict: Verdict::Warn,
        detail: format!("{detail}{when}"),
        fails_at: Some(room),
        fix: Some(fix),
    }
}
