//! What `barrage sweep`'s flags ask that clap cannot check alone.

use barrage_sweep::{Load, Plan};

use crate::SweepArgs;

/// `sweep` flags that do not go together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepConflict {
    /// A flag the sweep sets itself each step.
    #[error(
        "sweep sets {0} itself: give the steps with -rates or -concurrency, and -step-duration"
    )]
    SetsItself(&'static str),
    /// Neither `-rates` nor `-concurrency`.
    #[error("sweep needs its steps: -rates 1000,2000,5000 (open model) or -concurrency 50,100,200 (closed model)")]
    NoSteps,
    /// `-find-max` (or `-slo`, a search too) with `-stop-on`.
    #[error("-find-max (or -slo) and -stop-on cannot be combined")]
    FindMaxStopOn,
    /// `-step-duration 0`.
    #[error("-step-duration must be above 0")]
    ZeroStep,
}

impl SweepArgs {
    /// The sweep's plan: its steps, how it ends, what it searches for.
    pub fn plan(&self) -> Result<Plan, SweepConflict> {
        Ok(Plan {
            steps: self.steps()?,
            stop_on: self
                .stop_on
                .as_ref()
                .map(|c| c.0.clone())
                .unwrap_or_default(),
            find_max: self.find_max.as_ref().map(|c| (c.0.clone(), c.1.clone())),
            slo: self.slo.clone().map(|slo| (slo, self.attain)),
            precision: self.precision,
            pause: self.pause,
        })
    }

    /// The steps, the flags checked together.
    pub fn steps(&self) -> Result<Vec<Load>, SweepConflict> {
        if self.concurrency.is_some() && self.attack.max_workers.is_some() {
            return Err(SweepConflict::SetsItself("-max-workers with -concurrency"));
        }
        let steps = match (&self.rates, &self.concurrency) {
            (Some(steps), None) | (None, Some(steps)) => steps.0.clone(),
            _ => return Err(SweepConflict::NoSteps),
        };
        if (self.find_max.is_some() || self.slo.is_some()) && self.stop_on.is_some() {
            return Err(SweepConflict::FindMaxStopOn);
        }
        if self.step_duration.is_zero() {
            return Err(SweepConflict::ZeroStep);
        }
        Ok(steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{testing::parsed, Command};

    fn steps(args: &[&str]) -> Result<Vec<Load>, SweepConflict> {
        match parsed("sweep", args) {
            Command::Sweep(s) => s.steps(),
            _ => panic!("not a sweep"),
        }
    }

    #[test]
    fn a_sweep_needs_its_steps_and_one_way_to_end() {
        assert_eq!(steps(&[]), Err(SweepConflict::NoSteps));
        assert_eq!(steps(&["-rates", "10,20"]).map(|s| s.len()), Ok(2));
        assert_eq!(
            steps(&["-concurrency", "2", "-max-workers", "3"]),
            Err(SweepConflict::SetsItself("-max-workers with -concurrency"))
        );
        assert_eq!(
            steps(&["-rates", "10", "-step-duration", "0s"]),
            Err(SweepConflict::ZeroStep)
        );
    }
}
