//! The process limits an attack runs into.

/// Raises the soft open-files limit to the hard one (as Go does for
/// vegeta: every request in flight holds a socket) and returns the soft
/// limit now in force, or `None` where it cannot be read.
pub fn raise_open_files_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    Some(lim.rlim_cur)
}

/// Open files below which an attack warns before starting: every request
/// in flight holds a socket.
const LOW_OPEN_FILES: u64 = 1024;

/// Raises the open-files limit ([`raise_open_files_limit`]); a warning
/// when even the raised one is low.
pub fn open_files_warning() -> Option<String> {
    raise_open_files_limit().filter(|&n| n < LOW_OPEN_FILES).map(|n| {
        format!("the open files limit (NOFILE) is {n}; requests beyond it fail with \"socket: too many open files\" (raise it with ulimit -n)")
    })
}
