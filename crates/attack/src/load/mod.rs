//! From a targets reader to the attack's [`Targets`]: fixed (prepared
//! once) unless some target has placeholders, read as requests go with
//! `-lazy`, a flow's sessions (`flow`) or a mix's groups (`mix`). A
//! `GRPC` target's JSON body becomes its message here.

mod flow;
mod mix;
mod spec;

use std::{collections::HashSet, io::BufRead, sync::Mutex};

use barrage_client::{
    grpc_is_json, grpc_prepare_body, ClientConfig, GrpcReflectError, ProtoSet, GRPC_METHOD,
};
use barrage_model::Target;
use barrage_targets::{BadValue, Feed, LazyTargets, Loaded, Prepare, Renderer, TargetReader};

pub use mix::mix;
pub use spec::{LoadError, TargetsSpec};

use crate::{SourceError, TargetSource, Targets};

/// The attack's targets from `reader`, as `spec` says. A `GRPC` target's
/// JSON body becomes its message through `spec.protos`, or without them
/// through the descriptors its server's reflection gives (asked once per
/// service, as the first of its targets is read: before the clock for
/// targets read up front; not without a `client`, as `doctor` reads
/// them); a server-streaming method is noted in `client`'s
/// `grpc_streams`.
pub fn targets(
    spec: TargetsSpec,
    reader: TargetReader<Box<dyn BufRead + Send>>,
    client: Option<&ClientConfig>,
) -> Result<Targets, LoadError> {
    if spec.flow {
        return flow::targets(spec, reader, llm_usage(client));
    }
    let TargetsSpec {
        name,
        feed,
        feed_random,
        lazy,
        recorded,
        protos,
        shard,
        prompts,
        ..
    } = spec;
    let usage = llm_usage(client);
    let (feed, feed_name) = feed.map_or((None, None), |(f, n)| (Some(f), Some(n)));
    let loaded = Loaded::load(
        reader,
        &name,
        feed,
        feed_random,
        shard,
        lazy,
        llm_prepare(grpc_prepare(protos, client), client),
    )?;
    let prompted = |inner: Box<dyn TargetSource>, prompts| {
        Targets::Lazy(Box::new(Prompted {
            inner,
            prompts,
            usage,
        }))
    };
    match loaded {
        Loaded::Lazy(l) => Ok(match prompts {
            Some(p) => prompted(Box::new(Lazy(l)), p),
            None => Targets::Lazy(Box::new(Lazy(l))),
        }),
        Loaded::Rendered(mut r) => {
            // Errors come first: every -feed row is tried before the first
            // request.
            if let Some(feed) = &feed_name {
                r.check_rows(feed, |t| barrage_client::PreparedTarget::new(t).map(drop))?;
            }
            Ok(match prompts {
                Some(p) => prompted(Box::new(Rendered(r)), p),
                None => Targets::Lazy(Box::new(Rendered(r))),
            })
        }
        Loaded::Plain(all) if prompts.is_some() => {
            prompted_plain(&name, all, prompts.unwrap_or_default(), client)
        }
        Loaded::Plain(all) => {
            let all = if recorded {
                recorded_order(&name, all)?
            } else {
                all
            };
            Targets::fixed(all).map_err(|error| LoadError::Unsendable { file: name, error })
        }
    }
}

/// The file `flag` names, read whole up to `limit` bytes.
pub fn read_bounded(flag: &'static str, path: &str, limit: u64) -> Result<Vec<u8>, LoadError> {
    barrage_targets::read_bounded(path, limit).map_err(|why| LoadError::Unread {
        flag,
        path: path.to_string(),
        why,
    })
}

/// `-feed FILE`: its rows, and the file as typed.
pub fn feed(path: &str) -> Result<(Feed, String), LoadError> {
    let text = read_bounded("-feed", path, barrage_targets::MAX_FILE)?;
    Ok((Feed::parse(&text, path)?, path.to_string()))
}

/// Targets read up front, each request's with its LLM input
/// (`prompts`), each tried with one before the first request.
pub fn prompted_plain(
    name: &str,
    all: Vec<Target>,
    prompts: barrage_targets::Prompts,
    client: Option<&ClientConfig>,
) -> Result<Targets, LoadError> {
    for t in &all {
        let mut t = t.clone();
        prompts.fill(&mut t, 0)?;
        barrage_client::PreparedTarget::new(t).map_err(|e| LoadError::Unsendable {
            file: name.to_string(),
            error: e.into(),
        })?;
    }
    Ok(Targets::Lazy(Box::new(Prompted {
        inner: Box::new(Cycle(all)),
        prompts,
        usage: llm_usage(client),
    })))
}

/// `-dataset FILE`: its rows, read as a stream.
pub fn dataset(path: &str) -> Result<Vec<barrage_targets::Row>, LoadError> {
    let file = std::fs::File::open(path).map_err(|e| barrage_targets::BadDataset {
        place: path.to_string(),
        why: e.to_string(),
    })?;
    Ok(barrage_targets::read_dataset(file, path)?)
}

/// `-proto-set FILE` (a descriptor set) or else `-proto FILE` (compiled,
/// its imports looked for in `imports`); `None` without either.
pub fn protos(
    set: Option<&str>,
    proto: Option<&str>,
    imports: &[String],
) -> Result<Option<ProtoSet>, LoadError> {
    let refused = |flag: &'static str, path: &str| {
        let path = path.to_string();
        move |e: barrage_client::Failure| LoadError::Protos {
            flag,
            path,
            why: e.0,
        }
    };
    match (set, proto) {
        (Some(path), _) => {
            let bytes = read_bounded("-proto-set", path, barrage_targets::MAX_FILE)?;
            Ok(Some(
                ProtoSet::decode(&bytes).map_err(refused("-proto-set", path))?,
            ))
        }
        (None, Some(path)) => Ok(Some(
            ProtoSet::compile(path, imports).map_err(refused("-proto", path))?,
        )),
        (None, None) => Ok(None),
    }
}

/// Every target of `reader` (named `name`), read whole, each to be sent
/// as it is (a sweep's): none, or one with placeholders, is refused.
pub fn plain(
    name: &str,
    mut reader: TargetReader<Box<dyn BufRead + Send>>,
) -> Result<Vec<Target>, LoadError> {
    let all = reader.read_all()?;
    if all.is_empty() {
        return Err(LoadError::NoTargets(name.to_string()));
    }
    if all.iter().any(barrage_targets::has_placeholders) {
        return Err(LoadError::Templated);
    }
    Ok(all)
}

/// Each target as it is read: a `GRPC` target's body made its message.
/// `-llm`: `prepare`, then the usage `-llm-usage` asks for put in each
/// streaming JSON body ([`barrage_client::ask_usage`]).
fn llm_prepare(prepare: Prepare, client: Option<&ClientConfig>) -> Prepare {
    let Some(usage) = llm_usage(client) else {
        return prepare;
    };
    Box::new(move |t: Target| {
        let mut t = prepare(t)?;
        if let Some(body) = barrage_client::ask_usage(&t.body, usage) {
            t.body = body.into();
        }
        Ok(t)
    })
}

/// `-llm-usage` under `-llm`.
fn llm_usage(client: Option<&ClientConfig>) -> Option<barrage_client::LlmUsage> {
    client
        .and_then(|c| c.stream.as_ref())
        .filter(|s| s.llm.is_some())
        .map(|s| s.llm_usage)
}

fn grpc_prepare(protos: Option<ProtoSet>, client: Option<&ClientConfig>) -> Prepare {
    let reflector = client
        .filter(|_| protos.is_none())
        .map(barrage_client::GrpcReflector::new);
    let streams = client.map(|c| c.grpc_streams.clone()).unwrap_or_default();
    // Services whose reflection failed and whose binary bodies go as
    // they are: said once each.
    let unreflected = Mutex::new(HashSet::<String>::new());
    Box::new(move |mut t: Target| {
        if t.method != GRPC_METHOD {
            return Ok(t);
        }
        let reflected = match &reflector {
            Some(r) => match r.protos_for(&t.url, &t.headers) {
                Ok(p) => Some(p),
                // A binary body is the message already: a unary call
                // needs no schema (production servers often turn
                // reflection off). A JSON body does need one.
                Err(GrpcReflectError::Failed(why)) if !grpc_is_json(&t.body) => {
                    let service = t.url.rsplit_once('/').map_or("", |(s, _)| s).to_string();
                    if unreflected
                        .lock()
                        .map(|mut u| u.insert(service))
                        .unwrap_or(false)
                    {
                        eprintln!("barrage attack: note: {why}; the body is sent as it is (already-encoded protobuf) and the method taken as unary");
                    }
                    None
                }
                Err(e) => return Err(BadValue(e.to_string())),
            },
            None => None,
        };
        let p = grpc_prepare_body(&t.url, &t.body, protos.as_ref().or(reflected.as_deref()))
            .map_err(|e| BadValue(e.0))?;
        if p.server_streaming {
            // The path the calls go to: after the authority, before any
            // query.
            let after = t.url.split_once("://").map_or("", |(_, r)| r);
            let path = after.find('/').map_or("/", |i| &after[i..]);
            streams.insert(path.split('?').next().unwrap_or(path));
        }
        t.body = p.body.into();
        Ok(t)
    })
}

/// `-har-timing`: the targets in the recording's order; each must have
/// its time.
fn recorded_order(file: &str, mut all: Vec<Target>) -> Result<Vec<Target>, LoadError> {
    if let Some(i) = all.iter().position(|t| t.at.is_none()) {
        return Err(LoadError::NoTime {
            entry: i,
            file: file.to_string(),
            method: all[i].method.clone(),
            url: barrage_model::words::redacted(&all[i].url).to_string(),
        });
    }
    all.sort_by_key(|t| t.at);
    Ok(all)
}

/// `-lazy`'s targets as the attack's source.
struct Lazy(Box<LazyTargets<Box<dyn BufRead + Send>>>);

impl TargetSource for Lazy {
    fn next_target(&mut self, seq: u64) -> Result<Option<Target>, SourceError> {
        (self.0.next(seq)).map_err(|e| SourceError(e.to_string()))
    }
}

/// Targets with placeholders (`{{seq}}`, `-feed` columns): one rendered
/// per request, round-robin.
struct Rendered(Renderer);

impl TargetSource for Rendered {
    fn next_target(&mut self, seq: u64) -> Result<Option<Target>, SourceError> {
        Ok(Some(self.0.render(seq)))
    }
}

/// Targets read up front, round-robin, each request's copy to be
/// filled.
struct Cycle(Vec<Target>);

impl TargetSource for Cycle {
    fn next_target(&mut self, seq: u64) -> Result<Option<Target>, SourceError> {
        Ok(Some(self.0[(seq % self.0.len() as u64) as usize].clone()))
    }
}

/// Each target with request `seq`'s LLM input in its body (`-dataset`,
/// `-prompt-tokens`, `-output-tokens`), and the usage `-llm-usage` asks.
struct Prompted {
    inner: Box<dyn TargetSource>,
    prompts: barrage_targets::Prompts,
    usage: Option<barrage_client::LlmUsage>,
}

impl TargetSource for Prompted {
    fn next_target(&mut self, seq: u64) -> Result<Option<Target>, SourceError> {
        let Some(mut t) = self.inner.next_target(seq)? else {
            return Ok(None);
        };
        let usage = self.usage;
        let ask = |doc: &mut barrage_targets::Map<String, barrage_targets::Value>| {
            if let Some(u) = usage {
                barrage_client::ask_usage_in(doc, u);
            }
        };
        (self.prompts.fill_then(&mut t, seq, ask)).map_err(|e| SourceError(e.to_string()))?;
        Ok(Some(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use barrage_targets::{Defaults, Format};

    fn reader(text: &str, format: Format) -> TargetReader<Box<dyn BufRead + Send>> {
        let input: Box<dyn BufRead + Send> = Box::new(std::io::Cursor::new(text.to_string()));
        let mut r = TargetReader::new(input, "t.txt", format, Defaults::default());
        r.load().expect("reads");
        r
    }

    #[test]
    fn a_recording_without_times_is_refused_by_entry() {
        let t = Target {
            method: "GET".into(),
            url: "http://h/x".into(),
            ..Target::default()
        };
        let e = recorded_order("s.har", vec![t]).unwrap_err();
        assert!(e.to_string().contains("entry 0 of s.har (GET "), "{e}");
    }

    #[test]
    fn a_flows_bad_check_names_its_file_and_line() {
        let spec = TargetsSpec {
            name: "t.txt".into(),
            flow: true,
            ..TargetsSpec::default()
        };
        let text = "GET http://127.0.0.1:1/\n:check nonsense here\n";
        let Err(e) = targets(spec, reader(text, Format::Flow), None) else {
            panic!("a bad check read")
        };
        assert!(matches!(e, LoadError::At { line: 2, .. }), "{e}");
        assert!(e.to_string().starts_with("t.txt:2: :check "), "{e}");
    }

    #[test]
    fn a_sweep_sends_targets_as_they_are() {
        let e = |text: &str| {
            plain("t.txt", reader(text, Format::Http))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(e(""), "t.txt: no targets");
        assert_eq!(
            e("GET http://127.0.0.1:1/{{seq}}\n"),
            "sweep does not render templated targets ({{...}}) yet; attack does"
        );
        assert_eq!(
            plain("t.txt", reader("GET http://h/\n", Format::Http))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn plain_targets_are_fixed() {
        let spec = TargetsSpec {
            name: "t.txt".into(),
            ..TargetsSpec::default()
        };
        let text = "GET http://127.0.0.1:1/a\n\nGET http://127.0.0.1:1/b\n";
        let Ok(t) = targets(spec, reader(text, Format::Http), None) else {
            panic!("plain targets refused")
        };
        assert!(matches!(t, Targets::Fixed(ref all) if all.len() == 2));
    }
}
