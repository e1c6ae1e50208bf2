//! One attack from many machines: the Kubernetes Indexed Job's manifest
//! (checked with a YAML parser, then its container command run once per
//! index on loopback), the Dockerfile's shape, `scripts/fanout` over a
//! stand-in for ssh, and the report's warning when shards disagree.

use crate::common;

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use barrage_testkit::Server;
use common::*;
use yaml_rust2::{Yaml, YamlLoader};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn documents(rel: &str) -> Vec<Yaml> {
    let text = fs::read_to_string(repo(rel)).expect(rel);
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn kind<'a>(docs: &'a [Yaml], kind: &str) -> &'a Yaml {
    docs.iter()
        .find(|d| d["kind"].as_str() == Some(kind))
        .unwrap_or_else(|| panic!("no {kind} in the manifest"))
}

fn strings(y: &Yaml) -> Vec<String> {
    y.as_vec()
        .expect("a list")
        .iter()
        .map(|v| match v {
            Yaml::String(s) => s.clone(),
            Yaml::Integer(i) => i.to_string(),
            other => panic!("{other:?} in a list of strings"),
        })
        .collect()
}

/// `$(NAME)` expanded from `env` as Kubernetes does (unknown names stay).
fn expand(arg: &str, env: &HashMap<String, String>) -> String {
    let mut out = arg.to_string();
    for (k, v) in env {
        out = out.replace(&format!("$({k})"), v);
    }
    out
}

/// A unix time `ms` milliseconds from now, as unix seconds.
fn start_in(ms: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let at = now + std::time::Duration::from_millis(ms);
    format!("{}.{:09}", at.as_secs(), at.subsec_nanos())
}

/// Every record of the streams, checked to be one schedule at `rate`/s:
/// numbers 0..n once each, each `seq / rate` after the first.
fn one_schedule(streams: &[PathBuf], rate: i64) -> Vec<barrage_stream::Hit> {
    let mut hits = Vec::new();
    for s in streams {
        hits.extend(decode(&fs::read(s).unwrap()));
    }
    assert_exact_schedule(&mut hits, 1_000_000_000 / rate);
    hits
}

#[test]
fn the_indexed_job_is_wired_to_shard_auto() {
    let docs = documents("deploy/kubernetes/job.yaml");
    let job = kind(&docs, "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let n = spec["completions"].as_i64().expect("completions");
    assert_eq!(spec["parallelism"].as_i64(), Some(n), "parallelism");
    // Issue 60: a Job whose pods hang still ends.
    assert!(spec["activeDeadlineSeconds"]
        .as_i64()
        .is_some_and(|s| s > 0));
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    let c = &pod["containers"][0];
    let args = strings(&c["args"]);
    let after = |flag: &str| {
        let i = args.iter().position(|a| a == flag);
        i.and_then(|i| args.get(i + 1)).cloned()
    };
    assert_eq!(args[0], "attack");
    assert_eq!(after("-shard").as_deref(), Some("auto"));
    assert_eq!(after("-start-at").as_deref(), Some("$(START_AT)"));
    let env = c["env"].as_vec().expect("env");
    let var = |name: &str| {
        env.iter()
            .find(|e| e["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no env {name}"))
    };
    assert_eq!(
        var("BARRAGE_SHARDS")["value"].as_str(),
        Some(&*n.to_string())
    );
    let start = &var("START_AT")["valueFrom"]["configMapKeyRef"];
    assert_eq!(start["name"].as_str(), Some("barrage-attack"));
    assert!(
        var("JOB_COMPLETION_INDEX")["valueFrom"]["fieldRef"]["fieldPath"]
            .as_str()
            .unwrap()
            .contains("job-completion-index")
    );
    // The targets come from the ConfigMap, the streams go to the volume.
    let mounts: HashMap<&str, &str> = c["volumeMounts"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap(),
                m["mountPath"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(after("-targets").unwrap().starts_with(mounts["config"]));
    assert!(after("-output").unwrap().starts_with(mounts["results"]));
    let volumes = pod["volumes"].as_vec().unwrap();
    let claim = volumes
        .iter()
        .find(|v| v["name"].as_str() == Some("results"));
    let claim = claim.unwrap()["persistentVolumeClaim"]["claimName"].as_str();
    assert_eq!(
        kind(&docs, "PersistentVolumeClaim")["metadata"]["name"].as_str(),
        claim
    );
    let resources = &c["resources"];
    assert!(resources["requests"]["cpu"].as_str().is_some());
    assert!(resources["requests"]["memory"].as_str().is_some());
    assert!(resources["limits"]["memory"].as_str().is_some());
    // The collector mounts the same claim.
    let collect = documents("deploy/kubernetes/collect.yaml");
    let pod = &kind(&collect, "Pod")["spec"];
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as_str(),
        claim
    );
    // Both pods: no service-account token, the runtime's seccomp profile,
    // and containers without privileges or a writable root.
    let job = documents("deploy/kubernetes/job.yaml");
    let job_pod = &kind(&job, "Job")["spec"]["template"]["spec"];
    for (name, pod) in [("job", job_pod), ("collect", pod)] {
        assert_eq!(
            pod["automountServiceAccountToken"].as_bool(),
            Some(false),
            "{name}"
        );
        let ctx = &pod["securityContext"];
        assert_eq!(ctx["runAsNonRoot"].as_bool(), Some(true), "{name}");
        assert_eq!(
            ctx["seccompProfile"]["type"].as_str(),
            Some("RuntimeDefault"),
            "{name}"
        );
        let c = &pod["containers"][0]["securityContext"];
        assert_eq!(
            c["allowPrivilegeEscalation"].as_bool(),
            Some(false),
            "{name}"
        );
        assert_eq!(c["readOnlyRootFilesystem"].as_bool(), Some(true), "{name}");
        assert_eq!(c["capabilities"]["drop"][0].as_str(), Some("ALL"), "{name}");
    }
}

/// The Job's container command, run once per index here as the Job
/// controller would run it in n pods: the merged streams are one
/// contiguous schedule.
#[test]
fn the_jobs_pods_make_one_schedule() {
    let (dir, server, n) = (tempdir("indexed-job"), Server::http(), job_completions());
    job_pods(&dir, &server, None);
    let streams: Vec<PathBuf> = (0..n)
        .map(|i| dir.join("results").join(format!("shard-{i}.bin")))
        .collect();
    let hits = one_schedule(&streams, 200);
    assert_eq!(hits.len(), 200);
    assert_eq!(server.count(), 200);
    // The merged report has nothing to warn of.
    let names: Vec<&str> = streams.iter().map(|p| p.to_str().unwrap()).collect();
    let out = run(&[&["report"], &names[..]].concat(), b"");
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn job_completions() -> i64 {
    let docs = documents("deploy/kubernetes/job.yaml");
    kind(&docs, "Job")["spec"]["completions"].as_i64().unwrap()
}

/// The Job's container command, run once per index in `dir` (its
/// `config/` and `results/` in place of the volumes) at 200/s for 1 s;
/// `live`: the collector's address and token, in place of the output
/// file.
fn job_pods(dir: &Path, server: &Server, live: Option<(&str, &str)>) {
    let docs = documents("deploy/kubernetes/job.yaml");
    let spec = &kind(&docs, "Job")["spec"];
    let n = spec["completions"].as_i64().unwrap();
    let c = &spec["template"]["spec"]["containers"][0];
    let (config, results) = (dir.join("config"), dir.join("results"));
    fs::create_dir_all(&config).unwrap();
    fs::create_dir_all(&results).unwrap();
    fs::write(config.join("targets"), format!("GET {}\n", server.url("/"))).unwrap();
    // The manifest's flags, with the rate and duration of a short test.
    let mut args = strings(&c["args"]);
    let mut set = vec![
        ("-rate", "200".to_string()),
        ("-duration", "1s".to_string()),
    ];
    if let Some((addr, _)) = live {
        set.push(("-output", format!("tcp://{addr}")));
    }
    for (flag, value) in set {
        let i = args.iter().position(|a| a == flag).expect(flag);
        args[i + 1] = value;
    }
    let mut env: HashMap<String, String> = HashMap::new();
    env.insert("START_AT".into(), start_in(1_500));
    let var = |name: &str| {
        c["env"]
            .as_vec()
            .unwrap()
            .iter()
            .find(|e| e["name"].as_str() == Some(name))
            .cloned()
            .unwrap_or_else(|| panic!("job.yaml sets no {name}"))
    };
    let shards = var("BARRAGE_SHARDS")["value"].as_str().unwrap().to_string();
    env.insert("BARRAGE_SHARDS".into(), shards);
    if let Some((_, token)) = live {
        // The token comes from the collector's Secret, optional for a
        // Job that writes files.
        let secret = &var("BARRAGE_TOKEN")["valueFrom"]["secretKeyRef"];
        assert_eq!(secret["optional"].as_bool(), Some(true));
        let collector = documents("deploy/kubernetes/collector.yaml");
        let cc = &kind(&collector, "Job")["spec"]["template"]["spec"]["containers"][0];
        let theirs = cc["env"]
            .as_vec()
            .unwrap()
            .iter()
            .find(|e| e["name"].as_str() == Some("BARRAGE_TOKEN"))
            .cloned()
            .unwrap();
        let theirs = &theirs["valueFrom"]["secretKeyRef"];
        assert_eq!(
            (secret["name"].as_str(), secret["key"].as_str()),
            (theirs["name"].as_str(), theirs["key"].as_str())
        );
        env.insert("BARRAGE_TOKEN".into(), token.into());
    }
    let mut pods = Vec::new();
    for index in 0..n {
        env.insert("JOB_COMPLETION_INDEX".into(), index.to_string());
        let args: Vec<String> = args
            .iter()
            .map(|a| expand(a, &env))
            .map(|a| a.replacen("/config/", &format!("{}/", config.display()), 1))
            .map(|a| a.replacen("/results/", &format!("{}/", results.display()), 1))
            .collect();
        let mut cmd = bin();
        cmd.args(&args).envs(&env);
        pods.push(cmd.spawn().expect("spawn a pod's command"));
    }
    for mut p in pods {
        assert!(p.wait().unwrap().success());
    }
}

/// collector.yaml's command, run here, and the Job's pods sending to it
/// as its Service would bring them: one merged stream, one schedule.
#[test]
fn the_collector_job_meets_the_shards_live() {
    let docs = documents("deploy/kubernetes/collector.yaml");
    let job = kind(&docs, "Job");
    let pod = &job["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    let args = strings(&c["args"]);
    assert_eq!(args[0], "collect");
    // Issue 60: the collector never waits for ever, for shards that do
    // not come or for the Job itself.
    assert!(job["spec"]["activeDeadlineSeconds"]
        .as_i64()
        .is_some_and(|s| s > 0));
    assert!(args.iter().any(|a| a == "-join-timeout"), "{args:?}");
    let listen = &args[args.iter().position(|a| a == "-listen").unwrap() + 1];
    let port = listen.rsplit_once(':').unwrap().1;
    let service = kind(&docs, "Service");
    assert_eq!(
        service["spec"]["ports"][0]["port"]
            .as_i64()
            .unwrap()
            .to_string(),
        port
    );
    assert_eq!(
        service["spec"]["selector"]["app.kubernetes.io/name"].as_str(),
        pod_label(job)
    );
    let attackers = &args[args.iter().position(|a| a == "-attackers").unwrap() + 1];
    assert_eq!(attackers.parse::<i64>().unwrap(), job_completions());
    assert_eq!(pod["automountServiceAccountToken"].as_bool(), Some(false));
    assert_eq!(
        c["securityContext"]["readOnlyRootFilesystem"].as_bool(),
        Some(true)
    );
    // Here: a free loopback port in the pod's 0.0.0.0:7690's place.
    let (dir, server) = (tempdir("collector-job"), Server::http());
    let results = dir.join("results");
    fs::create_dir_all(&results).unwrap();
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a == listen {
                free.clone()
            } else {
                a.replacen("/results/", &format!("{}/", results.display()), 1)
            }
        })
        .collect();
    let mut collector = bin()
        .args(&args)
        .env("BARRAGE_TOKEN", "k8s-test")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(collector.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut err, &mut first).unwrap();
    assert!(first.contains("listening on"), "{first}");
    job_pods(&dir, &server, Some((&free, "k8s-test")));
    assert!(collector.wait().unwrap().success());
    assert_eq!(one_schedule(&[results.join("merged.bin")], 200).len(), 200);
}

fn pod_label(job: &Yaml) -> Option<&str> {
    job["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"].as_str()
}

#[test]
fn shard_auto_without_the_jobs_variables_is_refused() {
    let mut cmd = bin();
    let out = cmd
        .args(["attack", "-shard", "auto", "-rate", "1", "-duration", "1s"])
        .env_remove("JOB_COMPLETION_INDEX")
        .env("BARRAGE_SHARDS", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("-shard auto: JOB_COMPLETION_INDEX is not set"),
        "{err}"
    );
    let out = bin()
        .args([
            "attack",
            "-shard",
            "auto/2",
            "-rate",
            "1",
            "-duration",
            "1s",
        ])
        .env("JOB_COMPLETION_INDEX", "2")
        .env_remove("BARRAGE_SHARDS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("JOB_COMPLETION_INDEX=2 is not below the count 2"),
        "{err}"
    );
    assert!(common::no_records(&out.stdout));
}

#[test]
fn the_container_is_pinned_minimal_and_not_root() {
    let text = fs::read_to_string(repo("deploy/container/Dockerfile")).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let stages: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("FROM "))
        .collect();
    assert!(stages.len() >= 2, "a multi-stage build");
    for &i in &stages {
        let image = lines[i].split_whitespace().nth(1).unwrap();
        if image == "scratch" {
            continue;
        }
        let (_, tag) = image
            .split_once(':')
            .unwrap_or_else(|| panic!("{image}: no tag"));
        assert!(
            tag != "latest" && tag.chars().next().unwrap().is_ascii_digit(),
            "{image}: not pinned to a version"
        );
    }
    let last = &lines[*stages.last().unwrap()..];
    let user = last
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("USER in the last stage");
    let uid = user.split(':').next().unwrap();
    assert!(uid != "0" && uid != "root", "USER {user}");
    // The runtime holds the binary and the CA roots, nothing else.
    let copies: Vec<&&str> = last.iter().filter(|l| l.starts_with("COPY ")).collect();
    assert_eq!(copies.len(), 2, "{copies:?}");
    assert!(copies.iter().any(|c| c.ends_with("/barrage")));
    assert!(
        !last.iter().any(|l| l.starts_with("RUN ")),
        "no RUN in the runtime stage"
    );
    assert!(last.contains(&"ENTRYPOINT [\"/barrage\"]"));
    // The image's user is the one the Job runs as.
    let job = documents("deploy/kubernetes/job.yaml");
    let ctx = &kind(&job, "Job")["spec"]["template"]["spec"]["securityContext"];
    assert_eq!(
        ctx["runAsUser"].as_i64().map(|u| u.to_string()).as_deref(),
        Some(uid)
    );
}

/// `scripts/fanout` with a stand-in for ssh that runs the command here.
fn fanout(dir: &Path, hosts: &[&str], extra: &[&str]) -> std::process::Output {
    fanout_to(&Server::http(), dir, hosts, extra)
}

/// [`fanout`] against `server`.
fn fanout_to(server: &Server, dir: &Path, hosts: &[&str], extra: &[&str]) -> std::process::Output {
    let ssh = dir.join("ssh");
    fs::write(
        &ssh,
        "#!/bin/sh\n# a stand-in for ssh: HOST COMMAND, run here\nhost=$1; shift\n[ \"$host\" = down ] && { echo \"ssh: connect to host down: No route to host\" >&2; exit 255; }\nexec sh -c \"$*\"\n",
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&ssh).status().unwrap();
    let targets = dir.join("targets.txt");
    fs::write(&targets, format!("GET {}\n", server.url("/"))).unwrap();
    let exe = env!("CARGO_BIN_EXE_barrage");
    let out = Command::new(repo("scripts/fanout"))
        .env("FANOUT_SSH", &ssh)
        .env("BARRAGE", exe)
        .args(["-lead", "2", "-out"])
        .arg(dir.join("out"))
        .arg("-targets")
        .arg(&targets)
        .args(["-barrage", exe])
        .args(hosts)
        .arg("--")
        .args(extra)
        .output()
        .unwrap();
    assert_no_panic(&out);
    out
}

#[test]
fn fanout_runs_one_schedule_over_ssh() {
    let dir = tempdir("fanout");
    let out = fanout(&dir, &["a", "b", "c"], &["-rate", "250", "-duration", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("3 shards start at"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Requests      [total, rate, throughput]         250, "),
        "{text}"
    );
    let streams: Vec<PathBuf> = (0..3)
        .map(|i| dir.join(format!("out/shard-{i}.bin")))
        .collect();
    assert_eq!(one_schedule(&streams, 250).len(), 250);
}

#[test]
fn fanout_quotes_flags_for_a_dash_login_shell() {
    // The stand-in ssh runs the command with sh (dash on Debian), as a
    // remote login shell may. A tab made bash's printf %q write $'...',
    // which dash reads as a literal $ and quotes.
    let dir = tempdir("fanout-quote");
    let server = Server::http();
    let out = fanout_to(
        &server,
        &dir,
        &["a"],
        &[
            "-rate",
            "10",
            "-duration",
            "1s",
            "-header",
            "X-Note: it's\ta $HOME",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let seen = server.received();
    assert_eq!(seen.len(), 10, "{err}");
    assert_eq!(seen[0].header("x-note"), Some("it's\ta $HOME"));
}

#[test]
fn fanout_names_a_host_that_failed_and_reports_the_rest() {
    let dir = tempdir("fanout-down");
    let out = fanout(&dir, &["a", "down"], &["-rate", "200", "-duration", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("shard 1/2 on down failed:\nssh: connect to host down"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Requests      [total, rate, throughput]         100, "),
        "{text}"
    );
    // Flags fanout sets itself are refused before anything runs.
    let out = fanout(&dir, &["a"], &["-shard", "0/2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-shard is set by fanout"));
}

/// Two shards, one started 300 ms after the other (as with a -start-at
/// computed on each machine): the merged report warns, naming it.
#[test]
fn shards_that_disagree_are_named_by_the_report() {
    let dir = tempdir("skew");
    let server = Server::http();
    let target = format!("GET {}\n", server.url("/"));
    let base = start_in(1_000);
    let secs: f64 = base.parse().unwrap();
    let late = format!("{:.9}", secs + 0.3);
    let mut children = Vec::new();
    for (i, at) in [(0, &base), (1, &late)] {
        let out = fs::File::create(dir.join(format!("r{i}.bin"))).unwrap();
        let mut cmd = bin();
        cmd.args(["attack", "-rate", "200", "-duration", "1s", "-start-at", at])
            .args(["-shard", &format!("{i}/2")])
            .stdin(std::process::Stdio::piped())
            .stdout(out);
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(target.as_bytes())
            .unwrap();
        children.push(child);
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let (r0, r1) = (dir.join("r0.bin"), dir.join("r1.bin"));
    let files = [r0.to_str().unwrap(), r1.to_str().unwrap()];
    let out = run(&["report", files[0], files[1]], b"");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "the inputs are shards of one schedule of 2, and they disagree (-max-skew 10ms)"
        ),
        "{err}"
    );
    assert!(err.contains("  shard 1/2  "), "{err}");
    assert!(
        err.contains("r1.bin (shard 1/2): its schedule runs "),
        "{err}"
    );
    assert!(err.contains("ms later than the other shards'"), "{err}");
    // Over a tolerance wider than the gap: nothing to say.
    let out = run(&["report", "-max-skew", "1s", files[0], files[1]], b"");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `scripts/fanout -live`: the shards meet in `barrage collect` on this
/// machine as they run, into one merged stream; with `-fail-on`, the
/// collector stops every shard.
#[test]
fn fanout_live_merges_the_shards_as_they_run() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let live = format!("127.0.0.1:{port}");
    let dir = tempdir("fanout-live");
    let out = fanout(
        &dir,
        &["-live", &live, "a", "b", "c"],
        &["-rate", "250", "-duration", "1s"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("barrage collect on 127.0.0.1:"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Requests      [total, rate, throughput]         250, "),
        "{text}"
    );
    assert_eq!(one_schedule(&[dir.join("out/merged.bin")], 250).len(), 250);

    // Every request fails (nothing listens there): -fail-on stops all.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server_dir = tempdir("fanout-live-fail");
    let targets = server_dir.join("targets.txt");
    fs::write(
        &targets,
        format!("GET http://{}/\n", closed.local_addr().unwrap()),
    )
    .unwrap();
    drop(closed);
    let exe = env!("CARGO_BIN_EXE_barrage");
    let ssh = dir.join("ssh");
    let out = Command::new(repo("scripts/fanout"))
        .env("FANOUT_SSH", &ssh)
        .env("BARRAGE", exe)
        .args([
            "-lead",
            "2",
            "-live",
            &live,
            "-fail-on",
            "success<99%",
            "-out",
        ])
        .arg(server_dir.join("out"))
        .arg("-targets")
        .arg(&targets)
        .args([
            "-barrage",
            exe,
            "a",
            "b",
            "--",
            "-rate",
            "200",
            "-duration",
            "60s",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("-fail-on: success<99%"), "{err}");
}
