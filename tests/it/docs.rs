//! The docs as a test (issue 65): every `shell` block of README.md and
//! the guide runs against `barrage serve` on loopback, and every relative
//! link of the docs leads to a file.
//!
//! A block fenced as ` ```shell ` runs; ` ```sh ` is shown only (it needs
//! what a test machine has not: a gRPC server, Prometheus, many hosts).
//! A block's `barrage serve -addr 127.0.0.1:PORT FLAGS &` lines are the
//! servers it needs: the test starts each on a free port with its flags
//! and puts that port where the block names PORT (a block with none gets
//! a plain one at 127.0.0.1:8080). It shortens `-duration` and
//! `-step-duration` to a second, gives `127.0.0.1:7690` (a collector's)
//! a free port, and runs each block with `bash -eo
//! pipefail` in a directory of its own, with `targets/` beside it and this
//! build's `barrage` first on PATH.

use crate::common;

use std::{
    fs,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pages whose examples run: README.md and every guide page.
fn pages() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    let mut guide: Vec<PathBuf> = fs::read_dir(root().join("docs/guide"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    guide.sort();
    out.extend(guide);
    out
}

/// The `shell` blocks of `text`, each with the line it starts on.
fn shell_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None if line.trim_end() == "```shell" => open = Some((i + 1, String::new())),
            None => {}
            Some(_) if line.starts_with("```") => out.extend(open.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    out
}

/// The address a block's `barrage collect` listens on; the test gives
/// it a free port.
const COLLECT: &str = "127.0.0.1:7690";

/// A `barrage serve` on a free port, `extra` flags beside; its address.
struct Serve(Child, String);

impl Serve {
    fn start(extra: &[&str]) -> Serve {
        let mut child = common::bin()
            .args(["serve", "-addr", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("barrage serve");
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .rsplit("http://")
            .next()
            .unwrap_or("")
            .trim_end_matches('/')
            .to_string();
        assert!(addr.starts_with("127.0.0.1:"), "serve said {line:?}");
        Serve(child, addr)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The servers `script` starts (`barrage serve -addr HOST:PORT FLAGS &`),
/// each as its address and flags; a plain one at 127.0.0.1:8080 when it
/// starts none.
fn servers(script: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for line in script.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("barrage serve") else {
            continue;
        };
        // Its flags: up to its `&` (and a comment after it).
        let rest = rest.split(" #").next().unwrap_or("").trim();
        let words: Vec<&str> = rest.trim_end_matches('&').split_whitespace().collect();
        let at = words.iter().position(|w| *w == "-addr");
        let addr = at
            .and_then(|i| words.get(i + 1))
            .unwrap_or(&"127.0.0.1:8080");
        let flags = words
            .iter()
            .enumerate()
            .filter(|(i, _)| at.is_none_or(|a| *i != a && *i != a + 1))
            .map(|(_, w)| w.to_string())
            .collect();
        out.push((addr.to_string(), flags));
    }
    if out.is_empty() {
        out.push(("127.0.0.1:8080".into(), Vec::new()));
    }
    out
}

/// `script` as the test runs it: its servers' lines left out, their
/// addresses made `to` (each `(named, started)`), durations a second.
fn rewrite(script: &str, to: &[(String, String)]) -> String {
    let kept: Vec<&str> = script
        .lines()
        .filter(|l| !l.trim_start().starts_with("barrage serve"))
        .collect();
    let mut s = kept.join("\n");
    for (named, started) in to {
        s = s.replace(named.as_str(), started);
    }
    let mut out = String::new();
    let mut words = s.split_inclusive(char::is_whitespace).peekable();
    while let Some(w) = words.next() {
        out.push_str(w);
        if matches!(w.trim(), "-duration" | "-step-duration") {
            if let Some(v) = words.next() {
                let ws: String = v.chars().filter(|c| c.is_whitespace()).collect();
                out.push_str("1s");
                out.push_str(&ws);
            }
        }
    }
    out
}

#[test]
fn every_shell_example_runs() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_barrage")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut failed = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for (line, script) in shell_blocks(&text) {
            let dir = common::tempdir(&format!("docs-{}", ran));
            std::os::unix::fs::symlink(root().join("targets"), dir.join("targets")).unwrap();
            let started: Vec<(String, Serve)> = servers(&script)
                .into_iter()
                .map(|(addr, flags)| {
                    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                    (addr, Serve::start(&flags))
                })
                .collect();
            let mut to: Vec<(String, String)> = started
                .iter()
                .map(|(a, s)| (a.clone(), s.1.clone()))
                .collect();
            // The collector's port: a free one.
            if script.contains(COLLECT) {
                let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                to.push((COLLECT.into(), free.local_addr().unwrap().to_string()));
            }
            let script = rewrite(&script, &to);
            let out = Command::new("timeout")
                .args(["60", "bash", "-eo", "pipefail", "-c", &script])
                .current_dir(&*dir)
                .env("PATH", &path)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            ran += 1;
            drop(started);
            if !out.status.success() {
                failed.push(format!(
                    "{name}:{line}: exit {:?}\n{script}\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(ran >= 20, "only {ran} shell blocks found");
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn every_relative_link_of_the_docs_leads_to_a_file() {
    let mut pages = pages();
    for dir in ["docs", "docs/reference"] {
        for e in fs::read_dir(root().join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "md") {
                pages.push(e.path());
            }
        }
    }
    pages.extend(["ARCHITECTURE.md", "CONTRIBUTING.md"].map(|p| root().join(p)));
    let mut broken = Vec::new();
    for page in pages {
        let text = fs::read_to_string(&page).unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let (target, anchor) = rest[..end].split_once('#').unwrap_or((&rest[..end], ""));
            if target.contains("://") || (target.is_empty() && anchor.is_empty()) {
                continue;
            }
            let file = match target {
                "" => page.clone(),
                t => page.parent().unwrap().join(t),
            };
            let found = match fs::read_to_string(&file) {
                Ok(_) if anchor.is_empty() || file.is_dir() => true,
                Ok(text) => anchors(&text).iter().any(|a| a == anchor),
                Err(_) => file.is_dir(),
            };
            if !found {
                broken.push(format!(
                    "{}: {}",
                    page.strip_prefix(root()).unwrap().display(),
                    &rest[..end]
                ));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:?}");
}

/// The anchors GitHub gives a page's headings: lower case, spaces as
/// hyphens, other punctuation left out.
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !fenced) else {
            continue;
        };
        let title = title.trim_start_matches('#').trim();
        let slug = title
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
                _ => None,
            })
            .collect();
        out.push(slug);
    }
    out
}

/// The guide's pages are short (issue 65), and each shows commands that
/// run, but for the pages whose commands need what a test machine has
/// not (a gRPC or QUIC server, many hosts, a cluster).
const GUIDE_LINES: usize = 120;
const NOT_ON_LOOPBACK: [&str; 2] = ["protocols.md", "many-machines.md"];

#[test]
fn the_guide_pages_are_short_and_run() {
    let mut wrong = Vec::new();
    for page in pages().into_iter().skip(1) {
        let text = fs::read_to_string(&page).unwrap();
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let n = text.lines().count();
        if n > GUIDE_LINES {
            wrong.push(format!("{name}: {n} lines (at most {GUIDE_LINES}): split it, or move reference matter to docs/reference"));
        }
        if shell_blocks(&text).is_empty() && !NOT_ON_LOOPBACK.contains(&name.as_str()) {
            wrong.push(format!("{name}: no ```shell block that runs"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_readme_is_a_readme() {
    let n = fs::read_to_string(root().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(n <= 300, "README.md has {n} lines; the rest goes in docs/");
}
