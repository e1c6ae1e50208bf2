//! For the unit tests: a command line as `barrage` would parse it.

use crate::{normalize, parse, AttackArgs, Command};

/// `barrage SUBCOMMAND ARGS…`, parsed (one-dash spelling and all).
pub(crate) fn parsed(sub: &str, args: &[&str]) -> Command {
    let all = ["barrage", sub].into_iter().chain(args.iter().copied());
    parse(normalize(all.map(std::ffi::OsString::from)))
        .expect("parses")
        .command
}

/// `barrage attack ARGS…`'s flags.
pub(crate) fn attack(args: &[&str]) -> AttackArgs {
    match parsed("attack", args) {
        Command::Attack(a) => *a,
        _ => panic!("not an attack"),
    }
}
