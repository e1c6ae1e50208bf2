//! An attack's flags made ready to run, for `attack`, `sweep` and
//! `doctor`: the targets' input opened and read, the files the flags name
//! read ([`barrage_attack::load`]), the configurations built, and the plan
//! held against this host. Everything here happens before the first
//! request, so bad input sends nothing.

use std::{
    fs::File,
    io::{self, BufRead, BufReader},
};

use barrage_attack::{load::LoadError, Arrivals, AttackConfig, Targets};
use barrage_client::{ClientConfig, IoMode};
use barrage_doctor::{Destination, Host, Impossible};
use barrage_targets::{Defaults, TargetReader};

use crate::{AttackArgs, Conflict, StreamConflict};

/// The targets' reader, the attack and how requests are sent, as the
/// flags describe them; `notes` are lines for stderr.
pub struct Setup {
    /// The targets, read (but not yet prepared).
    pub reader: TargetReader<Box<dyn BufRead + Send>>,
    /// The attack's configuration.
    pub config: AttackConfig,
    /// The client's configuration.
    pub client: ClientConfig,
    /// What the reader and the flags had to say (curl options ignored,
    /// a Poisson seed drawn, io_uring not to be had).
    pub notes: Vec<String>,
}

/// Flags that cannot be made ready, each naming the flag or file.
#[derive(Debug, thiserror::Error)]
pub enum ReadyError {
    /// Flags that do not go together.
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// Flags of streamed answers that do not go together.
    #[error(transparent)]
    Stream(#[from] StreamConflict),
    /// Targets or a file a flag names that could not be made ready.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The `-targets` file does not open.
    #[error("-targets {path}: {source}")]
    Open {
        /// As typed.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// `-shard` that does not resolve.
    #[error(transparent)]
    Shard(#[from] barrage_attack::ShardError),
    /// A proxy variable of the environment that does not parse.
    #[error("{0}")]
    Proxy(barrage_client::Failure),
    /// `-hold` with targets it cannot hold.
    #[error(transparent)]
    Hold(#[from] barrage_attack::NotHoldable),
    /// `-mix`'s file is not text.
    #[error("-mix {0}: not UTF-8 text")]
    MixText(String),
    /// `-format flow` that read no flow.
    #[error("-format flow: no flow read")]
    NoFlow,
    /// `-prometheus-addr`'s address does not bind.
    #[error("-prometheus-addr {addr}: {source}")]
    Exporter {
        /// As typed.
        addr: std::net::SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// `-control`'s address does not bind.
    #[error("-control {addr}: {source}")]
    Control {
        /// As typed.
        addr: std::net::SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// A plan this host cannot run at all (without `-force`).
    #[error(transparent)]
    Unfit(#[from] Impossible),
    /// `-io ring` with what it does not carry yet.
    #[error("-io ring: not with {0} (it sends HTTP/1.1 requests, https:// with -http2=false, open or closed model; use -io epoll or uring)")]
    Ring(String),
}

/// Whose fault a [`ReadyError`] is, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blame {
    /// Bad usage or input (exit 2).
    Usage,
    /// The tool's own I/O (exit 1).
    Io,
    /// The plan does not fit this host (its own exit code).
    Unfit,
}

impl ReadyError {
    /// Whose fault it is.
    pub fn blame(&self) -> Blame {
        match self {
            ReadyError::Load(e) if e.is_io() => Blame::Io,
            ReadyError::Open { .. } | ReadyError::Control { .. } | ReadyError::Exporter { .. } => {
                Blame::Io
            }
            ReadyError::Unfit(_) => Blame::Unfit,
            _ => Blame::Usage,
        }
    }
}

impl AttackArgs {
    /// `-header` and `-body`, for every target that has none of its own.
    pub fn defaults(&self) -> Result<Defaults, LoadError> {
        let body = match (&self.body, &self.body_text) {
            (_, Some(text)) => bytes::Bytes::from(text.clone().into_bytes()),
            (None, None) => bytes::Bytes::new(),
            (Some(path), None) => {
                let path = path.to_string_lossy();
                barrage_attack::load::read_bounded("-body", &path, barrage_targets::MAX_BODY)?
                    .into()
            }
        };
        Ok(Defaults {
            headers: self.headers.clone(),
            body,
        })
    }

    /// Where the targets come from: the URLs given as arguments (each a
    /// GET, oha's and hey's habit), nothing for a `-mix` (its file names
    /// them), the `-targets` file or stdin. `on_terminal` is called when
    /// targets are to be typed on a terminal.
    fn target_input(
        &self,
        on_terminal: impl FnOnce(),
    ) -> Result<Box<dyn BufRead + Send>, ReadyError> {
        if !self.urls.is_empty() {
            let lines: String = self.urls.iter().map(|u| format!("GET {u}\n")).collect();
            return Ok(Box::new(io::Cursor::new(lines.into_bytes())));
        }
        if self.mix.is_some() {
            return Ok(Box::new(io::empty()));
        }
        if self.targets == "stdin" || self.targets == "-" {
            if io::IsTerminal::is_terminal(&io::stdin()) {
                on_terminal();
            }
            return Ok(Box::new(BufReader::new(io::stdin())));
        }
        match File::open(&self.targets) {
            Ok(f) => Ok(Box::new(BufReader::new(f))),
            Err(source) => Err(ReadyError::Open {
                path: self.targets.clone(),
                source,
            }),
        }
    }

    /// Checks the flags an attack, a sweep and `doctor` share and builds
    /// their configurations: targets opened and read, the body file read,
    /// the proxies from `env`, `-shard` resolved, `-arrivals poisson`'s
    /// seed drawn (and said). `on_terminal` is called before targets are
    /// read from a terminal (issue 37: a newcomer waited in silence).
    pub fn setup(
        &self,
        env: impl Fn(&str) -> Option<String>,
        on_terminal: impl FnOnce(),
    ) -> Result<Setup, ReadyError> {
        self.input_conflicts()?;
        let defaults = self.defaults()?;
        let input = self.target_input(on_terminal)?;
        let source = if self.urls.is_empty() {
            self.targets.as_str()
        } else {
            "arguments"
        };
        let mut reader = TargetReader::new(input, source, self.format, defaults)
            .with_har_filter(self.har_filter.clone());
        reader.load().map_err(LoadError::from)?;
        let mut notes: Vec<String> = reader
            .take_notes()
            .into_iter()
            .map(|n| format!("barrage: note: {n}"))
            .collect();
        let shard = self.shard.map(|s| s.resolve(&env)).transpose()?;
        let arrivals = match self.arrivals {
            a @ (Arrivals::Poisson(None) | Arrivals::Gamma(_, None)) => {
                let drawn = a.with_seed(fastrand::u64(..) >> 11);
                notes.push(format!(
                    "barrage: -arrivals {drawn} (repeat this run's schedule with that flag)"
                ));
                drawn
            }
            other => other,
        };
        let config = self.attack_config(shard, arrivals);
        // The proxies Go's ProxyFromEnvironment would use, as vegeta does.
        let proxies = barrage_client::Proxies::from_env(&env, self.proxy_headers.clone())
            .map_err(ReadyError::Proxy)?;
        // -io auto: io_uring for the closed model, epoll for the open one
        // (ring, once the targets are read, where it carries them:
        // `auto_ring`).
        let mut io = self.io.settle(self.closed());
        notes.extend(io.resolve().1);
        if io.asked() == IoMode::Ring {
            io = self.ring(&mut notes)?;
        }
        if self.insecure {
            notes.push("barrage: warning: -insecure: server certificates are not verified".into());
        }
        let client = self.client_config(proxies, io, self.stream_spec()?);
        if let (IoMode::Ring, Some(flag)) = (io, barrage_client::RingClient::unsupported(&client)) {
            return Err(ReadyError::Ring(flag.to_string()));
        }
        Ok(Setup {
            reader,
            config,
            client,
            notes,
        })
    }

    /// The targets from `reader`, the `-feed` and `-proto-set` files read;
    /// without a `client` (as `doctor` reads them) no server is asked for
    /// its gRPC descriptors.
    pub fn targets(
        &self,
        reader: TargetReader<Box<dyn BufRead + Send>>,
        shard: u64,
        client: Option<&ClientConfig>,
    ) -> Result<Targets, ReadyError> {
        use barrage_attack::load;
        let feed = self.feed.as_deref().map(load::feed).transpose()?;
        let protos = load::protos(
            self.proto_set.as_deref(),
            self.proto.as_deref(),
            &self.import_path,
        )?;
        Ok(load::targets(
            self.targets_spec(shard, feed, protos, self.prompts()?),
            reader,
            client,
        )?)
    }

    /// Each request's LLM input (`-dataset` read, `-prompt-tokens`,
    /// `-output-tokens`, `-prefix-tokens`, `-seed`), if any is asked for.
    pub fn prompts(&self) -> Result<Option<barrage_targets::Prompts>, ReadyError> {
        let rows = match &self.dataset {
            Some(path) => barrage_attack::load::dataset(path)?,
            None => Vec::new(),
        };
        let asked =
            !rows.is_empty() || self.prompt_tokens.is_some() || self.output_tokens.is_some();
        Ok(asked.then(|| {
            barrage_targets::Prompts::new(
                rows,
                self.dataset_random,
                self.prompt_tokens,
                self.output_tokens,
                self.prefix_tokens,
                self.seed,
            )
        }))
    }

    /// The attack's targets: `-mix`'s groups (their peak rate into
    /// `config`) or those of `reader`, `-hold` checked against them.
    pub fn all_targets(
        &self,
        reader: TargetReader<Box<dyn BufRead + Send>>,
        config: &mut AttackConfig,
        client: Option<&ClientConfig>,
    ) -> Result<Targets, ReadyError> {
        let targets = match &self.mix {
            Some(path) => {
                let text =
                    barrage_attack::load::read_bounded("-mix", path, barrage_targets::MAX_FILE)?;
                let text =
                    String::from_utf8(text).map_err(|_| ReadyError::MixText(path.clone()))?;
                barrage_attack::load::mix(path, &text, &self.defaults()?, config)?
            }
            None => self.targets(reader, config.shard.map_or(0, |(i, _)| i), client)?,
        };
        if self.hold.is_some() {
            targets.holdable()?;
        }
        Ok(targets)
    }

    /// A flow's plan from `reader` (for `sweep`).
    pub fn flow(
        &self,
        reader: TargetReader<Box<dyn BufRead + Send>>,
        shard: u64,
        client: &ClientConfig,
    ) -> Result<std::sync::Arc<barrage_attack::FlowPlan>, ReadyError> {
        self.flow_conflicts()?;
        match self.targets(reader, shard, Some(client))? {
            Targets::Flow(plan) => Ok(plan),
            _ => Err(ReadyError::NoFlow),
        }
    }

    /// The plan held against this host before anything is sent: an
    /// impossible one refused unless `-force` (issue 60: `-rate
    /// 1000000000 -duration 1s` ran for 30 s); else the warning naming
    /// the first limit it would hit, if any.
    pub fn check_fit(
        &self,
        config: &AttackConfig,
        targets: &Targets,
    ) -> Result<Option<String>, ReadyError> {
        let plan = self.plan(config.mix_peak, destinations(targets));
        let host = Host::this();
        if !self.force {
            barrage_doctor::impossible(&plan, self.requests, &host)?;
        }
        let limit = barrage_doctor::first_limit(&barrage_doctor::check(&plan, &host));
        Ok(limit.map(|l| format!("this host cannot hold the plan: {l} (barrage doctor lists every limit and its fix)")))
    }

    /// The run's facts for the stream's head: the command as typed
    /// (`command`), barrage's `version`, the load asked for, the first
    /// targets (and how many), and the Poisson seed of `config`, so that
    /// a run can be repeated from its results.
    pub fn run_facts(
        &self,
        command: String,
        version: &str,
        config: &AttackConfig,
        targets: &Targets,
    ) -> Vec<(&'static str, String)> {
        let load = if let Some(s) = &self.stages {
            format!("stages {s}")
        } else if let Some(m) = &self.mix {
            format!("mix {m}")
        } else if self.rate == barrage_model::Rate::Max {
            format!("{} workers, closed model", self.max_workers.unwrap_or(1))
        } else {
            format!("rate {}", self.rate)
        };
        let mut facts = vec![
            ("command", command),
            ("version", version.to_string()),
            ("load", load),
        ];
        let shown = targets.shown_urls();
        if !shown.is_empty() {
            facts.push(("targets", shown.join(", ")));
        }
        if config.arrivals.seed().is_some() {
            facts.push(("arrivals", config.arrivals.to_string()));
        }
        if let Some(path) = &self.event_filter {
            facts.push(("event_filter", path.clone()));
        }
        if !self.warmup.is_zero() {
            facts.push((
                "warmup",
                barrage_model::duration::format(self.warmup.as_nanos().min(i64::MAX as u128) as i64),
            ));
        }
        facts
    }
}

/// Where `targets` go: each distinct host and port, once (a `-lazy` or
/// templated source is not read ahead: none).
pub fn destinations(targets: &Targets) -> Vec<Destination> {
    let mut out: Vec<Destination> = Vec::new();
    for t in targets.known() {
        let Some(host) = t.uri.host() else { continue };
        let secure = matches!(t.uri.scheme_str(), Some("https" | "wss"));
        let d = Destination::new(host, t.uri.port_u16(), secure);
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::attack as attack_args;

    #[test]
    fn a_missing_targets_file_is_the_tools_io_and_names_it() {
        let a = attack_args(&["-targets", "/nonexistent/t.http"]);
        let e = a.setup(|_| None, || {}).err().expect("refused");
        assert_eq!(e.blame(), Blame::Io);
        assert!(
            e.to_string().starts_with("-targets /nonexistent/t.http: "),
            "{e}"
        );
    }

    #[test]
    fn urls_as_arguments_are_gets_and_a_seed_is_drawn_and_said() {
        let a = attack_args(&[
            "-arrivals",
            "poisson",
            "http://127.0.0.1:9/a",
            "http://127.0.0.1:9/b",
        ]);
        let mut setup = a.setup(|_| None, || {}).unwrap();
        assert!(
            setup.notes.iter().any(|n| n.contains("-arrivals poisson:")),
            "{:?}",
            setup.notes
        );
        let Arrivals::Poisson(Some(seed)) = setup.config.arrivals else {
            panic!("no seed")
        };
        let mut config = setup.config.clone();
        let reader = std::mem::replace(
            &mut setup.reader,
            TargetReader::new(Box::new(io::empty()), "x", a.format, Defaults::default()),
        );
        let targets = a.targets(reader, 0, None).unwrap();
        assert_eq!(
            targets.shown_urls(),
            ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]
        );
        assert_eq!(destinations(&targets).len(), 1);
        let facts = a.run_facts("barrage attack".into(), "0", &config, &targets);
        assert!(
            facts.contains(&("arrivals", format!("poisson:{seed}"))),
            "{facts:?}"
        );
        config.mix_peak = None;
        assert!(a.check_fit(&config, &targets).is_ok());
    }

    #[test]
    fn a_bad_proxy_variable_is_bad_input() {
        let a = attack_args(&["http://127.0.0.1:9/"]);
        let env = |k: &str| (k == "HTTP_PROXY").then(|| "socks5://x:1".to_string());
        let e = a.setup(env, || {}).err().expect("refused");
        assert_eq!(e.blame(), Blame::Usage);
        assert!(e.to_string().contains("HTTP_PROXY"), "{e}");
    }
}
