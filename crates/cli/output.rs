//! Where commands write: `stdout` (unbuffered by Rust's line writer, which
//! would flush a binary stream at every newline byte) or a file.

use std::{
    fs::File,
    io::{self, Write},
};

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
