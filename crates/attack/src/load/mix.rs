//! `-mix FILE`: groups of targets, each at its own rate.

use barrage_targets::Defaults;

use super::spec::LoadError;
use crate::{AttackConfig, Group, Rate, Targets};

/// The groups of the mix file `file` (its `text`), each target with
/// `defaults`; sets `config`'s `mix_peak` (this shard's share of the
/// groups' peak rates).
pub fn mix(
    file: &str,
    text: &str,
    defaults: &Defaults,
    config: &mut AttackConfig,
) -> Result<Targets, LoadError> {
    let groups = barrage_targets::read_mix(file, text, defaults)?;
    let shards = config.shard.map_or(1, |(_, n)| n) as f64;
    config.mix_peak = Some(groups.iter().map(|g| g.peak_per_second()).sum::<f64>() / shards);
    let groups = groups
        .into_iter()
        .map(|g| {
            let group = g.name.clone();
            Group::new(
                &g.name,
                g.targets,
                g.rate.unwrap_or(Rate::Max),
                g.stages,
                g.timeout,
                g.max_workers,
            )
            .map_err(|error| LoadError::Group {
                file: file.to_string(),
                group,
                error,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Targets::Groups(groups))
}
