//! The ways of scheduling beyond one rate over one list of targets, as
//! `attack` checks and builds them: `-mix` groups, `-har-timing`'s
//! recorded order, and `-arrivals` with its seed.

use barrage_attack::{Arrivals, AttackConfig, Targets};

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
    Ok(barrage_attack::load::mix(path, &text, &defaults, config)?)
}
