//! `barrage doctor`: whether this host can hold the attack its flags
//! describe (the checks are `barrage-doctor`'s; the plan is `barrage_flags`').

use std::io::IsTerminal;

use barrage_attack::AttackConfig;
use barrage_doctor::{Host, Verdict};

use crate::{
    attack,
    failed::{Failed, Kind, Outcome},
};
use barrage_flags::{destinations, AttackArgs};

pub fn run(a: AttackArgs) -> Outcome {
    // Targets say where the connections go; from a terminal, none are
    // read (the plan then counts one destination).
    let reads = a.mix.is_some() || !matches!(a.targets.as_str(), "stdin" | "-");
    let mut config;
    let destinations = if reads || !std::io::stdin().is_terminal() {
        let setup = attack::setup(&a)?;
        config = setup.config;
        destinations(&a.all_targets(setup.reader, &mut config, None)?)
    } else {
        config = AttackConfig::default();
        Vec::new()
    };
    let plan = a.plan(config.mix_peak, destinations);
    let checks = barrage_doctor::check(&plan, &Host::this());
    println!("{}", barrage_doctor::summary(&plan));
    for c in &checks {
        println!("{c}");
    }
    if barrage_doctor::fits(&checks) {
        return Ok(());
    }
    let failing: Vec<&str> = checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .map(|c| c.name)
        .collect();
    Err(Failed {
        kind: Kind::Unfit,
        lines: vec![format!(
            "the plan does not fit this host: {}",
            failing.join(", ")
        )],
    })
}
