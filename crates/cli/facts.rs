//! The facts an attack writes at its stream's head for every page made
//! from it: the command as typed (header values hidden), the load asked
//! for and the first targets.

use barrage_attack::Targets;

use barrage_flags::AttackArgs;

/// The command as typed, for a page ([`barrage_model::words::shown_command`]).
pub fn command_line() -> String {
    barrage_model::words::shown_command(std::env::args())
}

/// The run's facts for the stream's head: the command as typed, barrage's
/// version, the load asked for, and the first targets (and how many).
pub fn run_facts(a: &AttackArgs, targets: &Targets) -> Vec<(&'static str, String)> {
    let load = if let Some(s) = &a.stages {
        format!("stages {s}")
    } else if let Some(m) = &a.mix {
        format!("mix {m}")
    } else if a.rate == barrage_model::Rate::Max {
        format!("{} workers, closed model", a.max_workers.unwrap_or(1))
    } else {
        format!("rate {}", a.rate)
    };
    let shown = targets.shown_urls();
    let mut facts = vec![
        ("command", command_line()),
        ("version", env!("CARGO_PKG_VERSION").to_string()),
        ("load", load),
    ];
    if !shown.is_empty() {
        facts.push(("targets", shown.join(", ")));
    }
    facts
}
