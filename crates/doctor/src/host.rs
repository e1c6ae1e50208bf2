//! [`Host`]: the machine's side, read through one interface (`/proc`
//! under a root, the open-files limits, the cores).

use std::path::{Path, PathBuf};

/// The machine's side: `/proc` under `root`, the open-files limits and
/// the cores. [`Host::this`] reads this machine; tests point one at a
/// fake tree.
#[derive(Debug, Clone)]
pub struct Host {
    /// The directory `proc/` is read under (`/` here).
    pub root: PathBuf,
    /// `RLIMIT_NOFILE`: soft and hard (`None`: unreadable).
    pub nofile: Option<(u64, u64)>,
    /// CPU cores this process may run on.
    pub cores: u64,
}

impl Host {
    /// This machine.
    pub fn this() -> Self {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
        Host {
            root: PathBuf::from("/"),
            nofile: ok.then_some((lim.rlim_cur, lim.rlim_max)),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
        }
    }

    /// A file under `root` (`proc/sys/fs/file-max`), trimmed; `None` when
    /// absent or unreadable.
    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(rel))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// A file's first number.
    pub(crate) fn number(&self, rel: &str) -> Option<u64> {
        self.read(rel)?.split_whitespace().next()?.parse().ok()
    }

    /// A file's numbers.
    pub(crate) fn numbers(&self, rel: &str) -> Option<Vec<u64>> {
        self.read(rel)?
            .split_whitespace()
            .map(|n| n.parse().ok())
            .collect()
    }

    /// `MemAvailable` in `/proc/meminfo`, bytes.
    pub(crate) fn mem_available(&self) -> Option<u64> {
        let info = self.read("proc/meminfo")?;
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    /// The root, for messages.
    pub fn root(&self) -> &Path {
        &self.root
    }
}
