//! barrage: an HTTP load-testing toolchain in the style of vegeta.
//!
//! `attack` writes a binary result stream; `report`, `dump`, `encode` and `plot` read
//! it (or CSV / JSON lines). This file parses the command line, dispatches,
//! and says what failed; `exit.rs` holds the exit-code table.

mod attack;
mod compare;
mod docs;
mod doctor;
mod dump;
mod exit;
mod export;
mod failed;
mod inputs;
mod live;
mod output;
mod plot;
mod report;
mod serve;
mod sweep;
mod targets;

use barrage_flags as flags;
use flags::Command;

/// mimalloc, built with `no_thp` (the figures are in `git log -S no_thp`):
/// glibc's malloc was 5% of an attack's profile, and transparent huge
/// pages doubled the peak RSS; `main` turns those off for the process too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_e`,
/// mimalloc.h of v3; the Rust bindings do not name it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() {
    // SAFETY: prctl with these arguments only sets a flag of this process.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    // Pages that empty go back to the system at once, not a second later
    // (mimalloc v3's default): 1,000 SSE streams ending within a second kept
    // their buffers resident. MIMALLOC_PURGE_DELAY, when set, still rules.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options; any value is valid.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
    std::panic::set_hook(Box::new(|info| {
        // One line, no backtrace; still says "panicked" so tests catch bugs.
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("barrage: internal error, panicked{at}: {msg} (please report this bug)");
    }));
    let typed: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args = flags::normalize(std::env::args_os());
    let cli = match flags::parse(args) {
        Ok(cli) => cli,
        Err(e) => usage_error(e, &typed),
    };
    // The readers outlive the first Ctrl-C (barrage_stream::output says why).
    if matches!(
        cli.command,
        Command::Report(_)
            | Command::Dump(_)
            | Command::Encode(_)
            | Command::Plot(_)
            | Command::Export(_)
            | Command::Compare(_)
            | Command::Send(_)
    ) {
        output::outlive_first_interrupt(exit::interrupted);
    }
    let (name, outcome) = match cli.command {
        Command::Attack(a) => ("attack", attack::run(*a)),
        Command::Doctor(a) => ("doctor", doctor::run(*a)),
        Command::Report(r) => ("report", report::run(r)),
        Command::Dump(d) => ("dump", dump::run(d)),
        Command::Encode(e) => ("encode", dump::encode(e)),
        Command::Plot(p) => ("plot", plot::run(p)),
        Command::Export(x) => ("export", export::run(x)),
        Command::Compare(c) => ("compare", compare::run(c)),
        Command::Collect(c) => ("collect", live::collect(c)),
        Command::Send(s) => ("send", live::send(s)),
        Command::Serve(s) => ("serve", serve::run(s)),
        Command::Targets(t) => ("targets", targets::run(t)),
        Command::Sweep(s) => ("sweep", sweep::run(*s)),
        Command::Completions(c) => ("completions", docs::completions(c.shell)),
        Command::Man(m) => ("man", docs::man(m)),
    };
    exit::with(exit_code(name, outcome));
}

/// The one place an outcome becomes an exit code: what failed is said on
/// stderr, a line each, then its code (0 done, 1 the tool's own I/O, 2
/// bad usage or input, 3 a `-fail-on` condition held).
fn exit_code(command: &str, outcome: failed::Outcome) -> i32 {
    match outcome {
        Ok(()) => 0,
        Err(f) => {
            if command == "attack" && matches!(f.kind, failed::Kind::Usage | failed::Kind::Io) {
                output::leave_abort(&f.lines.join("; "));
            }
            for line in f.lines.iter().flat_map(|l| l.lines()) {
                eprintln!("barrage {command}: {}", said(line));
            }
            f.kind.code()
        }
    }
}

/// An error's line as printed: at most 1,000 bytes of it (issue 29: a
/// 100 MB line on stderr), control characters escaped.
fn said(line: &str) -> String {
    barrage_model::words::printable(&barrage_model::words::cut(line, 1000, false)).into_owned()
}

/// A command line clap refused ([`flags::refused`]): help on stdout and
/// exit 0, or what is wrong on stderr and exit 2.
fn usage_error(e: clap::Error, typed: &[String]) -> ! {
    match flags::refused(&e, typed) {
        flags::Refused::Help(help) => {
            print!("{help}");
            exit::with(0)
        }
        flags::Refused::HelpOnStderr(help) => eprint!("{help}"),
        flags::Refused::Usage { line, abort } => {
            let line = said(&line);
            eprintln!("barrage: {line}");
            if abort {
                output::leave_abort(&line);
            }
        }
    }
    exit::with(exit::Kind::Usage.code())
}

#[cfg(test)]
mod tests {
    use super::MI_OPTION_PURGE_DELAY;

    /// The option's number is written by hand: mimalloc v3's default for
    /// the purge delay (1,000 ms) read back through it says it is the one.
    #[test]
    fn the_purge_delay_option_is_the_one_mimalloc_names() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: reads one of mimalloc's options.
        let got = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(got, 1000);
    }
}
