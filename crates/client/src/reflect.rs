//! gRPC server reflection (`grpc.reflection.v1.ServerReflection`, then
//! `v1alpha` for older servers), asked once per service before the clock
//! when no `-proto-set` is given, as ghz does: the file that declares the
//! service, then any file it imports that did not come with it.
//!
//! Each question is a call of its own through barrage's client (so
//! `-insecure`, `-root-certs`, `-connect-to`, `-unix-socket` and proxies
//! apply), carrying the target's metadata (an `authorization` header
//! reaches the reflection service too): one request message, one answer
//! message. The messages are declared here with prost's derive; only the
//! fields asked and read.

use std::collections::HashMap;

use prost::Message;

use crate::proto::grpc::{method_path, status_name, ProtoSet, GRPC_FAILED, GRPC_METHOD};

/// `ServerReflectionRequest`.
#[derive(Clone, PartialEq, Message)]
struct Ask {
    #[prost(string, tag = "1")]
    host: String,
    #[prost(oneof = "Question", tags = "3, 4")]
    question: Option<Question>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Question {
    #[prost(string, tag = "3")]
    FileByFilename(String),
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
}

/// `ServerReflectionResponse`.
#[derive(Clone, PartialEq, Message)]
struct Reply {
    #[prost(oneof = "Answer", tags = "4, 7")]
    answer: Option<Answer>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Answer {
    #[prost(message, tag = "4")]
    Files(Files),
    #[prost(message, tag = "7")]
    Error(Refusal),
}

/// `FileDescriptorResponse`: serialized `FileDescriptorProto`s.
#[derive(Clone, PartialEq, Message)]
struct Files {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

/// `ErrorResponse`.
#[derive(Clone, PartialEq, Message)]
struct Refusal {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// Why a target has no descriptors by reflection.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReflectError {
    /// The target itself is wrong (its URL names no method): refused
    /// whatever its body.
    #[error("{0}")]
    Target(String),
    /// The server's reflection failed (none, or not for this service): a
    /// binary body can go without it.
    #[error("{0}")]
    Failed(String),
}

/// Descriptors by reflection for an attack's `GRPC` targets: asked once
/// per server and service, the answer (or the failure) kept for the
/// service's other targets.
pub struct Reflector {
    cfg: crate::ClientConfig,
    asked: std::sync::Mutex<HashMap<String, Result<std::sync::Arc<ProtoSet>, ReflectError>>>,
}

impl Reflector {
    /// Asks with a client made from `cfg`.
    pub fn new(cfg: &crate::ClientConfig) -> Self {
        Reflector {
            cfg: cfg.clone(),
            asked: Default::default(),
        }
    }

    /// The descriptors for the `GRPC` target of `url` with `metadata`;
    /// the error is the target's line: its URL, the service, why, and
    /// what to do instead.
    pub fn protos_for(
        &self,
        url: &str,
        metadata: &[(String, String)],
    ) -> Result<std::sync::Arc<ProtoSet>, ReflectError> {
        let (service, _) = method_path(url).map_err(|e| ReflectError::Target(e.0))?;
        let uri: http::Uri = url
            .parse()
            .map_err(|e| ReflectError::Target(format!("bad URL: {url}, {e}")))?;
        let key = format!(
            "{}://{}/{service}",
            uri.scheme_str().unwrap_or("http"),
            uri.authority().map(|a| a.as_str()).unwrap_or_default()
        );
        let mut asked = self
            .asked
            .lock()
            .map_err(|_| ReflectError::Failed("reflection: a lock failed".into()))?;
        asked
            .entry(key)
            .or_insert_with(|| {
                reflect(&self.cfg, url, metadata)
                    .map(std::sync::Arc::new)
                    .map_err(|why| match why {
                        ReflectError::Failed(why) => ReflectError::Failed(format!(
                            "GRPC {url}: server reflection for service {service} failed (give -proto-set FILE instead): {why}"
                        )),
                        target => target,
                    })
            })
            .clone()
    }
}

/// The most files one service's descriptors may take.
const MOST_FILES: usize = 256;

/// The reflection service's versions, newest first.
const VERSIONS: [&str; 2] = ["v1", "v1alpha"];

/// Asks the server of `url` (a `GRPC` target's) for the descriptors of
/// its service, with `metadata` (the target's headers). Blocking: it runs
/// on a thread and runtime of its own, with a client made from `cfg`
/// (its checks left out, answers kept whole). The error says why, for a
/// line that names the service.
pub fn reflect(
    cfg: &crate::ClientConfig,
    url: &str,
    metadata: &[(String, String)],
) -> Result<ProtoSet, ReflectError> {
    let (service, _) = method_path(url).map_err(|e| ReflectError::Target(e.0))?;
    let uri: http::Uri = url
        .parse()
        .map_err(|e| ReflectError::Target(format!("bad URL: {url}, {e}")))?;
    let failed = |e: &dyn std::fmt::Display| ReflectError::Failed(e.to_string());
    let base = format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("http"),
        uri.authority().map(|a| a.as_str()).unwrap_or_default()
    );
    let mut cfg = cfg.clone();
    cfg.checks = None;
    cfg.max_body = -1;
    cfg.stream = None;
    cfg.http3 = false;
    cfg.timeout = Some(cfg.timeout.unwrap_or(crate::DEFAULT_TIMEOUT));
    let metadata = metadata.to_vec();
    let asked = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| failed(&e))?;
        rt.block_on(async move {
            let shared = crate::Shared::new(&cfg).map_err(|e| failed(&e))?;
            let client = crate::Client::sharing(&cfg, &shared);
            let mut last = String::new();
            for version in VERSIONS {
                match files(&client, &base, version, &service, &metadata).await {
                    Ok(set) => return Ok(set),
                    // An older server: the next version.
                    Err((true, why)) => last = why,
                    Err((false, why)) => return Err(ReflectError::Failed(why)),
                }
            }
            Err(ReflectError::Failed(last))
        })
    });
    let set = asked
        .join()
        .map_err(|_| failed(&"the reflection thread failed"))??;
    ProtoSet::decode_from(&set, "server reflection").map_err(|e| ReflectError::Failed(e.0))
}

/// The descriptors of `service` by reflection `version`, as a serialized
/// `FileDescriptorSet`; `Err((true, _))` when the server has no such
/// version (UNIMPLEMENTED).
async fn files(
    client: &crate::Client,
    base: &str,
    version: &str,
    service: &str,
    metadata: &[(String, String)],
) -> Result<Vec<u8>, (bool, String)> {
    let mut got: HashMap<String, Vec<u8>> = HashMap::new();
    let mut asks = vec![Question::FileContainingSymbol(service.to_string())];
    while let Some(q) = asks.pop() {
        if got.len() >= MOST_FILES {
            return Err((false, format!("more than {MOST_FILES} files")));
        }
        for bytes in ask(client, base, version, q, metadata).await? {
            let file = prost_reflect::prost_types::FileDescriptorProto::decode(&bytes[..])
                .map_err(|e| {
                    (
                        false,
                        format!("a file descriptor that does not decode: {e}"),
                    )
                })?;
            let name = file.name.clone().unwrap_or_default();
            got.entry(name).or_insert(bytes);
            for dep in file.dependency {
                if !got.contains_key(&dep)
                    && !asks
                        .iter()
                        .any(|q| matches!(q, Question::FileByFilename(d) if *d == dep))
                {
                    asks.push(Question::FileByFilename(dep));
                }
            }
        }
        asks.retain(|q| !matches!(q, Question::FileByFilename(d) if got.contains_key(d)));
    }
    // A FileDescriptorSet: field 1, each file length-delimited.
    let mut set = Vec::new();
    for bytes in got.values() {
        prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, &mut set);
        prost::encoding::encode_varint(bytes.len() as u64, &mut set);
        set.extend_from_slice(bytes);
    }
    Ok(set)
}

/// One question, one answer: the files it gave.
async fn ask(
    client: &crate::Client,
    base: &str,
    version: &str,
    question: Question,
    metadata: &[(String, String)],
) -> Result<Vec<Vec<u8>>, (bool, String)> {
    let what = match &question {
        Question::FileByFilename(f) => format!("file {f}"),
        Question::FileContainingSymbol(s) => format!("service {s}"),
    };
    let body = Ask {
        host: String::new(),
        question: Some(question),
    }
    .encode_to_vec();
    let target = barrage_model::Target {
        method: GRPC_METHOD.to_string(),
        url: format!("{base}/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"),
        headers: metadata.to_vec(),
        body: body.into(),
        ..Default::default()
    };
    let prepared =
        std::sync::Arc::new(crate::PreparedTarget::new(target).map_err(|e| (false, e.0))?);
    let r = client.send(&prepared, 0).await.map_err(|e| (false, e.0))?;
    if let Some(e) = r.error {
        let unimplemented = e.starts_with(&format!("{}12 ", GRPC_FAILED));
        return Err((unimplemented, e));
    }
    let reply = Reply::decode(&r.body[..])
        .map_err(|e| (false, format!("an answer that does not decode: {e}")))?;
    match reply.answer {
        Some(Answer::Files(f)) => Ok(f.file_descriptor_proto),
        Some(Answer::Error(e)) => Err((
            false,
            format!(
                "{what}: {} ({})",
                e.error_message,
                status_name(e.error_code.max(0) as u32)
            ),
        )),
        None => Err((false, format!("{what}: an answer without files"))),
    }
}
