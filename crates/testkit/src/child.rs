use std::{
    io::{Read, Write},
    path::Path,
    process::{Command, Stdio},
    sync::{Arc, Mutex},
    thread,
    time::{Duration, Instant},
};

use barrage_stream::{Decoder, Hit};

/// A running barrage process whose stdout is decoded as it arrives.
pub struct Child {
    pid: i32,
    hits: Arc<Mutex<Vec<Hit>>>,
    stream_error: Arc<Mutex<Option<String>>>,
    reader: Option<thread::JoinHandle<()>>,
    stderr: Option<thread::JoinHandle<()>>,
    /// Its stderr so far.
    err_bytes: Arc<Mutex<Vec<u8>>>,
    feeder: Option<thread::JoinHandle<()>>,
}

/// How a [`Child`] ended.
#[derive(Debug)]
pub struct ChildResult {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    /// Everything it wrote on stderr.
    pub stderr: String,
    /// Every record decoded from stdout, in arrival order.
    pub hits: Vec<Hit>,
    /// Why decoding stopped, when not at a clean end.
    pub stream_error: Option<String>,
    /// Peak resident memory, KiB (VmHWM).
    pub peak_rss_kib: u64,
}

impl Child {
    /// Starts `bin args` (optionally through `sh -c` with `prefix`, e.g.
    /// `ulimit -n 64 &&`), feeds `stdin` then closes it, and decodes stdout
    /// as a binary result stream in the background.
    pub fn spawn(bin: &Path, args: &[&str], stdin: &[u8], shell_prefix: Option<&str>) -> Child {
        let mut cmd = match shell_prefix {
            Some(prefix) => {
                let mut c = Command::new("bash");
                c.arg("-c")
                    .arg(format!("{prefix} exec \"$0\" \"$@\""))
                    .arg(bin)
                    .args(args);
                c
            }
            None => {
                let mut c = Command::new(bin);
                c.args(args);
                c
            }
        };
        for v in crate::PROXY_VARS {
            cmd.env_remove(v);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn barrage");
        let pid = child.id() as i32;
        let mut input = child.stdin.take().expect("stdin");
        let data = stdin.to_vec();
        let feeder = thread::spawn(move || {
            let _ = input.write_all(&data);
        });
        let stdout = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let hits = Arc::new(Mutex::new(Vec::new()));
        let stream_error = Arc::new(Mutex::new(None));
        let (h, e) = (hits.clone(), stream_error.clone());
        let reader = thread::spawn(move || {
            let mut dec = match Decoder::new(stdout) {
                Ok(d) => d,
                Err(x) => {
                    *e.lock().unwrap() = Some(x.to_string());
                    return;
                }
            };
            loop {
                let mut hit = Hit::default();
                match dec.read(&mut hit) {
                    Ok(true) => h.lock().unwrap().push(hit),
                    Ok(false) => return,
                    Err(x) => {
                        *e.lock().unwrap() = Some(x.to_string());
                        return;
                    }
                }
            }
        });
        let err_bytes = Arc::new(Mutex::new(Vec::new()));
        let bytes = err_bytes.clone();
        let stderr = thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = err.read(&mut buf) {
                bytes.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        // The std Child is not waited on: wait4 below reaps the pid and
        // reports its rusage.
        std::mem::forget(child);
        Child {
            pid,
            hits,
            stream_error,
            reader: Some(reader),
            stderr: Some(stderr),
            err_bytes,
            feeder: Some(feeder),
        }
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Records decoded so far.
    pub fn records(&self) -> usize {
        self.hits.lock().unwrap().len()
    }

    /// Waits until at least `k` records have been decoded; false on timeout.
    pub fn wait_records(&self, k: usize, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if self.records() >= k {
                return true;
            }
            thread::sleep(Duration::from_millis(5));
        }
        false
    }

    /// Waits until a line of its stderr has `needle`, and gives that
    /// line; `None` on timeout.
    pub fn wait_stderr_line(&self, needle: &str, timeout: Duration) -> Option<String> {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            let text = String::from_utf8_lossy(&self.err_bytes.lock().unwrap()).into_owned();
            // Whole lines only: a line still being written (read in two
            // pieces on a busy machine) gave half an address.
            let whole = text.rfind('\n').map_or("", |end| &text[..end]);
            if let Some(l) = whole.lines().find(|l| l.contains(needle)) {
                return Some(l.to_string());
            }
            thread::sleep(Duration::from_millis(5));
        }
        None
    }

    /// Waits until the process catches `signal` (its handler installed,
    /// by `/proc/PID/status`'s `SigCgt` mask); false if it did not within
    /// `timeout` or is gone. A signal sent before that finds the default
    /// action (for SIGINT and SIGTERM: killed, nothing written).
    pub fn wait_caught(&self, signal: i32, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let bit = 1u64 << (signal - 1);
        while Instant::now() < end {
            let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", self.pid)) else {
                return false;
            };
            // Exited, not yet reaped: it will never catch it.
            if status
                .lines()
                .any(|l| l.starts_with("State:") && l.contains('Z'))
            {
                return false;
            }
            let caught = status
                .lines()
                .find_map(|l| l.strip_prefix("SigCgt:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
                .unwrap_or(0);
            if caught & bit != 0 {
                return true;
            }
            thread::sleep(Duration::from_millis(5));
        }
        false
    }

    /// Sends `signal` (e.g. `libc::SIGINT`).
    pub fn signal(&self, signal: i32) {
        unsafe {
            libc::kill(self.pid, signal);
        }
    }

    /// Waits for the exit; kills the process and panics if it is still
    /// running after `watchdog` (a hang, not a performance bound), with
    /// what [`Child::wait_or_hang`] saw of it.
    pub fn wait(self, watchdog: Duration) -> ChildResult {
        self.wait_or_hang(watchdog)
            .unwrap_or_else(|hung| panic!("{hung}"))
    }

    /// Waits for the exit, or, if it is still running after `watchdog`,
    /// notes where each of its threads is (name, state, kernel wait and
    /// stack) and what it wrote on stderr, then kills it.
    pub fn wait_or_hang(mut self, watchdog: Duration) -> Result<ChildResult, Hung> {
        let end = Instant::now() + watchdog;
        let mut status = 0i32;
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // The peak RSS comes from /proc (VmHWM, a high-water mark, read as
        // late as possible): wait4's ru_maxrss would include the test
        // process's own memory, which the child inherits through fork.
        let mut peak_rss_kib = 0;
        loop {
            if let Some(hwm) = vm_hwm_kib(self.pid) {
                peak_rss_kib = hwm;
            }
            let r = unsafe { libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut usage) };
            if r == self.pid {
                break;
            }
            if Instant::now() > end {
                let threads = threads_of(self.pid);
                unsafe {
                    libc::kill(self.pid, libc::SIGKILL);
                    libc::wait4(self.pid, &mut status, 0, &mut usage);
                }
                let stderr = String::from_utf8_lossy(&self.err_bytes.lock().unwrap()).into_owned();
                return Err(Hung {
                    watchdog,
                    threads,
                    stderr,
                });
            }
            thread::sleep(Duration::from_millis(5));
        }
        if let Some(f) = self.feeder.take() {
            let _ = f.join();
        }
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        if let Some(t) = self.stderr.take() {
            let _ = t.join();
        }
        let stderr = String::from_utf8_lossy(&self.err_bytes.lock().unwrap()).into_owned();
        let exited = libc::WIFEXITED(status);
        Ok(ChildResult {
            code: exited.then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            stderr,
            hits: std::mem::take(&mut *self.hits.lock().unwrap()),
            stream_error: self.stream_error.lock().unwrap().take(),
            peak_rss_kib,
        })
    }
}

/// A process that did not exit in time, as it was when given up on.
#[derive(Debug)]
pub struct Hung {
    /// How long it was given.
    pub watchdog: Duration,
    /// Each thread: its name, state, kernel wait and kernel stack.
    pub threads: String,
    /// What it had written on stderr.
    pub stderr: String,
}

impl std::fmt::Display for Hung {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "barrage did not exit within {:?} (watchdog); its threads:\n{}its stderr:\n{}",
            self.watchdog, self.threads, self.stderr
        )
    }
}

/// Where each thread of `pid` is, from /proc: one line a thread (name,
/// state, `wchan`), then its kernel stack where this process may read it.
fn threads_of(pid: i32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return "(gone)\n".into();
    };
    let mut out = String::new();
    for task in tasks.flatten() {
        let dir = task.path();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        let stat = read("stat");
        // The state follows the name's closing parenthesis.
        let state = stat
            .rsplit_once(") ")
            .map_or("?", |(_, r)| &r[..1.min(r.len())]);
        out += &format!(
            "  {} {} {state} {}\n",
            task.file_name().to_string_lossy(),
            read("comm").trim(),
            read("wchan").trim()
        );
        for frame in read("stack").lines().take(12) {
            out += &format!("      {frame}\n");
        }
    }
    out
}

/// The peak resident memory of a live process, KiB.
fn vm_hwm_kib(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

impl ChildResult {
    /// The invariants every fault test checks: no panic text, and a stream
    /// that decoded to a clean end with every seq in 0..n exactly once.
    pub fn assert_clean(&self) {
        assert!(
            !self.stderr.contains("panicked"),
            "barrage panicked: {}",
            self.stderr
        );
        assert!(
            self.stream_error.is_none(),
            "stream did not end cleanly: {:?}",
            self.stream_error
        );
        let mut seqs: Vec<u64> = self.hits.iter().map(|h| h.seq).collect();
        seqs.sort_unstable();
        for (i, s) in seqs.iter().enumerate() {
            assert_eq!(*s, i as u64, "seq {i} missing or repeated");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_past_its_watchdog_is_named_with_its_threads() {
        let shell = Path::new("/bin/sh");
        let child = Child::spawn(shell, &["-c", "echo waiting >&2; exec sleep 30"], b"", None);
        child.wait_stderr_line("waiting", Duration::from_secs(10));
        let hung = child.wait_or_hang(Duration::from_millis(200)).unwrap_err();
        assert!(hung.threads.contains("sleep"), "{hung}");
        assert!(hung.stderr.contains("waiting"), "{hung}");
        assert!(hung
            .to_string()
            .starts_with("barrage did not exit within 200ms"));
    }

    #[test]
    fn a_handler_is_seen_once_installed() {
        let shell = Path::new("/bin/sh");
        // The shell catches SIGTERM once its trap is set, then says so.
        let script = "trap 'exit 7' TERM; echo trapped >&2; while :; do sleep 0.05; done";
        let child = Child::spawn(shell, &["-c", script], b"", None);
        child.wait_stderr_line("trapped", Duration::from_secs(10));
        assert!(child.wait_caught(libc::SIGTERM, Duration::from_secs(10)));
        child.signal(libc::SIGTERM);
        assert_eq!(child.wait(Duration::from_secs(30)).code, Some(7));
        // sleep catches nothing: not seen, and the wait is bounded.
        let child = Child::spawn(shell, &["-c", "exec sleep 30"], b"", None);
        assert!(!child.wait_caught(libc::SIGTERM, Duration::from_millis(200)));
        child.signal(libc::SIGKILL);
        assert_eq!(child.wait(Duration::from_secs(30)).code, None);
    }

    #[test]
    fn a_process_that_exits_is_not_hung() {
        let child = Child::spawn(Path::new("/bin/sh"), &["-c", "exit 3"], b"", None);
        let r = child.wait_or_hang(Duration::from_secs(30)).unwrap();
        assert_eq!(r.code, Some(3));
    }
}
