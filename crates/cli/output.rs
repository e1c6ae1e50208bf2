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
