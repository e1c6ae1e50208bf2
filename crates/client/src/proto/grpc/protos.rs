//! Descriptors for `GRPC` targets: from `-proto-set` or from the server's
//! reflection service (`reflect.rs`). They turn a JSON body into the
//! method's input message and tell a server-streaming method from a
//! unary one.

/// A pool of descriptors: a descriptor set (`-proto-set`: what `protoc
/// --descriptor_set_out` or `buf build -o` writes), or what a server's
/// reflection gave.
pub struct ProtoSet {
    pool: prost_reflect::DescriptorPool,
    /// Where it came from, for errors (`-proto-set`, `server reflection`).
    from: &'static str,
}

impl ProtoSet {
    /// Reads a serialized `FileDescriptorSet` (`-proto-set`).
    pub fn decode(bytes: &[u8]) -> Result<Self, crate::Failure> {
        Self::decode_from(bytes, "-proto-set")
    }

    /// Compiles `file` (a `.proto`) and what it imports, looked for in
    /// `imports` (its own directory when empty), in-process with protox:
    /// no `protoc` needed (`-proto`, as ghz's `--proto`).
    pub fn compile(file: &str, imports: &[String]) -> Result<Self, crate::Failure> {
        let path = std::path::Path::new(file);
        let mut dirs: Vec<std::path::PathBuf> = imports.iter().map(Into::into).collect();
        if dirs.is_empty() {
            dirs.push(
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(std::path::Path::new("."))
                    .to_path_buf(),
            );
        }
        let pool = protox::Compiler::new(&dirs)
            .and_then(|mut c| {
                c.include_imports(true);
                c.open_file(path)?;
                Ok(c.descriptor_pool())
            })
            .map_err(|e| e.to_string().replace('\n', " "))?;
        Ok(ProtoSet {
            pool,
            from: "-proto",
        })
    }

    /// Reads a serialized `FileDescriptorSet` that came from `from`.
    pub(crate) fn decode_from(bytes: &[u8], from: &'static str) -> Result<Self, crate::Failure> {
        prost_reflect::DescriptorPool::decode(bytes)
            .map(|pool| ProtoSet { pool, from })
            .map_err(|e| format!("not a descriptor set: {e}").into())
    }
}

/// `/package.Service/Method` of a gRPC URL, checked: the service and the
/// method.
pub fn method_path(url: &str) -> Result<(String, String), crate::Failure> {
    let uri: http::Uri = url.parse().map_err(|e| format!("bad URL: {url}, {e}"))?;
    let path = uri.path().trim_start_matches('/');
    match path.split_once('/') {
        Some((service, method))
            if !service.is_empty() && !method.is_empty() && !method.contains('/') =>
        {
            Ok((service.to_string(), method.to_string()))
        }
        _ => Err(format!(
            "GRPC {url}: the URL must name the method, as http://host:port/package.Service/Method"
        )
        .into()),
    }
}

/// Whether `body` reads as a JSON object (else it is taken as the
/// message's protobuf bytes).
pub fn is_json(body: &[u8]) -> bool {
    body.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
        && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok()
}

/// A `GRPC` target's body made ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The request message's bytes.
    pub body: Vec<u8>,
    /// Whether the method streams its answer (as its descriptors say;
    /// false without any).
    pub server_streaming: bool,
}

/// A `GRPC` target's body as the message's bytes: checked against its
/// method, and converted from JSON with `protos` (protobuf bytes pass as
/// they are). Client-streaming methods are refused: a target is one
/// request message.
pub fn prepare_body(
    url: &str,
    body: &[u8],
    protos: Option<&ProtoSet>,
) -> Result<Prepared, crate::Failure> {
    let (service, method) = method_path(url)?;
    let Some(protos) = protos else {
        if is_json(body) {
            return Err(format!(
                "GRPC {url}: the body is JSON; give -proto-set FILE (a descriptor set) to convert it, or a protobuf file"
            ).into());
        }
        return Ok(Prepared {
            body: body.to_vec(),
            server_streaming: false,
        });
    };
    let from = protos.from;
    let svc = protos
        .pool
        .get_service_by_name(&service)
        .ok_or_else(|| format!("GRPC {url}: no service {service} in {from}"))?;
    let m = svc
        .methods()
        .find(|m| m.name() == method)
        .ok_or_else(|| format!("GRPC {url}: service {service} has no method {method}"))?;
    if m.is_client_streaming() {
        return Err(format!(
            "GRPC {url}: {service}/{method} is client-streaming; barrage calls unary and server-streaming methods"
        )
        .into());
    }
    let server_streaming = m.is_server_streaming();
    if !is_json(body) {
        return Ok(Prepared {
            body: body.to_vec(),
            server_streaming,
        });
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let msg = prost_reflect::DynamicMessage::deserialize(m.input(), &mut de).map_err(|e| {
        format!(
            "GRPC {url}: the body is not a {}: {e}",
            m.input().full_name()
        )
    })?;
    Ok(Prepared {
        body: prost::Message::encode_to_vec(&msg),
        server_streaming,
    })
}
