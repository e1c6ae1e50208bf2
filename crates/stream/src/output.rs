//! Where barrage's commands write: `stdout` (unbuffered by Rust's line writer, which
//! would flush a binary stream at every newline byte) or a file.

use std::{
    fs::File,
    io::{self, IsTerminal, Write},
    sync::atomic::{AtomicU8, Ordering},
};

/// Where `attack`'s stream stands: not started and due on stdout (0),
/// started (1), due elsewhere (2).
static STREAM: AtomicU8 = AtomicU8::new(0);

/// The attack's stream has begun: a later failure leaves it as it is.
pub fn stream_started() {
    STREAM.store(1, Ordering::SeqCst);
}

/// The attack's stream goes to a file, not stdout.
pub fn stream_elsewhere() {
    STREAM.store(2, Ordering::SeqCst);
}

/// An attack that failed before its stream began, with stdout a pipe or
/// a file: leaves a stream that says so ([`crate::aborted_stream`]),
/// so that `report` downstream prints the reason, not a report of nothing.
pub fn leave_abort(reason: &str) {
    if STREAM.load(Ordering::SeqCst) != 0 || io::stdout().is_terminal() {
        return;
    }
    let bytes = crate::aborted_stream(reason);
    if let Ok(mut out) = open("stdout") {
        let _ = out.write_all(&bytes);
    }
}

/// Opens `-output`: `stdout` or a file (created or truncated).
pub fn open(path: &str) -> io::Result<Box<dyn Write + Send>> {
    if path == "stdout" || path == "-" {
        use std::os::fd::AsFd;
        let fd = io::stdout().as_fd().try_clone_to_owned()?;
        Ok(Box::new(File::from(fd)))
    } else {
        Ok(Box::new(File::create(path)?))
    }
}

/// Whether a write failed because the reader went away (`| head`): a quiet
/// stop with exit 0, not an error.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// For the readers (`report`, `dump`, `encode`, `plot`): Ctrl-C in a
/// terminal goes to the whole pipeline, and `attack` upstream decides when
/// the stream ends (the first Ctrl-C finishes its requests in flight, the
/// second abandons them, and either way it closes a valid stream). So a
/// reader whose stdin is a pipe ignores SIGINT and reads to the end
/// (issue 29: it printed nothing on a double Ctrl-C, and the attack
/// upstream then wrote into a closed pipe); one reading files keeps
/// reading through the first SIGINT and calls `second` on the second
/// (exit 130).
pub fn outlive_first_interrupt(second: fn() -> !) {
    use std::os::unix::fs::FileTypeExt;
    let stdin_is_pipe = std::fs::metadata("/dev/stdin").is_ok_and(|m| m.file_type().is_fifo());
    if stdin_is_pipe {
        // A handler that only sets a flag replaces the default action
        // (ending the process): the signal is ignored.
        let _ = signal_hook::flag::register(
            signal_hook::consts::SIGINT,
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        return;
    }
    let Ok(mut signals) = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("barrage-signals".into())
        .spawn(move || {
            for (n, _) in signals.forever().enumerate() {
                if n >= 1 {
                    second();
                }
            }
        });
}
