//! Where commands write: [`barrage_stream::output`], and the one refusal
//! of a terminal for a binary stream.

pub use barrage_stream::output::{
    is_closed_pipe, leave_abort, open, outlive_first_interrupt, stream_elsewhere, stream_started,
};

/// Refuses to write the binary stream to a terminal (as gzip does),
/// before anything is sent.
pub fn refuse_terminal(path: &str) -> Result<(), crate::failed::Failed> {
    if (path == "stdout" || path == "-") && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(crate::failed::Failed::usage(
            "result stream not written to a terminal; pipe it to `barrage report` or use -output FILE",
        ));
    }
    Ok(())
}

/// Writes to `path` (stdout or a file) through a buffer with `write`: a
/// reader that went away is a quiet end, any other error the tool's own
/// I/O, naming `path`.
pub fn write_to(
    path: &str,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> crate::failed::Outcome {
    let written = open(path).and_then(|out| {
        let mut out = std::io::BufWriter::new(out);
        write(&mut out)?;
        std::io::Write::flush(&mut out)
    });
    match written {
        Err(e) if !is_closed_pipe(&e) => {
            Err(crate::failed::Failed::io(format!("writing {path}: {e}")))
        }
        _ => Ok(()),
    }
}
