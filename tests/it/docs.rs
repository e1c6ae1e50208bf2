//! The docs as a test (issue 65): every `shell` block of README.md and
//! the guide runs against `barrage serve` on loopback, and every relative
//! link of the docs leads to a file.
//!
//! A block fenced as ` ```shell ` runs; ` ```sh ` is shown only (it needs
//! what a test machine has not: a gRPC server, Prometheus, many hosts).
//! The examples name `127.0.0.1:8080` and `:8081`; the test starts its own
//! servers on free ports and puts them there, skips the lines that start
//! a server, shortens `-duration` and `-step-duration` to a second, and
//! runs each block with `bash -eo pipefail` in a directory of its own,
//! with `targets/` beside it and this build's `barrage` first on PATH.

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

/// `script` as the test runs it.
fn rewrite(script: &str, plain: &str, capped: &str) -> String {
    let kept: Vec<&str> = script
        .lines()
        .filter(|l| !l.trim_start().starts_with("barrage serve"))
        .collect();
    let mut s = kept.join("\n");
    s = s
        .replace("127.0.0.1:8080", plain)
        .replace("127.0.0.1:8081", capped);
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
    let plain = Serve::start(&[]);
    let capped = Serve::start(&["-capacity", "400"]);
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
            let script = rewrite(&script, &plain.1, &capped.1);
            let out = Command::new("timeout")
                .args(["120", "bash", "-eo", "pipefail", "-c", &script])
                .current_dir(&*dir)
                .env("PATH", &path)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            ran += 1;
            if !out.status.success() {
                failed.push(format!(
                    "{name}:{line}: exit {:?}\n{script}\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(ran >= 8, "only {ran} shell blocks found");
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
            let target = rest[..end].split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") {
                continue;
            }
            let file = page.parent().unwrap().join(target);
            if !file.exists() {
                broken.push(format!(
                    "{}: {target}",
                    page.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:?}");
}

#[test]
fn the_readme_is_a_readme() {
    let n = fs::read_to_string(root().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(n <= 300, "README.md has {n} lines; the rest goes in docs/");
}
