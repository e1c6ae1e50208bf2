//! The ways of scheduling beyond one rate over one list of targets, as
//! `attack` checks and builds them: `-mix` groups, `-har-timing`'s
//! recorded order, and `-arrivals` with its seed.

use barrage_attack::{Arrivals, AttackConfig, Rate, Targets};
use barrage_model::Target;

use crate::{
    failed::Failed,
    read::{bounded, defaults},
};
use barrage_flags::AttackArgs;

/// `-arrivals` with its seed fixed: `poisson` without one draws it now
/// and says it, so that the run can be repeated (`-arrivals poisson:SEED`).
pub(crate) fn arrivals(a: Arrivals) -> Arrivals {
    match a {
        Arrivals::Poisson(None) => {
            let seed = fastrand::u64(..) >> 11;
            eprintln!(
                "barrage: -arrivals poisson:{seed} (repeat this run's schedule with that flag)"
            );
            Arrivals::Poisson(Some(seed))
        }
        other => other,
    }
}

/// `-mix`'s groups, read and prepared; the peak rate of all of them
/// together (of this shard) goes into `config`.
pub(crate) fn mix(
    a: &AttackArgs,
    path: &str,
    config: &mut AttackConfig,
) -> Result<Targets, Failed> {
    let text = String::from_utf8(bounded("-mix", path, barrage_targets::MAX_FILE)?)
        .map_err(|_| Failed::usage(format!("-mix {path}: not UTF-8 text")))?;
    let defaults = defaults(a)?;
    let groups = barrage_targets::read_mix(path, &text, &defaults).map_err(Failed::usage)?;
    let shards = config.shard.map_or(1, |(_, n)| n) as f64;
    config.mix_peak = Some(groups.iter().map(|g| g.peak_per_second()).sum::<f64>() / shards);
    let groups = groups
        .into_iter()
        .map(|g| {
            barrage_attack::Group::new(
                &g.name,
                g.targets,
                g.rate.unwrap_or(Rate::Max),
                g.stages,
                g.timeout,
                g.max_workers,
            )
            .map_err(|e| Failed::usage(format!("-mix {path}: group {:?}: {e}", g.name)))
        })
        .collect::<Result<_, _>>()?;
    Ok(Targets::Groups(groups))
}

/// `-har-timing`'s targets in the order they were sent, each with its
/// time; refused when the HAR lacks them.
pub(crate) fn recorded_order(a: &AttackArgs, mut all: Vec<Target>) -> Result<Vec<Target>, Failed> {
    if let Some(i) = all.iter().position(|t| t.at.is_none()) {
        return Err(Failed::usage(format!(
            "-har-timing: entry {} of {} ({} {}) has no startedDateTime to replay it at",
            i,
            a.targets,
            all[i].method,
            barrage_model::words::redacted(&all[i].url)
        )));
    }
    all.sort_by_key(|t| t.at);
    Ok(all)
}

/// Flags that cannot go together: the ways of scheduling (`-mix`,
/// `-har-timing`, `-arrivals`) with each other and what they leave no
/// room for.
pub(crate) fn refuse_combinations(a: &AttackArgs) -> Result<(), Failed> {
    let poisson = matches!(a.arrivals, Arrivals::Poisson(_));
    if a.mix.is_some() {
        for (on, flag) in [
            (a.lazy, "-lazy"),
            (a.feed.is_some(), "-feed"),
            (a.hold.is_some(), "-hold"),
            (a.har_timing, "-har-timing"),
            (
                a.max_workers.is_some(),
                "-max-workers (give each group its own max-workers)",
            ),
            (
                a.targets != "stdin",
                "-targets (each group names its targets)",
            ),
        ] {
            if on {
                return Err(Failed::usage(format!("-mix does not take {flag}")));
            }
        }
    }
    if a.har_timing {
        if a.format != barrage_targets::Format::Har {
            return Err(Failed::usage(
                "-har-timing replays a HAR file's times: it goes with -format har",
            ));
        }
        for (on, flag) in [
            (a.lazy, "-lazy"),
            (a.stages.is_some(), "-stages"),
            (poisson, "-arrivals poisson"),
            (a.hold.is_some(), "-hold"),
            (a.rate != barrage_model::DEFAULT_RATE, "-rate"),
        ] {
            if on {
                return Err(Failed::usage(format!(
                    "-har-timing sends at the recording's times: it does not take {flag}"
                )));
            }
        }
    } else if a.har_speed != 1.0 {
        return Err(Failed::usage("-har-speed goes with -har-timing"));
    }
    if poisson && a.rate == Rate::Max && a.stages.is_none() && a.mix.is_none() {
        return Err(Failed::usage(
            "-arrivals poisson spreads requests around a rate: give -rate N or -stages (the closed model, -rate 0, has no arrivals)",
        ));
    }
    Ok(())
}
